"""GF103 data-mutation-in-loss: `.data` writes between the forward pass and backward()."""

from __future__ import annotations

import re

import libcst as cst

from gradfix.analysis.loops import _walk_calls, calls_backward, is_model_call, training_loops
from gradfix.analysis.callgraph import argument_for
from gradfix.analysis.gradpath import GradPaths
from gradfix.analysis.names import dotted, qualname
from gradfix.analysis.params import FACTORIES
from gradfix.analysis.tree import walk as _walk
from gradfix.analysis.torchapi import is_inplace_method
from gradfix.analysis.trainstep import (
    forward_output_name, literal_number, loss_expressions, model_and_optimizer_setup, optimizer_name, step_snippet,
    torch_alias,
)
from gradfix.model import Edit, Safety
from gradfix.rule import Rule, RuleDocs

_LOSS_LIKE = re.compile(r"loss|regulari[sz]|penalt|criterion", re.IGNORECASE)
_CLAMP_FUNCS = {"clamp", "clip", "clamp_min", "clamp_max", "renorm"}


def _pending_window(tl) -> list:
    """The steps between a forward call whose graph `tl`'s backward() will use and that backward():
    after the iteration's previous backward() (a GAN's discriminator step backpropagates the real
    batch before the fake one), and after a model call of that segment whose result flows into the
    backpropagated loss. A `.data` write before the segment's first such forward, or after an earlier
    backward, changes nothing a pending graph saved: a forward whose output only feeds an `assert` or a
    print (a notebook's test cell setting weights before the forward it backpropagates) holds no graph
    that backward() reads."""
    steps = tl.between_forward_and_backward()
    flow = tl.flow
    start = -1
    for st in steps:
        if st.index < tl.backward.index and calls_backward(st, flow):
            start = st.index
    feeds_loss = {id(node) for node, _value in loss_expressions(tl, unpacked=True)}
    out, forward_seen = [], False
    for st in steps:
        if st.index <= start:
            continue
        if not forward_seen and not isinstance(st.node, cst.BaseCompoundStatement):
            forward_seen = id(st.node) in feeds_loss and any(is_model_call(c, flow) for c in _walk_calls(st.node))
            if forward_seen:
                continue  # the forward statement itself: a write in it would precede the call
        if forward_seen:
            out.append(st)
    return out


def _parameter_like(flow, target) -> bool:
    """A module's attribute (`net.fc.weight`, `self.w`), a parameter loop variable, or a name gradfix
    cannot place; not a data buffer created in the file (`noise = torch.empty(8, 2)` refilled with
    `noise.data.normal_()`, `label.data.fill_(0)`)."""
    if not isinstance(target, cst.Name):
        return True
    for f in flow.and_module():
        bindings = [b for b in f.bindings if b.name == target.value]
        if bindings:
            return not all(_created_tensor(f, b) for b in bindings)
    return True


def _is_clamp(small) -> bool:
    return any(isinstance(c.func, (cst.Attribute, cst.Name)) and
               (c.func.attr.value if isinstance(c.func, cst.Attribute) else c.func.value).rstrip("_") in _CLAMP_FUNCS
               for c in _walk_calls(small))


def _untrained_parameter(index, tl, small, target, fn: cst.FunctionDef | None = None,
                         call_site: cst.Call | None = None) -> bool:
    """`tp.data.copy_(...)` in `for tp, p in zip(target.parameters(), net.parameters())`: a parameter of
    a module the stepping optimizer does not hold (a target network's Polyak update); nothing the
    pending backward uses depends on it. In a helper (`fn` called at `call_site`), the module is the
    argument given for the helper's parameter."""
    if not isinstance(target, cst.Name):
        return False
    loop = index.enclosing(small, (cst.For,))
    if loop is None or loop is tl.loop:
        return False
    owner = _parameters_owner(loop, target.value)
    if owner is not None and fn is not None and call_site is not None:
        arg = argument_for(fn, call_site, owner)
        owner = dotted(arg) if arg is not None else owner
    if owner is None:
        return False
    paths = GradPaths(tl)
    return paths.trained_from.startswith("the modules") and owner not in paths.trained


