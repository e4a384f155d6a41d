"""GF212 no-grad-trainable-branch: a module the optimizer steps is only ever called under `torch.no_grad()`."""

from __future__ import annotations

import libcst as cst

from gradfix.analysis.gradpath import FROZEN_NAMES, GradPaths
from gradfix.analysis.loops import training_loops
from gradfix.analysis.names import dotted
from gradfix.analysis.params import freeze_target
from gradfix.analysis.trainstep import optimizer_name
from gradfix.analysis.tree import calls_in
from gradfix.rule import Rule, RuleDocs


# Methods of a module that do not run its forward.
_NO_FORWARD = frozenset({"zero_grad", "train", "eval", "parameters", "named_parameters", "state_dict", "to", "cuda",
                         "cpu", "requires_grad_", "modules", "children", "named_modules", "buffers", "half", "float",
                         "double", "load_state_dict", "register_forward_hook", "register_forward_pre_hook"})


def _may_run(call: cst.Call, trained: set[str]) -> set[str]:
    """Trained modules this call may run with gradients on: modules passed to it (`compute_loss(model,
    x, y)`, `partial(f, model)`) and modules whose other methods it is (`model.loss(x)`)."""
    out = {dotted(a.value) for a in call.args} & trained
    func = call.func
    if isinstance(func, cst.Attribute) and func.attr.value not in _NO_FORWARD:
        owner = dotted(func.value)
        if owner in trained:
            out.add(owner)
    return out


def _frozen(index, flow) -> set[str]:
    """Modules whose parameters the file freezes, in this scope or at module level."""
    return {name for f in flow.and_module() for st in f.steps if (name := freeze_target(st.node)) is not None}


class NoGradTrainableBranch(Rule):
    id = "GF212"
    name = "no-grad-trainable-branch"
    summary = "A module the optimizer steps is called only under torch.no_grad() in the training step"
    docs = RuleDocs(
        what=(
            "In a training step (the statements of the loop body, or of the function, up to `backward()`), finds a "
            "module whose `.parameters()` the stepping optimizer holds (`Adam(list(enc.parameters()) + "
            "list(head.parameters()))`) when every call of it before `backward()` runs under `torch.no_grad()`, "
            "`torch.inference_mode()` or `torch.set_grad_enabled(False)`. Left alone: a module called at least once "
            "with gradients on (a DQN computing its target with the same network under no_grad, a warm-up that "
            "freezes the backbone only for some epochs), modules the optimizer does not hold (a frozen backbone, "
            "a teacher, an EMA or target network), modules frozen in the file (`enc.requires_grad_(False)`, a "
            "`p.requires_grad = False` loop), a module passed to a function or one of whose methods is called with "
            "gradients on, names like `teacher`/`target`/`ema`, and steps whose optimizer gradfix cannot see."
        ),
        why=(
            "Under no_grad the module's output has no `grad_fn`: backward() never reaches its parameters, their "
            "`.grad` stays None and `optimizer.step()` skips them. The branch is silently frozen while the code "
            "says it trains (hazards.md no-grad-trainable-branch: `a.weight.grad is None`). When that output was "
            "the only path to the loss, backward() raises \"element 0 of tensors does not require grad\" instead."
        ),
        example=(
            "opt = torch.optim.Adam(list(enc.parameters()) + list(head.parameters()))\n...\n"
            "with torch.no_grad():\n    z = enc(x)\nloss = F.cross_entropy(head(z), y)"
        ),
        fixed_example=(
            "opt = torch.optim.Adam(list(enc.parameters()) + list(head.parameters()))\n...\n"
            "z = enc(x)\nloss = F.cross_entropy(head(z), y)"
        ),
        fix=(
            "Detect only: call the module with gradients on, or, if it is meant to stay frozen, leave its "
            "parameters out of the optimizer (which says so in the code)."
        ),
        fix_safety="No fix is offered.",
        verification="None (detect only).",
    )

    def check(self, ctx):
        index = ctx.index
        seen: set[int] = set()
        for _scope, flow, tl in training_loops(index):
            steps = [s for s in tl.before_backward() if not isinstance(s.node, cst.BaseCompoundStatement)]
            if not any(s.no_grad for s in steps):
                continue
            paths = GradPaths(tl)
            if not paths.trained_from.startswith("the modules"):
                continue  # the optimizer was not found: what it holds is a guess
            calls: dict[str, list] = {}
            handed: set[str] = set()   # given to a function, or a method of it called, with gradients on
            for st in steps:
                for call in calls_in(st.node):
                    name = dotted(call.func)
                    if name is not None and name.endswith(".forward"):
                        name = name[: -len(".forward")]
                    if name in paths.trained:
                        calls.setdefault(name, []).append((call, st.no_grad))
                    elif not st.no_grad:
                        handed |= _may_run(call, paths.trained)
            frozen = _frozen(index, flow)
            for name in sorted(set(calls) - handed - frozen):
                found = calls[name]
                if not all(no_grad for _, no_grad in found) or FROZEN_NAMES.search(name.rsplit(".", 1)[-1]):
                    continue
                first = min((c for c, _ in found), key=lambda c: (index.position(c).start.line,
                                                                   index.position(c).start.column))
                if id(first) in seen:
                    continue
                seen.add(id(first))
                opt = optimizer_name(tl) or "the optimizer"
                yield ctx.finding(first, (
                    f"`{opt}` steps the parameters of `{name}`, but every call of `{name}` before backward() runs "
                    f"under no_grad: its parameters never get a gradient and `{opt}.step()` leaves them "
                    f"unchanged; call it with gradients on, or leave its parameters out of `{opt}` if it is "
                    f"meant to stay frozen"))


RULE = NoGradTrainableBranch
