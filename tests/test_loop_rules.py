"""Loop-order rules (GF202-GF210): the iteration analysis, the second seed, and the train-loop check.

The golden cases (golden/GF202 ... golden/GF210) are run by test_golden.py; this file checks
what the goldens cannot show on their own.
"""

from __future__ import annotations

import json
from pathlib import Path

import libcst as cst
import pytest

from gradfix.analysis import FileIndex
from gradfix.analysis.iteration import iterations
from gradfix.analysis.loopspec import skeleton
from gradfix.codemods import ALL_RULES
from gradfix.engine import Engine, accept_all

GOLDEN = Path(__file__).resolve().parent.parent / "golden"
LOOP_RULES = [f"GF{n}" for n in range(202, 211)]


@pytest.fixture(scope="module")
def engine():
    return Engine(ALL_RULES)


def _index(src: str) -> FileIndex:
    return FileIndex(cst.MetadataWrapper(cst.parse_module(src), unsafe_skip_copy=True))


def _rules(engine, src: str) -> list[tuple[int, str, bool]]:
    found, errors = engine.lint_source(src, "t.py")
    assert errors == []
    return [(f.span.line, f.rule, f.fixable) for f in found]


def test_loop_rule_goldens_are_substantial():
    for rule in LOOP_RULES:
        cases = [p for p in (GOLDEN / rule).glob("*.py") if not p.name.endswith(".fixed.py")]
        pos = [p for p in cases if p.stem.startswith("pos_")]
        neg = [p for p in cases if p.stem.startswith("neg_")]
        assert len(pos) >= 4 and len(neg) >= 4, (rule, len(pos), len(neg))
        if rule != "GF205":  # detect only
            verdicts = [l for p in pos for l in p.with_suffix(".findings").read_text().splitlines()
                        if rule in l and "verdict=" in l]
            assert verdicts, rule


# -- the second seed -------------------------------------------------------------

SEED2 = (GOLDEN / "seeds" / "seed2_loop.py").read_text()


def test_second_seed_keeps_only_gf201(engine):
    assert {r for _, r, _ in _rules(engine, SEED2)} == {"GF201"}


def test_second_seed_scheduler_fires_only_when_known_epoch_based(engine):
    header = "import torch\n"
    step_lr = header + "scheduler = torch.optim.lr_scheduler.StepLR(optimizer, step_size=30, gamma=0.1)\n"
    one_cycle = header + "scheduler = torch.optim.lr_scheduler.OneCycleLR(optimizer, max_lr=0.1, total_steps=1000)\n"
    iters = header + "scheduler = torch.optim.lr_scheduler.StepLR(optimizer, step_size=3 * len(train_dataloader))\n"
    got = _rules(engine, step_lr + SEED2)
    assert ("GF202" in {r for _, r, _ in got}) and all(fix for _, r, fix in got if r == "GF202")
    assert "GF202" not in {r for _, r, _ in _rules(engine, one_cycle + SEED2)}
    assert "GF202" not in {r for _, r, _ in _rules(engine, iters + SEED2)}


def test_second_seed_checklist_rules_stay_silent_on_its_correct_parts(engine):
    # total_loss += loss.item() (GF208), clip before step (GF206/GF207), zero_grad first (GF204/GF205)
    rules = {r for _, r, _ in _rules(engine, SEED2)}
    assert not rules & {"GF203", "GF204", "GF205", "GF206", "GF207", "GF208", "GF209", "GF210"}


# -- the iteration analysis --------------------------------------------------------

AMP_BRANCHES = """
import torch
for x, y in loader:
    optimizer.zero_grad()
    loss = loss_fn(model(x), y)
    if use_amp:
        scaler.scale(loss).backward()
        scaler.unscale_(optimizer)
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        scaler.step(optimizer)
        scaler.update()
    else:
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optimizer.step()
"""


def test_exclusive_branches_are_not_one_iteration(engine):
    # linearised, the else-branch clip follows scaler.step(): not a clip-after-step
    assert _rules(engine, AMP_BRANCHES) == []
    its = iterations(_index(AMP_BRANCHES))
    assert len(its) == 2
    for it in its:
        sk = skeleton(it)
        ops = [e["op"] for e in sk["batch"]]
        assert ops.count("backward") == 1 and ops.count("step") == 1 and ops.count("clip") == 1
        assert ops.index("clip") < ops.index("step")


