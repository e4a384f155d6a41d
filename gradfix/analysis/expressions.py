"""Static facts about one expression or call of a training step.

What a single call or expression is, read without the iteration around it: a literal's
value, a `.grad` / `.data` chain, a bare op on gradients or parameter data, how a loss
reaches an accumulator (`.item()` or the tensor), the calls of a statement in evaluation
order, and the gradient operations a helper function of the file performs. The
iteration reader (iteration.py) builds its events from these; nothing imports torch.
"""

from __future__ import annotations

import ast

import libcst as cst

from gradfix.analysis import torchapi
from gradfix.analysis.names import qualname
from gradfix.analysis.trainstep import literal_number
from gradfix.analysis.tree import children, preorder_span, preorder_spans_table, walk

_walk = walk  # pre-order, source order (gradfix.analysis.tree)

CLIP_NORM = frozenset({
    "torch.nn.utils.clip_grad_norm_", "torch.nn.utils.clip_grad_norm", "torch.nn.utils.clip_grad.clip_grad_norm_",
    "torch.nn.utils.clip_grad.clip_grad_norm",
})
CLIP_VALUE = frozenset({"torch.nn.utils.clip_grad_value_", "torch.nn.utils.clip_grad.clip_grad_value_"})

# Out-of-place tensor methods that have an in-place twin `m_` (same arguments).
OUT_OF_PLACE = frozenset(v for v in torchapi.INPLACE_METHODS.values() if v)


def _post_order_calls(node: cst.CSTNode):
    """Calls in evaluation order: arguments and receivers before the call itself. Read off the
    file's pre-order (a call's subtree is the slice after it), with exact type tests: an
    isinstance against libcst's abstract-base classes costs ten times as much."""
    span = preorder_span(node)
    if span is None:
        return _post_order_calls_walk(node)
    order, i, end = span
    spans = preorder_spans_table()
    if i + 1 < end and spans[id(order[i + 1])][0] is not order:
        return _post_order_calls_walk(node)  # the module: its statements keep pre-orders of their own
    out: list = []
    pending: list = []                       # (call, end of its subtree), innermost last
    while i < end:
        while pending and i >= pending[-1][1]:
            out.append(pending.pop()[0])
        n = order[i]
        t = type(n)
        if t is cst.Lambda or t is cst.FunctionDef or t is cst.ClassDef:
            i = spans[id(n)][2]
            continue
        if t is cst.Call:
            pending.append((n, spans[id(n)][2]))
        i += 1
    while pending:
        out.append(pending.pop()[0])
    return out


def _post_order_calls_walk(node: cst.CSTNode):
    out = []
    stack: list = [(node, False)]
    while stack:
        n, done = stack.pop()
        if done:
            out.append(n)
            continue
        t = type(n)
        if t is cst.Lambda or t is cst.FunctionDef or t is cst.ClassDef:
            continue
        if t is cst.Call:
            stack.append((n, True))
        stack.extend((c, False) for c in reversed(children(n)))
    return out


def code_of(node: cst.CSTNode) -> str:
    return cst.Module([]).code_for_node(node).strip()


def literal_value(expr: cst.BaseExpression):
    """A Python literal (numbers, strings, True/False/None, tuples/lists of those), inf forms included.
    Returns (ok, value)."""
    text = code_of(expr)
    if text in ("float('inf')", 'float("inf")', "math.inf", "torch.inf", "np.inf", "numpy.inf", "inf"):
        return True, float("inf")
    if text in ("float('-inf')", 'float("-inf")', "-math.inf", "-torch.inf", "-np.inf"):
        return True, float("-inf")
    try:
        return True, ast.literal_eval(text)
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        pass
    v = literal_number(expr)
    if v is not None:
        return True, v
    return False, None


def _arg(call: cst.Call, index: int, keyword: str):
    for a in call.args:
        if a.keyword is not None and a.keyword.value == keyword:
            return a.value
    pos = [a for a in call.args if a.keyword is None and not a.star]
    if index < len(pos):
        return pos[index].value
    return None


