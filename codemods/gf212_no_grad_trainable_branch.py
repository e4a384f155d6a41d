"""GF212 no-grad-trainable-branch: a module the optimizer steps is only ever called under `torch.no_grad()`."""

from __future__ import annotations

import re

import libcst as cst

from gradfix.analysis import torchapi
from gradfix.analysis.flow import Kind
from gradfix.analysis.gradpath import FROZEN_NAMES, GradPaths
from gradfix.analysis.loops import _walk_calls, is_optimizer_step, training_loops
from gradfix.analysis.names import dotted
from gradfix.analysis.params import freeze_target
from gradfix.analysis.trainstep import literal_number, optimizer_name
from gradfix.analysis.tree import calls_in, walk
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


def _run_by_own_method(index, flow, call: cst.Call, trained: set[str]) -> set[str]:
    """Trained modules a method of the step's own class runs when the step calls it with gradients on
    (`self.encode(x)` whose body calls `self.encoder(x)`), one level deep: calls of them in its body, or
    handed to a call there, outside `no_grad` in that method."""
    func = call.func
    if not (isinstance(func, cst.Attribute) and isinstance(func.value, cst.Name) and func.value.value == "self"
            and flow.class_name):
        return set()
    method = index.method(flow.class_name, func.attr.value)
    if method is None or method is flow.scope:
        return set()
    out: set[str] = set()
    for st, inner in index.flow(method).calls:
        if st.no_grad:
            continue
        name = _module_called(inner, trained)
        if name in trained:
            out.add(name)
        out |= _may_run(inner, trained)
    return out


def _module_called(call: cst.Call, trained: set[str]) -> str | None:
    """The module a call runs, by name: `enc(x)` and `enc.forward(x)` run `enc`; `glow(x)`, the DataParallel
    wrapper of a trained `glow.module`, runs that."""
    name = dotted(call.func)
    if name is not None and name.endswith(".forward"):
        name = name[: -len(".forward")]
    if name is not None and name not in trained and f"{name}.module" in trained:
        name = f"{name}.module"
    return name


def _frozen(index, flow) -> set[str]:
    """Modules whose parameters the file freezes, in this scope or at module level."""
    return {name for f in flow.and_module() for st in f.steps if (name := freeze_target(st.node)) is not None}


def _frozen_anywhere(index) -> set[str]:
    """Every module the file freezes, in any scope (`self.backbone.requires_grad_(False)` in `__init__`)."""
    return index.memo("gf212_frozen", lambda: {
        name for scope in index.scopes() for st in index.flow(scope).steps
        if (name := freeze_target(st.node)) is not None})


def _stepped_optimizer(tl) -> str | None:
    """The optimizer the step's `.step()` call names: `opt`, or `self.optimizer` in a trainer's method."""
    name = optimizer_name(tl)
    if name is not None or tl.opt_step is None:
        return name
    for call in _walk_calls(tl.opt_step.node):
        if is_optimizer_step(call, tl.flow) and not call.args:
            recv = dotted(call.func.value)
            if recv is not None and recv.startswith("self."):
                return recv
    return None


def _int_value(expr, flow) -> int | None:
    """An integer literal, or a name bound only (and in this scope) to one: `update_step = 1`."""
    v = literal_number(expr)
    if v is None and isinstance(expr, cst.Name):
        values = {literal_number(b.value) if isinstance(b.value, cst.BaseExpression) else None
                  for b in flow.visible_bindings(expr.value)}
        v = values.pop() if len(values) == 1 else None
    return int(v) if v is not None and float(v).is_integer() else None


def _never_runs(loop, flow) -> bool:
    """`for k in range(1, n)` with `n` bound only to a literal <= 1: the body never runs."""
    if not (isinstance(loop, cst.For) and isinstance(loop.iter, cst.Call) and isinstance(loop.iter.func, cst.Name)
            and loop.iter.func.value == "range" and 1 <= len(loop.iter.args) <= 2
            and all(a.keyword is None and not a.star for a in loop.iter.args)):
        return False
    bounds = [_int_value(a.value, flow) for a in loop.iter.args]
    if None in bounds:
        return False
    start, stop = (0, bounds[0]) if len(bounds) == 1 else bounds
    return stop <= start


def _unused_result(index, flow, st) -> bool:
    """`loss = f(net(x))` whose name is read nowhere in the file: its value never reaches backward()."""
    node = st.node
    if not (isinstance(node, cst.Assign) and len(node.targets) == 1 and isinstance(node.targets[0].target, cst.Name)):
        return False
    name = node.targets[0].target.value
    uses = index.memo("gf212_name_uses", lambda: _name_uses(index))
    return uses.get(name, 0) == 1


