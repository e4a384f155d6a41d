"""GF202 epoch-scheduler-per-batch: an epoch-based LR scheduler stepped inside the batch loop."""

from __future__ import annotations

import libcst as cst

from gradfix.analysis.iteration import iterations
from gradfix.analysis.schedules import scheduler_info
from gradfix.analysis.loopedits import Op, compose, epoch_end_anchor, moved, single, train_loop_contract
from gradfix.model import Safety
from gradfix.rule import Rule, RuleDocs


class EpochSchedulerPerBatch(Rule):
    id = "GF202"
    name = "epoch-scheduler-per-batch"
    summary = "An epoch-based learning-rate scheduler is stepped once per batch"
    docs = RuleDocs(
        what=(
            "Finds `scheduler.step()` inside the inner (batch) loop of a nested epoch/batch loop when `scheduler` is "
            "constructed in the same file as an epoch-based scheduler: `StepLR`, `MultiStepLR`, `ExponentialLR` "
            "(gamma < 0.999), `CosineAnnealingLR` or `CosineAnnealingWarmRestarts`, with its period not counted in "
            "iterations. Per-iteration schedulers (`OneCycleLR`, `CyclicLR`, `LambdaLR` warm-ups, transformers' "
            "`get_*_schedule*`), periods written in iterations (`T_max=epochs * len(loader)`, `step_size=total_steps`), "
            "`ReduceLROnPlateau`, `scheduler.step(value)`, schedulers of unknown type (a parameter, another "
            "module) and a step under a test that holds for one batch of the epoch (`if i == 0:`, "
            "`if i + 1 == len(loader):`, so it runs once per epoch), and a batch loop whose body ends in an unconditional `break` (it runs once per epoch) are left alone. So is a literal period longer than the number of epochs the file shows (the "
            "epoch loop's `range(N)`, `epochs = N`, an argparse `--epochs` default): `StepLR(opt, step_size=30000)` "
            "or `CosineAnnealingLR(opt, T_max=100000)` over 12 epochs would never complete per epoch, so it counts "
            "optimizer steps and per-batch stepping is right; and a literal period of 1000 or more when the file "
            "shows no epoch count at all."
        ),
        why=(
            "The period is counted in `step()` calls, so stepping per batch divides it by the number of batches per "
            "epoch: `StepLR(step_size=30, gamma=0.1)` over 2 epochs of 100 batches ends at lr 1e-7 instead of 0.1, "
            "and the loss plateaus after the first few hundred steps (hazards.md). The second seed document suggests "
            "exactly this move for its `scheduler.step()`."
        ),
        example=(
            "scheduler = torch.optim.lr_scheduler.StepLR(optimizer, step_size=30, gamma=0.1)\n"
            "for epoch in range(epochs):\n    for x, y in loader:\n        optimizer.zero_grad()\n"
            "        loss_fn(model(x), y).backward()\n        optimizer.step()\n        scheduler.step()"
        ),
        fixed_example=(
            "scheduler = torch.optim.lr_scheduler.StepLR(optimizer, step_size=30, gamma=0.1)\n"
            "for epoch in range(epochs):\n    for x, y in loader:\n        optimizer.zero_grad()\n"
            "        loss_fn(model(x), y).backward()\n        optimizer.step()\n    scheduler.step()"
        ),
        fix=(
            "Moves the `scheduler.step()` line (with its comments) to the end of the epoch loop's body. Offered when "
            "the call stands alone on its line, runs unconditionally in the batch loop, and the epoch loop's body "
            "neither ends with a jump nor has a `continue` that would skip the step; otherwise reported without a fix."
        ),
        fix_safety=(
            "Unsafe: it changes the learning rate of every step after the first epoch, on purpose. Applied when the run "
            "shows the hazard (`fixes-hazard`)."
        ),
        verification=(
            "`train-loop`: the verifier reads the training iteration of both versions (zero_grad, forward, backward, "
            "clip, step, scheduler step and where each sits) and renders each on a seeded `nn.Linear(4, 2)` trained "
            "2 epochs x 3 batches with the file's optimizer and scheduler class (its period shortened so the schedule "
            "shows within 6 steps; the detail says so). It records the learning rates, gradients and parameters of "
            "every optimizer step. `fixes-hazard` when the rewrite's trace equals the canonical order's (here: the "
            "scheduler stepped once per epoch) and the original's lr trace does not follow the declared schedule. It checks the order of the loop's "
            "operations on a synthetic model, not the user's model."
        ),
    )

    def may_match(self, facts) -> bool:
        """Necessary (analysis/prepass.py): every finding is in a training step, and a step is found from a
        `x.backward(...)` call (analysis/loops.py)."""
        return facts.backward_call

    def check(self, ctx):
        seen: set[int] = set()
        for it in iterations(ctx.index):
            if it.loop is None or it.epoch_loop is None or it.backward is None:
                continue
            for e in it.events:
                if e.op != "sched" or e.info.get("args") or e.nested or id(e.node) in seen:
                    continue
                if _once_per_epoch(it, e) or _single_pass(it.loop):
                    continue
                info = scheduler_info(it, e.recv)
                if info.kind != "epoch":
                    continue
                seen.add(id(e.node))
                short = (info.ctor or "").rsplit(".", 1)[-1]
                message = (
                    f"`{e.recv}.step()` runs once per batch, but `{e.recv}` is {info.why}, whose period is counted in "
                    f"epochs: the learning rate decays once per batch, as many times too fast as there are batches "
                    f"per epoch (StepLR(30, 0.1) over 2 x 100 batches ends at lr 1e-7); step it once per epoch"
                )
                yield ctx.finding(e.node, message, self._fix(ctx, it, e, short))

    def _fix(self, ctx, it, e, short):
        if e.path or not single(e.line) or not isinstance(e.small, cst.Expr) or e.small.value is not e.node:
            return None
        anchor, _why = epoch_end_anchor(it)
        if anchor is None:
            return None
        # a scheduler already stepped per epoch as well: leave it to the user
        if any(x.op == "sched" and x.recv == e.recv for x in it.epoch_events):
            return None
        edits = compose([Op(e.line, remove=True), Op(anchor, after=[moved(e.line)])])
        return ctx.fix(f"step `{e.recv}` ({short}) once per epoch, at the end of the epoch loop", edits,
                       Safety.UNSAFE, train_loop_contract(it))


