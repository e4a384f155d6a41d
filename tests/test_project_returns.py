"""What project functions and forwards return, across files (analysis/returns.py, read through
analysis/project.py): a model class of a sibling module whose forward ends in a softmax (GF308),
a module built by a project function (GF305, GF308), and that editing the imported file changes
what the importer is told (cache key, language server, reused flows)."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from gradfix.analysis.project import ProjectIndex
from gradfix.cache import Cache
from gradfix.codemods import ALL_RULES
from gradfix.config import Config
from gradfix.engine import Engine
from gradfix.incremental import IncrementalParser
from gradfix.runner import lint_paths

AUDIO_NET = '''\
from torch import nn


class SpectrogramNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.features = nn.Sequential(nn.Conv2d(1, 4, 3), nn.ReLU(), nn.AdaptiveAvgPool2d(1))
        self.flatten = nn.Flatten()
        self.linear = nn.Linear(4, 5)
        self.softmax = nn.Softmax(dim=1)

    def forward(self, spec):
        x = self.features(spec)
        x = self.flatten(x)
        logits = self.linear(x)
        predictions = self.softmax(logits)
        return predictions


class GatedNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.linear = nn.Linear(4, 5)

    def forward(self, x, probs=False):
        out = self.linear(x)
        if probs:
            return out.softmax(dim=1)
        return out


class BranchNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.linear = nn.Linear(4, 5)

    def forward(self, x):
        if x.dim() > 2:
            out = self.linear(x).softmax(dim=1)
        else:
            out = self.linear(x)
        return out


class Settings:
    def forward(self, x):
        return x.softmax(dim=1)


def build_tagger(n):
    head = nn.Sequential(nn.Linear(n, 5), nn.LogSoftmax(dim=1))
    return head.to("cpu")


def build_logits(n):
    model = nn.Sequential()
    model.add_module("fc", nn.Linear(n, 5))
    return model


def build_maybe(kind):
    if kind == "mlp":
        return nn.Linear(4, 5)


def build_net():
    return SpectrogramNet()


def each_layer():
    yield nn.Linear(4, 5)
'''

AUDIO_TRAIN = '''\
import torch
from torch import nn

from audionet import SpectrogramNet, build_logits


def train_single_epoch(model, loader, loss_fn, optimiser):
    for spec, target in loader:
        prediction = model(spec)
        loss = loss_fn(prediction, target)
        optimiser.zero_grad()
        loss.backward()
        optimiser.step()


def train(model, loader, loss_fn, optimiser, epochs):
    for _ in range(epochs):
        train_single_epoch(model, loader, loss_fn, optimiser)


if __name__ == "__main__":
    net = SpectrogramNet().to("cpu")
    optimiser = torch.optim.Adam(net.parameters(), lr=1e-3)
    train(net, [(torch.randn(2, 1, 8, 8), torch.tensor([0, 1]))], nn.CrossEntropyLoss(), optimiser, 2)
    probe = build_logits(4)
    scores = probe.forward(torch.randn(2, 4))
'''


def write(root: Path, files: dict[str, str]) -> Path:
    for rel, text in files.items():
        p = root / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(textwrap.dedent(text))
    return root


def findings(root: Path, monkeypatch, *paths: str, cache=None) -> list[tuple[str, int, str]]:
    monkeypatch.chdir(root)
    config = Config(root=str(root))
    report = lint_paths(Engine(ALL_RULES, config), list(paths) or ["."], config, cache=cache)
    return sorted((Path(lint.path).as_posix(), f.span.line, f.rule) for lint in report.lints for f in lint.findings)


@pytest.fixture(scope="module")
def index(tmp_path_factory):
    root = write(tmp_path_factory.mktemp("audio"), {"audionet.py": AUDIO_NET, "train.py": AUDIO_TRAIN})
    files = {str(p): p.read_text() for p in root.rglob("*.py")}
    return root, ProjectIndex.build(files, str(root))


def test_forward_heads_of_project_classes(index):
    root, project = index
    view = project.view(str(root / "train.py"))
    assert view.forward_head("audionet.SpectrogramNet") == "softmax"   # through the names bound before return
    assert view.forward_head("audionet.GatedNet") is None    # an early return under a flag: not shown
    assert view.forward_head("audionet.BranchNet") is None   # the returned name is bound in a branch
    assert view.forward_head("audionet.Settings") is None    # not a module
    assert view.forward_head("torch.nn.Softmax") is None     # not the project's


def test_functions_that_return_a_module_on_every_path(index):
    root, project = index
    view = project.view(str(root / "train.py"))
    tagger = view.module_factory("audionet.build_tagger")
    assert [(r.ctor, r.head) for r in tagger] == [("torch.nn.Sequential", "log_softmax")]
    assert [(r.ctor, r.head) for r in view.module_factory("audionet.build_logits")] == [("torch.nn.Sequential", None)]
    # a project class, its head read from its forward
    assert [(r.ctor, r.head) for r in view.module_factory("audionet.build_net")] == \
        [("audionet.SpectrogramNet", "softmax")]
    assert view.module_factory("audionet.build_maybe") is None   # falls off the end for other kinds
    assert view.module_factory("audionet.each_layer") is None    # a generator
    assert view.module_factory("audionet.SpectrogramNet") is None  # a class, not a function


def test_rules_follow_the_sibling_module(tmp_path, monkeypatch):
    write(tmp_path, {"audionet.py": AUDIO_NET, "train.py": AUDIO_TRAIN})
    got = findings(tmp_path, monkeypatch)
    # the model class comes from audionet.py, through two helpers' parameters: a double softmax
    assert ("train.py", 10, "GF308") in got
    # a module built by audionet's function: forward() skips its hooks
    assert ("train.py", 26, "GF305") in got
    assert not [f for f in got if f[0] == "audionet.py"]
    # checked alone, train.py cannot know what audionet returns: silence
    assert findings(tmp_path, monkeypatch, "train.py") == []


def test_factory_head_across_files(tmp_path, monkeypatch):
    write(tmp_path, {"audionet.py": AUDIO_NET, "fit.py": '''\
        import torch
        import torch.nn.functional as F
        import audionet

        tagger = audionet.build_tagger(4)
        logits_net = audionet.build_logits(4)
        opt = torch.optim.SGD(list(tagger.parameters()) + list(logits_net.parameters()), lr=0.1)
        x, y = torch.randn(3, 4), torch.tensor([0, 1, 2])
        loss = F.cross_entropy(tagger(x), y) + F.cross_entropy(logits_net(x), y)
        loss.backward()
        opt.step()
        '''})
    got = findings(tmp_path, monkeypatch)
    # the tagger's LogSoftmax head: flagged once, on the tagger's call; the logits model is fine
    assert [(p, line, rule) for p, line, rule in got if rule == "GF308"] == [("fit.py", 9, "GF308")]


def test_editing_the_imported_module_invalidates_the_cached_importer(tmp_path, monkeypatch):
    write(tmp_path, {"audionet.py": AUDIO_NET, "train.py": AUDIO_TRAIN})
    assert ("train.py", 10, "GF308") in findings(tmp_path, monkeypatch, cache=Cache(str(tmp_path)))
    # the forward now returns the logits: only audionet.py's text changed, yet train.py's finding must go
    (tmp_path / "audionet.py").write_text(AUDIO_NET.replace("        return predictions\n", "        return logits\n"))
    assert ("train.py", 10, "GF308") not in findings(tmp_path, monkeypatch, cache=Cache(str(tmp_path)))
    # and the factory no longer returning a module on every path silences GF305 in train.py
    (tmp_path / "audionet.py").write_text(AUDIO_NET.replace(
        '    model.add_module("fc", nn.Linear(n, 5))\n    return model\n',
        '    model.add_module("fc", nn.Linear(n, 5))\n    if n:\n        return model\n'))
    assert ("train.py", 26, "GF305") not in findings(tmp_path, monkeypatch, cache=Cache(str(tmp_path)))


def test_the_language_server_sees_an_edited_forward_as_a_new_summary(tmp_path):
    from gradfix.cli.lsp import _refresh_project
    from gradfix.cli.lsp_documents import _unit_signature

    write(tmp_path, {"audionet.py": AUDIO_NET, "train.py": AUDIO_TRAIN})
    project = ProjectIndex(str(tmp_path))
    _refresh_project(project, str(tmp_path / "train.py"), AUDIO_TRAIN)
    before = project.fingerprint(str(tmp_path / "train.py"))
    edited = AUDIO_NET.replace("        return predictions\n", "        return logits\n")
    _refresh_project(project, str(tmp_path / "audionet.py"), edited)
    assert project.view(str(tmp_path / "train.py")).forward_head("audionet.SpectrogramNet") is None
    assert project.fingerprint(str(tmp_path / "train.py")) != before
    # an edit of only the forward's last line is not one the server may defer summarising
    unit = AUDIO_NET[AUDIO_NET.index("class SpectrogramNet"):AUDIO_NET.index("class GatedNet")]
    imports = "from torch import nn\n"
    assert _unit_signature(str(tmp_path), imports, unit) != _unit_signature(
        str(tmp_path), imports, unit.replace("return predictions", "return logits"))
    assert _unit_signature(str(tmp_path), imports, unit) == _unit_signature(
        str(tmp_path), imports, unit.replace("x = self.flatten(x)", "x = self.flatten(x)  # edited"))
    # imports the server could not collect: never "unchanged"
    assert _unit_signature(str(tmp_path), None, unit) != _unit_signature(str(tmp_path), None, unit + "\n")


def test_reused_flows_follow_an_edited_factory_of_the_same_file():
    engine = Engine(ALL_RULES)
    parser = IncrementalParser()
    factory = "def make():\n    net = nn.Sequential()\n    net.add_module('fc', nn.Linear(2, 2))\n    return net\n"
    user = "\n\ndef run(x):\n    net = make()\n    return net.forward(x)\n"
    head = "import torch.nn as nn\n\n\n"
    first, _ = engine.lint_source(head + factory + user, "f.py", incremental=parser)
    assert [f.rule for f in first] == ["GF305"]
    # only the factory changes (it may now return None): run()'s text and flow are unchanged, its finding goes
    changed = factory.replace("    return net\n", "    if x_ok():\n        return net\n")
    second, _ = engine.lint_source(head + changed + user, "f.py", incremental=parser)
    assert [f.rule for f in second] == []


CONTRAST_LOSS = '''\
import torch
from torch import nn
import torch.nn.functional as F


class OffsetContrast(nn.Module):
    def __init__(self, dim, offsets):
        super().__init__()
        self.heads = nn.ModuleList([nn.Linear(dim, dim) for _ in range(offsets)])

    def forward(self, z, ctx):
        terms, hit_rates = list(), list()
        for k, head in enumerate(self.heads, 1):
            scores = head(ctx[:, :-k]) @ z[:, k:].transpose(1, 2)
            labels = torch.arange(scores.size(1)).expand(scores.size(0), -1)
            terms.append(F.cross_entropy(scores.transpose(1, 2), labels))
            hit_rates.append((scores.argmax(1) == labels).float().mean().item())
        return torch.stack(terms).mean(), hit_rates


class Leaky(nn.Module):
    def forward(self, z):
        kept = []
        kept.append(z.sum().item())
        kept.extend(z.unbind(0))
        return z.mean(), kept, len(kept), z.max().item() * 2


class Settings:
    def forward(self, z):
        return z, 1.0
'''

CONTRAST_TRAIN = '''\
import numpy as np
import torch
from torch import nn

from losses import OffsetContrast

encoder = nn.GRU(6, 6, batch_first=True)
contrast = OffsetContrast(6, 3)
opt = torch.optim.Adam(list(encoder.parameters()) + list(contrast.parameters()), lr=1e-3)
for epoch in range(2):
    mean_hits = torch.zeros(3)
    for i, feats in enumerate([torch.randn(4, 10, 6)], 1):
        opt.zero_grad()
        ctx, _ = encoder(feats)
        loss, hits = contrast(feats, ctx)
        loss.backward()
        opt.step()
        mean_hits += (sum(hits) - mean_hits) / i
'''


def test_forward_outputs_that_are_python_numbers(tmp_path, monkeypatch):
    """GF208 reads which outputs of a project module's forward are floats (`.item()`) or lists of them."""
    write(tmp_path, {"losses.py": CONTRAST_LOSS, "train.py": CONTRAST_TRAIN})
    files = {str(p): p.read_text() for p in tmp_path.rglob("*.py")}
    view = ProjectIndex.build(files, str(tmp_path)).view(str(tmp_path / "train.py"))
    assert view.forward_numbers("losses.OffsetContrast") == {1}
    # a list that is also extended with tensors is not shown; `len(...)` and `.item() * 2` are numbers
    assert view.forward_numbers("losses.Leaky") == {2, 3}
    assert view.forward_numbers("losses.Settings") == frozenset()   # not a module
    assert [f for f in findings(tmp_path, monkeypatch, cache=Cache(str(tmp_path))) if f[2] == "GF208"] == []
    # soft hit rates kept as tensors: the running mean (a torch tensor; a numpy one would raise instead)
    # holds every iteration's graph, and the cached importer must see the edit of losses.py
    (tmp_path / "losses.py").write_text(CONTRAST_LOSS.replace(
        "(scores.argmax(1) == labels).float().mean().item()", "scores.softmax(1).mean()"))
    got = findings(tmp_path, monkeypatch, cache=Cache(str(tmp_path)))
    assert ("train.py", 18, "GF208") in got