def _grad_chain(expr) -> tuple[str, cst.BaseExpression] | None:
    """("grad", root) for `p.grad`, `p.grad.data`; ("data", root) for `p.data`; None otherwise."""
    node = expr
    seen_data = False
    while isinstance(node, cst.Attribute):
        if node.attr.value == "grad":
            return "grad", node.value
        if node.attr.value == "data":
            seen_data = True
        node = node.value
        if isinstance(node, cst.Subscript):
            node = node.value
    if seen_data and isinstance(expr, cst.Attribute):
        base = expr
        while isinstance(base, cst.Attribute) and base.attr.value != "data":
            base = base.value
        if isinstance(base, cst.Attribute):
            return "data", base.value
    return None


_ZERO_CTORS = frozenset({"torch.zeros", "torch.zeros_like"})
_ZERO_METHODS = frozenset({"zero_", "new_zeros", "zeros_like"})
_KEEPS_ZERO = frozenset({"to", "cuda", "cpu", "detach", "type_as", "float", "half", "double", "contiguous",
                         "clone", "view_as", "reshape_as"})


def clears_grad_value(value, imports=None) -> bool:
    """A value that, assigned to `p.grad`, leaves no gradient to add to: `None`, or a tensor of zeros
    (`torch.zeros_like(p)`, `g.new().resize_as_(g).zero_()`, `Variable(<zeros>)`, `<zeros>.to(dev)`)."""
    if isinstance(value, cst.Name):
        return value.value == "None"
    if not isinstance(value, cst.Call):
        return False
    func = value.func
    q = qualname(func, imports) if imports is not None else None
    if q in _ZERO_CTORS:
        return True
    if isinstance(func, cst.Attribute):
        meth = func.attr.value
        if meth in _ZERO_METHODS:
            return True
        if meth == "fill_" and value.args and literal_number(value.args[0].value) == 0:
            return True
        if meth in _KEEPS_ZERO:
            return clears_grad_value(func.value, imports)
    name = func.value if isinstance(func, cst.Name) else func.attr.value if isinstance(func, cst.Attribute) else None
    if name == "Variable" and value.args and value.args[0].keyword is None:
        return clears_grad_value(value.args[0].value, imports)
    return False


def grad_op_info(call: cst.Call) -> dict | None:
    """An op on gradients or on parameter data as a bare statement (`p.grad.data.clamp(-1, 1)`), in place or not."""
    func = call.func
    if not isinstance(func, cst.Attribute):
        return None
    meth = func.attr.value
    inplace = meth in torchapi.INPLACE_METHODS and torchapi.INPLACE_METHODS[meth] is not None
    if not inplace and meth not in OUT_OF_PLACE:
        return None
    chain = _grad_chain(func.value)
    if chain is None:
        return None
    kind, _root = chain
    args, kwargs, ok = [], {}, True
    arg_srcs, kw_srcs = [], {}
    for a in call.args:
        if a.keyword is None:
            arg_srcs.append(code_of(a.value))
        else:
            kw_srcs[a.keyword.value] = code_of(a.value)
        good, v = literal_value(a.value)
        if not good or a.star:
            ok = False
            continue
        if a.keyword is None:
            args.append(v)
        else:
            kwargs[a.keyword.value] = v
    return {"target": "grad" if kind == "grad" else "param", "method": torchapi.INPLACE_METHODS[meth] if inplace else meth,
            "inplace": inplace, "args": args if ok else None, "kwargs": kwargs if ok else None,
            "args_src": ", ".join(arg_srcs + [f"{k}={v}" for k, v in kw_srcs.items()]),
            "arg_srcs": arg_srcs, "kw_srcs": kw_srcs}


def accumulation_form(value: cst.BaseExpression, loss_names: set[str]) -> str:
    """How a loss reaches an accumulator: item/float/detach (no graph) or tensor (keeps the graph)."""
    if isinstance(value, cst.Call):
        f = value.func
        if isinstance(f, cst.Attribute) and f.attr.value in ("item", "tolist"):
            return "item"
        if isinstance(f, cst.Name) and f.value in ("float", "int"):
            return "float"
        if isinstance(f, cst.Attribute) and f.attr.value in ("detach", "cpu", "numpy") and \
                _strips_graph(value):
            return "detach"
    # any loss name reached without .item()/.detach()/float() on the way keeps the graph
    if _graph_reaches(value, loss_names):
        return "tensor"
    return "item"


def _strips_graph(expr) -> bool:
    node = expr
    while isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute):
        if node.func.attr.value in ("detach", "item", "tolist"):
            return True
        node = node.func.value
    return isinstance(node, cst.Attribute) and node.attr.value == "data"