def _single_pass(loop) -> bool:
    """The batch loop's body ends in an unconditional `break`: it runs once per epoch (a first-batch-only
    debugging loop), so a step in it is a per-epoch step."""
    body = loop.body
    stmts = body.body if isinstance(body, cst.IndentedBlock) else [body]
    last = stmts[-1] if stmts else None
    if isinstance(last, (cst.SimpleStatementLine, cst.SimpleStatementSuite)):
        return bool(last.body) and isinstance(last.body[-1], cst.Break)
    return False


def _once_per_epoch(it, e) -> bool:
    """The step sits under a test that holds for one batch of the epoch: `if i == 0:`,
    `if i == len(loader) - 1 and ...:` (an equality on the batch loop's index)."""
    var = it.index_var()
    if var is None:
        return False
    for node, branch in e.path:
        if isinstance(node, cst.If) and branch == 0 and _index_equality(node.test, var):
            return True
    return False


def _index_equality(test, var: str) -> bool:
    if isinstance(test, cst.BooleanOperation) and isinstance(test.operator, cst.And):
        return _index_equality(test.left, var) or _index_equality(test.right, var)
    if isinstance(test, cst.Comparison) and len(test.comparisons) == 1 and \
            isinstance(test.comparisons[0].operator, cst.Equal):
        sides = (test.left, test.comparisons[0].comparator)
        return any(_is_index(side, var) for side in sides)
    return False


def _is_index(expr, var: str) -> bool:
    """`i`, `i + 1`, `i - 1`."""
    if isinstance(expr, cst.BinaryOperation) and isinstance(expr.operator, (cst.Add, cst.Subtract)):
        return _is_index(expr.left, var) or _is_index(expr.right, var)
    return isinstance(expr, cst.Name) and expr.value == var


RULE = EpochSchedulerPerBatch
