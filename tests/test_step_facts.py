"""Shared step facts added for issue 11: every optimizer one backward's update steps
(analysis/trainstep.py `optimizer_names`, read by GF307's trained modules)."""

from __future__ import annotations

import libcst as cst

from gradfix.analysis import FileIndex
from gradfix.analysis.gradpath import GradPaths
from gradfix.analysis.loops import training_loops
from gradfix.analysis.trainstep import optimizer_names


def index_of(src: str) -> FileIndex:
    return FileIndex(cst.MetadataWrapper(cst.parse_module(src), unsafe_skip_copy=True), src)


TWO_STEPS = '''
import torch
import torch.nn as nn

a, b, c = nn.Linear(2, 2), nn.Linear(2, 2), nn.Linear(2, 2)
opt_a = torch.optim.SGD(a.parameters(), lr=0.1)
opt_b = torch.optim.SGD(b.parameters(), lr=0.1)
opt_c = torch.optim.SGD(c.parameters(), lr=0.1)
for x in data:
    loss = a(x).sum() + b(x).sum()
    loss.backward()
    opt_a.step()
    opt_b.step()
    other = c(x).sum()
    other.backward()
    opt_c.step()
    opt_a.step()
'''


def _loops(src):
    return [tl for _scope, _flow, tl in training_loops(index_of(src))]


def test_every_optimizer_stepped_before_the_next_backward():
    first, second = _loops(TWO_STEPS)
    assert optimizer_names(first) == ["opt_a", "opt_b"]  # opt_c's step belongs to the next backward
    assert optimizer_names(second) == ["opt_c", "opt_a"]


def test_trained_modules_are_those_of_every_stepped_optimizer():
    first, second = _loops(TWO_STEPS)
    assert GradPaths(first).trained == {"a", "b"}
    assert GradPaths(second).trained == {"c", "a"}


def test_no_step_no_optimizers():
    (only,) = _loops("import torch\nfor x in data:\n    loss = model(x).sum()\n    loss.backward()\n")
    assert optimizer_names(only) == []
