"""GF209 discarded-out-of-place: an out-of-place tensor op whose result is thrown away."""

from __future__ import annotations

import libcst as cst

from gradfix.analysis.callgraph import passed_arguments, unpacked_tensor
from gradfix.analysis.flow import TENSORISH, Kind
from gradfix.analysis.expressions import OUT_OF_PLACE, _grad_chain, code_of, literal_value
from gradfix.analysis.iteration import iterations, locator
from gradfix.analysis.loopedits import optimizer_and_scheduler, train_loop_contract
from gradfix.analysis.loopspec import module_constants, skeleton
from gradfix.analysis.names import qualname
from gradfix.analysis.tree import walk
from gradfix.model import Edit, Safety
CELL_MARK = "# gradfix:cell "  # gradfix.notebook.CELL_MARK (not imported: rules stay clear of the engine)
from gradfix.rule import Rule, RuleDocs

# Conversions and views: no in-place twin; the result must be assigned.
CONVERSIONS = frozenset({"to", "cuda", "cpu", "float", "double", "half", "bfloat16", "long", "int", "contiguous",
                         "detach", "clone", "view", "reshape", "transpose", "permute", "squeeze", "unsqueeze",
                         "flatten", "t", "type"})
_RESHAPES = frozenset({"view", "reshape", "transpose", "permute", "squeeze", "unsqueeze", "flatten", "t"})
_PARAM_ATTRS = ("weight", "bias")


def _root(expr):
    """The tensor a chain of out-of-place calls starts from: `y` of `y.contiguous().float()`."""
    while isinstance(expr, cst.Call) and isinstance(expr.func, cst.Attribute) and expr.func.attr.value in CONVERSIONS:
        expr = expr.func.value
    return expr


