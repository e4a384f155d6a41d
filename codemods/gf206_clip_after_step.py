"""GF206 clip-after-step: gradient clipping after `optimizer.step()` clips gradients nobody uses."""

from __future__ import annotations

import math

import libcst as cst

from gradfix.analysis.expressions import code_of
from gradfix.analysis.names import dotted, qualname
from gradfix.analysis.tree import calls_in
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
            "second optimizer's step are left alone. Also (detect only) a clip of `X.parameters()` that runs after an "
            "unconditional clear of those parameters (`opt.zero_grad()` of an optimizer built over "
            "`X.parameters()`, or `X.zero_grad()`) and before the iteration's first backward, with no backward, "
            "gradient op, helper or call handed the model or optimizer in between: it clips the just-cleared "
            "gradients and the step uses the unclipped ones. A clear under a condition (an accumulation window) "
            "or of another optimizer's parameters leaves it alone. The same (detect only) when the clip sits in a "
            "method of the model's class in this file (`loss = model.training_step(batch)` whose body clips "
            "`self.parameters()`), called on its own line of the loop body after that clear and before the first "
            "backward; left alone when the method calls anything that may write or clear gradients (`backward`, "
            "`manual_backward`, `grad`, `step`, `zero_grad`), clips more than once or for the norm only, or the "
            "call is under an `if`, `with` or `try`."
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
            for c, z in _clips_of_cleared_gradients(it, step):
                if id(c.node) in seen:
                    continue
                seen.add(id(c.node))
                fn = "clip_grad_norm_" if c.info["fn"] == "norm" else "clip_grad_value_"
                message = (f"`{fn}` runs after `{z.recv}.zero_grad()` and before this step's backward(): it clips "
                           f"gradients that were just cleared (None or zero), and the backward() that follows writes "
                           f"fresh, unclipped ones that `{step.recv}.step()` uses, so clipping never takes effect; "
                           f"clip between backward() and the step (detect only)")
                yield ctx.finding(c.node, message, None)

            for call, clip, z in _clips_in_called_method(ctx.index, it, step):
                if id(clip) in seen:
                    continue
                seen.add(id(clip))
                message = (f"`{code_of(call)}` (line {ctx.span(call).line}) runs this clip after "
                           f"`{z.recv}.zero_grad()` and before the iteration's backward(): it clips gradients that "
                           f"were just cleared (None or zero), and the backward() that follows writes fresh, unclipped "
                           f"ones that `{step.recv}.step()` uses, so clipping never takes effect; clip between "
                           f"backward() and the step (detect only)")
                yield ctx.finding(clip, message, None)

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


def _clips_of_cleared_gradients(it, step):
    """(clip, zero_grad) for a clip that runs after an unconditional clear of the parameters it clips and before
    the step's first backward, with nothing in between that could write gradients (another backward, a helper
    or an unseen call handed the model or optimizer, a gradient op): the clip sees only cleared gradients.
    The clear is `opt.zero_grad()` of an optimizer built over `X.parameters()`, or `X.zero_grad()`, where the
    clip's first argument is `X.parameters()`."""
    b = it.backward
    if b is None or any(e.op == "backward" and e.order < b.order for e in it.events):
        return
    for c in it.events:
        if c.op != "clip" or c.order > b.order or c.nested or not c.compatible(b) or not c.compatible(step):
            continue
        v = c.info.get("value")
        if v is not None and math.isinf(v):
            continue
        owner = _clipped_owner(c.node)
        if owner is None:
            continue
        clears = [z for z in it.events if z.op == "zero_grad" and z.order < c.order and not z.path and not z.nested
                  and _clears_owner(it, z, owner)]
        if not clears:
            continue
        z = clears[-1]
        between = [e for e in it.events if z.order < e.order < c.order and
                   e.op in ("backward", "helper", "opaque", "grad_op", "step", "unscale")]
        if not between:
            yield c, z


