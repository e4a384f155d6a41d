"""The incremental parse the language server uses must give exactly the findings of a
whole-file parse, version after version, and its tree must print back to the text."""

from __future__ import annotations

import ast
import random
from pathlib import Path

import pytest

from gradfix.codemods import ALL_RULES
from gradfix.engine import Engine
from gradfix.incremental import IncrementalParser

ROOT = Path(__file__).resolve().parent.parent
CASES = [p for p in sorted((ROOT / "golden").rglob("*.py")) if not p.name.endswith(".fixed.py")]


def key(result):
    findings, errors = result
    return [(f.rule, f.span, f.message, f.fixable) for f in findings], errors


@pytest.fixture(scope="module")
def engine():
    return Engine(ALL_RULES)


@pytest.mark.parametrize("case", CASES, ids=lambda p: f"{p.parent.name}/{p.stem}")
def test_same_findings_and_text(engine, case):
    source = case.read_text()
    parser = IncrementalParser()
    parsed = parser.parse(source, ast.parse(source))
    assert parsed is not None
    assert parsed[0].code == source
    assert key(engine.lint_source(source, "t.py", incremental=parser)) == key(engine.lint_source(source, "t.py"))


def test_edit_sequences_match_whole_file_parses(engine):
    rng = random.Random(7)
    for case in CASES[::3]:
        parser = IncrementalParser()
        lines = case.read_text().split("\n")
        for step in range(6):
            i = rng.randrange(len(lines))
            indent = lines[i][: len(lines[i]) - len(lines[i].lstrip())]
            choice = rng.random()
            if choice < 0.4:
                lines.insert(i, f"{indent}# edit {step}")
            elif choice < 0.7 and lines[i].strip():
                lines[i] = lines[i] + "  # touched"
            else:
                lines.insert(i, "")
            text = "\n".join(lines)
            try:
                ast.parse(text)
            except SyntaxError:
                continue
            assert key(engine.lint_source(text, "t.py", incremental=parser)) == key(engine.lint_source(text, "t.py")), \
                (case, step)
        assert parser.reused > 0


def test_reuses_unchanged_statements():
    source = "import torch\n\n\ndef f(x):\n    return x\n\n\ndef g(y):\n    return y\n"
    parser = IncrementalParser()
    parser.parse(source, ast.parse(source))
    edited = source.replace("return y", "return y * 2")
    module, _, _, _ = parser.parse(edited, ast.parse(edited))
    assert module.code == edited
    assert (parser.parsed, parser.reused) == (4, 2)  # 3 first time, then only g again


def test_flows_are_recomputed_when_file_level_facts_change(engine):
    source = (ROOT / "golden" / "GF101" / "pos_sigmoid_mul.py").read_text()
    parser = IncrementalParser()
    assert key(engine.lint_source(source, "t.py", incremental=parser)) == key(engine.lint_source(source, "t.py"))
    # the same functions, but `torch` now means something else: no tensor facts hold
    edited = source.replace("import torch\n", "import numpy as torch\n", 1)
    assert edited != source
    a = engine.lint_source(edited, "t.py", incremental=parser)
    assert key(a) == key(engine.lint_source(edited, "t.py"))
    # and code edits inside a function are seen
    again = source.replace("s *= 2", "s = s * 2")
    assert key(engine.lint_source(again, "t.py", incremental=parser)) == key(engine.lint_source(again, "t.py"))


def test_walks_from_kept_statements_match_plain_walks():
    import libcst as cst

    from gradfix.analysis import FileIndex
    from gradfix.analysis.tree import _walk, active, walk

    for case in CASES[::5]:
        source = case.read_text()
        parser = IncrementalParser()
        parser.parse(source, ast.parse(source))
        edited = source + "\n# appended\n"
        module, children, parents, spans = parser.parse(edited, ast.parse(edited))
        index = FileIndex(cst.MetadataWrapper(module, unsafe_skip_copy=True), edited, None, (children, parents, spans))
        with active(index.children, index.preorder):
            nodes = list(walk(module))
            assert [id(n) for n in nodes] == [id(n) for n in _walk(module)]
            for node in nodes[::11]:
                assert [id(n) for n in walk(node)] == [id(n) for n in _walk(node)]
