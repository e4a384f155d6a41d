"""Plain Python numbers and graph-free tensors: values shown never to hold an autograd graph.

`acc += accuracy(out, y)` keeps no graph when the file's `accuracy()` ends in `.item()`, and neither does
`total += loss` when `loss` was last bound to a helper that sums `math.log` terms. A value counts only when
every way it is made is shown to give a number (a literal, `len`/`int`/`float`/`bool`, `.item()`, `math.*`,
`.size(0)`, arithmetic of numbers, a name bound only to numbers, a function of this file whose every `return`
gives one); anything else is unknown, and unknown is not a number.

`carries_no_graph` widens that to tensors that cannot require grad: an integer or boolean result (`argmax`,
`eq`, `==` and the other comparisons, `.long()`, the indices of `topk`/`sort`/`max(dim)`), and what follows
only from such tensors (`.float()`, `.sum()`, `.mean()`, arithmetic with numbers). An accuracy built from
them (`torch.eq(out.argmax(1), y).float().mean()`) holds no graph whatever the model output it compared,
and so does any op all of whose inputs hold none (`torch.round(acc * 100)`). One naming convention is
trusted: a helper called `accuracy` / `binary_acc` / `count_correct` that the file does not define (imported,
or in a notebook cell that does not parse) is taken to return such a count.
"""

from __future__ import annotations

import re

import libcst as cst

from gradfix.analysis import torchapi
from gradfix.analysis.names import chain_root, qualname
from gradfix.analysis.tree import children

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
            return returns_number(index, func.value, depth + 1) or _project_number_call(index, func)
        if isinstance(func, cst.Attribute):
            if func.attr.value in _NUMBER_METHODS:
                return True
            q = qualname(func, index.imports) or ""
            # math.floor / ceil / trunc / prod hand a tensor back to its own operators
            return q.startswith("math.") and q not in _MATH_DELEGATING or _project_number_call(index, func)
        return False
    if isinstance(expr, cst.Name) and names is not None:
        values = names(expr)
        return bool(values) and all(v is not None and is_number(index, v, names, depth + 1) for v in values)
    return False


def _project_number_call(index, func: cst.BaseExpression) -> bool:
    """`utils.count_hits(...)` or an imported `count_hits(...)`: a function of another project file whose every
    `return` gives a Python number (the project index; the name must come from an import of this file)."""
    if index.project is None or chain_root(func) not in index.imports.aliases:
        return False
    q = qualname(func, index.imports)
    return q is not None and index.project.returns_number(q)


def returns_number(index, name: str, depth: int = 0) -> bool:
    """Whether every top-level function `name` of the file (a notebook may define it twice) returns a Python
    number from every `return`, following the function's own assignments of the returned names."""
    return _returns(index, name, depth, is_number, "_returns_number")


def returns_no_graph(index, name: str, depth: int = 0) -> bool:
    """Whether every top-level function `name` of the file returns, from every `return`, a value that
    `carries_no_graph` (an accuracy helper ending in `torch.eq(...).float().mean()`)."""
    return _returns(index, name, depth, carries_no_graph, "_returns_no_graph")


def _returns(index, name: str, depth: int, test, key: str) -> bool:
    cache = index.__dict__.setdefault(key, {})
    if name in cache:
        return cache[name]
    cache[name] = False  # recursion
    defs = [n for n in index.module.body if isinstance(n, cst.FunctionDef) and n.name.value == name]
    result = bool(defs) and all(_function_returns(index, fn, depth, test) for fn in defs)
    cache[name] = result
    return result


def _function_returns(index, fn: cst.FunctionDef, depth: int, test) -> bool:
    read = returns_and_bindings(fn)
    if read is None:
        return False
    returns, assigned = read
    params = {p.name.value for p in list(fn.params.posonly_params) + list(fn.params.params) +
              list(fn.params.kwonly_params)}

    def names(name: cst.Name):
        if name.value in params:
            return None
        return assigned.get(name.value)

    return all(test(index, v, names, depth) for v in returns)