class NoGradTrainableBranch(Rule):
    id = "GF212"
    name = "no-grad-trainable-branch"
    summary = "A module the optimizer steps is called only under torch.no_grad() in the training step"
    docs = RuleDocs(
        what=(
            "In a training step (the statements of the loop body, or of the function, up to `backward()`), finds a "
            "module whose `.parameters()` the stepping optimizer holds (`Adam(list(enc.parameters()) + "
            "list(head.parameters()))`) when every call of it before `backward()` runs under `torch.no_grad()`, "
            "`torch.inference_mode()` or `torch.set_grad_enabled(False)` (a block, or a decorator of the function; the "
            "optimizer may be a trainer's `self.opt` built in another method). Every optimizer stepped after that "
            "backward (before another one) counts: an agent stepping `self.head_opt` and `self.encoder_opt` after "
            "one loss is reported for an encoder run only under no_grad, its own optimizer named, unless the "
            "encoder runs (or is handed to a call) with gradients on elsewhere, in another method of the class "
            "for `self.x` or anywhere in the scope for a plain name: another step may train it; a call with gradients "
            "on of a method of the step's own class (`self.embed(x)`) counts as running the modules its body runs "
            "with gradients on (one level deep). Calls that cannot reach backward() do "
            "not count as calls with gradients on: one whose result is assigned to a name read nowhere in the file, "
            "and one inside `for k in range(a, b)` whose bounds are literals (or names bound only to one) with "
            "b <= a. Also finds a submodule that the methods of a model class of the file run only under no_grad "
            "(`with torch.no_grad(): feats = self.backbone(x)` in `forward`) while a training step's optimizer is "
            "built from that model's `.parameters()` and calls the model with gradients on; left alone there: a "
            "submodule frozen anywhere in the file (`requires_grad_(False)`, or a `requires_grad = False` whose "
            "receiver or loop names it, the model, or every parameter), run or handed over with gradients on "
            "elsewhere (a tensor attribute read through it and handed to a call, `print(model.sub.weight.grad)`, "
            "runs nothing and is not a hand-over), named like a frozen copy, parameter-free, or a forward that is itself `@no_grad`. Left alone: a module called at least once "
            "with gradients on (a DQN computing its target with the same network under no_grad, a warm-up that "
            "freezes the backbone only for some epochs), modules the optimizer does not hold (a frozen backbone, "
            "a teacher, an EMA or target network), modules frozen in the file (`enc.requires_grad_(False)`, a "
            "`p.requires_grad = False` loop), a module passed to a function or one of whose methods is called with "
            "gradients on, names like `teacher`/`target`/`ema`, and steps whose optimizer gradfix cannot see. A "
            "call of a wrapper `w(x)` where the optimizer holds `w.module.parameters()` (`w = nn.DataParallel(m)`) "
            "is a call of `w.module`: a warm-up `w.module(x)` under no_grad next to training calls `w(x)` is "
            "left alone, and a wrapper called only under no_grad is reported."
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

    def may_match(self, facts) -> bool:
        """Necessary (analysis/prepass.py): every finding is in a training step, and a step is found from a
        `x.backward(...)` call (analysis/loops.py)."""
        return facts.backward_call

    def check(self, ctx):
        index = ctx.index
        seen: set[int] = set()
        for _scope, flow, tl in training_loops(index):
            steps = [s for s in tl.before_backward() if not isinstance(s.node, cst.BaseCompoundStatement)]
            if not any(s.no_grad for s in steps):
                continue
            paths = GradPaths(tl)
            opt = _stepped_optimizer(tl)
            trained = paths.trained if paths.trained_from.startswith("the modules") else \
                paths.modules_optimized_by(opt) if opt is not None and opt.startswith("self.") else set()
            if not trained:
                continue  # the optimizer was not found: what it holds is a guess
            trained = set(trained)
            owner_opt: dict[str, str] = {}
            for other in _other_stepped_optimizers(tl, opt):
                for name in paths.modules_optimized_by(other) - trained:
                    if not _runs_with_grad_elsewhere(index, flow, name):
                        owner_opt[name] = other
                        trained.add(name)
            calls: dict[str, list] = {}
            handed: set[str] = set()   # given to a function, or a method of it called, with gradients on
            unused: list = []          # calls whose result nothing reads, or in a loop that never runs
            for st in steps:
                if any(_never_runs(loop, flow) for loop in st.loops) or \
                        (not st.no_grad and _unused_result(index, flow, st)):
                    unused.append(st)
                    continue
                for call in calls_in(st.node):
                    name = _module_called(call, trained)
                    if name in trained:
                        calls.setdefault(name, []).append((call, st.no_grad))
                    elif not st.no_grad:
                        handed |= _may_run(call, trained) | _run_by_own_method(index, flow, call, trained)
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
                opt_text = owner_opt.get(name) or opt or "the optimizer"
                skipped = [_why_unused(index, flow, st) for st in unused
                           if any(dotted(c.func) == name for c in calls_in(st.node))]
                which = (f"every call of `{name}` that can reach backward() ({'; '.join(skipped)})"
                         if skipped else f"every call of `{name}` before backward()")
                yield ctx.finding(first, (
                    f"`{opt_text}` steps the parameters of `{name}`, but {which} runs under no_grad: its "
                    f"parameters never get a gradient and `{opt_text}.step()` leaves them unchanged; call it "
                    f"with gradients on, or leave its parameters out of `{opt_text}` if it is meant to stay "
                    f"frozen"))
        yield from self._forward_submodules(ctx)

    def _forward_submodules(self, ctx):
        """A submodule that the model's own methods run only under no_grad (`with torch.no_grad(): feats =
        self.backbone(x)` in `forward`), while a training step's optimizer holds the whole model's parameters."""
        index = ctx.index
        if not index.module_classes or not any(w in index.text for w in ("no_grad", "inference_mode",
                                                                          "set_grad_enabled")):
            return  # no model class, or nothing turns gradients off: no training step needs reading
        stepped = _stepped_models(index)
        frozen = _frozen_anywhere(index)
        for cname, (model, opt) in sorted(stepped.items()):
            runs: dict[str, list] = {}
            handed: set[str] = set()
            for stmt in index.classes[cname].body.body:
                if not isinstance(stmt, cst.FunctionDef):
                    continue
                if stmt.name.value == "forward" and index.is_no_grad_function(stmt):
                    break  # the whole forward runs without gradients: not one branch of it
                mflow = index.flow(stmt)
                for st, call in mflow.calls:
                    for arg in call.args:
                        d = dotted(arg.value)
                        if d is not None and d.startswith("self."):
                            handed.add(d.split(".")[1])
                    sub = _self_submodule_run(call)
                    if sub is not None:
                        runs.setdefault(sub, []).append((call, st.no_grad))
            else:
                subs = index.submodules.get(cname, {})
                for sub in sorted(set(runs) - handed):
                    ctor = subs.get(sub)
                    found = runs[sub]
                    if ctor is None or not index.is_module_ctor(ctor) or ctor in torchapi.PARAMETER_FREE_MODULES:
                        continue
                    if not all(no_grad for _, no_grad in found) or FROZEN_NAMES.search(sub):
                        continue
                    if any(f == f"self.{sub}" or f.endswith(f".{sub}") or f == model for f in frozen):
                        continue
                    if _run_elsewhere(index, index.classes[cname], sub) or _may_freeze(index, sub, model):
                        continue
                    first = found[0][0]
                    yield ctx.finding(first, (
                        f"`{opt}` steps the parameters of `{model}` ({cname}), but `{cname}` runs `self.{sub}` "
                        f"only under no_grad: its parameters never get a gradient and `{opt}.step()` leaves them "
                        f"unchanged (an optimizer that decays weights without a gradient still moves them); call "
                        f"it with gradients on, or, if it is meant to stay frozen, freeze it "
                        f"(`self.{sub}.requires_grad_(False)`) and leave its parameters out of `{opt}`"))


def _self_submodule_run(call: cst.Call) -> str | None:
    """`sub` for a call that runs `self.sub`: `self.sub(x)`, `self.sub.forward(x)`, `self.sub.encode(x)`."""
    func = call.func
    name = dotted(func)
    if name is None or not name.startswith("self.") or name.count(".") > 2:
        return None
    parts = name.split(".")
    if len(parts) == 3 and parts[2] in _NO_FORWARD:
        return None
    return parts[1]


_WHOLE_MODEL_ITERATION = re.compile(r"named_parameters|self\.parameters\(\)|\.modules\(\)|\.children\(\)")


def _may_freeze(index, sub: str, model: str) -> bool:
    """Some `requires_grad = False` / `requires_grad_(False)` of the file may reach `sub`'s parameters: its
    receiver or an enclosing loop's iterable names `sub` or the model (`for q, k in zip(self.enc_q.parameters(),
    self.enc_k.parameters()): k.requires_grad = False`), or walks every parameter (`named_parameters()` filtered
    by name)."""
    word = re.compile(rf"\b({re.escape(sub)}|{re.escape(model.split('.')[-1])})\b")
    for node in walk(index.module):
        if isinstance(node, cst.Assign) and len(node.targets) == 1 and \
                isinstance(node.targets[0].target, cst.Attribute) and \
                node.targets[0].target.attr.value == "requires_grad" and index.code(node.value).strip() == "False":
            receiver = node.targets[0].target.value
        elif isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute) and \
                node.func.attr.value == "requires_grad_" and node.args and \
                index.code(node.args[0].value).strip() == "False":
            receiver = node.func.value
        else:
            continue
        texts = [index.code(receiver)]
        cur = index.parents.get(node)
        while cur is not None:
            if isinstance(cur, cst.For):
                texts.append(index.code(cur.iter))
            cur = index.parents.get(cur)
        if any(word.search(t) or _WHOLE_MODEL_ITERATION.search(t) for t in texts):
            return True
    return False


_TENSOR_READS = (".grad", ".data", ".shape", ".dtype", ".device", ".requires_grad", ".is_leaf")


def _run_elsewhere(index, cls: cst.ClassDef, sub: str) -> bool:
    """`model.sub(x)` (or `model.sub` handed over) with gradients on, outside the class's own methods; not a
    tensor attribute read through it handed to a call (`print(model.sub.weight.grad)`)."""
    for scope in index.scopes():
        if scope is cls or index.enclosing_class(scope) is cls:
            continue
        for st, call in index.flow(scope).calls:
            if st.no_grad:
                continue
            # a tensor attribute read through the module (`print(model.sub.weight.grad)`) runs nothing
            names = [dotted(call.func)] + [d for a in call.args if (d := dotted(a.value)) is not None and
                                           not d.endswith(_TENSOR_READS)]
            if any(n is not None and (n.endswith(f".{sub}") or f".{sub}." in n) and not n.startswith("self.")
                   for n in names):
                return True
    return False


def _stepped_models(index) -> dict[str, tuple[str, str]]:
    """Model class -> (instance, optimizer) for each training step of the file whose optimizer is built from
    `<instance>.parameters()`, `<instance>` being a module class of this file called in that step with
    gradients on."""
    out: dict[str, tuple[str, str]] = {}
    for _scope, flow, tl in training_loops(index):
        opt = _stepped_optimizer(tl)
        if opt is None:
            continue
        paths = GradPaths(tl)
        owners = paths.modules_optimized_by(opt)
        called = {dotted(c.func) for st in tl.before_backward() + [tl.backward] if not st.no_grad
                  and not isinstance(st.node, cst.BaseCompoundStatement) for c in calls_in(st.node)}
        for owner in sorted(owners & called):
            ctors = {b.ctor for b in flow.visible_bindings(owner) if b.kind is Kind.MODULE}
            if len(ctors) == 1 and (cname := ctors.pop()) in index.module_classes:
                out.setdefault(cname, (owner, opt))
    return out


def _other_stepped_optimizers(tl, first: str | None) -> list[str]:
    """Optimizers other than `first` whose `.step()` (no closure) follows this backward in the step's body,
    before any other backward (an agent stepping `self.head_opt` and `self.encoder_opt` after one loss)."""
    out: list[str] = []
    if first is None:
        return out
    flow = tl.flow
    for st in tl.steps:
        if st.index <= tl.backward.index or isinstance(st.node, cst.BaseCompoundStatement):
            continue
        calls = list(_walk_calls(st.node))
        if any(isinstance(c.func, cst.Attribute) and c.func.attr.value == "backward" for c in calls):
            break
        for call in calls:
            if is_optimizer_step(call, flow) and not call.args:
                recv = dotted(call.func.value)
                if recv is not None and recv != first and recv not in out and \
                        any(b.kind is Kind.OPTIMIZER for b in flow.visible_bindings(recv)):
                    out.append(recv)
    return out


def _runs_with_grad_elsewhere(index, flow, name: str) -> bool:
    """`name` (`self.encoder`, or a name of the step's scope) is called, or handed to a call, with gradients
    on somewhere else: in another method of the class for `self.x`, anywhere outside no_grad for a plain name
    (another training step may well give it its gradient)."""
    scopes = [flow.scope] if not name.startswith("self.") else \
        [s for s in index.scopes() if flow.class_name and index.enclosing_class(s) is index.classes.get(flow.class_name)]
    for scope in scopes:
        if scope is None:
            continue
        other = index.flow(scope)
        if not index.grad_enabled(other.function):
            continue
        for st, call in other.calls:
            if st.no_grad:
                continue
            # a tensor attribute read through the module (`print(model.sub.weight.grad)`) runs nothing
            names = [dotted(call.func)] + [d for a in call.args if (d := dotted(a.value)) is not None and
                                           not d.endswith(_TENSOR_READS)]
            if any(n is not None and (n == name or n.startswith(name + ".")) and not n.endswith(
                    tuple("." + m for m in _NO_FORWARD)) for n in names):
                return True
    return False


def _why_unused(index, flow, st) -> str:
    line = index.position(st.node).start.line
    if any(_never_runs(loop, flow) for loop in st.loops):
        return f"the one at line {line} is in a loop that never runs"
    return f"the result of the one at line {line} is never read"


def _name_uses(index) -> dict[str, int]:
    counts: dict[str, int] = {}
    for node in walk(index.module):
        if type(node) is cst.Name:
            counts[node.value] = counts.get(node.value, 0) + 1
    return counts


RULE = NoGradTrainableBranch
