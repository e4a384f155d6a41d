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
    # every fifth golden case (about 95 files of every rule, in path order), six random edits each: the
    # whole golden set is covered edit-free by test_same_findings_and_text above
    rng = random.Random(7)
    for case in CASES[::5]:
        parser = IncrementalParser()
        original = case.read_text()
        engine.lint_source(original, "t.py", incremental=parser)
        lines = original.split("\n")
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
        # a file of one statement has nothing to keep; one no rule may match is not parsed with
        # libcst at all (analysis/prepass.py), so the parser is not used
        if len(ast.parse(original).body) > 1 and engine.rules_for(ast.parse(original), original, "t.py"):
            assert parser.reused > 0, case


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


TRAIN = '''

def train(model, loader, opt):
    for x, y in loader:
        opt.zero_grad()
        loss = model(x).sum() / 1000000000
        loss.backward()
        opt.step()
'''


def test_identical_statements_are_separate_nodes(engine):
    # three copies of one function: one shared tree node would report one line three times
    source = "import torch\n" + TRAIN * 3
    parser = IncrementalParser()
    found = key(engine.lint_source(source, "t.py", incremental=parser))
    assert found == key(engine.lint_source(source, "t.py"))
    assert [f[0] for f in found[0]] == ["GF201"] * 3
    assert len({f[1].line for f in found[0]}) == 3
    edited = source.replace("/ 1000000000", "/ 1000000000  # gradfix: ignore[GF201]", 1)
    again = key(engine.lint_source(edited, "t.py", incremental=parser))
    assert again == key(engine.lint_source(edited, "t.py"))
    assert len(again[0]) == 2


def test_suppressions_follow_their_lines_across_edits(engine):
    source = "import torch\n" + TRAIN.replace("/ 1000000000", "/ 1000000000  # noqa: GF201") + TRAIN
    parser = IncrementalParser()
    first = key(engine.lint_source(source, "t.py", incremental=parser))
    assert first == key(engine.lint_source(source, "t.py")) and len(first[0]) == 1
    # lines inserted above both functions: the comment's line moves, the chunk is reused
    edited = source.replace("import torch\n", "import torch\nimport math\n\nSCALE = 1\n", 1)
    again = key(engine.lint_source(edited, "t.py", incremental=parser))
    assert again == key(engine.lint_source(edited, "t.py"))
    assert [f[1].line for f in again[0]] == [first[0][0][1].line + 3]


def test_patched_tables_equal_fresh_ones():
    from gradfix.analysis.tree import index_tree, preorder_spans

    rng = random.Random(11)
    for case in CASES[::4]:
        parser = IncrementalParser()
        lines = case.read_text().split("\n")
        for step in range(5):
            i = rng.randrange(len(lines))
            lines.insert(i, "" if rng.random() < 0.5 else "# edit")
            text = "\n".join(lines)
            try:
                tree = ast.parse(text)
            except SyntaxError:
                continue
            parsed = parser.parse(text, tree)
            if parsed is None:
                continue
            module, children, parents, spans = parsed
            want_children, want_parents = index_tree(module)
            assert children.keys() == want_children.keys(), (case, step)
            assert all([id(n) for n in children[k]] == [id(n) for n in v] for k, v in want_children.items())
            assert {id(n): id(p) for n, p in parents.items()} == {id(n): id(p) for n, p in want_parents.items()}
            order, want_spans = preorder_spans(module, want_children)
            assert spans.keys() == want_spans.keys()
            assert [id(n) for n in spans[id(module)][0]] == [id(n) for n in order]


def test_old_versions_are_freed_without_the_cyclic_collector(engine, monkeypatch):
    """A language server lints a document on every keystroke: each version's trees and facts
    must go when the next version replaces them. A cache keyed weakly by the index, and flow
    reasons pointing at the index that built them, once kept every version alive."""
    import gc
    import weakref

    from gradfix.analysis import fileindex

    made: list = []
    original = fileindex.FileIndex.__init__

    def recording(self, *args, **kwargs):
        original(self, *args, **kwargs)
        made.append(weakref.ref(self))

    monkeypatch.setattr(fileindex.FileIndex, "__init__", recording)
    source = (ROOT / "golden" / "seeds" / "seed1_scenario.py").read_text() + TRAIN
    parser = IncrementalParser()
    was = gc.isenabled()
    gc.disable()
    try:
        for k in range(6):
            edited = source.replace("1000000000", str(10 ** (9 + k)))
            findings, errors = engine.lint_source(edited, "t.py", incremental=parser)
            assert findings and not errors
        engine.lint_source(source, "t.py")                    # a whole-file lint, as `gradfix check` does
        alive = [r for r in made if r() is not None]
    finally:
        if was:
            gc.enable()
    # at most the latest version's index, which the kept flows of unchanged functions still point at
    assert len(made) == 7 and len(alive) <= 1