def returns_and_bindings(fn: cst.FunctionDef) -> tuple[list, dict[str, list]] | None:
    """The values a plain function returns and what each of its own names is bound to (None for a value
    not known: a loop target, a `with ... as`, a `global`/`nonlocal` name); None when its call's value is not
    what it returns or a return gives nothing: async, decorated by anything but a known harmless decorator, a
    generator, a bare `return`."""
    if fn.asynchronous is not None or not all(_harmless_decorator(d.decorator) for d in fn.decorators):
        return None
    assigned: dict[str, list] = {}
    returns = []
    for node in own_nodes(fn):
        if isinstance(node, cst.Return):
            returns.append(node.value)
        elif isinstance(node, cst.Assign):
            for t in node.targets:
                _record_target(assigned, t.target, node.value)
        elif isinstance(node, (cst.AugAssign, cst.AnnAssign)):
            _record_target(assigned, node.target, node.value)
        elif isinstance(node, (cst.For, cst.CompFor)):
            _record_target(assigned, node.target, None)
        elif isinstance(node, cst.WithItem) and node.asname is not None:
            _record_target(assigned, node.asname.name, None)
        elif isinstance(node, (cst.Global, cst.Nonlocal)):
            for n in node.names:
                assigned.setdefault(n.name.value, []).append(None)
        elif isinstance(node, cst.Yield):
            return None
        elif isinstance(node, cst.NamedExpr):
            _record_target(assigned, node.target, node.value)
    if not returns or any(v is None for v in returns):
        return None
    return returns, assigned


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


def own_nodes(fn: cst.FunctionDef):
    """The nodes of `fn`'s body, not those of functions, classes or lambdas nested in it."""
    stack = [fn.body]
    while stack:
        node = stack.pop()
        yield node
        for child in children(node):
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


def is_metric_value(index, expr: cst.CSTNode, names, flow=None) -> bool:
    """`metric(pred, y)` where `metric` is surely bound to a non-differentiable torchmetrics metric
    (`acc_fn = Accuracy(task="multiclass", num_classes=10).to(device)`), or is a parameter of `flow`'s
    function every call of which, in this file or another of the project, passes one
    (`train_step(..., precision_fn)` called with `BinaryPrecision().to(dev)`): a tensor that holds no graph."""
    if not isinstance(expr, cst.Call) or not isinstance(expr.func, cst.Name):
        return False
    values = names(expr.func)
    if not values or len(values) != 1 or not isinstance(values[0], cst.Call):
        if flow is None:
            return False
        from gradfix.analysis.module_ctors import passed_class

        return _nondiff_metric(passed_class(index, flow, expr.func))
    ctor = values[0]
    while isinstance(ctor.func, cst.Attribute) and ctor.func.attr.value in _DEVICE_MOVES and \
            isinstance(ctor.func.value, cst.Call):
        ctor = ctor.func.value   # `Accuracy(...).to(device)`
    return _nondiff_metric(qualname(ctor.func, index.imports))


def _nondiff_metric(q: str | None) -> bool:
    return q is not None and q.startswith("torchmetrics.") and q.rsplit(".", 1)[-1] in _NONDIFF_METRICS


_ARITHMETIC = _NUMBER_OPS + (cst.BitAnd, cst.BitOr, cst.BitXor)
_ZERO = cst.Integer("0")


