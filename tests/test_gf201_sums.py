"""GF201 on summed losses: a literal divisor of a sum may be a mean over the batch's elements."""

from __future__ import annotations

import pytest

from gradfix.codemods import ALL_RULES
from gradfix.engine import Engine

_LOOP = '''
import torch
import torch.nn as nn
import torch.nn.functional as F
model = nn.Linear(4, 3)
opt = torch.optim.SGD(model.parameters(), lr=0.1)
{setup}
for x, y in loader:
    opt.zero_grad()
    {body}
    loss.backward()
    opt.step()
'''


@pytest.fixture(scope="module")
def engine():
    return Engine(ALL_RULES)


@pytest.mark.parametrize("setup, body, fires", [
    ("", "loss = F.cross_entropy(model(x), y) / 4096", True),                      # a mean divided: a scale
    ("", "loss = F.cross_entropy(model(x), y, reduction='sum') / 4096", False),    # a sum over tokens: a mean
    ("crit = nn.CrossEntropyLoss(reduction='sum')", "loss = crit(model(x), y) / 4096", False),
    ("crit = nn.CrossEntropyLoss()", "loss = crit(model(x), y) / 4096", True),
    ("crit = nn.MSELoss(size_average=False)", "loss = crit(model(x), y) / 2048", False),
    ("", "loss = model(x).sum() / 4096", False),
    ("", "loss = model(x).sum() / 1000000000", True),                               # no batch has 1e9 elements
    ("", "loss = model(x).sum(dim=1).mean() / 4096", True),                         # the outer reduction is a mean
    ("", "total = F.cross_entropy(model(x), y, reduction='sum')\n    loss = total / 4096", False),
    ("", "loss = F.cross_entropy(model(x), y, reduction='sum')\n    loss /= 4096", False),
    ("", "loss = F.cross_entropy(model(x), y, reduction='sum') / y.numel()", False),
])
def test_gf201_leaves_means_of_sums_alone(engine, setup, body, fires):
    src = _LOOP.format(setup=setup, body=body)
    found, errors = engine.lint_source(src, "t.py")
    assert errors == []
    assert ("GF201" in {f.rule for f in found}) is fires
