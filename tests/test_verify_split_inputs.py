"""Inputs of a forward that concatenates its arguments before its first layer (inputs._split_candidates): a head
comparing two distance maps, `torch.cat((d0, d1, d0 - d1), dim=1)` into a Conv2d of 3 channels, fails on inputs of
3 channels each; each argument then gets a share of the channels (here 1), drawn from a normal, then from [0, 1)
when a loss needs a probability made from an argument. The detail says which input was used."""

from __future__ import annotations

from pathlib import Path

import pytest

from gradfix.verify import VerifyRequest

torch = pytest.importorskip("torch")

HEADS = """
import torch
import torch.nn as nn


class Compare(nn.Module):
    def __init__(self, mid=8):
        super().__init__()
        self.conv = nn.Conv2d(3, mid, 1)
        self.out = nn.Conv2d(mid, 1, 1)

    def forward(self, d0, d1):
        h = self.conv(torch.cat((d0, d1, d0 - d1), dim=1)).sigmoid()
        h *= 2.0
        return self.out(h)


class Ranking(nn.Module):
    def __init__(self):
        super().__init__()
        self.head = nn.Linear(4, 1)
        self.loss = nn.BCELoss()

    def forward(self, a, b, judge):
        x = torch.cat((a, b, a * b, judge), dim=1)
        p = self.head(x).sigmoid()
        return self.loss(p, judge.mean(dim=1, keepdim=True))
"""


def request(root: Path, old: str, new: str) -> VerifyRequest:
    src = (root / "heads.py").read_text(encoding="utf-8")
    line = 1 + next(i for i, t in enumerate(src.splitlines()) if old in t)
    return VerifyRequest(path=str(root / "heads.py"), original=src, rewritten=src.replace(old, new), rule="GF101",
                         line=line, contract={"kind": "equal"}, project_root=None)


@pytest.fixture(scope="module")
def verdicts(tmp_path_factory, shared_verifier):
    root = tmp_path_factory.mktemp("heads")
    (root / "heads.py").write_text(HEADS, encoding="utf-8")
    return shared_verifier.verify_many([
        request(root, "h *= 2.0", "h = h * 2.0"),
        request(root, "h *= 2.0", "h = h * 3.0"),
        request(root, "p = self.head(x).sigmoid()", "p = torch.sigmoid(self.head(x))"),
    ])


def test_each_argument_gets_a_share_of_the_first_layers_channels(verdicts):
    fixed, wrong, _ = verdicts
    assert fixed.verdict == "fixes-crash", fixed  # sigmoid saves its output: `*=` breaks its backward
    assert "Input of Compare: 2 tensors of shape (4, 1, 32, 32), drawn from a normal (a share of the 3 channels of " \
           "its first layer Conv2d" in fixed.detail, fixed
    assert wrong.verdict == "failed", wrong  # the same input still refuses a rewrite that changes the output


def test_values_from_zero_to_one_when_a_loss_needs_a_probability(verdicts):
    ranking = verdicts[2]
    assert ranking.verdict == "equivalent", ranking
    assert "Input of Ranking: 3 tensors of shape (4, 1), drawn from [0, 1)" in ranking.detail, ranking


def test_split_candidates_shapes():
    from gradfix.verify.inputs import _split_candidates

    conv = torch.nn.Conv2d(6, 4, 1)
    shapes = [m.shape for m in _split_candidates(conv, torch.float64, 2)]
    assert shapes[:6] == [(4, 3, 32, 32), (4, 3, 28, 28), (4, 3, 64, 64), (4, 1, 32, 32), (4, 1, 28, 28),
                          (4, 1, 64, 64)]
    assert len(shapes) == 12  # then the same from [0, 1)
    a, b = _split_candidates(conv, torch.float64, 2)[6]()
    assert a.min() >= 0 and a.max() < 1 and not torch.equal(a, b)
    assert _split_candidates(torch.nn.Linear(1, 2), torch.float64, 2) == []  # no share narrower than the layer
