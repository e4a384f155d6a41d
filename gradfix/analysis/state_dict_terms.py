"""Values a method returns that are built only from `state_dict()` tensors: `weights = [v for k, v in
self.state_dict().items() if k.endswith("weight")]`, `return lam * sum(w.pow(2).sum() for w in weights)`.

`state_dict()` (without `keep_vars=True`) returns detached tensors, so such a term added to a loss carries no
gradient to the model, like a `.data` read (GF104). Shown only when every name the returned value reads,
through the method's own single assignments, is one of: a local bound to such a value, a comprehension variable
over `self.state_dict()` (`.items()`, `.values()`) or over such a local, a parameter the call passes a number
literal for (or leaves to a number default), a module name the file imports (`torch`), or a builtin that
computes on its arguments (`sum`, `len`, `abs`, `max`, `min`, `float`). Any other read of `self` (a parameter,
a submodule call), a loop or a branch in the method, or a second assignment of a name: not shown.
"""

from __future__ import annotations

import libcst as cst

from gradfix.analysis.callgraph import argument_for
from gradfix.analysis.tree import walk

_BUILTINS = frozenset({"sum", "len", "abs", "max", "min", "float", "range", "zip", "enumerate"})


def state_dict_call(fn: cst.FunctionDef, call: cst.Call, index) -> cst.Call | None:
    """The `self.state_dict()` call whose tensors alone make `fn`'s returned value, for the method call `call`
    (`model.weight_penalty(1e-2)`), else None."""
    if not isinstance(fn.body, cst.IndentedBlock):
        return None
    assigned: dict[str, cst.BaseExpression] = {}
    returned = None
    for stmt in fn.body.body:
        if isinstance(stmt, cst.SimpleStatementLine):
            for small in stmt.body:
                if isinstance(small, cst.Assign) and len(small.targets) == 1 and \
                        isinstance(small.targets[0].target, cst.Name):
                    name = small.targets[0].target.value
                    if name in assigned:
                        return None
                    assigned[name] = small.value
                elif isinstance(small, cst.Return):
                    if returned is not None or small.value is None:
                        return None
                    returned = small.value
                elif isinstance(small, cst.Expr) and isinstance(small.value, (cst.SimpleString, cst.ConcatenatedString)):
                    continue  # a docstring
                else:
                    return None
        else:
            return None  # a loop, a branch, a `with`: not followed
    if returned is None:
        return None
    params = {p.name.value: p for p in fn.params.params}
    found: list[cst.Call] = []
    if not _detached(returned, assigned, params, fn, call, index, found, frozenset(), 0) or not found:
        return None
    return found[0]


def _detached(expr, assigned, params, fn, call, index, found, comp_vars: frozenset, depth: int) -> bool:
    if depth > 8:
        return False
    for node in _own_nodes(expr):
        if isinstance(node, (cst.ListComp, cst.GeneratorExp, cst.SetComp)):
            inner = _comprehension_vars(node, assigned, params, fn, call, index, found, comp_vars, depth)
            if inner is None or not _detached(node.elt, assigned, params, fn, call, index, found, inner, depth + 1):
                return False
            for ifs in _ifs(node):
                if not _detached(ifs, assigned, params, fn, call, index, found, inner, depth + 1):
                    return False
        elif isinstance(node, cst.Name):
            if not _name_ok(node, expr, assigned, params, fn, call, index, found, comp_vars, depth):
                return False
    return True


def _own_nodes(expr):
    """The nodes of `expr`, not descending into comprehensions (they are judged with their variables), nor
    into the attribute names of `a.b` (only `a` is a read)."""
    stack = [expr]
    while stack:
        node = stack.pop()
        yield node
        if isinstance(node, (cst.ListComp, cst.GeneratorExp, cst.SetComp)):
            continue
        if isinstance(node, cst.Attribute):
            stack.append(node.value)
            continue
        if isinstance(node, cst.Arg):
            stack.append(node.value)
            continue
        from gradfix.analysis.tree import children
        stack.extend(children(node))


def _ifs(comp):
    cur = comp.for_in
    while cur is not None:
        for i in cur.ifs:
            yield i.test
        cur = cur.inner_for_in


def _comprehension_vars(comp, assigned, params, fn, call, index, found, comp_vars, depth):
    names = set(comp_vars)
    cur = comp.for_in
    while cur is not None:
        it = cur.iter
        if _is_state_dict_iter(it, index, found):
            pass
        elif not _detached(it, assigned, params, fn, call, index, found, frozenset(names), depth + 1):
            return None
        for n in walk(cur.target):
            if isinstance(n, cst.Name):
                names.add(n.value)
        cur = cur.inner_for_in
    return frozenset(names)


def _is_state_dict_iter(it, index, found) -> bool:
    """`self.state_dict().items()` / `.values()` / `self.state_dict()` itself, without `keep_vars=True`."""
    sd = it
    if isinstance(it, cst.Call) and isinstance(it.func, cst.Attribute) and it.func.attr.value in ("items", "values") \
            and not it.args:
        sd = it.func.value
    if _is_state_dict(sd):
        found.append(sd)
        return True
    return False


def _is_state_dict(expr) -> bool:
    return isinstance(expr, cst.Call) and isinstance(expr.func, cst.Attribute) and \
        expr.func.attr.value == "state_dict" and isinstance(expr.func.value, cst.Name) and \
        expr.func.value.value == "self" and not expr.args


def _name_ok(node, expr, assigned, params, fn, call, index, found, comp_vars, depth) -> bool:
    name = node.value
    if name in comp_vars:
        return True
    if name in assigned:
        return _detached(assigned[name], {k: v for k, v in assigned.items() if k != name}, params, fn, call, index,
                         found, comp_vars, depth + 1)
    if name in params:
        if name == "self":
            return False  # `self.hidden.weight`, `self(x)`: a read of the module itself
        arg = argument_for(fn, call, name, bound=True)
        value = arg if arg is not None else params[name].default
        return isinstance(value, (cst.Integer, cst.Float))
    if name in _BUILTINS:
        return True
    return index.imports.is_module(node)


__all__ = ["state_dict_call"]
