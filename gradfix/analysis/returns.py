"""What a file's functions and module classes return, read from CPython's `ast` for the project
summary (analysis/summary.py), so that another file (and the file itself) can ask:

- which constructors a function returns on every path: `def build_model(): model =
  nn.Sequential(); model.add_module(...); return model` makes a module, so `model =
  build_model(); model.forward(x)` calls forward on a module;
- whether a module class's forward ends in a softmax: `return self.softmax(logits)` with
  `self.softmax = nn.Softmax(dim=1)`, so `CrossEntropyLoss()(model(x), y)` in another file
  applies a second one.

Each answer is shown or unknown. A path that may fall off the end of the function (returning
None), a returned name bound in a branch or a loop, a generator, a decorated function, an early
return of forward: all unknown, and unknown keeps the rules silent. The richer same-file forms
(a softmax under a flag of forward, tuple elements) are analysis/probabilities.py's, on the
libcst tree.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from typing import Callable

from gradfix.analysis import astindex

SOFTMAX_CALLS = {
    "torch.softmax": "softmax", "torch.nn.functional.softmax": "softmax", "torch.special.softmax": "softmax",
    "torch.log_softmax": "log_softmax", "torch.nn.functional.log_softmax": "log_softmax",
    "torch.special.log_softmax": "log_softmax",
}
SOFTMAX_CTORS = {"torch.nn.Softmax": "softmax", "torch.nn.LogSoftmax": "log_softmax"}
# methods of a module that return the module itself
MODULE_CHAIN = frozenset({"to", "cuda", "cpu", "train", "eval", "float", "double", "half", "requires_grad_"})
_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)
_DEPTH = 6

Qualify = Callable[[ast.expr], "str | None"]


@dataclass(frozen=True)
class Returned:
    """One value a function returns: a call of `ctor` (qualified through the file's imports;
    a bare name for a class or function of the file), and, when that value is an `nn.Softmax` /
    `nn.LogSoftmax` or an `nn.Sequential` whose last layer is one, its kind."""

    ctor: str
    head: str | None = None


def own_nodes(fn: ast.AST, ix=None):
    """The nodes of a function's own scope (not those of a nested function, lambda or class). `ix`: the
    tree's analysis/astindex.py walk (its children lists), else `ast`'s."""
    children = ix.children if ix is not None else ast.iter_child_nodes
    stack = list(children(fn))
    while stack:
        node = stack.pop()
        yield node
        if not isinstance(node, _SCOPES):
            stack.extend(children(node))


def _always_returns(stmts: list[ast.stmt]) -> bool:
    """Every path through `stmts` ends in `return VALUE` or a raise (never falls off the end)."""
    if not stmts:
        return False
    last = stmts[-1]
    if isinstance(last, ast.Return):
        return last.value is not None
    if isinstance(last, ast.Raise):
        return True
    if isinstance(last, ast.If):
        return _always_returns(last.body) and _always_returns(last.orelse)
    if isinstance(last, ast.With):
        return _always_returns(last.body)
    return False


def _binds(stmt: ast.stmt, name: str, ix=None) -> bool:
    """Whether `stmt` may rebind `name` (an assignment, a loop or `with` target, a del, an import,
    a nested def), anywhere inside it."""
    for node in (ix.walk(stmt) if ix is not None else ast.walk(stmt)):
        if isinstance(node, ast.Name) and node.id == name and not isinstance(node.ctx, ast.Load):
            return True
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and node.name == name:
            return True
        if isinstance(node, (ast.Import, ast.ImportFrom)) and any((a.asname or a.name.split(".")[0]) == name
                                                                    for a in node.names):
            return True
        if isinstance(node, (ast.Global, ast.Nonlocal)) and name in node.names:
            return True
    return False


def _bound_value(name: str, before: list[ast.stmt], ix=None) -> tuple[ast.expr, list[ast.stmt]] | None:
    """The value of the last `name = VALUE` among the straight-line statements `before` (read
    backwards), and the statements before that one; None when another statement may rebind it
    first or nothing binds it."""
    for k in range(len(before) - 1, -1, -1):
        stmt = before[k]
        if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name) \
                and stmt.targets[0].id == name:
            if any(isinstance(n, ast.NamedExpr) for n in (ix.walk(stmt.value) if ix is not None else
                                                          ast.walk(stmt.value))):
                return None
            return stmt.value, before[:k]
        if _binds(stmt, name, ix):
            return None
    return None


def _unchain(value: ast.expr) -> ast.expr:
    """`Net(...).to(dev).eval()` -> `Net(...)`."""
    while isinstance(value, ast.Call) and isinstance(value.func, ast.Attribute) and value.func.attr in MODULE_CHAIN:
        value = value.func.value
    return value


def sequential_head(call: ast.Call, qualify: Qualify) -> str | None:
    """The kind of `nn.Softmax(...)` / `nn.LogSoftmax(...)`, or of an `nn.Sequential(...)` whose
    last (positional, unstarred) layer is one."""
    q = qualify(call.func)
    if q in SOFTMAX_CTORS:
        return SOFTMAX_CTORS[q]
    if q != "torch.nn.Sequential" or not call.args or call.keywords or \
            any(isinstance(a, ast.Starred) for a in call.args):
        return None
    last = call.args[-1]
    return SOFTMAX_CTORS.get(qualify(last.func)) if isinstance(last, ast.Call) else None


def _returned(value: ast.expr, before: list[ast.stmt], qualify: Qualify, depth: int = 0, ix=None) -> Returned | None:
    value = _unchain(value)
    if isinstance(value, ast.Name) and depth < _DEPTH:
        bound = _bound_value(value.id, before, ix)
        return _returned(bound[0], bound[1], qualify, depth + 1, ix) if bound is not None else None
    if not isinstance(value, ast.Call):
        return None
    q = qualify(value.func)
    if q is None:
        return None
    return Returned(q, sequential_head(value, qualify))


def function_returns(fn: ast.AST, qualify: Qualify, ix=None) -> tuple[Returned, ...] | None:
    """What `fn` returns on every path, one entry per `return`, or None when some path is not
    shown to return a call: a bare `return`, a path that falls off the end, a returned name not
    bound in straight-line code before a top-level `return`, a generator, a decorator."""
    if not isinstance(fn, ast.FunctionDef) or fn.decorator_list or not _always_returns(fn.body):
        return None
    out: list[Returned] = []
    for node in own_nodes(fn, ix):
        if isinstance(node, (ast.Yield, ast.YieldFrom, ast.Await)):
            return None
        if not isinstance(node, ast.Return):
            continue
        if node.value is None:
            return None
        top = next((k for k, s in enumerate(fn.body) if s is node), None)
        before = fn.body[:top] if top is not None else []   # a name returned in a branch is not followed
        if top is None and not isinstance(_unchain(node.value), ast.Call):
            return None
        found = _returned(node.value, before, qualify, 0, ix)
        if found is None:
            return None
        out.append(found)
    return tuple(out) if out else None


def forward_head(cls: ast.ClassDef, qualify: Qualify, ix=None) -> str | None:
    """"softmax" / "log_softmax" when the class's `forward` has one `return`, its last statement,
    and what it returns is a softmax output: `F.softmax(...)`, `x.softmax(...)`, a call of
    `nn.Softmax(...)`, or of `self.attr` that the class assigns once, to an `nn.Softmax` /
    `nn.LogSoftmax` or an `nn.Sequential` ending in one; also through names bound in the
    straight-line code before it (`probs = self.softmax(logits); return probs`)."""
    fwd = None
    for stmt in cls.body:
        if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)) and stmt.name == "forward":
            fwd = stmt
    if not isinstance(fwd, ast.FunctionDef) or fwd.decorator_list or not fwd.body:
        return None
    returns = [n for n in own_nodes(fwd, ix) if isinstance(n, (ast.Return, ast.Yield, ast.YieldFrom))]
    last = fwd.body[-1]
    if len(returns) != 1 or returns[0] is not last or last.value is None:
        return None
    value: ast.expr = last.value
    before = fwd.body[:-1]
    for _ in range(_DEPTH):
        if not isinstance(value, ast.Name):
            break
        bound = _bound_value(value.id, before, ix)   # a parameter, or a name bound in a branch: unknown
        if bound is None:
            return None
        value, before = bound
    if not isinstance(value, ast.Call):
        return None
    func = value.func
    q = qualify(func)
    if q in SOFTMAX_CALLS:
        return SOFTMAX_CALLS[q]
    if isinstance(func, ast.Attribute) and func.attr in ("softmax", "log_softmax") and \
            not (q or "").startswith("torch.") and not (isinstance(func.value, ast.Name) and func.value.id == "self"):
        return func.attr
    if isinstance(func, ast.Call):
        return SOFTMAX_CTORS.get(qualify(func.func))
    if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) and func.value.id == "self":
        assigned = _self_assignments(cls, func.attr, ix)
        if len(assigned) == 1 and isinstance(assigned[0], ast.Call):
            return sequential_head(assigned[0], qualify)
    return None


def _self_assignments(cls: ast.ClassDef, attr: str, ix=None) -> list[ast.expr | None]:
    """The values the class's methods assign to `self.attr` (None for a binding without one:
    an augmented assignment, an unpacking, a `setattr`)."""
    walk = ix.walk if ix is not None else ast.walk
    out: list[ast.expr | None] = []
    for node in walk(cls):
        if isinstance(node, ast.Assign):
            for t in node.targets:
                if _is_self_attr(t, attr):
                    out.append(node.value)
                elif isinstance(t, (ast.Tuple, ast.List)) and any(_is_self_attr(e, attr) for e in walk(t)):
                    out.append(None)
        elif isinstance(node, (ast.AnnAssign, ast.AugAssign)) and _is_self_attr(node.target, attr):
            out.append(node.value if isinstance(node, ast.AnnAssign) else None)
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in ("setattr", "delattr"):
            out.append(None)
    return out


def _is_self_attr(t: ast.AST, attr: str) -> bool:
    return isinstance(t, ast.Attribute) and t.attr == attr and isinstance(t.value, ast.Name) and t.value.id == "self"


def file_returns(tree: ast.Module, qualify: Qualify) -> tuple[dict[str, tuple[Returned, ...]], dict[str, str]]:
    """(top-level function -> what it returns on every path, for those shown; module-class
    candidate -> its forward's softmax kind, for those shown). Classes are not checked to be
    modules here: the project index answers that."""
    ix = astindex.of(tree)
    factories: dict[str, tuple[Returned, ...]] = {}
    heads: dict[str, str] = {}
    for node in tree.body:
        if isinstance(node, ast.FunctionDef):
            heads.pop(node.name, None)
            found = function_returns(node, qualify, ix)
            if found is not None:
                factories[node.name] = found
            else:
                factories.pop(node.name, None)
        elif isinstance(node, ast.ClassDef):
            factories.pop(node.name, None)
            head = forward_head(node, qualify, ix)
            if head is not None:
                heads[node.name] = head
            else:
                heads.pop(node.name, None)
    # a name bound twice at the top level (a def, then another def or an assignment): the last wins,
    # and anything but a def makes it unknown
    for node in tree.body:
        if not isinstance(node, (ast.FunctionDef, ast.ClassDef)):
            for name in list(factories):
                if _binds(node, name, ix):
                    factories.pop(name)
            for name in list(heads):
                if _binds(node, name, ix):
                    heads.pop(name)
    return factories, heads


def clearing_methods(tree: ast.Module) -> frozenset[str]:
    """`Class.method` for the methods of top-level classes that clear gradients somewhere in their body
    (`self.optimizer.zero_grad()`, `p.grad.zero_()`, `p.grad = None`): a subclass in another file whose
    training loop calls `self.method(...)` inherits the clear (GF205 reads it as a helper that clears)."""
    found: set[str] = set()
    ix = astindex.of(tree)
    for node in tree.body:
        if not isinstance(node, ast.ClassDef):
            continue
        for m in node.body:
            if isinstance(m, (ast.FunctionDef, ast.AsyncFunctionDef)) and _clears_somewhere(m, ix):
                found.add(f"{node.name}.{m.name}")
    return frozenset(found)


def _clears_somewhere(fn: ast.AST, ix) -> bool:
    for n in ix.walk(fn):
        if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute):
            if n.func.attr == "zero_grad" or (n.func.attr == "zero_" and isinstance(n.func.value, ast.Attribute)
                                              and n.func.value.attr == "grad"):
                return True
        elif isinstance(n, ast.Assign) and isinstance(n.value, ast.Constant) and n.value.value is None and any(
                isinstance(t, ast.Attribute) and t.attr == "grad" for t in n.targets):
            return True
    return False


def clearing_classes(tree: ast.Module) -> frozenset[str]:
    """Top-level classes whose `forward` clears the module's own gradients as a statement of its body
    (`self.zero_grad()`, not under a branch or a loop): every forward call clears them, so a loop that
    calls such a model and never calls `zero_grad()` itself does not accumulate (GF205). A name bound
    again at the top level is left out. Classes are not checked to be modules here."""
    found: set[str] = set()
    for node in tree.body:
        if isinstance(node, ast.ClassDef):
            found.discard(node.name)
            fwd = [m for m in node.body if isinstance(m, ast.FunctionDef) and m.name == "forward"]
            if len(fwd) == 1 and not fwd[0].decorator_list and any(
                    isinstance(st, ast.Expr) and isinstance(st.value, ast.Call) and
                    _is_self_attr(st.value.func, "zero_grad") for st in fwd[0].body):
                found.add(node.name)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            found.discard(node.name)
    ix = astindex.of(tree)
    for node in tree.body:
        if not isinstance(node, (ast.FunctionDef, ast.ClassDef)):
            for name in list(found):
                if _binds(node, name, ix):
                    found.discard(name)
    return frozenset(found)


# -- Python numbers among a forward's outputs ------------------------------------------------------
_NUMBER_CALLS = frozenset({"float", "int", "len"})          # builtins whose result is a Python number
_NUMBER_METHODS = frozenset({"item", "tolist"})             # a Python number / a (nested) list of numbers


def forward_number_positions(cls: ast.ClassDef) -> frozenset[int]:
    """Positions of the tuple a class's `forward` returns that hold Python numbers, or lists of them,
    on every `return`: `return loss, accuracies` where `accuracies = []` only ever receives
    `accuracies.append(acc.item())`. Such an output has no autograd graph, so a caller adding it into a
    running total (`total += np.array(accuracies)`) keeps none. Every `return` must be a tuple of one
    length; a decorated forward, a generator or a path that falls off the end gives nothing."""
    fwd = None
    for stmt in cls.body:
        if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)) and stmt.name == "forward":
            fwd = stmt
    if not isinstance(fwd, ast.FunctionDef) or fwd.decorator_list or not _always_returns(fwd.body):
        return frozenset()
    nodes = list(own_nodes(fwd))
    if any(isinstance(n, (ast.Yield, ast.YieldFrom, ast.Await)) for n in nodes):
        return frozenset()
    returns = [n.value for n in nodes if isinstance(n, ast.Return)]
    if not returns or not all(isinstance(v, ast.Tuple) and not any(isinstance(e, ast.Starred) for e in v.elts)
                              for v in returns):
        return frozenset()
    width = {len(v.elts) for v in returns}
    if len(width) != 1:
        return frozenset()
    params = {a.arg for a in (*fwd.args.posonlyargs, *fwd.args.args, *fwd.args.kwonlyargs,
                              fwd.args.vararg, fwd.args.kwarg) if a is not None}
    returned = {id(e) for v in returns for e in v.elts}
    return frozenset(k for k in range(width.pop())
                     if all(_python_numbers(v.elts[k], nodes, params, returned) for v in returns))


def number_functions(tree: ast.Module) -> frozenset[str]:
    """Top-level functions whose every `return` gives a Python number (`_python_numbers`: `.item()`, `float(...)`,
    arithmetic of them, a local bound only so) and no path falls off the end: `return hits.item() + misses.item()`.
    A call of one from another file adds no graph to a running total. Undecorated, no generator; a name bound
    again at the top level is left out."""
    from gradfix.analysis import astindex

    ix = astindex.of(tree)   # the walk the summary made (cached on the tree): children lists, no second walk
    found: set[str] = set()
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            found.discard(node.name)
        if not isinstance(node, ast.FunctionDef) or node.decorator_list or not _always_returns(node.body):
            continue
        last = node.body[-1]
        if isinstance(last, ast.Return) and not _may_be_number(last.value):
            continue  # the common case, `return out` of a module or a dict: no walk of the body
        if isinstance(last, ast.Return) and isinstance(last.value, ast.Name) and \
                not _may_be_number_name(node, last.value.id):
            continue  # `out = self.net(x)` ... `return out`: a binding of its own body is no number
        nodes = list(own_nodes(node, ix))
        if any(isinstance(n, (ast.Yield, ast.YieldFrom, ast.Await)) for n in nodes):
            continue
        returns = [n.value for n in nodes if isinstance(n, ast.Return)]
        params = {a.arg for a in (*node.args.posonlyargs, *node.args.args, *node.args.kwonlyargs,
                                  node.args.vararg, node.args.kwarg) if a is not None}
        returned = {id(v) for v in returns}
        if returns and all(v is not None and _python_numbers(v, nodes, params, returned) for v in returns):
            found.add(node.name)
    for node in tree.body:
        if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            for name in list(found):
                if _binds(node, name):
                    found.discard(name)
    return frozenset(found)


def _may_be_number_name(fn: ast.FunctionDef, name: str) -> bool:
    """A cheap necessary test that the local `name` holds a number: not a parameter, bound by statements of the
    function (not inside expressions) only as `name = <may be a number>` or `name = []`, and bound at least once."""
    a = fn.args
    if name in {x.arg for x in (*a.posonlyargs, *a.args, *a.kwonlyargs, a.vararg, a.kwarg) if x is not None}:
        return False
    seen = False
    stack = list(fn.body)
    while stack:
        st = stack.pop()
        if isinstance(st, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            continue
        if isinstance(st, ast.Assign):
            for t in st.targets:
                if isinstance(t, ast.Name) and t.id == name:
                    if not (_may_be_number(st.value) or isinstance(st.value, ast.List) and not st.value.elts):
                        return False
                    seen = True
        elif isinstance(st, (ast.For, ast.AsyncFor, ast.With, ast.AsyncWith)) and any(
                isinstance(n, ast.Name) and n.id == name
                for tgt in ([st.target] if isinstance(st, (ast.For, ast.AsyncFor)) else
                            [i.optional_vars for i in st.items if i.optional_vars is not None])
                for n in ast.walk(tgt)):
            return False
        for field in ("body", "orelse", "finalbody", "handlers"):
            sub = getattr(st, field, None)
            if isinstance(sub, list):
                stack.extend(sub)
    return seen


def _may_be_number(expr: ast.expr | None) -> bool:
    """A cheap necessary test for `_python_numbers`, read off the expression alone."""
    if isinstance(expr, ast.Constant):
        return isinstance(expr.value, (int, float)) and not isinstance(expr.value, bool)
    if isinstance(expr, ast.UnaryOp):
        return _may_be_number(expr.operand)
    if isinstance(expr, ast.BinOp):
        return _may_be_number(expr.left) and _may_be_number(expr.right)
    if isinstance(expr, ast.Call):
        f = expr.func
        return isinstance(f, ast.Attribute) and f.attr in _NUMBER_METHODS or isinstance(f, ast.Name) and f.id in _NUMBER_CALLS
    return isinstance(expr, ast.Name)


def _python_numbers(expr: ast.expr, nodes: list, params: set, returned: set, depth: int = 0) -> bool:
    """`expr` is a Python number or a list of them: a numeric literal, `x.item()`, `x.tolist()`,
    `float(...)` / `int(...)` / `len(...)`, arithmetic of such, or a local name every binding of which
    is one, or is a list (`[]`, `list()`) that the function only ever appends such values to."""
    if depth > _DEPTH:
        return False
    if isinstance(expr, ast.Constant):
        return isinstance(expr.value, (int, float)) and not isinstance(expr.value, bool)
    if isinstance(expr, ast.UnaryOp) and isinstance(expr.op, (ast.USub, ast.UAdd)):
        return _python_numbers(expr.operand, nodes, params, returned, depth + 1)
    if isinstance(expr, ast.BinOp) and isinstance(expr.op, (ast.Add, ast.Sub, ast.Mult, ast.Div, ast.FloorDiv)):
        return _python_numbers(expr.left, nodes, params, returned, depth + 1) and \
            _python_numbers(expr.right, nodes, params, returned, depth + 1)
    if isinstance(expr, ast.Call):
        f = expr.func
        return isinstance(f, ast.Attribute) and f.attr in _NUMBER_METHODS and not expr.args or \
            isinstance(f, ast.Name) and f.id in _NUMBER_CALLS
    if not isinstance(expr, ast.Name) or expr.id in params:
        return False
    name = expr.id
    values = _local_values(name, nodes)
    if not values or any(v is None for v in values):
        return False
    lists = [v for v in values if _empty_list(v)]
    if lists and len(lists) != len(values):
        return False
    if not lists:
        return all(_python_numbers(v, nodes, params, returned, depth + 1) for v in values)
    return _only_appended_numbers(name, nodes, params, returned, depth)


def _local_values(name: str, nodes: list) -> list:
    """The values `name` is bound to in the function's own nodes (None for a binding without a plain
    value: a loop target, an augmented assignment, a `with ... as`, a `global`)."""
    out: list = []
    in_targets = {id(x) for a in nodes if isinstance(a, ast.Assign) for t in a.targets for x in ast.walk(t)}
    for n in nodes:
        if isinstance(n, ast.Assign):
            for t in n.targets:
                if isinstance(t, ast.Name) and t.id == name:
                    out.append(n.value)
                elif isinstance(t, (ast.Tuple, ast.List)):
                    for k, e in enumerate(t.elts):
                        if isinstance(e, ast.Name) and e.id == name:
                            # `losses, accuracies = [], []`: the matching element of a literal tuple
                            same = isinstance(n.value, (ast.Tuple, ast.List)) and len(n.value.elts) == len(t.elts) \
                                and not any(isinstance(x, ast.Starred) for x in (*t.elts, *n.value.elts))
                            out.append(n.value.elts[k] if same else None)
                        elif any(isinstance(x, ast.Name) and x.id == name for x in ast.walk(e)):
                            out.append(None)
        elif isinstance(n, (ast.Global, ast.Nonlocal)) and name in n.names:
            out.append(None)
        elif isinstance(n, ast.Name) and n.id == name and not isinstance(n.ctx, ast.Load) and id(n) not in in_targets:
            out.append(None)   # a loop target, `with ... as`, an augmented assignment, `del`
    return out


def _empty_list(v: ast.expr) -> bool:
    return isinstance(v, ast.List) and not v.elts or \
        isinstance(v, ast.Call) and isinstance(v.func, ast.Name) and v.func.id == "list" and not v.args \
        and not v.keywords


def _only_appended_numbers(name: str, nodes: list, params: set, returned: set, depth: int) -> bool:
    """Every read of the list `name` is `name.append(<number>)`, `len(name)` or a returned element."""
    parents = {id(c): n for n in nodes for c in ast.iter_child_nodes(n)}
    for n in nodes:
        if not (isinstance(n, ast.Name) and n.id == name and isinstance(n.ctx, ast.Load)):
            continue
        if id(n) in returned:
            continue
        up = parents.get(id(n))
        if isinstance(up, ast.Call) and isinstance(up.func, ast.Name) and up.func.id == "len" and up.args == [n]:
            continue
        call = parents.get(id(up)) if isinstance(up, ast.Attribute) else None
        if isinstance(up, ast.Attribute) and up.attr == "append" and isinstance(call, ast.Call) and \
                call.func is up and len(call.args) == 1 and not call.keywords and \
                _python_numbers(call.args[0], nodes, params, returned, depth + 1):
            continue
        return False
    return True


def forward_numbers(tree: ast.Module) -> dict[str, tuple[int, ...]]:
    """Top-level class -> `forward_number_positions`, for the classes with any. A name bound again at
    the top level is left out. Classes are not checked to be modules here: the project index answers that."""
    found: dict[str, tuple[int, ...]] = {}
    for node in tree.body:
        if isinstance(node, ast.ClassDef):
            found.pop(node.name, None)
            positions = forward_number_positions(node)
            if positions:
                found[node.name] = tuple(sorted(positions))
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            found.pop(node.name, None)
    for node in tree.body:
        if not isinstance(node, (ast.FunctionDef, ast.ClassDef)):
            for name in list(found):
                if _binds(node, name):
                    found.pop(name)
    return found
