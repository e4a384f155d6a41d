"""parsing._unvalidated: a cold `check` parses the files it lints without libcst's per-node validation, and
gets the same tree; everything else parses, and builds nodes, with the validation on."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import libcst as cst
import pytest

from gradfix import parsing
from gradfix.cli.main import _build
from gradfix.codemods import ALL_RULES
from gradfix.engine import Engine
from gradfix.runner import RunReport, iter_sources, lint_paths, lint_sources, with_project
from samples import MODEL, TRAIN

GOLDEN = Path(__file__).resolve().parent.parent / "golden"


def _node_classes() -> list[type]:
    out, todo = [], [cst.CSTNode]
    while todo:
        cls = todo.pop()
        out.append(cls)
        todo.extend(cls.__subclasses__())
    return out


def test_no_node_class_has_a_post_init_of_its_own():
    # the hook replaced is the only one a node runs after its fields are set: nothing but `_validate` is skipped
    import gradfix.codemods  # noqa: F401  (every rule's module loaded: any node class they define is listed)

    classes = _node_classes()
    assert len(classes) > 100
    assert [c for c in classes if c is not cst.CSTNode and "__post_init__" in c.__dict__] == []


def test_the_same_tree_on_every_golden_file():
    files = sorted(GOLDEN.rglob("*.py"))
    assert len(files) > 500
    compared = 0
    for case in files:
        text = case.read_bytes().decode("utf-8")
        try:
            whole = cst.parse_module(text)
        except cst.ParserSyntaxError:
            continue
        quick = parsing._cst_tree(text, validate=False)
        assert quick.deep_equals(whole), case
        assert quick.code == text
        compared += 1
    assert compared > 500


def test_validation_is_skipped_only_while_the_parse_runs(monkeypatch):
    calls = []
    real = cst.Name._validate
    monkeypatch.setattr(cst.Name, "_validate", lambda self: calls.append(self.value) or real(self))
    cst.parse_module("x = y + 1\n")
    assert calls == ["x", "y"]
    calls.clear()
    tree = parsing._cst_tree("x = y + 1\n", validate=False)
    assert calls == [] and tree.code == "x = y + 1\n"
    # put back after the parse, and after a parse that fails
    with pytest.raises(parsing.ParseFailure):
        parsing._cst_tree("def f(:\n", validate=False)
    assert cst.CSTNode.__dict__["__post_init__"] is not parsing._skip
    with pytest.raises(cst.CSTValidationError):
        cst.Name("")
    cst.Name("z")
    assert calls == ["", "z"]


def test_check_parses_unvalidated_and_finds_the_same(tmp_path, monkeypatch):
    for p in sorted(GOLDEN.glob("GF*/*.py"))[::7]:
        shutil.copy(p, tmp_path / f"{p.parent.name}_{p.name}")
    (tmp_path / "model.py").write_text(MODEL)
    (tmp_path / "train.py").write_text(TRAIN)
    monkeypatch.chdir(tmp_path)
    quick = []
    real = parsing._unvalidated

    def spy(source):
        quick.append(source)
        return real(source)

    monkeypatch.setattr(parsing, "_unvalidated", spy)
    engine, config = _build((".",), (), ())
    report = lint_paths(engine, ["."], config, jobs=1)        # `check`: the pre-pass's hints, unvalidated parses
    assert len(quick) > 20
    found = sorted(json.dumps(f.to_record(), sort_keys=True) for lint in report.lints for f in lint.findings)
    assert found and any(f.fix is not None for lint in report.lints for f in lint.findings)  # fixes built on it too
    quick.clear()
    plain = Engine(ALL_RULES, config)                          # no hints: validated parses, as fixes do
    sources = with_project(plain, list(iter_sources(["."], config, RunReport())), config)
    results = lint_sources(plain, sources)
    assert quick == []
    assert found == sorted(json.dumps(f.to_record(), sort_keys=True) for fs, _e in results for f in fs)
