"""The project facts of a cached run (gradfix/projectcache.py): a warm run parses nothing, and
whatever a file's facts depend on still invalidates them."""

from __future__ import annotations

import os
from pathlib import Path

from gradfix.cache import Cache
from gradfix.codemods import ALL_RULES
from gradfix.config import Config
from gradfix.engine import Engine
from gradfix.runner import lint_paths
from samples import MODEL, TRAIN

BLOCK = '''\
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


class CountingEngine(Engine):
    def __init__(self, *a, **kw):
        super().__init__(*a, **kw)
        self.linted: list[str] = []

    def lint_source(self, source, path, incremental=None):
        self.linted.append(os.path.basename(path))
        return super().lint_source(source, path, incremental)


def run(root: Path, monkeypatch, cached: bool, paths=(".",)):
    monkeypatch.chdir(root)
    config = Config(root=str(root))
    engine = CountingEngine(ALL_RULES, config)
    report = lint_paths(engine, list(paths), config, cache=Cache(str(root)) if cached else None)
    found = [(lint.path, f.span.line, f.rule, f.message) for lint in report.lints for f in lint.findings]
    return found, engine


def write_project(root: Path) -> None:
    (root / "model.py").write_text(MODEL)
    (root / "train.py").write_text(TRAIN)
    (root / "block.py").write_text(BLOCK)
    (root / "broken.py").write_text("def f(:\n")


def test_a_warm_run_parses_no_file_and_builds_no_index(tmp_path, monkeypatch):
    write_project(tmp_path)
    cold, engine = run(tmp_path, monkeypatch, cached=True)
    assert engine.project.parsed == 4
    assert ("train.py", 7, "GF305") in {(p, line, r) for p, line, r, _m in cold}
    warm, engine = run(tmp_path, monkeypatch, cached=True)
    assert warm == cold == run(tmp_path, monkeypatch, cached=False)[0]
    assert engine.linted == [] and engine.project.parsed == 0
    assert engine.project._unloaded is not None      # the index was never filled


def test_one_changed_file_is_the_only_one_summarised_and_its_importers_are_judged_again(tmp_path, monkeypatch):
    write_project(tmp_path)
    run(tmp_path, monkeypatch, cached=True)
    (tmp_path / "model.py").write_text(MODEL.replace("class Net(nn.Module):", "class Net:"))
    after, engine = run(tmp_path, monkeypatch, cached=True)
    assert engine.project.parsed == 1
    assert sorted(engine.linted) == ["model.py", "train.py"]
    assert not [f for f in after if f[2] == "GF305"]
    assert after == run(tmp_path, monkeypatch, cached=False)[0]
    # and back: the first version's summary and facts are read again, nothing is parsed for them
    (tmp_path / "model.py").write_text(MODEL)
    back, engine = run(tmp_path, monkeypatch, cached=True)
    assert engine.project.parsed == 0 and engine.linted == []
    assert ("train.py", 7, "GF305") in {(p, line, r) for p, line, r, _m in back}


def test_a_package_made_above_the_files_is_seen(tmp_path, monkeypatch):
    """`from .model import Net` resolves only once the folder is a package: its `__init__.py`,
    not among the files checked, changes their facts (the package is part of both keys)."""
    sub = tmp_path / "sub"
    sub.mkdir()
    (sub / "model.py").write_text(MODEL)
    (sub / "train.py").write_text(TRAIN.replace("from model import Net", "from .model import Net"))
    files = ("sub/model.py", "sub/train.py")
    before, _ = run(tmp_path, monkeypatch, cached=True, paths=files)
    assert not [f for f in before if f[2] == "GF305"]
    (sub / "__init__.py").write_text("")
    after, engine = run(tmp_path, monkeypatch, cached=True, paths=files)
    assert engine.project.parsed == 2
    assert after == run(tmp_path, monkeypatch, cached=False, paths=files)[0]
    assert ("sub/train.py", 7, "GF305") in {(p, line, r) for p, line, r, _m in after}


def test_a_damaged_summary_or_facts_entry_is_computed_again(tmp_path, monkeypatch):
    write_project(tmp_path)
    cold, _ = run(tmp_path, monkeypatch, cached=True)
    for entry in (tmp_path / ".gradfix_cache").rglob("*.json"):
        entry.write_text('{"imports": 3}')
    again, engine = run(tmp_path, monkeypatch, cached=True)
    assert again == cold and engine.project.parsed == 4 and len(engine.linted) == 4


SOFTMAX_CNN = '''\
import torch.nn as nn


class AudioNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(16, 4)
        self.softmax = nn.Softmax(dim=1)

    def forward(self, x):
        return self.softmax(self.fc(x))
'''

TRAIN_SIBLING = '''\
import torch
import torch.nn as nn
from audio_net import AudioNet

model = AudioNet()
loss_fn = nn.CrossEntropyLoss()
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
for x, y in [(torch.randn(8, 16), torch.randint(0, 4, (8,)))]:
    loss = loss_fn(model(x), y)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
'''


def test_cached_summaries_keep_what_functions_and_forwards_return(tmp_path, monkeypatch):
    """A file relinted in a warm run reads its unchanged imports' summaries from the cache: those
    must carry the returns facts (a sibling model whose forward ends in a softmax, GF308)."""
    (tmp_path / "audio_net.py").write_text(SOFTMAX_CNN)
    (tmp_path / "train.py").write_text(TRAIN_SIBLING)
    cold, _ = run(tmp_path, monkeypatch, cached=True)
    assert any(rule == "GF308" and path.endswith("train.py") for path, _l, rule, _m in cold), cold
    (tmp_path / "train.py").write_text(TRAIN_SIBLING + "# edited\n")
    warm, engine = run(tmp_path, monkeypatch, cached=True)
    assert engine.linted == ["train.py"]
    assert warm == cold