def _owner_forward_pending(index, tl, st, target) -> bool | None:
    """For `p.data.clamp_(...)` in `for p in critic.parameters()`: whether `critic` (or a helper of this file,
    which may call it) runs between this segment's start (the iteration's start, or its previous backward) and
    the write. False means the write precedes every forward of that module in the segment (a WGAN clip before
    the critic's own forward, with only a detached generator call before it): the critic's graph is built on
    the clipped weights. None when the owner is not known."""
    if not isinstance(target, cst.Name):
        return None
    loop = index.enclosing(st.node, (cst.For,))
    if loop is None or loop is tl.loop:
        return None
    owner = _parameters_owner(loop, target.value)
    if owner is None or owner == "self":
        return None
    flow = tl.flow
    root = owner.split(".")[0]
    start = -1
    for other in tl.steps:
        if other.index < tl.backward.index and calls_backward(other, flow):
            start = max(start, other.index) if other.index < st.index else start
    for other in tl.steps:
        if not start < other.index < st.index or isinstance(other.node, cst.BaseCompoundStatement):
            continue
        for call in _walk_calls(other.node):
            name = dotted(call.func) or ""
            helper = index.functions.get(call.func.value) if isinstance(call.func, cst.Name) else None
            if name == owner or name.startswith(owner + ".") or any(dotted(a.value) == owner for a in call.args) \
                    or helper is not None and any(isinstance(n, cst.Name) and n.value == root
                                                  for n in _walk(helper)):
                return True  # the module (or a helper that reads it, or is handed it) ran before the write
    return False


def _parameters_owner(loop: cst.For, name: str) -> str | None:
    """`target` for `name` bound by `for name in target.parameters()` or by its place in
    `for a, b in zip(target.parameters(), ...)`."""
    def owner(expr) -> str | None:
        if isinstance(expr, cst.Call) and isinstance(expr.func, cst.Attribute) and \
                expr.func.attr.value in ("parameters", "buffers"):
            return dotted(expr.func.value)
        return None

    target, it = loop.target, loop.iter
    if isinstance(target, cst.Name) and target.value == name:
        return owner(it)
    if isinstance(target, (cst.Tuple, cst.List)) and isinstance(it, cst.Call) and \
            isinstance(it.func, cst.Name) and it.func.value == "zip":
        names = [el.value.value if isinstance(el.value, cst.Name) else None for el in target.elements]
        if name in names and names.index(name) < len(it.args):
            return owner(it.args[names.index(name)].value)
    return None


def _created_tensor(flow, binding, depth: int = 0) -> bool:
    """Bound to a tensor the file creates (a factory, `torch.FloatTensor(n)`, the old `Variable(t)`
    wrapper, or a move of such a name: `label.cuda()`)."""
    value = binding.value
    if isinstance(value, cst.Tuple) and value.elements and depth <= 3:  # `input, label = input.cuda(), label.cuda()`
        return all(_created_tensor(flow, _Bound(el.value, binding.step), depth + 1) for el in value.elements)
    if binding.is_param or not isinstance(value, cst.Call) or depth > 3:
        return False
    func = value.func
    q = qualname(func, flow.index.imports) or ""
    if q in FACTORIES or q in _TENSOR_CTORS:
        return True
    if q in _WRAPPERS and value.args:
        inner = value.args[0].value
    elif isinstance(func, cst.Attribute) and func.attr.value in _MOVES:
        inner = func.value
    else:
        return False
    if not isinstance(inner, cst.Name):
        return isinstance(inner, cst.Call) and _created_tensor(flow, _Bound(inner, binding.step), depth + 1)
    earlier = [b for b in flow.bindings if b.name == inner.value and b.step < binding.step]
    return bool(earlier) and _created_tensor(flow, earlier[-1], depth + 1)