# Methods and attributes of a tensor that give plain numbers or metadata, never a graph.
_SCALAR_METHODS = frozenset({"item", "detach", "tolist", "numpy", "size", "dim", "numel", "nelement", "ndimension",
                             "element_size", "stride", "data_ptr", "get_device"})
_SCALAR_ATTRIBUTES = frozenset({"data", "shape", "ndim", "dtype", "device", "requires_grad", "is_leaf"})


def _scalar_value(expr) -> bool:
    """`len(x)`, `x.size(0)`, `x.shape[0]`, `loss.item()`, `int(...)`: a plain number."""
    while isinstance(expr, cst.Subscript):
        expr = expr.value
    if isinstance(expr, cst.Call):
        f = expr.func
        if isinstance(f, cst.Name) and f.value in ("len", "int", "float", "round", "bool"):
            return True
        return isinstance(f, cst.Attribute) and f.attr.value in _SCALAR_METHODS - {"detach", "numpy"}
    return isinstance(expr, cst.Attribute) and expr.attr.value in _SCALAR_ATTRIBUTES - {"data"}


# Methods whose result is integer or boolean: autograd records no graph through them.
_INDEX_METHODS = frozenset({"argmax", "argmin", "argsort", "eq", "ne", "lt", "le", "gt", "ge", "isnan", "isinf",
                            "nonzero", "long", "bool"})


def _graph_reaches(expr, loss_names: set[str]) -> bool:
    if isinstance(expr, cst.Name):
        return expr.value in loss_names
    if isinstance(expr, cst.Call):
        f = expr.func
        if isinstance(f, cst.Attribute) and (f.attr.value in _SCALAR_METHODS or f.attr.value in _INDEX_METHODS):
            return False
        if isinstance(f, cst.Name) and f.value in ("float", "int", "len"):
            return False
        if isinstance(f, cst.Attribute):
            if _graph_reaches(f.value, loss_names):
                return True
        return any(_graph_reaches(a.value, loss_names) for a in expr.args)
    if isinstance(expr, cst.Attribute):
        if expr.attr.value in _SCALAR_ATTRIBUTES:
            return False
        return _graph_reaches(expr.value, loss_names)
    if isinstance(expr, cst.BinaryOperation):
        return _graph_reaches(expr.left, loss_names) or _graph_reaches(expr.right, loss_names)
    if isinstance(expr, cst.UnaryOperation):
        return _graph_reaches(expr.expression, loss_names)
    if isinstance(expr, cst.Subscript):
        return _graph_reaches(expr.value, loss_names)
    return False


def function_ops(index, fn: cst.FunctionDef) -> set[str]:
    """zero_grad / unscale / clip / step / backward done directly in `fn`'s body."""
    ops = set()
    for node in _walk(fn.body):
        kind = type(node)
        if kind is cst.Assign:
            for t in node.targets:
                if isinstance(t.target, cst.Attribute) and t.target.attr.value == "grad" and \
                        clears_grad_value(node.value, index.imports):
                    ops.add("zero_grad")
        if kind is not cst.Call:
            continue
        func = node.func
        if isinstance(func, cst.Attribute):
            m = func.attr.value
            if m == "zero_grad" or (m == "zero_" and _grad_chain(func.value) is not None):
                ops.add("zero_grad")
            elif m == "unscale_":
                ops.add("unscale")
            elif m in ("clip_grad_norm_", "clip_grad_value_"):
                ops.add("clip")
            elif m == "backward":
                ops.add("backward")
            elif m == "step":
                ops.add("step")
        q = qualname(func, index.imports)
        if q in CLIP_NORM | CLIP_VALUE:
            ops.add("clip")
        if grad_op_info(node) is not None:
            ops.add("grad_op")
    return ops



# What a Python float has as attributes: reading anything else on a running total needs a tensor.
_FLOAT_ATTRIBUTES = frozenset({"real", "imag", "conjugate", "is_integer", "as_integer_ratio", "hex"})


def tensor_attribute_uses(scope: cst.CSTNode, name: str) -> list[cst.Attribute]:
    """Reads of a tensor attribute or method on `name` in `scope`, on the name itself or on arithmetic of it:
    `total.item()`, `(total / n).detach()`. A running total turned into a float by `.item()` would make
    each of them raise AttributeError."""
    found = []
    for node in _walk(scope):
        if isinstance(node, cst.Attribute) and node.attr.value not in _FLOAT_ATTRIBUTES and \
                _arithmetic_of(node.value, name):
            found.append(node)
    return found


