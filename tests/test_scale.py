"""Parallel checks and the results cache (gradfix/parallel.py, gradfix/cache.py)."""

from __future__ import annotations

import os
from pathlib import Path

from gradfix import cache as cache_mod
from gradfix import parallel
from gradfix.cache import Cache
from gradfix.codemods import ALL_RULES
from gradfix.config import Config
from gradfix.engine import Engine, accept_all
from gradfix.runner import fix_paths, lint_paths
from samples import MODEL, TRAIN



HAZARD = '''\
import torch
import torch.nn as nn


class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(8, 8)

    def forward(self, x):
        h = torch.sigmoid(self.fc(x))
        h *= 2
        return h
'''


def project(root: Path, n_extra: int = 0) -> Path:
    (root / "model.py").write_text(MODEL)
    (root / "train.py").write_text(TRAIN)
    for i in range(n_extra):
        (root / f"block_{i:02d}.py").write_text(HAZARD if i % 3 == 0 else MODEL)
    return root


def run(root: Path, monkeypatch, jobs=1, cache=None, select=None):
    monkeypatch.chdir(root)
    config = Config(root=str(root), select=select)
    report = lint_paths(Engine(ALL_RULES, config), ["."], config, jobs=jobs, cache=cache)
    return [(lint.path, f.span.line, f.rule, f.message, f.fixable) for lint in report.lints for f in lint.findings]


def test_several_jobs_give_the_same_output_in_the_same_order(tmp_path, monkeypatch):
    project(tmp_path, n_extra=12)
    monkeypatch.setattr(parallel, "POOL_MIN_LINES", 0)  # a pool even for this small project
    one = run(tmp_path, monkeypatch, jobs=1)
    two = run(tmp_path, monkeypatch, jobs=2)
    assert one == two
    assert ("train.py", 7, "GF305") in {(p, line, r) for p, line, r, _m, _f in one}  # the project reaches workers
    assert len([f for f in one if f[2] == "GF101"]) == 4


class CountingEngine(Engine):
    def __init__(self, *a, **kw):
        super().__init__(*a, **kw)
        self.linted: list[str] = []
        self.fixed: list[str] = []

    def lint_source(self, source, path, incremental=None):
        self.linted.append(path)
        return super().lint_source(source, path, incremental)

    def fix_source(self, source, path, decide, verifier=None, project_root=None):
        self.fixed.append(path)
        return super().fix_source(source, path, decide, verifier, project_root)


def counted_run(root: Path, monkeypatch, cache, select=None) -> tuple[list, list[str]]:
    monkeypatch.chdir(root)
    config = Config(root=str(root), select=select)
    engine = CountingEngine(ALL_RULES, config)
    report = lint_paths(engine, ["."], config, cache=cache)
    return [(lint.path, f.span.line, f.rule, f.fixable) for lint in report.lints for f in lint.findings], engine.linted


def test_cache_hits_and_what_invalidates_it(tmp_path, monkeypatch):
    project(tmp_path, n_extra=3)
    cache = Cache(str(tmp_path))
    cold, linted = counted_run(tmp_path, monkeypatch, cache)
    assert len(linted) == 5
    warm, linted = counted_run(tmp_path, monkeypatch, Cache(str(tmp_path)))
    assert warm == cold and linted == []  # nothing changed: nothing analysed
    assert (tmp_path / ".gradfix_cache" / ".gitignore").read_text().strip().endswith("*")

    # the file's content
    (tmp_path / "block_01.py").write_text(MODEL + "\n# edited\n")
    _, linted = counted_run(tmp_path, monkeypatch, Cache(str(tmp_path)))
    assert [os.path.basename(p) for p in linted] == ["block_01.py"]

    # the configuration
    _, linted = counted_run(tmp_path, monkeypatch, Cache(str(tmp_path)), select=["GF1"])
    assert len(linted) == 5

    # a module another file imports: train.py is analysed again (Net is no longer a module), no other file
    (tmp_path / "model.py").write_text(MODEL.replace("class Net(nn.Module):", "class Net:"))
    after, linted = counted_run(tmp_path, monkeypatch, Cache(str(tmp_path)))
    assert sorted(os.path.basename(p) for p in linted) == ["model.py", "train.py"]
    assert not [f for f in after if f[2] == "GF305"]  # and the stale finding is gone

    # gradfix's own code (its version or source files)
    monkeypatch.setattr(cache_mod, "code_fingerprint", lambda: "another-build")
    _, linted = counted_run(tmp_path, monkeypatch, Cache(str(tmp_path)))
    assert len(linted) == 5


def test_a_damaged_cache_entry_is_a_miss(tmp_path, monkeypatch):
    project(tmp_path)
    cold, _ = counted_run(tmp_path, monkeypatch, Cache(str(tmp_path)))
    for entry in (tmp_path / ".gradfix_cache").rglob("*.json"):
        entry.write_text("{not json")
    again, linted = counted_run(tmp_path, monkeypatch, Cache(str(tmp_path)))
    assert again == cold and len(linted) == 2


def test_apply_parses_again_only_files_with_a_fix(tmp_path, monkeypatch):
    project(tmp_path, n_extra=6)
    monkeypatch.chdir(tmp_path)
    config = Config(root=str(tmp_path))
    engine = CountingEngine(ALL_RULES, config)
    report = fix_paths(engine, ["."], config, lambda p: accept_all, cache=Cache(str(tmp_path)))
    with_fix = sorted(os.path.basename(r.path) for r in report.fixes if r.changes)
    assert sorted(os.path.basename(p) for p in engine.fixed) == with_fix == ["block_00.py", "block_03.py", "train.py"]
    assert len(report.fixes) == 8  # every file is reported, fixed or not


def test_the_code_fingerprint_covers_the_rules_and_the_cli(tmp_path, monkeypatch):
    import gradfix.codemods

    cache_mod.code_fingerprint.cache_clear()
    before = cache_mod.code_fingerprint()
    rule = Path(gradfix.codemods.__file__).with_name("gf101_inplace_on_activation.py")
    stat = rule.stat()
    try:
        os.utime(rule, ns=(stat.st_atime_ns, stat.st_mtime_ns + 1_000_000_000))  # "edited"
        cache_mod.code_fingerprint.cache_clear()
        assert cache_mod.code_fingerprint() != before
    finally:
        os.utime(rule, ns=(stat.st_atime_ns, stat.st_mtime_ns))
        cache_mod.code_fingerprint.cache_clear()
    assert cache_mod.code_fingerprint() == before


def test_apply_in_one_process_without_a_cache_analyses_each_file_once(tmp_path, monkeypatch):
    project(tmp_path, n_extra=3)
    monkeypatch.chdir(tmp_path)
    config = Config(root=str(tmp_path))
    engine = CountingEngine(ALL_RULES, config)
    report = fix_paths(engine, ["."], config, lambda p: accept_all, jobs=1, cache=None)
    assert engine.linted == []  # no first pass: fix_source's first round is the file's one analysis
    assert len(engine.fixed) == len(report.fixes) == 5
    assert sorted(os.path.basename(r.path) for r in report.fixes if r.changes) == ["block_00.py", "train.py"]