class _Bound:
    """A value standing in for a binding (a nested call, a tuple element)."""

    is_param = False

    def __init__(self, value, step: int):
        self.value, self.step = value, step


_TENSOR_CTORS = frozenset({"torch.Tensor", "torch.FloatTensor", "torch.LongTensor", "torch.DoubleTensor",
                           "torch.cuda.FloatTensor", "torch.cuda.LongTensor", "torch.empty_like"})
_WRAPPERS = frozenset({"torch.autograd.Variable", "torch.autograd.variable.Variable"})
_MOVES = frozenset({"cuda", "to", "cpu", "float", "double", "half", "long", "contiguous"})


def data_write(small: cst.CSTNode):
    """(param expression, kind) when `small` writes through `.data`; None otherwise."""
    def through_data(expr):
        if isinstance(expr, cst.Subscript):
            expr = expr.value
        if isinstance(expr, cst.Attribute) and expr.attr.value == "data":
            if isinstance(expr.value, cst.Attribute) and expr.value.attr.value == "grad":
                return None  # `p.grad.data.zero_()`: a hand-written zero_grad writes gradients, not weights
            return expr.value
        return None

    if isinstance(small, cst.Assign):
        for t in small.targets:
            p = through_data(t.target)
            if p is not None:
                return p
    if isinstance(small, cst.AugAssign):
        return through_data(small.target)
    if isinstance(small, cst.Expr) and isinstance(small.value, cst.Call):
        func = small.value.func
        if isinstance(func, cst.Attribute) and is_inplace_method(func.attr.value):
            return through_data(func.value)
    return None


def _same(a: cst.CSTNode, b: cst.CSTNode) -> bool:
    return a.deep_equals(b)


def post_step_call(small: cst.CSTNode, param: cst.BaseExpression) -> cst.Call | None:
    """`P.data.clamp_(a, b)` / `P.data = torch.clamp(P.data, a, b)` -> `P.clamp_(a, b)`."""
    if isinstance(small, cst.Expr):
        call = small.value
        return call.with_changes(func=cst.Attribute(value=param, attr=call.func.attr))
    if isinstance(small, cst.Assign) and isinstance(small.value, cst.Call):
        call = small.value
        data = cst.Attribute(value=param, attr=cst.Name("data"))
        func = call.func
        if isinstance(func, cst.Attribute) and func.attr.value in _CLAMP_FUNCS:
            if isinstance(func.value, cst.Name) or (isinstance(func.value, cst.Attribute) and func.value.attr.value != "data"):
                # torch.clamp(P.data, ...)
                if call.args and call.args[0].keyword is None and _same(call.args[0].value, data):
                    rest = list(call.args[1:])
                    if rest:
                        rest[-1] = rest[-1].with_changes(comma=cst.MaybeSentinel.DEFAULT)
                    return cst.Call(func=cst.Attribute(value=param, attr=cst.Name(func.attr.value + "_")), args=rest)
            elif _same(func.value, data):
                return cst.Call(func=cst.Attribute(value=param, attr=cst.Name(func.attr.value + "_")), args=call.args)
    return None


class _Substitute(cst.CSTTransformer):
    def __init__(self, name: str, replacement: cst.BaseExpression):
        super().__init__()
        self.name, self.replacement = name, replacement

    def leave_Name(self, original, updated):
        return self.replacement if original.value == self.name else updated

    def visit_Attribute(self, node):
        # only the root of `m.weight` is a variable; attribute names are left alone
        return False

    def leave_Attribute(self, original, updated):
        return updated.with_changes(value=original.value.visit(self))


