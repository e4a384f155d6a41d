"""GF201 in module-level code (scripts, notebooks): the verifier runs one iteration of the script's own
loop, on the model, loss function and optimizer the file builds and a synthetic batch, and gives
`fixes-hazard` only when the original's measured updates vanish (gradients below Adam's eps or SGD
steps below float32 resolution); `changes-behaviour` when they do not (`/ 2`, a sum-to-mean `/ 4096`)."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from gradfix.codemods import ALL_RULES
from gradfix.engine import Engine, Policy, policy_decider
from gradfix.model import Verdict
from gradfix.notebook import Notebook
from gradfix.verify import VerifyRequest

pytest.importorskip("torch")

ROOT = Path(__file__).resolve().parent.parent
DEMO_SEED2 = ROOT / "examples" / "seed2_training.py"
GOLDEN_SEED2 = ROOT / "golden" / "seeds" / "seed2_loop.py"

LOOP = """
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
model = nn.Linear(4, 3)
opt = torch.optim.SGD(model.parameters(), lr=0.1)
loader = [(torch.randn(8, 4), torch.randint(0, 3, (8,))) for _ in range(4)]
for epoch in range(3):
    for x, y in loader:
        opt.zero_grad()
        loss = LOSS
        loss.backward()
        opt.step()
"""


@pytest.fixture(scope="module")
def verifier(shared_verifier):
    return shared_verifier


@pytest.fixture(scope="module")
def engine():
    return Engine(ALL_RULES)


def scale_req(loss: str, kept: str, factor: float, src: str = LOOP, expr: bool = True) -> VerifyRequest:
    old, new = src.replace("LOSS", loss), src.replace("LOSS", kept)
    line = next(i for i, l in enumerate(old.splitlines(), 1) if l.strip() == f"loss = {loss}")
    contract = {"kind": "scale", "factor": factor}
    if expr:
        contract.update(expr_old=loss, expr_new=kept, opaque=[kept])
    return VerifyRequest(path="train.py", original=old, rewritten=new, rule="GF201", line=line, contract=contract)


def test_scale_in_a_script_is_fixes_hazard_only_when_the_updates_vanish(verifier):
    small, huge, wrong = verifier.verify_many([
        scale_req("F.mse_loss(model(x), y) / 2", "F.mse_loss(model(x), y)", 2.0),
        scale_req("F.mse_loss(model(x), y) / 1e9", "F.mse_loss(model(x), y)", 1e9),
        scale_req("F.mse_loss(model(x), y) / 1e9", "F.mse_loss(model(x), y)", 1e6),
    ])
    for res in (small, huge, wrong):
        assert res.unit == "<module-level training loop>", res
        assert "run as the script runs it" in res.detail and "`opt` (SGD)" in res.detail, res.detail
    assert small.verdict == "changes-behaviour", small
    assert "gradients x2 as the removed factor says" in small.detail and "no hazard shown" in small.detail
    assert huge.verdict == "fixes-hazard", huge
    assert "below Adam's eps" in huge.detail and "SGD step (lr 0.1) moved the weights by" in huge.detail
    assert wrong.verdict == "failed" and "not x1e+06" in wrong.detail, wrong


def test_sum_to_mean_divisor_in_a_script_is_not_applied_by_default(engine, verifier):
    src = textwrap.dedent(LOOP.replace("LOSS", "F.cross_entropy(model(x), y) / 4096"))
    res = engine.fix_source(src, "train.py", policy_decider(Policy()), verifier=verifier)
    [change] = res.changes
    assert change.rule == "GF201" and change.verdict is Verdict.CHANGES_BEHAVIOUR, change.detail
    assert "gradients x4096 as the removed factor says" in change.detail and "no hazard shown" in change.detail
    assert not change.applied and "--unsafe-fixes" in change.reason
    assert res.fixed == src


def test_the_second_seed_with_its_model_is_fixed_by_default(engine, verifier):
    """The demo's copy of the second seed (the cells the seed leaves out, written out): GF201 is
    `fixes-hazard` on its own AdamW, model and BCE loss, so `apply` takes it and nothing is left."""
    src = DEMO_SEED2.read_text()
    res = engine.fix_source(src, "seed2_training.py", policy_decider(Policy()), verifier=verifier)
    [change] = res.changes
    assert (change.rule, change.verdict, change.applied) == ("GF201", Verdict.FIXES_HAZARD, True), change.detail
    assert "`model` (Sequential) and `optimizer` (AdamW)" in change.detail
    assert "the factor to 2.8e-08 (the loss is float32)" in change.detail   # `targets.float()`
    assert "below Adam's eps" in change.detail
    assert res.findings == []
    assert "/ 1000000000" not in res.fixed


def test_the_second_seed_alone_cannot_be_run_and_says_which_names_are_missing(engine, verifier):
    src = GOLDEN_SEED2.read_text()
    res = engine.fix_source(src, "seed2_loop.py", policy_decider(Policy()), verifier=verifier)
    [change] = res.changes
    assert change.verdict is Verdict.CHANGES_BEHAVIOUR and not change.applied, change.detail
    assert "model and loss function were not run" in change.detail
    assert "`model` (line 18)" in change.detail and "not defined in the file before the loop" in change.detail


MAIN = """
import torch
import torch.nn as nn

