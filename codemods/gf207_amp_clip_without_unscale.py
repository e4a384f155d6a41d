"""GF207 amp-clip-without-unscale: clipping scaled gradients under a GradScaler."""

from __future__ import annotations

import math

from gradfix.analysis.expressions import code_of
from gradfix.analysis.iteration import iterations
from gradfix.analysis.loopedits import Op, compose, moved, parse_line, scaler_enabled, single, train_loop_contract
from gradfix.model import Safety
from gradfix.rule import Rule, RuleDocs


class AmpClipWithoutUnscale(Rule):
    id = "GF207"
    name = "amp-clip-without-unscale"
    summary = "Gradients are clipped under a GradScaler without scaler.unscale_() first"
    docs = RuleDocs(
        what=(
            "Finds `clip_grad_norm_` / `clip_grad_value_` after `scaler.scale(loss).backward()` and before "
            "`scaler.step(optimizer)` with no `scaler.unscale_(optimizer)` before the clip. A scaler built with "
            "`enabled=False`, an unscale done in a function of this file that the loop calls, a call that hands the "
            "scaler or optimizer to code gradfix cannot see (timm's `NativeScaler`), apex's `amp.scale_loss` and "
            "`accelerator.backward` are left alone."
        ),
        why=(
            "The gradients are still multiplied by the loss scale (65536 at start), so `max_norm` is compared with "
            "a norm 65536x too large: the clip scales the gradients down by about the loss scale and the update "
            "almost vanishes (update norm 1.37e-5 instead of 0.90 with `torch.amp.GradScaler('cpu')`, hazards.md). "
            "The clip returns the scaled norm, which hides it. milesial/Pytorch-UNet fixed this by hand (PR #470)."
        ),
        example="scaler.scale(loss).backward()\ntorch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)\nscaler.step(optimizer)\nscaler.update()",
        fixed_example=(
            "scaler.scale(loss).backward()\nscaler.unscale_(optimizer)\n"
            "torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)\nscaler.step(optimizer)\nscaler.update()"
        ),
        fix=(
            "Inserts `scaler.unscale_(optimizer)` on its own line right before the first clip (or moves an "
            "`unscale_` that comes after the clip up to it). Offered when the clip is not inside a loop nested in the "
            "iteration (where `unscale_` would run twice), the iteration steps one optimizer through the scaler, "
            "the step runs whenever the clip does (not under a gradient-accumulation test the clip is outside of: "
            "an `unscale_` per clip would then run twice before `update()`, which raises), and a moved `unscale_` "
            "has no condition of its own that the clip lacks."
        ),
        fix_safety="Unsafe: the clip now acts on the real gradients, which changes every clipped update, on purpose. Applied when the run shows the hazard (`fixes-hazard`).",
        verification=(
            "`train-loop` (see GF202) with a `torch.amp.GradScaler('cpu')`: the gradients each step sees after the "
            "scaler unscales them; `fixes-hazard` when the rewrite follows the canonical order (scaled backward, "
            "unscale_, clip, scaler.step, update) and the original's steps do not see the declared clipping."
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
            if b is None or step is None:
                continue
            scaler = b.info.get("scaled")
            if not scaler or step.info.get("scaled") != scaler:
                continue
            if scaler_enabled(it, scaler) is False:
                continue
            clips = [c for c in it.between(b, step, "clip")
                     if not (c.info.get("value") is not None and math.isinf(c.info["value"]))]
            clips = [c for c in clips if not c.info.get("owner")]
            if not clips:
                continue
            first = clips[0]
            if id(first.node) in seen:
                continue
            hidden = [x for x in it.between(b, first, ("unscale", "opaque", "helper"))
                      if x.op != "helper" or "unscale" in x.info.get("ops", ())]
            if hidden:
                continue
            seen.add(id(first.node))
            fn = "clip_grad_norm_" if first.info["fn"] == "norm" else "clip_grad_value_"
            message = (f"`{fn}` clips the gradients while they are still scaled by `{scaler}` (x65536 at start): the "
                       f"threshold is compared with the scaled norm, so every update shrinks by about the loss scale; "
                       f"call `{scaler}.unscale_({step.recv})` before clipping")
            yield ctx.finding(first.node, message, self._fix(ctx, it, first, step, scaler))

    def _fix(self, ctx, it, c, step, scaler):
        if c.nested or not hasattr(c.line, "body"):
            return None
        steps = [x for x in it.events if x.op == "step" and x.info.get("scaled") == scaler]
        if len(steps) != 1 or not _holds_when(step, c):
            # the clip may run on passes that do not step (`if (i + 1) % accum == 0: scaler.step(opt)`): an
            # `unscale_` before each clip would run twice before the next `update()`, which raises
            return None
        later = [x for x in it.between(c, step, "unscale")]
        line = parse_line(f"{scaler}.unscale_({step.recv})")
        ops = []
        if later:
            u = later[0]
            if not single(u.line) or u.nested or not _holds_when(u, c):
                return None  # an unscale under a condition of its own would run at the clip's times instead
            ops.append(Op(u.line, remove=True))
            line = moved(u.line)
        ops.append(Op(c.line, before=[line]))
        return ctx.fix(f"unscale before clipping: `{scaler}.unscale_({step.recv})` before `{code_of(c.small)}`",
                       compose(ops), Safety.UNSAFE, train_loop_contract(it))


def _holds_when(event, clip) -> bool:
    """Every condition `event` runs under also holds for `clip`: whenever the clip runs, so does the event."""
    conditions = {(id(node), branch) for node, branch in clip.path}
    return all((id(node), branch) in conditions for node, branch in event.path)


RULE = AmpClipWithoutUnscale
