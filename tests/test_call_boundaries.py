"""Facts that cross a `with` block or a call boundary (issue 11, classes from the fourth held-out set):
apex's scaled loss as a training step, a softmax model reaching the loss through a parameter, and a
module held by an object passed in. The rules' behaviour is in golden/GF203, GF305 and GF308; these
check the analysis answers themselves."""

from __future__ import annotations

import libcst as cst
import pytest

from gradfix.analysis import FileIndex
from gradfix.analysis.flow import Kind
from gradfix.analysis.iteration import iterations
from gradfix.analysis.probabilities import Probabilities, cross_entropy_input
from gradfix.codemods import ALL_RULES
from gradfix.engine import Engine


def _index(src: str) -> FileIndex:
    return FileIndex(cst.MetadataWrapper(cst.parse_module(src), unsafe_skip_copy=True))


@pytest.fixture(scope="module")
def engine():
    return Engine(ALL_RULES)


SCALED = """
import torch
def fit(model, opt, batches, amp):
    for x in batches:
        loss = model(x).mean()
        with amp.scale_loss(loss, opt) as scaled_loss:
            scaled_loss.backward()
        with open("log.txt") as fh:
            fh.write("x")
        opt.step()
"""


def test_scaled_loss_of_a_with_block_is_a_training_step():
    index = _index(SCALED)
    fn = index.functions["fit"]
    flow = index.flow(fn)
    kinds = {b.name: b.kind for b in flow.bindings if b.name in ("scaled_loss", "fh")}
    assert kinds == {"scaled_loss": Kind.UNKNOWN, "fh": Kind.OTHER}
    its = iterations(index)
    assert len(its) == 1 and its[0].backward is not None and its[0].step_event().recv == "opt"


PASSED = """
import torch.nn as nn
probs = nn.Sequential(nn.Linear(4, 3), nn.Softmax(dim=1))
logits = nn.Linear(4, 3)
def fit(net, x, y):
    net = net.cuda()
    return nn.functional.cross_entropy(net(x), y)
def fit_b(net, x, y):
    return nn.functional.cross_entropy(net(x), y)
def fit_c(net, x, y):
    net = make_other(net)
    return nn.functional.cross_entropy(net(x), y)
fit(probs, 1, 2)
fit(probs, 3, 4)
fit_b(probs, 1, 2)
fit_b(logits, 1, 2)
fit_c(probs, 1, 2)
"""


@pytest.mark.parametrize("fn,expected", [("fit", "softmax"), ("fit_b", None), ("fit_c", None)])
def test_model_parameter_is_what_every_call_passes(fn, expected):
    index = _index(PASSED)
    func = index.functions[fn]
    flow = index.flow(func)
    calls = [n for st, n in flow.calls if cross_entropy_input(n, index, flow) is not None]
    assert len(calls) == 1
    found = Probabilities(index).of(cross_entropy_input(calls[0], index, flow), flow)
    assert (found[0] if found else None) == expected


HELD = """
import torch.nn as nn
class Box:
    net = None
def step(box, x):
    return box.net.forward(x)
def main(x):
    box = Box()
    box.net = nn.Linear(2, 2)
    return step(box, x)
def late(x):
    box = Box()
    out = step(box, x)
    box.net = nn.Linear(2, 2)
    return out
"""


def test_module_on_a_passed_object_needs_every_caller_to_set_it_first(engine):
    found, errors = engine.lint_source(HELD.split("def late")[0], "t.py")
    assert errors == []
    assert [(f.span.line, f.rule) for f in found if f.rule == "GF305"] == [(6, "GF305")]
    found, errors = engine.lint_source(HELD, "t.py")
    assert errors == [] and not [f for f in found if f.rule == "GF305"]
