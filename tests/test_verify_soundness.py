"""Soundness of verdicts (issue 12, items 1-4): a verdict is a proof of what it says.

- coverage: no verdict but `untestable` unless every changed statement ran in its version;
- every effect: constructions compared before state is copied, arguments after the call;
- `fixes-hazard` only when the original shows the hazard when run, else `changes-behaviour`,
  which `apply` takes only with --unsafe-fixes;
- changes to one unit are verified together, so one default `apply` fixes a loop with three hazards.
"""

from __future__ import annotations

import textwrap

import pytest

from gradfix.codemods import ALL_RULES
from gradfix.engine import Engine, Policy, policy_decider
from gradfix.model import Verdict
from gradfix.verify import VerifyRequest
from gradfix.verify.api import VERDICTS

pytest.importorskip("torch")


@pytest.fixture(scope="module")
def verifier(shared_verifier):
    return shared_verifier


@pytest.fixture(scope="module")
def engine():
    return Engine(ALL_RULES)


def req(old: str, new: str, contract=None, path="unit.py", root=None, rule="GF101") -> VerifyRequest:
    return VerifyRequest(path=path, original=textwrap.dedent(old), rewritten=textwrap.dedent(new), rule=rule, line=1,
                         contract=contract or {"kind": "equal"}, project_root=root)


BRANCH = """
import torch.nn as nn

class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(8, 4)
        self.big = False

    def forward(self, x):
        h = self.fc(x)
        if x.shape[0] > 64:
            h = h * 2
        if self.big:
            h = h - 1
        return h
"""

ZERO = """
import torch.nn as nn

def zero_module(module):
    for p in module.parameters():
        p.detach().zero_()
    return module

class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(8, 8)
        self.out = zero_module(nn.Linear(8, 4))

    def forward(self, x):
        return self.out(self.fc(x).relu())
"""

EMA = """
def ema_update(ema, model, decay=0.9):
    for pe, p in zip(ema.parameters(), model.parameters()):
        pe.detach().mul_(decay).add_(p.detach(), alpha=1 - decay)
"""

FIXTURES = """
import torch.nn as nn

def fixture_ema_update(mod):
    return mod.ema_update, (nn.Linear(4, 3), nn.Linear(4, 3))
"""

SUMMED = """
import torch.nn as nn

class Head(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(16, 4)

    def forward(self, x):
        return (self.fc(x) ** 2).sum() / 4096
"""

THREE = """
import torch
import torch.nn as nn

model = nn.Linear(4, 2)
opt = torch.optim.SGD(model.parameters(), lr=0.1)
sched = torch.optim.lr_scheduler.StepLR(opt, step_size=10, gamma=0.5)
loader = [(torch.randn(8, 4), torch.randn(8, 2)) for _ in range(3)]


def train(epochs):
    for epoch in range(epochs):
        total = 0
        for x, y in loader:
            loss = ((model(x) - y) ** 2).mean()
            loss.backward()
            opt.zero_grad()
            opt.step()
            sched.step()
            total += loss
        print(epoch, total)
"""

SUM_TO_MEAN = """
def train(model, loader, criterion, opt):
    for x, y in loader:
        opt.zero_grad()
        loss = criterion(model(x), y) / 4096
        loss.backward()
        opt.step()
"""


def test_changed_line_under_an_untaken_branch_is_not_equivalent(verifier):
    by_shape, by_flag = verifier.verify_many([
        req(BRANCH, BRANCH.replace("h = h * 2", "h = h * 3")),     # reached with a batch of 128
        req(BRANCH, BRANCH.replace("h = h - 1", "h = h - 2")),     # a flag that is False after __init__
    ])
    assert by_shape.verdict == "failed", by_shape
    assert "batch sizes 4, 128" in by_shape.detail, by_shape.detail
    assert by_flag.verdict == "untestable", by_flag
    assert "the changed line did not run on the inputs tried (define a fixture that reaches it)" in by_flag.detail
    assert "`h = h - 1`" in by_flag.detail and "fixture_Net" in by_flag.detail


def test_an_equivalent_rewrite_under_the_branch_is_equivalent_once_it_runs(verifier):
    res = verifier.verify_many([req(BRANCH, BRANCH.replace("h = h * 2", "h = h + h"))])[0]
    assert res.verdict == "equivalent", res
    assert "batch sizes 4, 128" in res.detail


