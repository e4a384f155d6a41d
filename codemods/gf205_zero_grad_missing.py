"""GF205 zero-grad-missing: backward and optimizer step in a loop that never clears the gradients."""

from __future__ import annotations

from gradfix.analysis.iteration import iterations
from gradfix.rule import Rule, RuleDocs


class ZeroGradMissing(Rule):
    id = "GF205"
    name = "zero-grad-missing"
    summary = "A training loop calls backward() and optimizer.step() but never clears the gradients"
    docs = RuleDocs(
        what=(
            "Finds a loop whose body runs `backward()` and an optimizer step but nothing that clears gradients: no "
            "`optimizer.zero_grad()`, `model.zero_grad()`, `p.grad = None` or `p.grad.zero_()` anywhere in the loop "
            "body (under any condition, in nested loops, or in a function of this file that the loop calls). A loop "
            "that passes its optimizer or model to a function gradfix cannot see (a helper in another module, a "
            "framework) is left alone, and so is gradient accumulation with the zero_grad under a condition "
            "(`if (i + 1) % k == 0: optimizer.step(); optimizer.zero_grad()`)."
        ),
        why=(
            "`backward()` adds into `.grad`. Without clearing, step k uses the sum of the gradients of batches 1..k: "
            "the gradient norms grow 0.58, 1.16, 1.74 over three iterations (hazards.md), the effective learning rate "
            "grows with the step count, and training diverges or oscillates. A `zero_grad()` only once per epoch "
            "still accumulates across that epoch's batches."
        ),
        example="for x, y in loader:\n    loss = loss_fn(model(x), y)\n    loss.backward()\n    optimizer.step()",
        fixed_example=(
            "for x, y in loader:\n    optimizer.zero_grad()\n    loss = loss_fn(model(x), y)\n    loss.backward()\n"
            "    optimizer.step()"
        ),
        fix="Detect only: where the clearing belongs depends on whether accumulation was intended.",
        fix_safety="No fix.",
        verification="No fix, so nothing to verify.",
    )

    def check(self, ctx):
        seen: set[int] = set()
        for it in iterations(ctx.index):
            if it.loop is None or id(it.loop) in seen:
                continue
            b, step = it.backward, it.step_event()
            if b is None or step is None:
                continue
            seen.add(id(it.loop))
            if any(e.op in ("zero_grad", "opaque") or (e.op == "helper" and "zero_grad" in e.info.get("ops", ()))
                   for e in it.events):
                continue
            outer = [e for e in it.epoch_events if e.op == "zero_grad"]
            when = (" (the zero_grad() in the enclosing loop runs once per epoch, not once per batch)" if outer else "")
            message = (f"the loop runs backward() and `{step.recv}.step()` but never clears the gradients{when}: "
                       f"backward() adds into .grad, so step k uses the sum of k batches' gradients; call "
                       f"`{step.recv}.zero_grad()` once per iteration (before the forward pass or after the step)")
            yield ctx.finding(b.node, message, None)


RULE = ZeroGradMissing
