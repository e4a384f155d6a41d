"""Conditions the train-loop check cannot read (checks_loop.MODES): a test on data (`if loss.item() < limit:`) or a
period that is not a literal (`if (i + 1) % accum == 0:`) may hold on any batches, so each is rendered three ways
(true on every batch, on the second batch only, on the last batch only; a period as 1, 2 and 3) and a verdict is
given only when the three agree. A rewrite that is the same training only when the condition always holds is not
called equivalent."""

from __future__ import annotations

import pytest

from gradfix.verify import VerifyRequest

pytest.importorskip("torch")

HEAD = """import torch
import torch.nn as nn
model = nn.Linear(4, 2)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
"""

# the step (and the clear after it) only on some batches: gradients add up between steps
STEP_WHEN = HEAD + """for i, (x, y) in enumerate(loader):
    loss = ((model(x) - y) ** 2).mean()
    loss.backward()
    if {cond}:
        optimizer.step()
        optimizer.zero_grad()
"""
# the clear moved to the top of every batch: the same training only if the step runs on every batch
CLEAR_EVERY = HEAD + """for i, (x, y) in enumerate(loader):
    optimizer.zero_grad()
    loss = ((model(x) - y) ** 2).mean()
    loss.backward()
    if {cond}:
        optimizer.step()
"""
# the clear every batch in both versions, moved from the top to the bottom: the same training however the
# condition falls
CLEAR_TOP = HEAD + """for i, (x, y) in enumerate(loader):
    optimizer.zero_grad()
    loss = ((model(x) - y) ** 2).mean()
    loss.backward()
    if {cond}:
        optimizer.step()
"""
CLEAR_BOTTOM = HEAD + """for i, (x, y) in enumerate(loader):
    loss = ((model(x) - y) ** 2).mean()
    loss.backward()
    if {cond}:
        optimizer.step()
    optimizer.zero_grad()
"""
CONTRACT = {"kind": "train-loop", "loop": {"scope": "<module>", "ordinal": 0}}
OPAQUE, PERIOD = "loss.item() < limit", "(i + 1) % accum == 0"


def _verdict(verifier, old: str, new: str, cond: str):
    old, new = old.format(cond=cond), new.format(cond=cond)
    (res,) = verifier.verify_many([VerifyRequest("t.py", old, new, "GF204", 5, dict(CONTRACT))])
    return res


@pytest.mark.parametrize("cond", [OPAQUE, PERIOD])
def test_a_verdict_that_needs_the_condition_always_true_is_refused(shared_verifier, cond):
    res = _verdict(shared_verifier, STEP_WHEN, CLEAR_EVERY, cond)
    assert res.verdict == "untestable", res
    assert "the verdict depends on which batches" in res.detail and "on every batch (a period 1): equivalent" \
        in res.detail, res.detail


@pytest.mark.parametrize("cond", [OPAQUE, PERIOD])
def test_a_verdict_that_holds_however_the_condition_falls(shared_verifier, cond):
    res = _verdict(shared_verifier, CLEAR_TOP, CLEAR_BOTTOM, cond)
    assert res.verdict == "equivalent", res
    assert "The same verdict holds with" in res.detail and "on the last batch only" in res.detail, res.detail


def test_literal_conditions_are_rendered_once(shared_verifier):
    res = _verdict(shared_verifier, CLEAR_TOP, CLEAR_BOTTOM, "(i + 1) % 2 == 0")
    assert res.verdict == "equivalent", res
    assert "The same verdict holds" not in res.detail, res.detail
