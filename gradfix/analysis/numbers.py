"""Plain Python numbers: values shown never to hold an autograd graph.

`acc += accuracy(out, y)` keeps no graph when the file's `accuracy()` ends in `.item()`, and neither does
`total += loss` when `loss` was last bound to a helper that sums `math.log` terms. A value counts only when
every way it is made is shown to give a number (a literal, `len`/`int`/`float`/`bool`, `.item()`, `math.*`,
`.size(0)`, arithmetic of numbers, a name bound only to numbers, a function of this file whose every `return`
gives one); anything else is unknown, and unknown is not a number.
"""

from __future__ import annotations

import libcst as cst

from gradfix.analysis.names import qualname

_NUMBER_BUILTINS = frozenset({"len", "int", "float", "bool"})
_NUMBER_METHODS = frozenset({"item", "size", "numel", "nelement", "dim", "ndimension", "element_size",
                             "is_integer"})
_NUMBER_OPS = (cst.Add, cst.Subtract, cst.Multiply, cst.Divide, cst.FloorDivide, cst.Modulo, cst.Power)
_MATH_DELEGATING = frozenset({"math.floor", "math.ceil", "math.trunc", "math.prod"})
_HARMLESS_DECORATORS = frozenset({"staticmethod", "no_grad", "inference_mode", "lru_cache", "cache"})
_DEPTH = 4


def is_number(index, expr: cst.CSTNode, names=None, depth: int = 0) -> bool:
    """Whether `expr` is shown to be a Python number. `names(name_node)` gives the values a name may hold
    where it is read (None: unknown); without it a name is unknown."""
    if depth > _DEPTH:
        return False
    if isinstance(expr, (cst.Integer, cst.Float)):
        return True
    if isinstance(expr, cst.UnaryOperation) and not isinstance(expr.operator, cst.BitInvert):
        return is_number(index, expr.expression, names, depth)
    if isinstance(expr, cst.BinaryOperation) and isinstance(expr.operator, _NUMBER_OPS):
        return is_number(index, expr.left, names, depth) and is_number(index, expr.right, names, depth)
    if isinstance(expr, cst.IfExp):
        return is_number(index, expr.body, names, depth) and is_number(index, expr.orelse, names, depth)
    if isinstance(expr, cst.Call):
        func = expr.func
        if isinstance(func, cst.Name):
            if func.value in _NUMBER_BUILTINS:
                return True
            return returns_number(index, func.value, depth + 1)
        if isinstance(func, cst.Attribute):
            if func.attr.value in _NUMBER_METHODS:
                return True
            q = qualname(func, index.imports) or ""
            # math.floor / ceil / trunc / prod hand a tensor back to its own operators
            return q.startswith("math.") and q not in _MATH_DELEGATING
        return False
    if isinstance(expr, cst.Name) and names is not None:
        values = names(expr)
        return bool(values) and all(v is not None and is_number(index, v, names, depth + 1) for v in values)
    return False


def returns_number(index, name: str, depth: int = 0) -> bool:
    """Whether every top-level function `name` of the file (a notebook may define it twice) returns a Python
    number from every `return`, following the function's own assignments of the returned names."""
    cache = index.__dict__.setdefault("_returns_number", {})
    if name in cache:
        return cache[name]
    cache[name] = False  # recursion
    defs = [n for n in index.module.body if isinstance(n, cst.FunctionDef) and n.name.value == name]
    result = bool(defs) and all(_function_returns_number(index, fn, depth) for fn in defs)
    cache[name] = result
    return result


def _function_returns_number(index, fn: cst.FunctionDef, depth: int) -> bool:
    if fn.asynchronous is not None or not all(_harmless_decorator(d.decorator) for d in fn.decorators):
        return False
    assigned: dict[str, list] = {}
    returns = []
    for node in _own_nodes(fn):
        if isinstance(node, cst.Return):
            returns.append(node.value)
        elif isinstance(node, cst.Assign):
            for t in node.targets:
                _record_target(assigned, t.target, node.value)
        elif isinstance(node, (cst.AugAssign, cst.AnnAssign)):
            _record_target(assigned, node.target, node.value)
        elif isinstance(node, (cst.For, cst.CompFor)):
            _record_target(assigned, node.target, None)
        elif isinstance(node, (cst.WithItem,)) and node.asname is not None:
            _record_target(assigned, node.asname.name, None)
        elif isinstance(node, (cst.Global, cst.Nonlocal)):
            for n in node.names:
                assigned.setdefault(n.name.value, []).append(None)
        elif isinstance(node, cst.NamedExpr):
            _record_target(assigned, node.target, node.value)
    if not returns or any(v is None for v in returns):
        return False
    params = {p.name.value for p in list(fn.params.posonly_params) + list(fn.params.params) +
              list(fn.params.kwonly_params)}

    def names(name: cst.Name):
        if name.value in params:
            return None
        return assigned.get(name.value)

    return all(is_number(index, v, names, depth) for v in returns)


