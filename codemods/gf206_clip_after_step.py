"""GF206 clip-after-step: gradient clipping after `optimizer.step()` clips gradients nobody uses."""

from __future__ import annotations

import math

from gradfix.analysis.expressions import code_of
from gradfix.analysis.iteration import iterations
from gradfix.analysis.loopedits import Op, compose, moved, parse_line, same_block, single, train_loop_contract
from gradfix.model import Safety
from gradfix.rule import Rule, RuleDocs


class ClipAfterStep(Rule):
    id = "GF206"
    name = "clip-after-step"
    summary = "Gradients are clipped after optimizer.step(), so the clipping never affects an update"
    docs = RuleDocs(
        what=(
            "Finds `clip_grad_norm_` / `clip_grad_value_` (torch.nn.utils, or an accelerator's) that runs after the "
            "iteration's unconditional `optimizer.step()` (or `scaler.step(optimizer)`) with no later backward or step "
            "in the iteration. A clip called only to read the norm (`max_norm=float('inf')`) and a clip before a "
            "second optimizer's step are left alone."
        ),
        why=(
            "The update has already used the unclipped gradients; the clipped ones are cleared by the next "
            "zero_grad(). Clipping silently does nothing: in hazards.md's measurement the update norm is 104 instead "
            "of 1.0. The returned norm still looks right in the logs."
        ),
        example="loss.backward()\noptimizer.step()\ntorch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)",
        fixed_example="loss.backward()\ntorch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)\noptimizer.step()",
        fix=(
            "Moves the clip line (an assignment of its norm included) right before the optimizer step. Under AMP "
            "(`scaler.step(opt)`), it also inserts `scaler.unscale_(opt)` before the clip when the iteration has none, "
            "so the clip sees real gradients (GF207). Offered when both statements stand alone on their lines in one "
            "block; otherwise reported without a fix."
        ),
        fix_safety="Unsafe: updates are clipped from now on, on purpose. Applied when the run shows the hazard (`fixes-hazard`).",
        verification=(
            "`train-loop` (see GF202): the gradients each optimizer step sees, on a synthetic model whose loss is "
            "scaled so that the clip binds; `fixes-hazard` when the rewrite follows the canonical order "
            "(backward, [unscale], clip, step) and the original (steps with unclipped gradients) does not."
        ),
    )

    def may_match(self, facts) -> bool:
        """Necessary (analysis/prepass.py): every finding is in a training step, and a step is found from a
        `x.backward(...)` call (analysis/loops.py)."""
        return facts.backward_call

    def check(self, ctx):
        seen: set[int] = set()
        for it in iterations(ctx.index):
            b, step = it.backward, it.step_event()
            if b is None or step is None or step.path != b.path:
                continue
            for c in it.events:
                if c.op != "clip" or c.order < step.order or not c.compatible(step) or id(c.node) in seen:
                    continue
                v = c.info.get("value")
                if v is not None and math.isinf(v):
                    continue
                later = [x for x in it.events if x.op in ("backward", "step") and x.order > c.order and x.compatible(c)]
                if later:
                    continue
                seen.add(id(c.node))
                fn = "clip_grad_norm_" if c.info["fn"] == "norm" else "clip_grad_value_"
                message = (f"`{fn}` runs after `{step.recv}.step()`: the update already used the unclipped gradients "
                           f"and the clipped ones are discarded by the next zero_grad(), so clipping never takes "
                           f"effect; clip before the step")
                yield ctx.finding(c.node, message, self._fix(ctx, it, c, step))

    def _fix(self, ctx, it, c, step):
        if not single(c.line) or not single(step.line) or c.nested or c.path != step.path or \
                not same_block(ctx.index, c.line, step.line):
            return None
        insert = []
        scaler = step.info.get("scaled")
        if scaler:
            has_unscale = any(x.op == "unscale" and x.order < step.order and x.compatible(step) for x in it.events)
            if not has_unscale:
                insert.append(parse_line(f"{scaler}.unscale_({step.recv})"))
        insert.append(moved(c.line))
        edits = compose([Op(c.line, remove=True), Op(step.line, before=insert)])
        what = f"`{code_of(c.small)}`" + (f" (after `{scaler}.unscale_({step.recv})`)" if len(insert) == 2 else "")
        return ctx.fix(f"clip before the optimizer step: {what}", edits, Safety.UNSAFE, train_loop_contract(it))


RULE = ClipAfterStep
