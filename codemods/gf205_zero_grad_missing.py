"""GF205 zero-grad-missing: backward and optimizer step in a loop that never clears the gradients."""

from __future__ import annotations

import re

import libcst as cst

from gradfix.analysis import torchapi
from gradfix.analysis.callgraph import argument_for, instance_class
from gradfix.analysis.expressions import code_of
from gradfix.analysis.flow import Kind
from gradfix.analysis.iteration import iterations
from gradfix.analysis.names import dotted, qualname
from gradfix.analysis.tree import calls_in, contains, if_branches, walk
from gradfix.analysis.trainstep import names_in
from gradfix.rule import Rule, RuleDocs

# tests of a branch that may legitimately skip the clearing: accumulation windows, first batches, flags
_ACCUMULATION_WORDS = re.compile(r"accum|sync|boundary|update|step|first|start|clear|zero|grad", re.I)


class ZeroGradMissing(Rule):
    id = "GF205"
    name = "zero-grad-missing"
    summary = "A training loop calls backward() and optimizer.step() but never clears the gradients"
    docs = RuleDocs(
        what=(
            "Finds a loop whose body runs `backward()` and an optimizer step but nothing that clears gradients: no "
            "`optimizer.zero_grad()`, `model.zero_grad()`, `p.grad = None`, `p.grad = <a tensor of zeros>` "
            "(`torch.zeros_like(...)`, `Variable(g.new().resize_as_(g).zero_())`) or `p.grad.zero_()` anywhere in the loop "
            "body (under any condition, in nested loops, or in a function of this file that the loop calls). Two "
            "narrower forms too: (a) a loop with several optimizers (a GAN's D and G) that clears some of them but "
            "never the one a step uses, when every clear is an `opt.zero_grad()` of another optimizer and the "
            "optimizers are built over different models of the file; (b) a training step (a loop body or a "
            "function) that clears the stepped optimizer in some branches of an `if`/`else` but not in another, "
            "while backward() and the step run on every path (`if bf16: ... else: opt.zero_grad(); ...`); (c) a "
            "straight-line step function or method (backward() and a torch optimizer's step, no loop of its own, "
            "a trainer's `train_step`) that clears nothing and that a loop of the file calls once per iteration "
            "(`for ...: actor.train_step(batch)`, the object built from the class in the file) while that loop "
            "clears nothing either; for a method, no method of its class or of an in-file base touches "
            "`zero_grad` or `.grad` and the class has no other base than `object` or `nn.Module`; the calling "
            "loop calls no function of the file that touches them and hands the call's receiver or arguments to "
            "no call gradfix cannot resolve. Such a function with no calling loop in the file is left alone "
            "(its callers elsewhere may clear). Left "
            "alone: a loop that calls another method named like a clear (`mlp.zero_grads()`, a course framework's "
            "own); a loop calling a model whose class clears its own gradients in `forward` "
            "(`self.zero_grad()`: every forward call clears them), in this file or in another file of the project "
            "(imported by name or through `from model import *`); a loop calling `self.loss_fn(...)` that its class "
            "inherits from a base class, in this file or in another file of the project, whose method clears "
            "the gradients (`self.optimizer.zero_grad()`, `p.grad = None` in the base's body, read by the "
            "project summary); the forward case "
            "(for a forward of another file the call must be a statement of its "
            "body, read by the project summary, analysis/returns.py); a loop that passes its optimizer or model to a function gradfix cannot see (a helper in "
            "another module, a framework); gradient accumulation with the zero_grad under a condition "
            "(`if (i + 1) % k == 0: optimizer.step(); optimizer.zero_grad()`), and any branch test that reads "
            "like an accumulation or first-batch test (`%`, `accum`, `sync`, `step`, `first`, ...) or an `if` "
            "without an `else`; a model's `zero_grad()` or a `p.grad = None` loop next to several optimizers "
            "(which optimizer's parameters it clears is not checked); a function whose callers in the file "
            "clear gradients themselves; distributed autograd (`dist_autograd.backward(context_id, ...)` or a "
            "`with dist_autograd.context()` in the loop body: the gradients live in a context made per "
            "iteration, not in `.grad`); and a loop body that builds both the model and the optimizer over its "
            "parameters anew (`net = Net(); opt = SGD(net.parameters())`, a unit test's one-step check), so no "
            "parameter is stepped twice. In a file that defines, or imports from the project, a class with its own `backward()` method that is no autograd Function, no nn.Module and no wrapper calling autograd (NumPy-from-scratch course code; a method that binds what an inner `backward` returns, `grad = layer.backward(grad)` over the layers, chains hand-written gradients and is no wrapper, since autograd's `backward()` returns None), `x.backward()` is autograd's only on a receiver shown to be a tensor or a call's result (not a construction of a class of the file, however spelled: `mlp = multiClassModel()`): `model.backward(dout)` there is the course's method, and nothing is reported for it, also when the course's classes carry torch's names (`CrossEntropyLoss`, `SGD` from its own modules). "
            "Anywhere, `.backward()` on something the same scope also calls (`loss = self.loss_fn(out, y)` then "
            "`self.loss_fn.backward()`) is a hand-written op's method: tensors are not callable."
        ),
        why=(
            "`backward()` adds into `.grad`. Without clearing, step k uses the sum of the gradients of batches 1..k: "
            "the gradient norms grow 0.58, 1.16, 1.74 over three iterations (hazards.md), the effective learning rate "
            "grows with the step count, and training diverges or oscillates. A `zero_grad()` only once per epoch "
            "still accumulates across that epoch's batches; one only on some paths accumulates whenever the other "
            "path is taken."
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

    def may_match(self, facts) -> bool:
        """Necessary (analysis/prepass.py): every finding is in a training step, and a step is found from a
        `x.backward(...)` call (analysis/loops.py)."""
        return facts.backward_call

    def check(self, ctx):
        seen: set = set()
        for it in iterations(ctx.index):
            b, step = it.backward, it.step_event()
            if b is None or step is None:
                continue
            where = id(it.loop) if it.loop is not None else id(it.scope)
            if where in seen or (where, step.recv) in seen:
                continue
            if _no_gradient_carried_over(ctx.index, it, b, step):
                seen.add(where)
                continue
            if it.loop is not None and not _clears_anything(it):
                seen.add(where)
                outer = [e for e in it.epoch_events if e.op == "zero_grad"]
                when = (" (the zero_grad() in the enclosing loop runs once per epoch, not once per batch)"
                        if outer else "")
                message = (f"the loop runs backward() and `{step.recv}.step()` but never clears the gradients{when}: "
                           f"backward() adds into .grad, so step k uses the sum of k batches' gradients; call "
                           f"`{step.recv}.zero_grad()` once per iteration (before the forward pass or after the step)")
                yield ctx.finding(b.node, message, None)
                continue
            site = _repeating_caller(ctx.index, it, step)
            if site is not None:
                seen.add(where)
                message = (f"this function runs backward() and `{step.recv}.step()` but never clears the gradients, "
                           f"and the loop at line {site} calls it once per iteration without clearing them "
                           f"either: backward() adds into .grad, so call k steps with the sum of k batches' "
                           f"gradients; call `{step.recv}.zero_grad()` in the function (before the forward pass "
                           f"or after the step)")
                yield ctx.finding(b.node, message, None)
                continue
            seen.add((where, step.recv))
            others = _only_other_optimizers_cleared(it, step)
            if others:
                message = (f"the loop clears {', '.join(f'`{o}`' for o in others)} but never `{step.recv}`, whose "
                           f"`step()` follows this backward(): backward() adds into .grad, so each "
                           f"`{step.recv}.step()` uses the sum of all past batches' gradients; call "
                           f"`{step.recv}.zero_grad()` once per iteration (before this backward)")
                yield ctx.finding(b.node, message, None)
                continue
            branch = _cleared_in_some_branches(ctx.index, it, b, step)
            if branch is not None:
                test, missing = branch
                message = (f"`{step.recv}.zero_grad()` runs only in some branches of `if {code_of(test)}:` but "
                           f"backward() and `{step.recv}.step()` run on every path: when the {missing} is taken the "
                           f"gradients are never cleared, so each step uses the sum of all past steps' gradients; "
                           f"clear them on every path (before the `if`)")
                yield ctx.finding(b.node, message, None)


def _no_gradient_carried_over(index, it, b, step) -> bool:
    """Nothing of one iteration's gradients reaches the next one's step: distributed autograd keeps them in a
    context opened per iteration (`with dist_autograd.context() as cid: dist_autograd.backward(cid, [loss])`),
    or the model and the optimizer over its parameters are both built anew in the loop body."""
    if it.loop is None:
        return False
    if qualname(b.node.func, index.imports) == "torch.distributed.autograd.backward":
        return True
    for node in walk(it.loop.body):
        if isinstance(node, cst.WithItem) and isinstance(node.item, cst.Call) and \
                qualname(node.item.func, index.imports) == "torch.distributed.autograd.context":
            return True
    return _fresh_model_and_optimizer(it, step)


def _fresh_model_and_optimizer(it, step, body=None) -> bool:
    """The stepped optimizer is constructed in the loop body over the parameters of models that are
    themselves constructed there (`net = Net(); opt = SGD(net.parameters(), lr)`): each iteration's
    parameters start with no `.grad` (`body`: a step function's body instead of the loop's)."""
    body = it.loop.body if body is None else body
    opt = it.optimizer_binding(step.recv)
    if opt is None or not contains(body, opt.value):
        return False
    owners: set[str] = set()
    if not _parameter_owners(it, opt.value, body, owners, set()) or not owners:
        return False
    for name in owners:
        bs = it.bindings(name)
        if not bs or not all(isinstance(x.value, cst.Call) and contains(body, x.value) and _constructs(x)
                             for x in bs):
            return False
    return True


def _parameter_owners(it, expr, body, owners: set, seen: set) -> bool:
    """Collect the receivers of `.parameters()` / `.named_parameters()` that `expr` reads, following names
    bound in the loop body (`trainable = {n: p for n, p in net.named_parameters()}`); False when one is
    not a plain name."""
    for call in calls_in(expr):
        if isinstance(call.func, cst.Attribute) and call.func.attr.value in ("parameters", "named_parameters"):
            name = dotted(call.func.value)
            if name is None:
                return False
            owners.add(name)
    for name in names_in(expr):
        if name in seen:
            continue
        seen.add(name)
        for x in it.flow.bindings:
            if x.name == name and x.value is not None and x.kind.value != "module" and contains(body, x.value):
                if not _parameter_owners(it, x.value, body, owners, seen):
                    return False
    return True


def _constructs(binding) -> bool:
    """Bound to a constructor call: a module class, or a callee named like a class (`Net(...)`)."""
    if binding.kind.value == "module" and binding.ctor:
        return True
    name = dotted(binding.value.func)
    return name is not None and name.split(".")[-1][:1].isupper()


def _repeating_caller(index, it, step) -> int | None:
    """The line of a loop of this file that calls the straight-line step function `it.scope` once per
    iteration while nothing on either side clears gradients (139: a trainer's `train_step` method called from
    a loop elsewhere); None when that is not shown. Shown means: the function clears nothing and hands
    its optimizer or model to nothing unseen; its stepped optimizer is a torch optimizer (bound to one, or a
    parameter every such call passes one for); for a method, no method of its class (or of an in-file base)
    touches `zero_grad` or `.grad` and every other base is `object` or `nn.Module`; and the calling loop's
    body has no `zero_grad` or `.grad`, calls no function of the file that has, and hands the call's
    receiver or arguments to no function gradfix cannot see."""
    fn = it.scope
    if it.loop is not None or not isinstance(fn, cst.FunctionDef) or _clears_anything(it) or _hidden_clears(it):
        return None
    if _fresh_model_and_optimizer(it, step, fn.body):
        return None
    cls = index.enclosing_class(fn)
    if cls is not None and (index.method(cls, fn.name.value) is not fn or _class_may_clear(index, cls, set())):
        return None
    bound_opt = it.optimizer_binding(step.recv)
    torch_opt = bound_opt is not None and not bound_opt.is_param and \
        (bound_opt.ctor or "").startswith(torchapi.OPTIMIZER_PREFIXES)
    params = {p.name.value for p in fn.params.params}
    for flow, st, call in index.callgraph.loop_sites(fn):
        if not torch_opt:
            if step.recv not in params:
                return None
            arg = argument_for(fn, call, step.recv, bound=isinstance(call.func, cst.Attribute))
            if not (isinstance(arg, cst.Name) and any(b.kind is Kind.OPTIMIZER for b in flow.visible_bindings(arg.value))):
                continue
        if not _loop_may_clear(index, flow, st.loops[-1], call):
            return index.position(st.loops[-1]).start.line
    return None


def _touches_gradients(node) -> bool:
    return any(isinstance(n, cst.Attribute) and n.attr.value in ("zero_grad", "grad") for n in walk(node))


def _class_may_clear(index, cls, seen: set) -> bool:
    """A method of `cls` or of a base may clear gradients (reads `zero_grad` or `.grad`), or a base is neither
    a class of the file nor `object` / `nn.Module` (a framework's hooks may clear them)."""
    if id(cls) in seen:
        return False
    seen.add(id(cls))
    if _touches_gradients(cls):
        return True
    for base in cls.bases:
        q = qualname(base.value, index.imports) or ""
        if isinstance(base.value, cst.Name) and base.value.value in index.classes:
            if _class_may_clear(index, index.classes[base.value.value], seen):
                return True
        elif q not in ("object", "torch.nn.Module", "torch.nn.modules.module.Module"):
            return True
    return False


def _loop_may_clear(index, flow, loop, site) -> bool:
    """The calling loop's body may clear gradients: it reads `zero_grad` / `.grad`, calls a function or a
    method of the file that does (or whose class may), or hands what `site` uses to a call gradfix cannot
    resolve."""
    if _touches_gradients(loop.body):
        return True
    used = {n.value for n in walk(site) if isinstance(n, cst.Name)}
    for call in calls_in(loop.body):
        if call is site or contains(site, call):
            continue
        target = None
        if isinstance(call.func, cst.Name):
            target = index.functions.get(call.func.value)
        elif isinstance(call.func, cst.Attribute):
            owner = instance_class(flow, call)
            if owner is None and isinstance(call.func.value, cst.Name) and call.func.value.value == "self":
                owner = index.enclosing_class(loop)
            if owner is not None:
                if _class_may_clear(index, owner, set()):
                    return True
                continue
        if target is not None:
            if _touches_gradients(target):
                return True
            continue
        if used & (_names_outside(call, site) - _harmless_names(call)):
            return True
    return False


def _names_outside(node, site) -> set[str]:
    """Names `node` reads outside the subtree `site` (`history.append(learner.update(x))` hands on
    only `history`)."""
    out: set[str] = set()
    stack = [node]
    while stack:
        n = stack.pop()
        if n is site:
            continue
        if isinstance(n, cst.Name):
            out.add(n.value)
        stack.extend(n.children)
    return out


def _harmless_names(call) -> set[str]:
    """Names in `call` that are only its callee's dotted path's leaves (`torch` of `torch.randn`)."""
    root = call.func
    while isinstance(root, cst.Attribute):
        root = root.value
    return {root.value} if isinstance(root, cst.Name) and root is not call.func else set()


def _clears_anything(it) -> bool:
    return any(e.op in ("zero_grad", "opaque") or (e.op == "helper" and "zero_grad" in e.info.get("ops", ()))
               for e in it.events) or _forward_clears(it)


def _forward_clears(it) -> bool:
    """A model the loop calls whose class clears its own gradients in `forward` (`self.zero_grad()`;
    a class of another file of the project counts when its forward runs it as a statement of its body,
    also one reached through `from model import *`): each forward call clears them."""
    index = it.index
    for node in walk(it.loop.body if it.loop is not None else it.scope):
        if not isinstance(node, cst.Call):
            continue
        name = dotted(node.func)
        if name is None:
            continue
        for b in it.bindings(name[: -len(".forward")] if name.endswith(".forward") else name):
            short = (b.ctor or "").rsplit(".", 1)[-1]
            fwd = index.method(short, "forward") if short in index.classes else None
            if fwd is not None and any(isinstance(c.func, cst.Attribute) and c.func.attr.value == "zero_grad" and
                                       code_of(c.func.value) == "self" for c in calls_in(fwd)):
                return True
            ctor = b.ctor or (qualname(b.value.func, index.imports) if isinstance(b.value, cst.Call) else None)
            if fwd is None and ctor and index.project is not None and index.project.forward_clears(ctor):
                return True  # a module class of another file (analysis/returns.py `clearing_classes`)
    return False


def _hidden_clears(it) -> bool:
    """A call that may clear gradients out of sight: a function handed the optimizer or model, a helper that
    clears, a step with a closure (LBFGS clears inside it)."""
    return any(e.op == "opaque" or (e.op == "helper" and "zero_grad" in e.info.get("ops", ())) or
               (e.op == "step" and not e.info.get("scaled") and isinstance(e.node, cst.Call) and e.node.args)
               for e in it.events)


def _param_owners(it, opt: str) -> set[str] | None:
    """The models whose `.parameters()` the optimizer `opt` is built over, each bound to a module constructor
    (not an alias of another model's part); None when that is not shown."""
    b = it.optimizer_binding(opt)
    if b is None:
        return None
    owners = set()
    for call in calls_in(b.value):
        if isinstance(call.func, cst.Attribute) and call.func.attr.value in ("parameters", "named_parameters"):
            name = dotted(call.func.value)
            if name is None:
                return None
            owners.add(name)
    if not owners:
        return None
    for name in owners:
        root = name.split(".")[0] if not name.startswith("self.") else ".".join(name.split(".")[:2])
        bs = it.bindings(root)
        if not bs or not all(x.kind.value == "module" and x.ctor for x in bs):
            return None
    return owners


def _related(a: str, b: str) -> bool:
    return a == b or a.startswith(b + ".") or b.startswith(a + ".")


def _only_other_optimizers_cleared(it, step) -> list[str]:
    """The optimizers this loop clears when every clear is another optimizer's `zero_grad()` over other models
    than `step`'s optimizer holds (a GAN loop clearing G's optimizer but not D's)."""
    if it.loop is None or _hidden_clears(it):
        return []
    clears = [e for e in it.events + it.epoch_events if e.op == "zero_grad"]
    if not clears or any(z.info.get("target") != "opt" or z.recv == step.recv for z in clears):
        return []
    mine = _param_owners(it, step.recv)
    if mine is None:
        return []
    for z in clears:
        theirs = _param_owners(it, z.recv)
        if theirs is None or any(_related(a, b) for a in mine for b in theirs):
            return []
    return sorted({z.recv for z in clears})


def _cleared_in_some_branches(index, it, b, step):
    """(test, missing branch) when the stepped optimizer's only clears sit in some branches of one if/else whose
    other branch has none, while backward() and the step run on every path."""
    if b.path or b.nested or step.path or step.nested or _hidden_clears(it):
        return None
    clears = [e for e in it.events + it.epoch_events if e.op == "zero_grad"]
    if not clears or any(z.info.get("target") != "opt" or z.recv != step.recv for z in clears):
        return None
    if any(not z.path or z.nested or z.info.get("where") for z in clears):
        return None
    node = clears[0].path[0][0]
    if any(z.path[0][0] is not node for z in clears):
        return None
    branches = list(if_branches(node))
    if not isinstance(branches[-1][1], cst.Else):
        return None  # an `if` without `else`: the test decides whether to clear on purpose
    tests = [owner.test for _k, owner in branches if isinstance(owner, cst.If)]
    index_var = it.index_var()
    for test in tests:
        text = code_of(test)
        if _ACCUMULATION_WORDS.search(text) or any(isinstance(n, cst.Modulo) for n in walk(test)) or \
                (index_var and re.search(rf"\b{re.escape(index_var)}\b", text)):
            return None
    cleared = {z.path[0][1] for z in clears}
    missing = [k for k, owner in branches if k not in cleared and not _leaves(owner)]
    if not missing:
        return None
    if it.loop is None and not isinstance(it.scope, cst.FunctionDef):
        return None  # a straight-line module runs its step once
    if it.loop is None and _callers_clear(index, it.scope):
        return None
    k = missing[0]
    what = "`else` branch" if k == len(branches) - 1 else ("`if` branch" if k == 0 else f"`elif` branch {k}")
    return tests[0], what


def _leaves(owner) -> bool:
    """The branch may leave the step (`continue`, `break`, `return`, `raise`): backward() and the step need
    not follow it."""
    return any(isinstance(n, (cst.Continue, cst.Break, cst.Return, cst.Raise)) for n in walk(owner.body))


def _callers_clear(index, fn) -> bool:
    """A function called in this file from a scope that clears gradients itself."""
    for flow, _st, _call, _bound in index.callgraph.sites(fn):
        if any(isinstance(c.func, cst.Attribute) and c.func.attr.value == "zero_grad" for _s, c in flow.calls):
            return True
    return False


RULE = ZeroGradMissing
