"""gradfix/prescan.py: a cold run parses each file with `ast` once for its project summary and the
pre-pass, and its findings are those of the engine's own pre-pass (counted, never timed)."""

from __future__ import annotations

import ast
import json
import shutil
from pathlib import Path

import pytest

from gradfix.cli.main import _build
from gradfix.runner import lint_paths
from samples import MODEL, TRAIN

GOLDEN = Path(__file__).resolve().parent.parent / "golden"
PLAIN = "import os\n\n\ndef read(path):\n    with open(path) as fh:\n        return fh.read()\n"


@pytest.fixture(scope="module")
def tree(tmp_path_factory):
    root = tmp_path_factory.mktemp("prescan")
    for p in sorted(GOLDEN.glob("GF*/*.py"))[::9]:
        shutil.copy(p, root / f"{p.parent.name}_{p.name}")
    (root / "model.py").write_text(MODEL)
    (root / "train.py").write_text(TRAIN)
    (root / "plain.py").write_text(PLAIN)            # no rule may match it
    (root / "broken.py").write_text("def f(:\n")     # the engine reports it, as without the pass
    return root


def _run(tree: Path, monkeypatch, jobs, counts: dict | None = None):
    monkeypatch.chdir(tree)
    if counts is not None:
        real = ast.parse

        def counting(source, *args, **kwargs):
            if isinstance(source, str):
                counts[source] = counts.get(source, 0) + 1
            return real(source, *args, **kwargs)

        monkeypatch.setattr(ast, "parse", counting)
    engine, config = _build((".",), (), ())
    if jobs is None:
        # without the pass: ProjectIndex.build, then the engine's own parse and pre-pass
        from gradfix.runner import RunReport, iter_sources, lint_sources, with_project

        report = RunReport()
        sources = with_project(engine, list(iter_sources(["."], config, report)), config)
        assert not engine.rule_hints
        results = lint_sources(engine, sources)
        findings = sorted((p, json.dumps(f.to_record(), sort_keys=True))
                          for (p, _s), (fs, _e) in zip(sources, results) for f in fs)
        errors = sorted((e.path, e.line, e.message) for _r, es in results for e in es) + \
            sorted((e.path, e.line, e.message) for e in report.errors)
        monkeypatch.undo()
        return findings, errors, engine
    report = lint_paths(engine, ["."], config, jobs=jobs)
    monkeypatch.undo()
    findings = sorted((lint.path, json.dumps(f.to_record(), sort_keys=True))
                      for lint in report.lints for f in lint.findings)
    return findings, sorted((e.path, e.line, e.message) for e in report.errors), engine


def test_same_findings_as_the_engines_own_prepass(tree, monkeypatch):
    before = _run(tree, monkeypatch, None)
    after = _run(tree, monkeypatch, 1)
    assert after[0] == before[0] and after[1] == before[1]
    assert len(before[0]) >= 10
    assert any(e[0].endswith("broken.py") for e in after[1])
    assert set(after[2].rule_hints) == {p for p in after[2].rule_hints if not p.endswith("broken.py")}


def test_one_parse_for_a_file_no_rule_may_match(tree, monkeypatch):
    counts: dict[str, int] = {}
    _f, _e, engine = _run(tree, monkeypatch, 1, counts)
    plain = [p for p in engine.rule_hints if p.endswith("plain.py")]
    assert plain and engine.rule_hints[plain[0]][1] == ()
    assert counts[PLAIN] == 1                        # was 2: the project summary, then the engine
    kept = [h for h in engine.rule_hints.values() if h[1]]
    # the engine parses a file some rule may match again only when it needs CPython's tree (positions of a
    # finding, FileIndex._ast_body); its own factories come from the summary (was 2 for each)
    assert kept and all(counts[h[0]] in (1, 2) for h in kept)
    assert any(counts[h[0]] == 1 for h in kept)
    before: dict[str, int] = {}
    _run(tree, monkeypatch, None, before)
    assert before[PLAIN] == 2


def test_a_hint_is_read_only_for_its_own_text(tree, monkeypatch):
    _f, _e, engine = _run(tree, monkeypatch, 1)
    path = next(p for p in engine.rule_hints if p.endswith("plain.py"))
    text = (GOLDEN / "GF101" / "pos_alias_read_after.py").read_text()
    # the path's hint says "no rule may match" of the text it was made from, not of this one
    with_hint = [f.to_record() for f in engine.lint_source(text, path)[0]]
    engine.rule_hints = {}
    without = [f.to_record() for f in engine.lint_source(text, path)[0]]
    assert without and with_hint == without


def test_the_summarys_factories_are_what_the_file_index_computes():
    """The engine gives FileIndex the file's own factories from its summary (the hint) instead of parsing the
    file again with CPython: on every golden file, with the project view the engine uses, they are equal."""
    import libcst as cst

    from gradfix.analysis import FileIndex
    from gradfix.analysis.project import ProjectIndex
    from gradfix.analysis.summary import summarise

    files = {str(p): p.read_text() for p in sorted(GOLDEN.glob("GF*/*.py")) if not p.name.endswith(".fixed.py")}
    project = ProjectIndex(str(GOLDEN))
    compared = shown = 0
    for path, text in files.items():
        try:
            tree = ast.parse(text)
        except SyntaxError:
            continue
        summary = summarise(path, text, str(GOLDEN), tree)
        project.put(path, summary)
        index = FileIndex(cst.MetadataWrapper(cst.parse_module(text), unsafe_skip_copy=True), text, None,
                          project=project.view(path))
        assert index._own_factories == summary.factories, path
        compared += 1
        shown += bool(summary.factories)
    assert compared > 300 and shown > 5


def test_a_scanned_tree_is_freed_without_the_cyclic_collector():
    """The scan runs with the collector paused (prescan.scan_one): what summarising and the pre-pass make of a
    file must then be freed by reference counts alone, or every tree of a worker would pile up until a
    collection. On every golden file, with the collector off: no unreachable cycle is left, and the collector's
    state is given back as it was."""
    import gc

    from gradfix.analysis.summary import summarise
    from gradfix.engine import Engine
    from gradfix.prescan import scan_one
    from gradfix.codemods import ALL_RULES

    rules = Engine(ALL_RULES).rules
    files = [p for p in sorted(GOLDEN.glob("GF*/*.py")) if not p.name.endswith(".fixed.py")]
    gc.collect()
    was = gc.isenabled()
    gc.disable()
    try:
        scanned = 0
        for p in files:
            text = p.read_text()
            summary, ids = scan_one(rules, str(GOLDEN), str(p), text)
            assert not gc.isenabled()
            scanned += summary is not None
            summarise(str(p), text, str(GOLDEN))
        assert scanned > 300
        assert gc.collect() == 0
    finally:
        if was:
            gc.enable()
    assert gc.isenabled() == was
    summary, ids = scan_one(rules, str(GOLDEN), str(files[0]), files[0].read_text())
    assert gc.isenabled() == was and summary is not None