def carries_no_graph(index, expr: cst.CSTNode, names=None, depth: int = 0) -> bool:
    """Whether `expr` is shown to hold no autograd graph: a Python number (`is_number`), a tensor of an
    integer or boolean dtype (`argmax`, `eq`, a comparison, `.long()`, the indices of `topk` / `sort` /
    `max(x, 1)`), `.detach()` / `.item()` / `.data`, or a dtype move, shape change or reduction of such a
    tensor (`.float().mean()`), arithmetic of them, a name bound only to them, or a function of this file
    whose every `return` gives one. `names` as for `is_number`."""
    if depth > _DEPTH:
        return False
    if is_number(index, expr, names, depth):
        return True
    t = type(expr)
    if t is cst.Comparison:
        return True  # `pred == y`, `p > 0.5`: a bool (or a bool tensor), never a graph
    if t is cst.UnaryOperation:
        return isinstance(expr.operator, cst.Not) or carries_no_graph(index, expr.expression, names, depth)
    if t is cst.BinaryOperation:
        return isinstance(expr.operator, _ARITHMETIC) and carries_no_graph(index, expr.left, names, depth) and \
            carries_no_graph(index, expr.right, names, depth)
    if t is cst.IfExp:
        return carries_no_graph(index, expr.body, names, depth) and carries_no_graph(index, expr.orelse, names, depth)
    if t is cst.Subscript:
        if _pair_call(index, expr.value) and _second_item(expr):
            return True  # `torch.max(out, 1)[1]`, `out.topk(5)[1]`: the indices
        return carries_no_graph(index, expr.value, names, depth)
    if t is cst.Attribute:
        if expr.attr.value == "indices" and _pair_call(index, expr.value):
            return True
        return expr.attr.value in ("data", "shape", "dtype", "device", "ndim", "is_cuda", "requires_grad")
    if t is cst.Name:
        if names is None:
            return False
        values = names(expr)
        if not values or any(v is None for v in values):
            return False
        # `acc = torch.round(acc * 100)`: each binding holds no graph if the name held none before it
        own = expr.value
        assumed = lambda n: [_ZERO] if n.value == own else names(n)  # noqa: E731
        return all(carries_no_graph(index, v, assumed, depth + 1) for v in values)
    if t is not cst.Call:
        return False
    func = expr.func
    if isinstance(func, cst.Name):
        if accuracy_named(func.value) and not _defined_here(index, func.value):
            return True
        return returns_no_graph(index, func.value, depth + 1)
    if not isinstance(func, cst.Attribute):
        return False
    q = qualname(func, index.imports) or ""
    if isinstance(func.value, cst.Name) and func.value.value in index.imports.aliases and \
            not q.startswith("torch.") and accuracy_named(func.attr.value):
        return True   # `utils.accuracy(out, y)`: a helper of an imported module, named for an accuracy
    if q.startswith("torch."):
        if q in torchapi.INTEGER_RESULT_FUNCS:
            return True
        first = expr.args[0] if expr.args else None
        if q[len("torch."):] in torchapi.GRAPH_FOLLOWS_RECEIVER and first is not None and \
                first.keyword is None and not first.star and carries_no_graph(index, first.value, names, depth + 1):
            return True
        # a torch op of inputs none of which holds a graph (`torch.round(acc * 100)`) records none
        return q not in torchapi.TENSOR_FACTORIES and bool(expr.args) and \
            all(_inert(index, a, names, depth) for a in expr.args)
    meth = func.attr.value  # a method (`np.mean(x)` reads as one of `np`, which is not shown graph-free)
    if meth in torchapi.INTEGER_RESULT_METHODS or _to_integer_dtype(index, expr):
        return True
    if meth.endswith("_") or meth == "requires_grad_":
        return False  # in place: the receiver may take a graph from the arguments
    return carries_no_graph(index, func.value, names, depth + 1) and \
        all(_inert(index, a, names, depth) for a in expr.args)  # `(pred == y).sum(dim=0)`, `acc.round()`


# `accuracy`, `binary_acc`, `get_accuracy`, `count_correct`: a helper named for an accuracy counts matches of
# argmax'ed or thresholded predictions, which hold no graph. Trusted only for a helper the file does not define
# (imported, or in a notebook cell that does not parse); one the file defines is read instead.
_ACCURACY_NAME = re.compile(r"(?:^|_)(?:acc|accuracy|accu|correct|corrects)(?:_|$|\d)", re.IGNORECASE)
# the camelCase spellings: `calcAccuracy`, `getAcc`, `numCorrect`, `top1Acc`
_ACCURACY_CAMEL = re.compile(r"(?<=[a-z0-9])(?:Acc|Accuracy|Accu|Correct|Corrects)(?=[A-Z0-9_]|$)")


def accuracy_named(name: str) -> bool:
    return bool(_ACCURACY_NAME.search(name) or _ACCURACY_CAMEL.search(name))


def _defined_here(index, name: str) -> bool:
    return any(isinstance(n, (cst.FunctionDef, cst.ClassDef)) and n.name.value == name for n in index.module.body) \
        or any(isinstance(n, cst.SimpleStatementLine) and any(
            isinstance(s, cst.Assign) and any(isinstance(t.target, cst.Name) and t.target.value == name
                                              for t in s.targets) for s in n.body) for n in index.module.body)


def _inert(index, arg: cst.Arg, names, depth: int) -> bool:
    """An argument that brings no graph into an op: graph-free, a string, `None`, a dtype (`torch.long`)."""
    v = arg.value
    if arg.star:
        return False
    if isinstance(v, (cst.SimpleString, cst.ConcatenatedString, cst.FormattedString)):
        return True
    if isinstance(v, cst.Name) and v.value in ("None", "True", "False"):
        return True
    if isinstance(v, cst.Attribute) and (qualname(v, index.imports) or "").startswith("torch."):
        return True  # `torch.float32`, `torch.long`
    return carries_no_graph(index, v, names, depth + 1)