def _owner_ran_before(tl, st, param) -> bool:
    """In straight-line code (a script or notebook with no training loop), whether the module that
    owns `param` (`conv` of `conv.weight`) is called before the write: writing a fresh layer's
    weights before its first forward (an initialisation) changes nothing a graph saved. Inside a
    loop the previous iteration's forward counts, so a loop always qualifies."""
    if tl.loop is not None:
        return True
    root = _root_name(param)
    if root is None or root.value == "self":
        return True
    owner = tl.flow.name_binding(root)
    for other in tl.flow.steps:
        if other.index >= st.index:
            break
        for call in _walk_calls(other.node) if not isinstance(other.node, cst.BaseCompoundStatement) else ():
            func = call.func
            if isinstance(func, cst.Attribute) and func.attr.value == "forward":
                func = func.value
            if isinstance(func, cst.Name) and func.value == root.value and tl.flow.name_binding(func) is owner:
                return True  # the same object (a notebook may rebind the name to a new layer)
    return False


def _root_name(expr) -> cst.Name | None:
    while isinstance(expr, (cst.Attribute, cst.Subscript)):
        expr = expr.value
    return expr if isinstance(expr, cst.Name) else None


def _bounds(call: cst.Call) -> list | None:
    """[lo, hi] of a clamp call: numbers when literal, else their source (the verifier evaluates it)."""
    def value(expr):
        v = literal_number(expr)
        return v if v is not None else cst.Module([]).code_for_node(expr).strip()

    lo = hi = None
    positional = [a for a in call.args if a.keyword is None]
    if len(positional) >= 1:
        lo = value(positional[0].value)
    if len(positional) >= 2:
        hi = value(positional[1].value)
    for a in call.args:
        if a.keyword is not None and a.keyword.value == "min":
            lo = value(a.value)
        if a.keyword is not None and a.keyword.value == "max":
            hi = value(a.value)
    if lo is None and hi is None:
        return None
    return [float("-inf") if lo is None else lo, float("inf") if hi is None else hi]


