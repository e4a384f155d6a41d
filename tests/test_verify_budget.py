"""The check's budget is its own CPU time (budget.py): machine load does not make a verdict.

A check that waits in wall time without computing is not timed out; one that computes past its
CPU budget is stopped and reported as a CPU-limit hit; one that waits forever is stopped by the
wall-clock backstop, which says how much CPU it used. No wall-clock assertions: the verdicts and
their wording are what is checked.
"""

from __future__ import annotations

import signal
import textwrap

import pytest

from gradfix.verify import Verifier, VerifyRequest, budget, sandbox, verifier as verifier_mod
from gradfix.verify.environment import Containment

pytest.importorskip("torch")

SRC = """
import time
import torch.nn as nn

_slept = []

class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(3, 3)

    def forward(self, x):
        y = self.fc(x)
        y *= 2
        return y
"""


def req(rewritten: str) -> VerifyRequest:
    return VerifyRequest("case.py", textwrap.dedent(SRC), textwrap.dedent(rewritten), "GF101", 1, {"kind": "equal"})


def swap(new: str) -> str:
    assert "y *= 2" in SRC
    return SRC.replace("y *= 2", new)


# sleeps 1.5 s of wall time once, in the rewrite only, using no CPU: more than the 1 s CPU budget
SLEEP_ONCE = "y = y * 2\n        if not _slept:\n            _slept.append(1)\n            time.sleep(1.5)"


@pytest.fixture(scope="module")
def tight():
    """A 1 s CPU budget per check."""
    with Verifier(jobs=1, timeout_s=1.0) as v:
        yield v


def test_wall_time_without_cpu_is_not_a_timeout(tight, monkeypatch):
    # no extra grace on the engine side either: its deadline runs from the worker's "started", with the backstop
    monkeypatch.setattr(verifier_mod, "ANSWER_GRACE_S", 0.0)
    (res,) = tight.verify_many([req(swap(SLEEP_ONCE))])
    assert res.verdict == "equivalent", res


def test_cpu_past_the_budget_is_a_cpu_limit_hit_and_the_next_check_runs(tight):
    busy, fine = tight.verify_many([req(swap("while True:\n            pass")), req(swap("y = y * 2"))])
    assert busy.verdict == "untestable", busy
    assert "hit the CPU limit (1 s of CPU time" in busy.detail and "timed out" not in busy.detail, busy
    assert fine.verdict == "equivalent", fine


def test_a_check_that_waits_forever_is_stopped_by_the_backstop(monkeypatch):
    monkeypatch.setenv("GRADFIX_VERIFY_NO_WARMUP", "1")  # a second worker: skip its warm-up
    with Verifier(jobs=1, timeout_s=5.0, containment=Containment(wall_s=1.0)) as v:
        (res,) = v.verify_many([req(swap("time.sleep(600)"))])
    assert res.verdict == "untestable", res
    assert "the backstop" in res.detail and "of its 5 s CPU budget used" in res.detail, res


def test_the_hard_cpu_limit_kill_is_named_a_cpu_limit_hit():
    # SIGXCPU ignored by user code: the hard limit a second later is a SIGKILL; the CPU used tells them apart
    cfg = {"cpu_s": 2.0}
    assert "CPU limit (2 s" in sandbox.describe_signal(signal.SIGKILL, cfg, cpu_used=3.0)
    assert "out-of-memory" in sandbox.describe_signal(signal.SIGKILL, cfg, cpu_used=0.4)
    assert "CPU limit" in sandbox.describe_signal(signal.SIGXCPU, cfg, cpu_used=2.0)


def test_budget_rounding_and_backstop_floor():
    assert budget.cpu_seconds(0.2) == 1 and budget.cpu_seconds(2.0) == 2 and budget.cpu_seconds(2.5) == 3
    assert budget.wall_backstop(1.0) >= budget.WALL_MIN_S
    assert budget.wall_backstop(100.0) >= budget.WALL_FACTOR * 100.0