class DiscardedOutOfPlace(Rule):
    id = "GF209"
    name = "discarded-out-of-place"
    summary = "An out-of-place tensor op is a bare statement: its result is discarded"
    docs = RuleDocs(
        what=(
            "Finds a statement that is only an out-of-place tensor method call whose in-place twin exists: "
            "`p.grad.data.clamp(-1, 1)`, `p.data.clamp(-c, c)`, `x.add(1)`, `x.div(n)`, and tensor conversions "
            "(`x.to(device)`, `x.float()`) as bare statements. The receiver must be a tensor: a gradient (`.grad`), "
            "parameter data, a name bound to a tensor (also what a `torch.distributions` object samples, `action = Normal(mu, std).sample()`), or a parameter without annotation that every call of its "
            "function in the file passes a tensor for (`def training_step(self, x): x.to(device=self.device)` called "
            "as `vae.training_step(torch.randn(16, 20))`), or a name unpacked from a call of a function or method of "
            "the file (`t, w = sampler.sample(n)`, `sampler` built from a class of the file) that returns a tuple "
            "display on every path with a tensor at that position (`return torch.from_numpy(i).long(), "
            "torch.ones(n)`); a callee that may fall off its end, is decorated or a generator, or returns "
            "something else there (a module, an argument) leaves the name unknown. A parameter nobody calls with a tensor in the file is "
            "unknown and left alone (it may be a module). Ops whose result is used, methods with side effects, "
            "chains ending in an in-place call, and `model.to(device)` / `model.cuda()` / `model.float()` on modules "
            "(modules move in place; also a module cast first, `model = Net().bfloat16()`; a name is judged by the "
            "binding the statement reads, so a module parameter moved and then rebound to a converted copy stays a "
            "module) are left alone, and so is "
            "the last statement of a notebook cell without a trailing `;` (Jupyter displays its value), and a "
            "`view`/`reshape` whose literal sizes cannot hold the element count of the literal tensor it is called "
            "on (`t = torch.tensor(<2 x 4 list>); t.reshape(1, 9)`): that line raises, it discards nothing."
        ),
        why=(
            "Out-of-place ops return a new tensor and leave the receiver as it was: gradient clipping or clamping "
            "written this way silently does nothing (pytorch/tutorials PR #30 fixed exactly this), and the training "
            "runs with unclipped gradients or unconstrained weights."
        ),
        example="loss.backward()\nfor p in model.parameters():\n    p.grad.data.clamp(-1, 1)\noptimizer.step()",
        fixed_example="loss.backward()\nfor p in model.parameters():\n    p.grad.data.clamp_(-1, 1)\noptimizer.step()",
        fix=(
            "Uses the in-place twin (`clamp` -> `clamp_`) on gradients (`p.grad`, `p.grad.data`) and on parameter "
            "data (`p.data`, `model.fc.weight.data`), where in-place is what was meant and autograd is not involved. "
            "On other tensors (activations) and for conversions it reports without a fix: an in-place op on a tensor "
            "autograd saved would break backward (GF101), and a conversion's result must be assigned."
        ),
        fix_safety="Unsafe: the op now takes effect, which changes the updates on purpose. Applied when the run shows the hazard (`fixes-hazard`).",
        verification=(
            "`train-loop` (see GF202): the op is read from both versions and applied to every synthetic parameter's "
            "gradient (between backward and the step) or data (after the step), as in the file's loop or, for a "
            "helper function, where the loop calls it; `fixes-hazard` when the rewrite follows the canonical "
            "order with the op in place and the original's steps exceed the declared clamp (the op had no effect), "
            "else `changes-behaviour`."
        ),
    )

    def may_match(self, facts) -> bool:
        """Necessary (analysis/prepass.py): a statement that is a `x.<method>(...)` call alone, the method out-of-
        place or a conversion, on a receiver a flow may take for a tensor (not a literal, a plain attribute
        `self.model`, or a name its scope does not bind)."""
        methods = OUT_OF_PLACE | CONVERSIONS
        # and its receiver may be a tensor (`_grad_chain`, `flow.classify`, `_passed_tensor` on a parameter)
        return bool(facts.discarded & methods) and facts.discarded_on_tensors(methods)

    def check(self, ctx):
        index = ctx.index
        done: set[int] = set()
        for scope in index.scopes():
            flow = index.flow(scope)
            for st in flow.steps:
                small = st.node
                if not (isinstance(small, cst.Expr) and isinstance(small.value, cst.Call)) or id(small) in done:
                    continue
                call = small.value
                if _cell_output(ctx, small):
                    continue
                func = call.func
                if not isinstance(func, cst.Attribute):
                    continue
                meth = func.attr.value
                if meth not in OUT_OF_PLACE and meth not in CONVERSIONS:
                    continue
                recv = func.value
                if meth in CONVERSIONS and isinstance(recv, cst.Call) and isinstance(recv.func, cst.Attribute) and \
                        recv.func.attr.value.endswith("_") and not recv.func.attr.value.startswith("_"):
                    continue  # `y.scatter_(1, idx, 1).float()`: the in-place call did the work
                chain = _grad_chain(recv)
                context = None
                if chain is not None and chain[0] == "grad":
                    context = "grad"
                elif chain is not None and chain[0] == "data" and _is_param(flow, chain[1]):
                    context = "param"
                else:
                    # a name: the binding this read sees, not the name's last one (`model.to(0)` on the
                    # `nn.Module` parameter, then `model = convert_sync_batchnorm(model)`)
                    reads = flow.name_binding(recv) if isinstance(recv, cst.Name) else None
                    kind = reads.kind if reads is not None else flow.classify(recv)[0]
                    if kind not in TENSORISH and not _passed_tensor(flow, recv) and \
                            not (isinstance(recv, cst.Name) and unpacked_tensor(flow, recv)):
                        continue
                    if _fresh_temporary(recv, ctx.index):
                        continue  # `torch.zeros(1).cuda()`: run for its effect (the CUDA context); nothing kept
                    context = "tensor"
                    if meth in ("view", "reshape") and _size_mismatch(flow, recv, call):
                        continue  # `t.reshape(1, 9)` of an 8-element tensor raises: nothing is discarded
                done.add(id(small))
                yield self._finding(ctx, flow, st, small, call, meth, context)

    def _finding(self, ctx, flow, st, small, call, meth, context):
        recv = code_of(call.func.value)
        if meth in CONVERSIONS:
            why = "a view or reshape is a new tensor; the original keeps its shape" if meth in _RESHAPES else \
                "`detach()` leaves the tensor in the graph; `detach_()` works in place" if meth == "detach" else \
                "tensors, unlike modules, do not convert in place"
            message = (f"`{code_of(call)}` returns a new tensor that is discarded: `{code_of(_root(call.func.value))}` "
                       f"is unchanged ({why}); assign the result")
            return ctx.finding(call, message, None)
        if context == "tensor":
            message = (f"`{code_of(call)}` returns a new tensor that is discarded: `{recv}` is unchanged; assign the "
                       f"result (`{recv} = {code_of(call)}`); an in-place `{meth}_` on a tensor autograd saved would "
                       f"break backward")
            return ctx.finding(call, message, None)
        what = "gradient" if context == "grad" else "parameter"
        message = (f"`{code_of(call)}` returns a new tensor that is discarded: the {what} is unchanged, so this "
                   f"{'clipping' if meth in ('clamp', 'clip', 'clamp_min', 'clamp_max') else 'op'} does nothing; use "
                   f"the in-place `{meth}_`")
        new_call = call.with_changes(func=call.func.with_changes(attr=cst.Name(meth + "_")))
        contract = self._contract(ctx, call, st, context)
        fix = ctx.fix(f"use the in-place `{meth}_`", [Edit(call, new_call)], Safety.UNSAFE, contract)
        return ctx.finding(call, message, fix)

    def _contract(self, ctx, call, st, context):
        line = ctx.span(call).line
        for it in iterations(ctx.index):
            if any(e.op == "grad_op" and e.node is call for e in it.events) and it.backward is not None:
                return train_loop_contract(it)
        # a helper function: rendered where a training loop calls it (else in a canonical loop)
        fn = ctx.index.enclosing(call, (cst.FunctionDef,))
        helper = fn.name.value if isinstance(fn, cst.FunctionDef) else None
        contract = {"kind": "train-loop", "statement": {"line": line, "mode": "grad_op", "helper": helper}}
        for it in iterations(ctx.index):
            calls = [e for e in it.events if e.op == "helper" and e.recv == helper]
            if helper and calls and it.backward is not None:
                contract.update(loop=locator(it), skeleton=skeleton(it), **optimizer_and_scheduler(it))
                env = dict(module_constants(ctx.index))
                env.update(_call_site_args(fn, calls[0].node))
                contract["env"] = env
                return contract
        for it in iterations(ctx.index):
            if it.loop is not None and it.backward is not None:
                contract.update(optimizer_and_scheduler(it))
                break
        return contract