class DataMutationInLoss(Rule):
    id = "GF103"
    name = "data-mutation-in-loss"
    summary = "A write through `.data` runs between the forward pass and backward()"
    docs = RuleDocs(
        what=(
            "Finds writes through `.data` (`m.weight.data = torch.clamp(m.weight.data, lo, hi)`, "
            "`p.data.clamp_(lo, hi)`) in a loss or regulariser function called in a training loop after the "
            "forward pass and before `backward()`, or in the loop body itself between the two. In the loop body "
            "only writes to parameters count (a module's attribute, a parameter loop variable, a name gradfix "
            "cannot place) while a forward's graph is pending: refilling a data buffer the file created "
            "(`noise.data.normal_()`, `label.data.fill_(0)`) and writes after the iteration's previous backward() "
            "and before the next model call (a GAN's discriminator step) are left alone, and so are writes before the "
            "first forward whose result flows into the backpropagated loss: a forward whose output only feeds an "
            "`assert`, a print or a comparison holds no graph that backward() reads (a notebook's test cell that "
            "checks a module's output, sets its weights through `.data`, then runs the forward it backpropagates), "
            "and writes to the parameters of a module (`for p in critic.parameters(): p.data.clamp_(-c, c)`) that "
            "has not run since the segment started, when only other modules ran before the write (a WGAN clip "
            "after a detached generator sample, before the critic's own forward: the critic's graph is built on "
            "the clipped weights; a call that is handed the module, or a helper of the file that names it, counts "
            "as its forward), "
            "and so are writes to "
            "gradients (`p.grad.data.zero_()`, a hand-written zero_grad). In straight-line code (a script or a "
            "notebook's cells with no training loop) a write counts only after the layer that owns the weight ran: "
            "setting a fresh layer's weights through `.data` before its first call is an initialisation. A tensor "
            "a helper computes itself (`probs = net(s).gather(...)`; `probs.data.clamp_(0.01, 0.99)`, a guard "
            "before a log) is not a weight and is left alone. So is an attack update through `.data` after "
            "`torch.autograd.grad(loss, delta)` consumed the attack forward (FGSM: `delta.data = clamp(delta.data + "
            "a * g.sign(), -eps, eps)`, then `delta.detach()` and the training forward): the attack's `loss` is "
            "rebound on every path before the training `backward()`, so the write is in no forward/backward window."
        ),
        why=(
            "`.data` writes bypass autograd: no version bump, no error. Backward then reads whatever the forward "
            "saved. When the op saved the weight itself (`f @ w`, `(w ** 2).sum()`), the gradient is computed with "
            "the clamped weight: d(out)/df = 1.0 instead of 3.0 (torch 2.13). In every variant the update order is "
            "wrong (`clamp(w) - delta` instead of `clamp(w - delta)`), so the weights leave the box by up to lr "
            "per step (|w|max 1.1034 after 49 Adam steps at lr 0.1), and `.data =` allocates new storage each call."
        ),
        example=(
            "def reg(m):\n    with torch.no_grad():\n        m.weight.data = torch.clamp(m.weight.data, -1.0, 1.0)\n"
            "    return 1e-4 * m.weight.abs().mean()\n\nloss = crit(net(x), y) + reg(net.fc)\nloss.backward()\nopt.step()"
        ),
        fixed_example=(
            "def reg(m):\n    return 1e-4 * m.weight.abs().mean()\n\nloss = crit(net(x), y) + reg(net.fc)\n"
            "loss.backward()\nopt.step()\nwith torch.no_grad():\n    net.fc.weight.clamp_(-1.0, 1.0)"
        ),
        fix=(
            "Removes the write (and a `with torch.no_grad():` block it leaves empty) and clamps after the optimizer "
            "step instead: `with torch.no_grad(): <param>.clamp_(lo, hi)` right after `opt.step()` (after "
            "`scaler.step(opt); scaler.update()` under AMP), mapping the function's parameter to the call-site "
            "argument. When the call site or the step is not in the file, it is reported without a fix."
        ),
        fix_safety="Unsafe: it changes the update order on purpose (projected gradient descent). Applied when the run shows the hazard (`fixes-hazard`).",
        verification=(
            "`clamp-moved`: a 3-step train-step check from two starts. Inside the bounds, gradients and parameters "
            "match the original while the clamp does not bind; outside, the rewrite keeps the parameter within the "
            "bounds after every step and differs from the original by at most lr per step."
        ),
    )

    def may_match(self, facts) -> bool:
        """Necessary (analysis/prepass.py): `data_write` needs a `.data` attribute; the statements looked at are in
        a training step or in a function named like a loss (`_LOSS_LIKE`)."""
        return "data" in facts.attrs and (facts.backward_call or any(_LOSS_LIKE.search(d) for d in facts.defs))

    def check(self, ctx):
        index = ctx.index
        called_in_loops: set[str] = set()
        seen: set[int] = set()
        for scope, flow, tl in training_loops(index):
            for st in tl.steps:  # a helper the loop calls anywhere is judged by its call site, not its name
                if not isinstance(st.node, cst.BaseCompoundStatement):
                    called_in_loops |= {c.func.value for c in _walk_calls(st.node)
                                        if isinstance(c.func, cst.Name) and c.func.value in index.functions}
            for st in _pending_window(tl):
                if isinstance(st.node, cst.BaseCompoundStatement):
                    continue
                param = data_write(st.node)
                if param is not None and id(st.node) not in seen and _parameter_like(flow, param) and \
                        not _untrained_parameter(index, tl, st.node, param) and _owner_ran_before(tl, st, param) \
                        and _owner_forward_pending(index, tl, st, param) is not False:
                    seen.add(id(st.node))
                    yield self._direct(ctx, flow, tl, st)
                for call in _walk_calls(st.node):
                    if isinstance(call.func, cst.Name) and call.func.value in index.functions:
                        fn = index.functions[call.func.value]
                        if fn is scope:
                            continue
                        called_in_loops.add(fn.name.value)
                        for found in self._in_function(ctx, fn, call, tl, seen):
                            yield found
        for name, fn in index.functions.items():
            if name in called_in_loops or not _LOSS_LIKE.search(name):
                continue
            for found in self._in_function(ctx, fn, None, None, seen):
                yield found

    # -- findings ----------------------------------------------------------
    def _direct(self, ctx, flow, tl, st):
        param = data_write(st.node)
        what = "clamp" if _is_clamp(st.node) else "write"
        message = (f"`{ctx.code(param)}.data` is written between the forward pass and backward(): autograd does not "
                   f"see it and the {what} lands before the optimizer step; {what} after `optimizer.step()` instead")
        fix = None
        call = post_step_call(st.node, param)
        innermost = st.loops[-1] if st.loops else None
        if call is not None and innermost is tl.loop:
            # (a write inside a loop nested in the training loop is reported without a fix: moving it
            # after the step would leave that loop behind)
            fix = self._fix(ctx, tl, call, _remove_small(ctx, st), old_stmt=ctx.code(st.node).strip())
        return ctx.finding(st.node, message, fix)

    def _in_function(self, ctx, fn: cst.FunctionDef, call_site, tl, seen):
        body = fn.body.body if isinstance(fn.body, cst.IndentedBlock) else []
        flow = ctx.index.flow(fn)
        for stmt, small, container in _data_writes(body):
            if id(small) in seen:
                continue
            root = _root_name(data_write(small))
            local = [b for b in flow.bindings if root is not None and b.name == root.value]
            if local and all(not b.is_param and b.kind.value != "parameter" for b in local):
                continue  # a tensor the helper computes itself (`dist = q(s).gather(...)`), not a weight
            if call_site is not None and tl is not None and \
                    _untrained_parameter(ctx.index, tl, small, data_write(small), fn, call_site):
                continue  # `soft_update(target, qnet, tau)`: the target network's parameters
            seen.add(id(small))
            param = data_write(small)
            where = f"`{fn.name.value}`"
            target = f"`{ctx.code(param)}`"
            fix = None
            hint = ""
            new_call = post_step_call(small, param) if container is not None else None
            if call_site is not None and tl is not None and new_call is not None:
                mapped = _map_param(fn, call_site, new_call, _root_name(param))
                if mapped is not None:
                    edits = _remove_in_function(ctx, fn, stmt, small, container)
                    if edits is not None:
                        fix = self._fix(ctx, tl, mapped, edits, term=ctx.code(call_site).strip())
            if fix is None:
                clamp = ctx.code(new_call).strip() if new_call is not None else f"the {target} update"
                hint = (f"; move it after `optimizer.step()` in the training loop as "
                        f"`with torch.no_grad(): {clamp}`" + (" (mapping the argument)" if new_call is not None else ""))
            message = (f"`{ctx.code(param)}.data` is written inside {where}, which runs between the forward pass and backward(): "
                       f"autograd does not see it and the clamp lands before the optimizer step" + hint)
            yield ctx.finding(small, message, fix)

    def _fix(self, ctx, tl, call: cst.Call, removal_edits, term: str | None = None, old_stmt: str | None = None):
        if tl.after_step_line is None or not isinstance(tl.after_step_line, cst.SimpleStatementLine):
            return None
        torch_name = torch_alias(tl.flow)
        if torch_name is None:
            return None
        block = cst.With(
            items=[cst.WithItem(item=cst.Call(func=cst.Attribute(value=cst.Name(torch_name), attr=cst.Name("no_grad"))))],
            body=cst.IndentedBlock(body=[cst.SimpleStatementLine(body=[cst.Expr(call)])]),
        )
        edits = list(removal_edits) + [Edit(tl.after_step_line, cst.FlattenSentinel([tl.after_step_line, block]))]
        clamp_code = cst.Module([]).code_for_node(call)
        contract = {"kind": "clamp-moved", "setup": None, "param": cst.Module([]).code_for_node(call.func.value),
                    "bounds": _bounds(call), "lr_hint": None}
        setup, model, lr = model_and_optimizer_setup(tl)
        opt = optimizer_name(tl)
        if setup is not None and model is not None and opt is not None:
            after = f"with {torch_name}.no_grad():\n    {clamp_code}"
            out = forward_output_name(tl)
            contract.update(
                setup=setup, model=model, lr_hint=lr,
                step_old=step_snippet(model, opt, extra_before_backward=old_stmt or "", term=term, output_name=out),
                step_new=step_snippet(model, opt, term=term, after_step=after, output_name=out),
            )
        return ctx.fix(f"clamp after the optimizer step: `{clamp_code}`", edits, Safety.UNSAFE, contract)