def no_graph_from(index, expr: cst.CSTNode, sources: set[str], names=None) -> bool:
    """Whether every part of `expr` that reads one of the names `sources` (the tensors that carry the
    graph, such as a step's model output) is shown to hold no graph: `acc(out, y) * n` adds no graph of
    `out` whatever `n` is, when `acc` returns a comparison's mean."""
    if not _reads(expr, sources):
        return True
    if carries_no_graph(index, expr, names):
        return True
    if isinstance(expr, cst.BinaryOperation) and isinstance(expr.operator, _NUMBER_OPS):
        return no_graph_from(index, expr.left, sources, names) and no_graph_from(index, expr.right, sources, names)
    if isinstance(expr, cst.UnaryOperation) and isinstance(expr.operator, cst.Minus):
        return no_graph_from(index, expr.expression, sources, names)
    return False


def _reads(expr, names: set[str]) -> bool:
    stack = [expr]
    while stack:
        node = stack.pop()
        if isinstance(node, cst.Name) and node.value in names:
            return True
        if isinstance(node, cst.Attribute):
            stack.append(node.value)  # `out.indices`: the attribute's name is not a read
            continue
        stack.extend(children(node))
    return False


def _pair_call(index, expr) -> bool:
    """A call returning a (values, indices) pair: `topk`, `sort`, `max(x, 1)`, `x.max(dim=1)`."""
    if not isinstance(expr, cst.Call) or not isinstance(expr.func, cst.Attribute):
        return False
    function = (qualname(expr.func, index.imports) or "").startswith("torch.")
    if not function and index.imports.is_module(expr.func.value):
        return False  # `np.sort(a)`: another library's function
    name = expr.func.attr.value
    if name in torchapi.PAIR_RETURNING_ALWAYS:
        return True
    if name not in torchapi.PAIR_RETURNING_WITH_DIM:
        return False
    positional = [a for a in expr.args if a.keyword is None and not a.star]
    at = 1 if function else 0  # `torch.max(x, 1)`, `x.max(1)`
    dim = positional[at].value if len(positional) > at else None
    if any(a.keyword is not None and a.keyword.value == "dim" for a in expr.args):
        return True
    if isinstance(dim, cst.UnaryOperation) and isinstance(dim.operator, cst.Minus):
        dim = dim.expression
    return isinstance(dim, cst.Integer)  # `torch.max(a, b)` of two tensors is elementwise: not a pair


def _second_item(sub: cst.Subscript) -> bool:
    if len(sub.slice) != 1 or not isinstance(sub.slice[0].slice, cst.Index):
        return False
    v = sub.slice[0].slice.value
    return isinstance(v, cst.Integer) and v.value == "1"


_INTEGER_DTYPES = frozenset({"long", "int", "int64", "int32", "int16", "int8", "uint8", "bool", "short"})


def _to_integer_dtype(index, call: cst.Call) -> bool:
    """`.to(torch.long)`, `.type(torch.LongTensor)`: a move to an integer dtype."""
    meth = call.func.attr.value
    if meth not in ("to", "type") or not call.args:
        return False
    first = call.args[0]
    q = qualname(first.value, index.imports) or ""
    if first.keyword is not None and first.keyword.value != "dtype":
        return False
    last = q.rsplit(".", 1)[-1]
    return q.startswith("torch.") and (last in _INTEGER_DTYPES or last in ("LongTensor", "IntTensor", "BoolTensor",
                                                                           "ByteTensor", "ShortTensor"))


# constructors whose result is a new tensor of constants, whatever their arguments (`torch.tensor(t)` copies
# without the graph; `as_tensor`, which may hand its argument back, is not among them)
_CONSTANT_TENSORS = frozenset("torch." + n for n in ("tensor", "zeros", "ones", "full", "empty", "scalar_tensor",
                                                     "zeros_like", "ones_like", "full_like", "empty_like"))


def fresh_constant(index, expr: cst.CSTNode) -> bool:
    """A number literal, or a new tensor of constants not asked to require grad (`torch.tensor(0.0,
    device=d)`, `torch.zeros(())`): a value that starts with no graph, so a name rebound to it drops the
    graph it held before (a total reset at the top of every optimizer step)."""
    if isinstance(expr, (cst.Integer, cst.Float)) or \
            isinstance(expr, cst.UnaryOperation) and isinstance(expr.expression, (cst.Integer, cst.Float)):
        return True
    if not isinstance(expr, cst.Call) or qualname(expr.func, index.imports) not in _CONSTANT_TENSORS:
        return False
    return not any(a.star or a.keyword is not None and a.keyword.value == "requires_grad" and
                   not (isinstance(a.value, cst.Name) and a.value.value == "False") for a in expr.args)


__all__ = ["is_number", "returns_number", "returns_no_graph", "carries_no_graph", "no_graph_from", "bound_values",
           "is_metric_value", "fresh_constant"]