def _call_site_args(fn: cst.FunctionDef, call: cst.Call) -> dict:
    """The helper's parameters bound to the literal arguments of its call in the loop."""
    params = [p.name.value for p in list(fn.params.posonly_params) + list(fn.params.params)]
    out = {}
    pos = [a for a in call.args if a.keyword is None and not a.star]
    for name, a in zip(params, pos):
        ok, v = literal_value(a.value)
        if ok and isinstance(v, (int, float, bool)):
            out[name] = v
    for a in call.args:
        if a.keyword is not None:
            ok, v = literal_value(a.value)
            if ok and isinstance(v, (int, float, bool)):
                out[a.keyword.value] = v
    return out


def _cell_output(ctx, small) -> bool:
    """The last statement of a notebook cell, without a trailing `;`: Jupyter displays its value
    (`t.view(3, 2)` alone in a cell shows the reshaped tensor), so nothing is discarded."""
    if not (ctx.path.endswith(".ipynb") or (ctx.index.source or "").startswith(CELL_MARK)):
        return False
    line = ctx.index.parents.get(small)
    body = list(ctx.module.body)
    if not isinstance(line, cst.SimpleStatementLine) or line.body[-1] is not small or \
            not isinstance(small.semicolon, cst.MaybeSentinel) or not any(st is line for st in body):
        return False
    k = next(i for i, st in enumerate(body) if st is line)
    if k + 1 == len(body):
        return True
    return any(el.comment is not None and el.comment.value.startswith(CELL_MARK) for el in body[k + 1].leading_lines)


# factories whose positional arguments are the sizes (`torch.zeros(2, 3)`, `torch.rand((2, 3))`)
_SIZED = frozenset(f"torch.{n}" for n in ("zeros", "ones", "empty", "rand", "randn"))
_FROM_DATA = frozenset({"torch.tensor", "torch.as_tensor"})


def _size_mismatch(flow, recv, call) -> bool:
    """`t.view(...)` / `t.reshape(...)` with literal sizes that cannot hold the literal element count of
    the tensor `t` is bound to (`t = torch.tensor([[1, 2, 3, 4], [5, 6, 7, 8]]); t.reshape(1, 9)`, or a -1
    that does not divide it): the call raises RuntimeError, so the line is a crash, not a discarded result."""
    args = [a for a in call.args if a.keyword is None and not a.star]
    if not args or len(args) != len(call.args):
        return False
    sizes = []
    for a in args:
        ok, v = literal_value(a.value)
        if not ok:
            return False
        sizes.extend(v if isinstance(v, (tuple, list)) and len(args) == 1 else [v])
    if not sizes or not all(type(v) is int and v >= -1 for v in sizes) or sizes.count(-1) > 1:
        return False
    numel = _literal_numel(flow, recv, 0)
    if numel is None:
        return False
    known = 1
    for v in sizes:
        known *= v if v != -1 else 1
    if -1 in sizes:
        return known == 0 or numel % known != 0
    return known != numel