def test_skeleton_reads_conditions_and_epoch_positions():
    src = """
import torch
sched = torch.optim.lr_scheduler.StepLR(opt, step_size=5)
for epoch in range(10):
    for i, (x, y) in enumerate(loader):
        loss = loss_fn(model(x), y) / 4
        loss.backward()
        if (i + 1) % 4 == 0:
            opt.step()
            opt.zero_grad()
    sched.step()
"""
    (it,) = iterations(_index(src))
    sk = skeleton(it)
    assert [e["op"] for e in sk["batch"]] == ["forward", "backward", "step", "zero_grad"]
    assert sk["batch"][2]["cond"] == {"every": 4, "offset": 1, "every_src": "4"}
    assert [e["op"] for e in sk["epoch_end"]] == ["sched"] and sk["epoch_loop"]


def test_fix_contracts_are_json_and_name_the_loop(engine):
    for rule in LOOP_RULES:
        for case in (GOLDEN / rule).glob("pos_*.py"):
            if case.name.endswith(".fixed.py"):
                continue
            found, _ = engine.lint_source(case.read_text(), str(case))
            for f in found:
                if f.fix is not None and f.rule in LOOP_RULES:
                    c = json.loads(json.dumps(f.fix.contract))
                    assert c["kind"] == "train-loop", case
                    assert "loop" in c or "statement" in c, case


def test_moves_keep_comments_and_parse(engine):
    src = """import torch
model = torch.nn.Linear(2, 1)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
scheduler = torch.optim.lr_scheduler.StepLR(optimizer, step_size=2)
for epoch in range(3):
    for x, y in loader:
        optimizer.zero_grad()
        loss = ((model(x) - y) ** 2).mean()
        loss.backward()
        optimizer.step()
        # decay per epoch
        scheduler.step()  # StepLR
"""
    fixed = engine.fix_source(src, "t.py", accept_all).fixed
    assert fixed.endswith("        optimizer.step()\n    # decay per epoch\n    scheduler.step()  # StepLR\n")


# -- the train-loop check --------------------------------------------------------

BASE = """import torch
import torch.nn as nn
model = nn.Linear(4, 2)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
scheduler = torch.optim.lr_scheduler.OneCycleLR(optimizer, max_lr=0.1, total_steps=100)
for x, y in loader:
    optimizer.zero_grad()
    loss = ((model(x) - y) ** 2).mean()
    loss.backward()
    scheduler.step()
    optimizer.step()
"""


@pytest.fixture(scope="module")
def verifier(shared_verifier):
    return shared_verifier


def _request(engine, original: str, rewritten: str, rule: str):
    from gradfix.verify import VerifyRequest

    (f,) = [f for f in engine.lint_source(original, "t.py")[0] if f.rule == rule]
    return VerifyRequest(path="t.py", original=original, rewritten=rewritten, rule=rule, line=f.span.line,
                         contract=dict(f.fix.contract))


def test_train_loop_verdicts(engine, verifier):
    good = BASE.replace("    scheduler.step()\n    optimizer.step()\n", "    optimizer.step()\n    scheduler.step()\n")
    # moving the scheduler before zero_grad is the same training as before (equivalent, not a fix), and
    # a rewrite that also drops zero_grad is neither the original nor the canonical order
    earlier = BASE.replace("    scheduler.step()\n", "").replace("    optimizer.zero_grad()\n",
                                                                "    scheduler.step()\n    optimizer.zero_grad()\n")
    wrong = good.replace("    optimizer.zero_grad()\n", "")
    # zero_grad moved from the top to after the step: the same training
    same = good.replace("    optimizer.zero_grad()\n", "").replace("    scheduler.step()\n",
                                                                    "    scheduler.step()\n    optimizer.zero_grad()\n")
    reqs = [_request(engine, BASE, good, "GF203"), _request(engine, BASE, wrong, "GF203"),
            _request(engine, BASE, earlier, "GF203")]
    res = verifier.verify_many(reqs)
    assert res[0].verdict == "fixes-hazard", res[0].detail
    assert "lr per step" in res[0].detail and "not the user's model" in res[0].detail
    assert res[1].verdict == "failed" and "differs from the canonical order" in res[1].detail, res[1].detail
    assert res[2].verdict == "equivalent", res[2].detail
    # equivalence: the contract of the good rewrite's loop, checked against a reordering that changes nothing
    from gradfix.verify import VerifyRequest

    c = dict(reqs[0].contract, skeleton=None)
    res = verifier.verify_many([VerifyRequest("t.py", good, same, "GF204", 9, c)])
    assert res[0].verdict == "equivalent", res[0].detail