if __name__ == "__main__":
    model = nn.Linear(5, 2)
    opt = torch.optim.Adam(model.parameters())
    for x, y in loader:
        opt.zero_grad()
        loss = LOSS
        loss.backward()
        opt.step()
"""


def test_setup_in_a_main_block_runs_and_a_setup_that_cannot_run_is_named(verifier):
    mse = "((model(x) - y) ** 2).mean()"
    loads = LOOP.replace("model = nn.Linear(4, 3)", "model = torch.load('weights.pt')")
    reads = LOOP.replace("        opt.zero_grad()", "        x = torch.load('x.pt')\n        opt.zero_grad()")
    main, setup, body = verifier.verify_many([
        scale_req(f"{mse} / 1e9", mse, 1e9, src=MAIN, expr=False),
        scale_req("F.mse_loss(model(x), y) / 1e9", "F.mse_loss(model(x), y)", 1e9, src=loads, expr=False),
        scale_req("F.mse_loss(model(x), y) / 1e9", "F.mse_loss(model(x), y)", 1e9, src=reads, expr=False),
    ])
    assert main.verdict == "fixes-hazard" and "statements at lines 6, 7" in main.detail, main
    assert setup.verdict == "untestable", setup
    assert "setup statement at line 7 (`model = torch.load('weights.pt')`) raises FileNotFoundError" in setup.detail
    assert body.verdict == "untestable" and "training step raises on every synthetic batch tried" in body.detail, body
    assert "x.pt" in body.detail


def test_a_notebook_loop_is_run_from_its_cells(engine, verifier):
    """The cells joined as one module (magics masked), as `apply` gives them to the engine: the model is
    built in one cell, the loop runs in a `%%time` cell with a shell escape in its body."""
    nb = Notebook.from_cells("train.ipynb", [
        (1, "import torch\nimport torch.nn as nn"),
        (2, "model = nn.Sequential(nn.Linear(6, 8), nn.Tanh(), nn.Linear(8, 2))\n"
            "opt = torch.optim.Adam(model.parameters(), lr=1e-3)\ncrit = nn.MSELoss()"),
        (4, "%%time\nfor x, y in loader:\n    opt.zero_grad()\n    !echo step\n"
            "    loss = crit(model(x), y) * 1e-9\n    loss.backward()\n    opt.step()"),
    ])
    res = engine.fix_source(nb.text, "train.ipynb", policy_decider(Policy()), verifier=verifier)
    [change] = res.changes
    assert (change.rule, change.verdict, change.applied) == ("GF201", Verdict.FIXES_HAZARD, True), change.detail
    assert nb.locate(change.finding.span.line)[0] == 4
    assert "`opt` (Adam)" in change.detail and "below Adam's eps" in change.detail
    assert "    loss = crit(model(x), y)\n" in res.fixed