def _literal_numel(flow, expr, depth: int) -> int | None:
    """The element count of a tensor built from literals: `torch.tensor(<nested list>)` (also through a
    name bound once to the list), `torch.zeros(2, 3)` and its kin; None when not shown."""
    if depth > 3:
        return None
    if isinstance(expr, cst.Name):
        # the binding this read sees (`t` is rebound in tutorials); an in-place resize would change the count
        b = flow.name_binding(expr)
        if b is None or b.is_param or not isinstance(b.value, cst.Call) or _resized(flow, b.name):
            return None
        return _literal_numel(flow, b.value, depth + 1)
    if not isinstance(expr, cst.Call):
        return None
    q = qualname(expr.func, flow.index.imports)
    args = [a for a in expr.args if a.keyword is None and not a.star]
    if q in _FROM_DATA and args:
        data = args[0].value
        if isinstance(data, cst.Name):
            b = flow.name_binding(data)
            if b is None or b.is_param or not isinstance(b.value, (cst.List, cst.Tuple)) or \
                    not _plain_binding(flow, b):
                return None
            data = b.value
        ok, v = literal_value(data)
        return _nested_count(v) if ok else None
    if q in _SIZED and args and len(args) == len(expr.args) - sum(1 for a in expr.args if a.keyword is not None):
        dims = []
        for a in args:
            ok, v = literal_value(a.value)
            if not ok:
                return None
            dims.extend(v if isinstance(v, (tuple, list)) and len(args) == 1 else [v])
        if not dims or not all(type(d) is int and d >= 0 for d in dims):
            return None
        n = 1
        for d in dims:
            n *= d
        return n
    return None


def _nested_count(v) -> int | None:
    """Leaves of a rectangular nested list of numbers; None for a ragged or non-numeric one."""
    if isinstance(v, (int, float, bool)):
        return 1
    if not isinstance(v, (list, tuple)) or not v:
        return None
    counts = [_nested_count(x) for x in v]
    if any(c is None for c in counts) or len(set(counts)) != 1:
        return None
    return counts[0] * len(v)


def _resized(flow, name: str) -> bool:
    scope = flow.function if flow.function is not None else flow.index.module
    return any(isinstance(node, cst.Attribute) and isinstance(node.value, cst.Name) and node.value.value == name
               and node.attr.value in ("resize_", "resize_as_", "set_") for node in walk(scope))


def _plain_binding(flow, b) -> bool:
    """The name is bound once in its scope and never has a method called or an item stored on it (a list
    appended to, a tensor resized in place), so its literal value is what the read sees."""
    if sum(1 for x in flow.bindings if x.name == b.name) != 1:
        return False
    scope = flow.function if flow.function is not None else flow.index.module
    for node in walk(scope):
        if isinstance(node, cst.Attribute) and isinstance(node.value, cst.Name) and node.value.value == b.name:
            return False
        if isinstance(node, (cst.AssignTarget, cst.AugAssign)):
            t = node.target
            if isinstance(t, cst.Subscript) and isinstance(t.value, cst.Name) and t.value.value == b.name:
                return False
    return True


def _passed_tensor(flow, recv) -> bool:
    """`recv` is a parameter without annotation that every call of its function in the file
    passes a tensor for (`vae.training_step(torch.randn(16, 20))`)."""
    if not isinstance(recv, cst.Name) or flow.function is None:
        return False
    b = flow.name_binding(recv)
    if b is None or not b.is_param or b.kind is not Kind.UNKNOWN or b.ctor is not None:
        return False
    args = passed_arguments(flow.index, flow.function, recv.value)
    return bool(args) and all(caller.classify(arg)[0] in TENSORISH for caller, arg in args)


def _is_param(flow, root) -> bool:
    """`p` from `for p in model.parameters()`, `model.fc.weight`, a Parameter."""
    if isinstance(root, cst.Attribute) and root.attr.value in _PARAM_ATTRS:
        return True
    if isinstance(root, cst.Name):
        for b in flow.bindings:
            if b.name == root.value and b.kind in (Kind.PARAMETER,):
                return True
            if b.name == root.value and b.value is not None and "param" in code_of(b.value):
                return True
    return False


RULE = DiscardedOutOfPlace


def _fresh_temporary(recv, index) -> bool:
    """A receiver made in the statement itself by a torch factory (`torch.zeros(1)`, `torch.randn(2).float()`):
    no name or attribute holds it, so no tensor of the program is left unchanged by discarding the result."""
    node = recv
    while isinstance(node, (cst.Call, cst.Attribute)):
        if isinstance(node, cst.Call):
            node = node.func
            continue
        node = node.value
    if not isinstance(node, cst.Name) or not isinstance(recv, cst.Call):
        return False
    return index.imports.is_module(node) and (index.imports.resolve(node.value) or "").split(".")[0] == "torch"