def test_helper_that_zeroes_parameters_rewritten_into_a_no_op_fails(verifier):
    res = verifier.verify_many([req(ZERO, ZERO.replace("p.detach().zero_()", "p.detach().clone().zero_()"))])[0]
    assert res.verdict == "failed", res
    assert "constructing Block gives a different module: out.weight differs after construction" in res.detail


def test_function_whose_effect_is_its_argument_is_compared_after_the_call(verifier, tmp_path):
    (tmp_path / "gradfix_fixtures.py").write_text(FIXTURES)
    noop = EMA.replace("pe.detach().mul_", "pe.detach().clone().mul_")
    same = EMA.replace("alpha=1 - decay", "alpha=(1 - decay)")
    res, ok = verifier.verify_many([req(EMA, noop, root=str(tmp_path)), req(EMA, same + "\n", root=str(tmp_path))])
    assert res.verdict == "failed", res
    assert "argument 0 parameter" in res.detail and "differs" in res.detail, res.detail
    assert ok.verdict == "equivalent", ok


def test_scale_on_the_model_says_whether_the_original_shows_the_hazard(verifier):
    huge = SUMMED.replace("/ 4096", "/ 1000000000")
    summed, tiny = verifier.verify_many([
        req(SUMMED, SUMMED.replace(" / 4096", ""), {"kind": "scale", "factor": 4096.0}, rule="GF201"),
        req(huge, SUMMED.replace(" / 4096", ""), {"kind": "scale", "factor": 1e9}, rule="GF201"),
    ])
    assert summed.verdict == "changes-behaviour", summed
    assert "no hazard shown" in summed.detail
    assert tiny.verdict == "fixes-hazard", tiny
    assert "below Adam's eps" in tiny.detail


def test_three_hazard_loop_is_fixed_by_one_default_apply(engine, verifier):
    src = textwrap.dedent(THREE)
    res = engine.fix_source(src, "train.py", policy_decider(Policy()), verifier=verifier)
    got = {c.rule: (c.verdict, c.applied) for c in res.changes}
    assert got == {"GF204": (Verdict.FIXES_HAZARD, True), "GF202": (Verdict.FIXES_HAZARD, True),
                   "GF208": (Verdict.EQUIVALENT, True)}, [(c.rule, c.verdict, c.detail) for c in res.changes]
    assert res.findings == []
    detail = next(c.detail for c in res.changes if c.rule == "GF202")
    assert "verified together with" in detail and "None or zero gradients" in detail
    assert "does not follow the declared per-epoch schedule" in detail
    assert "opt.zero_grad()\n            loss =" in res.fixed and "        sched.step()\n" in res.fixed


def test_sum_to_mean_divisor_is_not_applied_by_default(engine, verifier):
    src = textwrap.dedent(SUM_TO_MEAN)
    default = engine.fix_source(src, "train.py", policy_decider(Policy()), verifier=verifier)
    [change] = default.changes
    assert change.rule == "GF201" and change.verdict is Verdict.CHANGES_BEHAVIOUR, change.detail
    assert not change.applied and "--unsafe-fixes" in change.reason
    assert default.fixed == src
    unsafe = engine.fix_source(src, "train.py", policy_decider(Policy(unsafe_fixes=True)), verifier=verifier)
    assert unsafe.changes[0].applied and "/ 4096" not in unsafe.fixed


def test_every_verdict_has_a_label_and_a_policy():
    from gradfix.cli.lsp import VERDICT_WORDS
    from gradfix.engine import APPLIED_VERDICTS

    assert set(VERDICTS) <= set(VERDICT_WORDS)
    assert {v.value for v in APPLIED_VERDICTS} == {"equivalent", "fixes-crash", "fixes-hazard"}
    assert "expected-change" not in VERDICTS and "expected-change" not in {v.value for v in Verdict}


def test_changed_statements_map_a_line_diff_onto_statements():
    import ast

    from gradfix.verify.coverage import changed_statements

    old = textwrap.dedent(BRANCH)
    new = old.replace("h = h * 2", "h = h * 3").replace("if self.big:", "if self.big or False:")
    o, n = changed_statements(old, new, ast.parse(old), ast.parse(new))
    assert [s.text for s in o] == ["h = h * 2", "if self.big:"]
    assert [s.text for s in n] == ["h = h * 3", "if self.big or False:"]
    # a comment or blank line is no statement; module-level code is judged elsewhere
    new = old.replace("        return h", "        # done\n        return h") + "x = 1\n"
    o, n = changed_statements(old, new, ast.parse(old), ast.parse(new))
    assert o == [] and n == []