# calls that take a float as well as a 0-d tensor and keep neither (printing, formatting, logging)
_NUMBER_SINKS = frozenset({"print", "float", "int", "round", "str", "repr", "format", "abs", "min", "max"})
_NUMBER_SINK_METHODS = frozenset({
    "format", "info", "debug", "warning", "warn", "error", "critical", "write", "set_postfix", "set_postfix_str",
    "set_description", "add_scalar", "add_scalars", "log", "log_metrics", "log_metric", "log_dict",
})
_PASS_THROUGH = (cst.BinaryOperation, cst.UnaryOperation)
_TESTS = (cst.Comparison, cst.ComparisonTarget, cst.BooleanOperation, cst.If, cst.While, cst.IfExp, cst.Assert)


def use_needing_tensor(parents, scope: cst.CSTNode, name: str, depth: int = 0,
                       returns_ok: bool = False) -> cst.CSTNode | None:
    """A read of the running total `name` in `scope` that a Python float in place of a tensor could change:
    returned or yielded (`return total / n`: a caller may call `.cpu()` on it), stored in
    an attribute or a container, passed to a function that is not a print, format or logging call, or read as
    a tensor's attribute; None when every read only prints, formats, logs or compares it, or feeds a name whose
    reads do (`avg = total / len(loader)`, then `print(avg)`). The total's own updates (`total += ...`,
    `total /= n`) and other bindings of the name are not reads. `returns_ok`: every caller of the scope is
    known to use what it returns only so."""
    if depth > 3:
        return scope
    for node in _walk(scope):
        if type(node) is not cst.Name or node.value != name or _bound_here(parents, node):
            continue
        if needs_tensor(parents, scope, node, name, depth, returns_ok):
            return node
    return None


def needs_tensor(parents, scope: cst.CSTNode, node: cst.CSTNode, name: str | None = None, depth: int = 0,
                 returns_ok: bool = False) -> bool:
    """Whether the value of expression `node` (a read of the total, or a call returning it) is used where a float
    could behave differently from a tensor (see `use_needing_tensor`)."""
    cur = node
    up = parents.get(cur)
    while isinstance(up, _PASS_THROUGH):
        cur, up = up, parents.get(up)
    if isinstance(up, _TESTS) or type(up) is cst.FormattedStringExpression:
        return False
    if isinstance(up, (cst.Element, cst.DictElement)) and up.value is cur:
        arg = parents.get(parents.get(up))
        return not (isinstance(arg, cst.Arg) and _sink_call(parents.get(arg)))   # `wandb.log({"loss": total})`
    if isinstance(up, cst.Arg) and up.value is cur:
        return not _sink_call(parents.get(up))
    # `avg = total / n`, `epoch_total += total`: as the name it feeds is read
    target = up.targets[0].target if isinstance(up, cst.Assign) and len(up.targets) == 1 else \
        up.target if isinstance(up, cst.AugAssign) else None
    if type(target) is cst.Name and up.value is cur:
        return target.value != name and \
            use_needing_tensor(parents, scope, target.value, depth + 1, returns_ok) is not None
    if type(up) is cst.Expr:
        return False  # a bare expression statement: the value is dropped
    if type(up) is cst.Return and up.value is cur:
        return not returns_ok
    return True


def _bound_here(parents, node: cst.Name) -> bool:
    """`node` is a target of an assignment, a `for`, a `with ... as`, or a parameter: a binding, not a read."""
    cur, up = node, parents.get(node)
    while isinstance(up, (cst.Element, cst.Tuple, cst.List, cst.StarredElement)):
        cur, up = up, parents.get(up)
    if isinstance(up, (cst.AssignTarget, cst.AugAssign, cst.AnnAssign, cst.For, cst.CompFor, cst.AsName)):
        return getattr(up, "target", getattr(up, "name", None)) is cur
    if isinstance(up, cst.Attribute):
        return up.attr is cur          # `self.total`: another name
    if isinstance(up, cst.Arg):
        return up.keyword is cur       # `f(total=...)`
    if isinstance(up, (cst.Param, cst.FunctionDef, cst.ClassDef)):
        return up.name is cur
    return isinstance(up, cst.NameItem)   # `global total`