_CLIPS = frozenset({"torch.nn.utils.clip_grad_norm_", "torch.nn.utils.clip_grad_value_",
                    "torch.nn.utils.clip_grad.clip_grad_norm_", "torch.nn.utils.clip_grad.clip_grad_value_"})
_WRITES_GRADS = frozenset({"backward", "manual_backward", "grad", "step", "zero_grad"})


def _clips_in_called_method(index, it, step):
    """(call, clip, zero_grad) for `model.training_step(batch)` standing alone in the loop body (no `if`, `with`
    or `try` around it) after an unconditional clear of `model`'s parameters and before the iteration's first
    backward, with no event in between that could write gradients, where `training_step` is a method the
    model's class of this file defines and clips `self.parameters()` with no backward, step, clear or
    gradient call anywhere in that method: the clip sees only the cleared gradients."""
    b = it.backward
    if b is None or it.loop is None or any(e.op == "backward" and e.order < b.order for e in it.events):
        return
    clears = [z for z in it.events if z.op == "zero_grad" and z.order < b.order and not z.path and not z.nested]
    if not clears:
        return
    z = clears[-1]
    if any(z.order < e.order < b.order and e.op in ("helper", "opaque", "grad_op", "step", "unscale", "clip")
           for e in it.events):
        return
    z_line, b_line = index.position(z.node).start.line, index.position(b.node).start.line
    for stmt in _body_statements(it.loop):
        if not isinstance(stmt, cst.SimpleStatementLine) or len(stmt.body) != 1:
            continue
        small = stmt.body[0]
        value = small.value if isinstance(small, (cst.Assign, cst.Expr)) else None
        if not (isinstance(value, cst.Call) and isinstance(value.func, cst.Attribute) and
                isinstance(value.func.value, cst.Name)):
            continue
        line = index.position(stmt).start.line
        if not z_line < line < b_line:
            continue
        recv = value.func.value.value
        ctors = {bd.ctor for bd in it.bindings(recv)}
        if len(ctors) != 1 or next(iter(ctors)) not in index.module_classes or not _clears_owner(it, z, recv):
            continue
        method = index.method(next(iter(ctors)), value.func.attr.value)
        clip = _self_clip(index, method) if method is not None else None
        if clip is not None:
            yield value, clip, z


def _body_statements(loop) -> list:
    body = loop.body
    return list(body.body) if isinstance(body, cst.IndentedBlock) else []


def _self_clip(index, method: cst.FunctionDef):
    """The one clip of `self.parameters()` in `method` (not called only for the norm, `float('inf')`), when the
    method makes no call that may write or clear gradients (`_WRITES_GRADS`)."""
    clips = []
    for call in calls_in(method):
        func = call.func
        last = func.attr.value if isinstance(func, cst.Attribute) else func.value if isinstance(func, cst.Name) else ""
        if last in _WRITES_GRADS:
            return None
        if qualname(func, index.imports) in _CLIPS:
            clips.append(call)
    if len(clips) != 1 or _clipped_owner(clips[0]) != "self":
        return None
    limit = clips[0].args[1].value if len(clips[0].args) > 1 else None
    if limit is not None and "inf" in code_of(limit):
        return None
    return clips[0]


def _clipped_owner(call) -> str | None:
    """`X` of `clip_grad_norm_(X.parameters(), ...)`."""
    if not call.args or (call.args[0].keyword is not None and call.args[0].keyword.value != "parameters"):
        return None
    arg = call.args[0].value
    if isinstance(arg, cst.Call) and isinstance(arg.func, cst.Attribute) and arg.func.attr.value == "parameters" \
            and not arg.args:
        return dotted(arg.func.value)
    return None


def _clears_owner(it, z, owner: str) -> bool:
    if z.info.get("target") == "model":
        return z.recv == owner
    if z.info.get("target") != "opt":
        return False
    b = it.optimizer_binding(z.recv)
    if b is None:
        return False
    owners = {dotted(c.func.value) for c in calls_in(b.value)
              if isinstance(c.func, cst.Attribute) and c.func.attr.value == "parameters"}
    return owner in owners


RULE = ClipAfterStep
