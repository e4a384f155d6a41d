"""What one call of a helper of this file gives, with its parameters bound to the call's arguments.

`acc += batch_acc(out, y, n)` holds no graph when `batch_acc` returns `hits / n` with `hits = ....sum().item()`
and the call hands it a number for `n`: the file-wide test (analysis/numbers.py `returns_number`) cannot say
so, since a parameter alone may be anything. Here a parameter counts as a number only where this call's argument
is shown to be one. A helper that is a fill-in stub of an exercise (a body of `pass`, `...` or `raise`, or
every `return` giving an underscore placeholder such as `_____` that nothing binds) gives nothing made from its
arguments either: no value of the call can hold their graph.
"""

from __future__ import annotations

import re

import libcst as cst

from gradfix.analysis.numbers import own_nodes, is_number, returns_and_bindings
from gradfix.analysis.tree import walk

_PLACEHOLDER = re.compile(r"_{3,}")
_STAND_IN = cst.Integer("1")


def _defs(index, name: str) -> list[cst.FunctionDef]:
    return [n for n in index.module.body if isinstance(n, cst.FunctionDef) and n.name.value == name]


def _arguments(fn: cst.FunctionDef, call: cst.Call) -> dict[str, cst.BaseExpression] | None:
    """Parameter name -> the argument (or default) this call binds it to; None when the call unpacks."""
    if any(a.star for a in call.args) or isinstance(fn.params.star_arg, cst.Param) or \
            fn.params.star_kwarg is not None:
        return None
    positional = [*fn.params.posonly_params, *fn.params.params]
    bound: dict[str, cst.BaseExpression] = {}
    plain = [a for a in call.args if a.keyword is None]
    if len(plain) > len(positional):
        return None
    for p, a in zip(positional, plain):
        bound[p.name.value] = a.value
    names = {p.name.value for p in (*positional, *fn.params.kwonly_params)}
    for a in call.args:
        if a.keyword is not None:
            if a.keyword.value not in names:
                return None
            bound[a.keyword.value] = a.value
    for p in (*positional, *fn.params.kwonly_params):
        if p.name.value not in bound and p.default is not None:
            bound[p.name.value] = p.default
    return bound


def call_returns_number(index, call: cst.Call, arg_is_number) -> bool:
    """Whether `call` (of a top-level function of this file, every def of that name) returns a Python number
    from every `return`, a parameter counting as a number when `arg_is_number(argument)` says its argument is."""
    if not isinstance(call.func, cst.Name):
        return False
    defs = _defs(index, call.func.value)
    return bool(defs) and all(_def_returns_number(index, fn, call, arg_is_number) for fn in defs)


def _def_returns_number(index, fn: cst.FunctionDef, call: cst.Call, arg_is_number) -> bool:
    read = returns_and_bindings(fn)
    args = _arguments(fn, call) if read is not None else None
    if args is None:
        return False
    returns, assigned = read
    params = {p.name.value for p in (*fn.params.posonly_params, *fn.params.params, *fn.params.kwonly_params)}

    def names(name: cst.Name):
        if name.value in params:
            if name.value in assigned:
                return None  # rebound inside the helper: not followed
            arg = args.get(name.value)
            return [_STAND_IN] if arg is not None and arg_is_number(arg) else None
        return assigned.get(name.value)

    return all(is_number(index, v, names) for v in returns)


def is_stub_call(index, call: cst.Call) -> bool:
    """Whether `call` names top-level function(s) of this file that are all fill-in stubs: a body of only a
    docstring, `pass`, `...` or `raise` (it returns None or raises), or one whose every `return` gives an
    underscore placeholder (`return _____`) that nothing in the file binds."""
    if not isinstance(call.func, cst.Name):
        return False
    defs = _defs(index, call.func.value)
    return bool(defs) and all(_is_stub(index, fn) for fn in defs)


def _is_stub(index, fn: cst.FunctionDef) -> bool:
    own = list(own_nodes(fn))
    if any(isinstance(n, (cst.Yield, cst.Await)) for n in own):
        return False
    returns = [n for n in own if isinstance(n, cst.Return)]
    if not returns:
        return _trivial_body(fn)
    values = [r.value for r in returns]
    if not all(isinstance(v, cst.Name) and _PLACEHOLDER.fullmatch(v.value) for v in values):
        return False
    placeholders = {v.value for v in values}
    return not any(isinstance(n, cst.Name) and n.value in placeholders
                   for t in _bound_names(index) for n in walk(t))


def _trivial_body(fn: cst.FunctionDef) -> bool:
    body = fn.body.body if isinstance(fn.body, cst.IndentedBlock) else [fn.body]
    for stmt in body:
        smalls = stmt.body if isinstance(stmt, (cst.SimpleStatementLine, cst.SimpleStatementSuite)) else None
        if smalls is None:
            return False
        for small in smalls:
            if isinstance(small, (cst.Pass, cst.Raise)):
                continue
            if isinstance(small, cst.Expr) and isinstance(small.value, (cst.Ellipsis, cst.SimpleString,
                                                                         cst.ConcatenatedString)):
                continue
            return False
    return True


def _bound_names(index):
    cache = index.__dict__.get("_helper_calls_bound")
    if cache is None:
        cache = []
        for node in walk(index.module):
            if isinstance(node, cst.AssignTarget):
                cache.append(node.target)
            elif isinstance(node, (cst.AugAssign, cst.AnnAssign, cst.NamedExpr)):
                cache.append(node.target)
            elif isinstance(node, (cst.For, cst.CompFor)):
                cache.append(node.target)
            elif isinstance(node, cst.Param):
                cache.append(node.name)
        index.__dict__["_helper_calls_bound"] = cache
    return cache


__all__ = ["call_returns_number", "is_stub_call"]