def _sink_call(call) -> bool:
    if not isinstance(call, cst.Call):
        return False
    f = call.func
    if type(f) is cst.Name:
        return f.value in _NUMBER_SINKS
    return type(f) is cst.Attribute and f.attr.value in _NUMBER_SINK_METHODS


def _arithmetic_of(expr, name: str) -> bool:
    if isinstance(expr, cst.Name):
        return expr.value == name
    if isinstance(expr, cst.BinaryOperation):
        return _arithmetic_of(expr.left, name) or _arithmetic_of(expr.right, name)
    if isinstance(expr, cst.UnaryOperation):
        return _arithmetic_of(expr.expression, name)
    return False


def tensor_slot_total(flow, small: cst.AugAssign) -> bool:
    """`costs[i] += <value>` where every binding of `costs` that reaches the statement is a fresh torch
    tensor (`torch.zeros(n)` without requires_grad): adding a tensor that carries a graph into one of its
    slots records a `CopySlices` node, and the accumulator chains every batch's graph. A numpy array
    (each value converted to a float) or a list is not one; a name not bound in the scope is unknown."""
    from gradfix.analysis.params import FACTORIES, kwarg
    from gradfix.analysis.reaching import reaching

    target = small.target
    if not (isinstance(target, cst.Subscript) and isinstance(target.value, cst.Name)):
        return False
    st = flow.step_of.get(id(small))
    if st is None:
        return False
    reaches = reaching(flow, target.value.value, st.index)
    if not reaches:
        return False
    for reach in reaches:
        value = reach.binding.value
        if not (isinstance(value, cst.Call) and qualname(value.func, flow.index.imports) in FACTORIES) or \
                kwarg(value, "requires_grad") is not None:
            return False
    return True


def number_dict_total(flow, small: cst.AugAssign, loop) -> bool:
    """`totals[k] += <value>` where every binding of `totals` that reaches the statement is a mapping of
    numbers made outside `loop` (`{"seg": 0.0, "occ": 0.0}`, a comprehension of number literals,
    `dict.fromkeys(keys, 0.0)`, `defaultdict(float)`, `defaultdict(lambda: torch.tensor(0.0))`): adding a
    tensor that carries a graph turns the entry into that tensor plus the old total, so the entry chains every
    iteration's graph. An empty dict, a mapping of other values or a name not bound in the scope is unknown."""
    from gradfix.analysis.reaching import reaching

    target = small.target
    if not (isinstance(small.operator, cst.AddAssign) and isinstance(target, cst.Subscript) and
            isinstance(target.value, cst.Name)):
        return False
    st = flow.step_of.get(id(small))
    if st is None:
        return False
    reaches = reaching(flow, target.value.value, st.index)
    if not reaches:
        return False
    for reach in reaches:
        b = reach.binding
        if b.step < 0 or loop in flow.steps[b.step].loops or not _number_mapping(flow.index, b.value):
            return False
    return True


def _number_mapping(index, value) -> bool:
    from gradfix.analysis.numbers import fresh_constant

    if isinstance(value, cst.Dict):
        return bool(value.elements) and all(isinstance(e, cst.DictElement) and fresh_constant(index, e.value)
                                            for e in value.elements)
    if isinstance(value, cst.DictComp):
        return fresh_constant(index, value.value)
    if not isinstance(value, cst.Call) or any(a.star or a.keyword is not None for a in value.args):
        return False
    q = qualname(value.func, index.imports) or ""
    if q in ("dict.fromkeys",) or isinstance(value.func, cst.Attribute) and value.func.attr.value == "fromkeys" and \
            isinstance(value.func.value, cst.Name) and value.func.value.value == "dict":
        return len(value.args) == 2 and fresh_constant(index, value.args[1].value)
    if q in ("collections.defaultdict", "defaultdict") and len(value.args) == 1:
        factory = value.args[0].value
        if isinstance(factory, cst.Name) and factory.value in ("float", "int"):
            return True
        return isinstance(factory, cst.Lambda) and not factory.params.params and fresh_constant(index, factory.body)
    return False