PAIR_METRICS = '''\
import torch


def pair_hits(dist, same, margin):
    close = torch.count_nonzero((dist < margin) & same).item()
    far = torch.count_nonzero((dist >= margin) & ~same).item()
    return close + far


def soft_hits(dist, same, margin):
    return torch.sigmoid(margin - dist)[same].sum()


def sometimes(dist):
    if dist.numel():
        return dist.sum().item()
'''

PAIR_TRAIN = '''\
import torch
from torch import nn

import pairmetrics
from pairmetrics import pair_hits

net = nn.Linear(4, 3)
opt = torch.optim.SGD(net.parameters(), lr=0.1)
hits = 0
for a, b, same in [(torch.randn(5, 4), torch.randn(5, 4), torch.rand(5) > 0.5)]:
    dist = (net(a) - net(b)).norm(dim=1)
    loss = (same * dist ** 2 + ~same * (1.0 - dist).clamp(min=0) ** 2).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
    hits += pairmetrics.pair_hits(dist, same, 1.0)
    hits += pair_hits(dist, same, 1.0)
'''


def test_a_helper_of_another_file_that_returns_numbers(tmp_path, monkeypatch):
    """GF208 reads which functions of a project file return Python numbers (`.item()` sums) on every path."""
    write(tmp_path, {"pairmetrics.py": PAIR_METRICS, "train.py": PAIR_TRAIN})
    files = {str(p): p.read_text() for p in tmp_path.rglob("*.py")}
    view = ProjectIndex.build(files, str(tmp_path)).view(str(tmp_path / "train.py"))
    assert view.returns_number("pairmetrics.pair_hits")
    assert not view.returns_number("pairmetrics.soft_hits")    # a tensor sum of the distances keeps the graph
    assert not view.returns_number("pairmetrics.sometimes")    # falls off the end on one path
    assert [f for f in findings(tmp_path, monkeypatch, cache=Cache(str(tmp_path))) if f[2] == "GF208"] == []
    # the helper now returns the soft count, a tensor with a graph: both totals hold it, and the cached
    # train.py must see the edit of pairmetrics.py
    (tmp_path / "pairmetrics.py").write_text(PAIR_METRICS.replace("    return close + far\n",
                                                                  "    return torch.sigmoid(margin - dist).sum()\n"))
    got = findings(tmp_path, monkeypatch, cache=Cache(str(tmp_path)))
    assert [f for f in got if f[2] == "GF208"] == [("train.py", 16, "GF208"), ("train.py", 17, "GF208")]