def _harmless_decorator(dec) -> bool:
    """`@staticmethod`, `@torch.no_grad()`, `@functools.lru_cache()`: the value returned is the function's own."""
    if isinstance(dec, cst.Call):
        dec = dec.func
    name = dec.value if isinstance(dec, cst.Name) else dec.attr.value if isinstance(dec, cst.Attribute) else ""
    return name in _HARMLESS_DECORATORS


def _record_target(assigned: dict, target, value) -> None:
    if isinstance(target, cst.Name):
        assigned.setdefault(target.value, []).append(value)
    elif isinstance(target, (cst.Tuple, cst.List)):
        for el in target.elements:
            _record_target(assigned, el.value.value if isinstance(el.value, cst.StarredElement) else el.value,
                           None)  # an unpacked element: what it holds is not shown


def _own_nodes(fn: cst.FunctionDef):
    """The nodes of `fn`'s body, not those of functions, classes or lambdas nested in it."""
    stack = [fn.body]
    while stack:
        node = stack.pop()
        yield node
        for child in node.children:
            if not isinstance(child, (cst.FunctionDef, cst.ClassDef, cst.Lambda)):
                stack.append(child)


def bound_values(flow, at: int):
    """A `names` function for `is_number`: the value a name read at step `at` of `flow` was bound to, when
    that binding is a plain `name = value` that surely reaches `at` (not in a branch or a loop that `at` is
    outside of); None otherwise."""
    here = flow.steps[at]

    def names(name: cst.Name):
        b = flow.load_binding.get(id(name))
        if b is None or b.step < 0 or b.is_param or b.step >= at:
            return None
        st = flow.steps[b.step]
        node = st.node
        plain = isinstance(node, cst.Assign) and all(isinstance(t.target, cst.Name) for t in node.targets) or \
            isinstance(node, cst.AnnAssign) and isinstance(node.target, cst.Name)
        if not plain or node.value is not b.value:
            return None
        if not set(st.branch) <= set(here.branch) or not all(any(l is m for m in here.loops) for l in st.loops):
            return None
        return [b.value]

    return names


# torchmetrics classes whose value comes from thresholded or argmax'ed predictions (`is_differentiable = False`
# in torchmetrics): their output never holds a graph, whatever the predictions they were given
_NONDIFF_METRICS = frozenset(
    pre + name
    for pre in ("", "Binary", "Multiclass", "Multilabel")
    for name in ("Accuracy", "F1Score", "FBetaScore", "Precision", "Recall", "Specificity", "StatScores",
                 "ConfusionMatrix", "MatthewsCorrCoef", "CohenKappa", "JaccardIndex", "HammingDistance",
                 "ExactMatch", "AUROC", "AveragePrecision")
)
_DEVICE_MOVES = frozenset({"to", "cuda", "cpu"})


def is_metric_value(index, expr: cst.CSTNode, names) -> bool:
    """`metric(pred, y)` where `metric` is surely bound to a non-differentiable torchmetrics metric
    (`acc_fn = Accuracy(task="multiclass", num_classes=10).to(device)`): a tensor that holds no graph."""
    if not isinstance(expr, cst.Call) or not isinstance(expr.func, cst.Name):
        return False
    values = names(expr.func)
    if not values or len(values) != 1 or not isinstance(values[0], cst.Call):
        return False
    ctor = values[0]
    while isinstance(ctor.func, cst.Attribute) and ctor.func.attr.value in _DEVICE_MOVES and \
            isinstance(ctor.func.value, cst.Call):
        ctor = ctor.func.value   # `Accuracy(...).to(device)`
    q = qualname(ctor.func, index.imports) or ""
    return q.startswith("torchmetrics.") and q.rsplit(".", 1)[-1] in _NONDIFF_METRICS


__all__ = ["is_number", "returns_number", "bound_values", "is_metric_value"]