def _data_writes(body):
    """(statement line, small statement, container) for `.data` writes at the top of a function body
    or directly inside a top-level `with torch.no_grad():` (container is the With, or the body);
    deeper ones get container None (reported without a fix)."""
    for stmt in body:
        if isinstance(stmt, cst.SimpleStatementLine):
            for small in stmt.body:
                if data_write(small) is not None:
                    yield stmt, small, "body"
        elif isinstance(stmt, cst.With):
            for inner in stmt.body.body:
                if isinstance(inner, cst.SimpleStatementLine):
                    for small in inner.body:
                        if data_write(small) is not None:
                            yield inner, small, stmt
                else:
                    for node in _walk(inner):
                        if isinstance(node, cst.BaseSmallStatement) and data_write(node) is not None:
                            yield None, node, None
        elif isinstance(stmt, cst.BaseCompoundStatement):
            for node in _walk(stmt):
                if isinstance(node, cst.BaseSmallStatement) and data_write(node) is not None:
                    yield None, node, None


def _map_param(fn: cst.FunctionDef, call_site: cst.Call, new_call: cst.Call, root: cst.Name | None):
    """Rewrite the function's parameter in `new_call` as the call-site argument."""
    if root is None:
        return None
    names = [p.name.value for p in (*fn.params.posonly_params, *fn.params.params, *fn.params.kwonly_params)]
    if root.value not in names:
        # a global (e.g. `net.fc.weight.data` used directly): valid at the call site as it is,
        # unless the function rebinds it locally
        return new_call
    arg = argument_for(fn, call_site, root.value)
    if arg is None:
        return None
    if not isinstance(arg, (cst.Name, cst.Attribute, cst.Subscript)):
        arg = arg.with_changes(lpar=[cst.LeftParen()], rpar=[cst.RightParen()])
    return new_call.visit(_Substitute(root.value, arg))