def dict_loss_values(flow, small: cst.CSTNode, loss_names: set[str], loop) -> set[str]:
    """Names bound by a `for` inside `loop` around `small` to the values of a dict of loss terms: `for k, v in
    d.items()` or `for v in d.values()`, where `d` is a loss name or every binding of it that reaches the loop
    is a dict display each of whose values reads a loss name (`{"box": F.l1_loss(pred_box, boxes), ...}`)."""
    from gradfix.analysis.reaching import reaching

    index = flow.index
    found: set[str] = set()
    node = index.parents.get(small)
    while node is not None and node is not loop:
        if isinstance(node, cst.For) and isinstance(node.iter, cst.Call) and not node.iter.args and \
                isinstance(node.iter.func, cst.Attribute) and isinstance(node.iter.func.value, cst.Name):
            meth, holder = node.iter.func.attr.value, node.iter.func.value.value
            target = node.target
            if meth == "items" and isinstance(target, cst.Tuple) and len(target.elements) == 2:
                target = target.elements[1].value
            elif meth != "values":
                target = None
            if isinstance(target, cst.Name) and _loss_dict(flow, holder, node, loss_names, reaching):
                found.add(target.value)
        node = index.parents.get(node)
    return found


def _loss_dict(flow, holder: str, for_node, loss_names: set[str], reaching) -> bool:
    if holder in loss_names:
        return True
    st = flow.step_of.get(id(for_node))
    reaches = reaching(flow, holder, st.index) if st is not None else []
    return bool(reaches) and all(
        isinstance(r.binding.value, cst.Dict) and r.binding.value.elements and
        all(isinstance(e, cst.DictElement) and _graph_reaches(e.value, loss_names) for e in r.binding.value.elements)
        for r in reaches)


# numpy calls that build an ndarray (a 0-d one too): `array + tensor` and `array += tensor` raise TypeError
# for a tensor, so such a total never holds a graph. Numpy *scalars* (`np.float64(0)`, `np.sum(a)`) are not
# here: `np.float64(0) + loss` hands the tensor's `__radd__` the sum, a tensor with the loss's graph.
_NUMPY_ARRAY_MAKERS = frozenset(f"numpy.{f}" for f in (
    "zeros", "ones", "empty", "full", "array", "asarray", "zeros_like", "ones_like", "empty_like", "full_like",
    "arange", "linspace"))


def numpy_array_total(flow, small, name: str, depth: int = 0) -> bool:
    """`total += <value>` (or `total = total + <value>`) where every binding of `total` that reaches the
    statement is an ndarray made by numpy (`np.zeros(k)`), or an earlier such accumulation into it, and no
    other binding of `total` sits in a loop around the statement (a back edge that could bring a tensor).
    Adding a tensor to an ndarray raises TypeError, adding numbers or arrays keeps it an array: the total
    cannot keep an autograd graph, whatever the value reads."""
    from gradfix.analysis.reaching import reaching
    from gradfix.analysis.tree import contains

    st = flow.step_of.get(id(small))
    if st is None or depth > 4:
        return False
    if depth == 0 and st.loops:
        outer = st.loops[0]
        for b in flow.bindings:
            if b.name != name or b.step < 0 or not contains(outer, flow.steps[b.step].node):
                continue
            node = flow.steps[b.step].node
            if not (_adds_into(node, name) or _makes_numpy_array(flow, b.value)):
                return False
    reaches = reaching(flow, name, st.index)
    if not reaches:
        return False
    for reach in reaches:
        b = reach.binding
        if b.step >= 0 and _adds_into(flow.steps[b.step].node, name):
            if not numpy_array_total(flow, flow.steps[b.step].node, name, depth + 1):
                return False
        elif not _makes_numpy_array(flow, b.value):
            return False
    return True


def _adds_into(node, name: str) -> bool:
    """`name += ...` or `name = name + ...` / `name = ... + name`."""
    if isinstance(node, cst.AugAssign):
        return isinstance(node.operator, cst.AddAssign) and isinstance(node.target, cst.Name) and \
            node.target.value == name
    if isinstance(node, cst.Assign) and len(node.targets) == 1 and isinstance(node.targets[0].target, cst.Name) \
            and node.targets[0].target.value == name and isinstance(node.value, cst.BinaryOperation) and \
            isinstance(node.value.operator, cst.Add):
        sides = (node.value.left, node.value.right)
        return any(isinstance(s, cst.Name) and s.value == name for s in sides)
    return False


def _makes_numpy_array(flow, value) -> bool:
    return isinstance(value, cst.Call) and qualname(value.func, flow.index.imports) in _NUMPY_ARRAY_MAKERS