def test_train_loop_untestable_for_two_optimizers(verifier):
    from gradfix.verify import VerifyRequest

    src = (GOLDEN / "GF203" / "neg_gan_schedulers_per_optimizer.py").read_text()
    contract = {"kind": "train-loop", "loop": {"scope": "<module>", "ordinal": 0}}
    (res,) = verifier.verify_many([VerifyRequest("t.py", src, src, "GF203", 1, contract)])
    assert res.verdict == "untestable" and "backward passes" in res.detail
    assert "each followed by its own optimizer step (2 alternating updates" in res.detail, res.detail


def test_train_loop_names_a_gans_alternating_updates():
    from gradfix.verify.checks_loop import _alternating

    gan = [{"op": "zero_grad"}, {"op": "forward"}, {"op": "backward"}, {"op": "step"}, {"op": "accumulate"},
           {"op": "zero_grad"}, {"op": "backward"}, {"op": "step"}]
    assert "each followed by its own optimizer step (2 alternating updates" in _alternating(gan)
    # two losses backpropagated before one step: not alternating updates
    assert _alternating([{"op": "backward"}, {"op": "backward"}, {"op": "step"}]) == ""


# -- GF202: literal periods against the file's epoch count ------------------------

_PERIOD_LOOP = '''
import torch
from torch.optim.lr_scheduler import StepLR
model = torch.nn.Linear(2, 1)
opt = torch.optim.SGD(model.parameters(), lr=0.1)
sched = StepLR(opt, step_size={period})
{setup}
for epoch in {epochs}:
    for x, y in loader:
        opt.zero_grad()
        ((model(x) - y) ** 2).mean().backward()
        opt.step()
        sched.step()
'''


@pytest.mark.parametrize("period, setup, epochs, fires", [
    (30, "", "range(90)", True),                        # an epoch period shorter than the run: GF202
    (90, "", "range(90)", True),                        # as long as the run
    (30000, "", "range(90)", False),                    # longer than the run: counts steps
    (30000, "EPOCHS = 12", "range(EPOCHS)", False),     # a module constant
    (30000, "import argparse\np = argparse.ArgumentParser()\np.add_argument('--num-epochs', type=int, default=5)\n"
            "args = p.parse_args()", "range(args.num_epochs)", False),   # an argparse default
    (300, "epochs = 100", "range(1, epochs + 1)", False),  # unresolved stop: falls back to `epochs = 100`
    (30, "epochs = 100", "range(1, epochs + 1)", True),
    (5000, "", "range(n_epochs_from_elsewhere)", False),  # no epoch count shown and a long literal: unknown
    (30, "", "range(n_epochs_from_elsewhere)", True),
])
def test_gf202_literal_period_against_epoch_count(engine, period, setup, epochs, fires):
    src = _PERIOD_LOOP.format(period=period, setup=setup, epochs=epochs)
    assert ("GF202" in {r for _, r, _ in _rules(engine, src)}) is fires


def test_history_message_says_whether_the_total_adds_the_loss():
    """GF208 says "the loss tensor" only for the loss; a score computed from the model output with torch ops (a
    dice coefficient) keeps the graph too, and the message says what it is instead."""
    import textwrap

    src = textwrap.dedent("""
        import torch
        import torch.nn as nn
        from metrics import dice

        net = nn.Linear(4, 1)
        opt = torch.optim.SGD(net.parameters(), lr=0.1)
        crit = nn.MSELoss()
        total, score = 0.0, 0.0
        for x, y in [(torch.randn(3, 4), torch.randn(3, 1))]:
            out = net(x)
            loss = crit(out, y)
            opt.zero_grad()
            loss.backward()
            opt.step()
            total += loss
            score += dice(torch.sigmoid(out), y)
        print(total, score)
    """)
    findings, _ = Engine([r for r in ALL_RULES if r.id == "GF208"]).lint_source(src, "t.py")
    by_line = {f.span.line: f.message for f in findings if f.rule == "GF208"}
    assert "adds the loss tensor itself" in by_line[16]
    assert "adds a tensor computed from the model's output with its graph" in by_line[17]