def _keep_comments(block_body, index_removed, removed_line):
    """Move the removed statement's leading comments onto the next statement."""
    if index_removed + 1 < len(block_body):
        nxt = block_body[index_removed + 1]
        if removed_line.leading_lines and any(l.comment is not None for l in removed_line.leading_lines):
            return [Edit(nxt, nxt.with_changes(leading_lines=list(removed_line.leading_lines) + list(nxt.leading_lines)))]
    return []


def _remove_in_function(ctx, fn, line, small, container):
    body = list(fn.body.body)
    if isinstance(container, cst.With) and len(container.body.body) == 1 and len(line.body) == 1:
        target = container
    elif len(line.body) == 1:
        target = line
    else:
        return [Edit(small, cst.RemovalSentinel.REMOVE)]
    if target in body:
        i = body.index(target)
        others = [s for s in body if s is not target]
        if not others:
            return [Edit(target, cst.SimpleStatementLine(body=[cst.Pass()], leading_lines=target.leading_lines))]
        return [Edit(target, cst.RemovalSentinel.REMOVE)] + _keep_comments(body, i, target)
    inner = list(container.body.body)
    i = inner.index(target)
    return [Edit(target, cst.RemovalSentinel.REMOVE)] + _keep_comments(inner, i, target)


def _remove_small(ctx, st):
    line = st.line
    if isinstance(line, cst.SimpleStatementLine) and len(line.body) == 1:
        parent = ctx.index.parents.get(line)
        siblings = list(parent.body) if parent is not None and isinstance(getattr(parent, "body", None), (list, tuple)) else []
        edits = [Edit(line, cst.RemovalSentinel.REMOVE)]
        if line in siblings:
            edits += _keep_comments(siblings, siblings.index(line), line)
        return edits
    return [Edit(st.node, cst.RemovalSentinel.REMOVE)]


RULE = DataMutationInLoss
