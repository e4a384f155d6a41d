"""Boolean flag parameters: which `if flag:` tests of a function guard a node, and what a call passes.

A forward that applies a softmax only `if apply_softmax:` returns logits for every caller that leaves
the flag at its default `False`. A rule that asks what a call's result is must read the flag at that
call: a guard whose value the call does not show is unknown, and unknown means silence.
"""

from __future__ import annotations

import libcst as cst

_LITERALS = {"True": True, "False": False, "None": None}


def guarding_flags(index, node: cst.CSTNode, fn: cst.FunctionDef) -> tuple[tuple[str, bool], ...]:
    """(parameter, the truth value it must have) for each `if p:` / `if not p:` of `fn` that `node` sits
    under, `p` a parameter of `fn`: the body of `if p:` runs when `p` is truthy, its `else` when not, and an
    `elif` runs only when every test before it is false. Tests of anything but a parameter are not listed."""
    params = _param_names(fn)
    guards: list[tuple[str, bool]] = []
    child, cur = node, index.parents.get(node)
    while cur is not None and cur is not fn:
        if isinstance(cur, cst.If):
            flag = _flag_test(cur.test, params)
            if flag is not None:
                name, truthy = flag
                if child is cur.body:
                    guards.append((name, truthy))
                elif child is cur.orelse:
                    guards.append((name, not truthy))
        child, cur = cur, index.parents.get(cur)
    return tuple(sorted(set(guards)))


def _flag_test(test: cst.BaseExpression, params: set[str]) -> tuple[str, bool] | None:
    """`p` -> (p, True), `not p` -> (p, False), for a parameter `p`; None for any other test."""
    if isinstance(test, cst.Name) and test.value in params:
        return test.value, True
    if isinstance(test, cst.UnaryOperation) and isinstance(test.operator, cst.Not):
        inner = _flag_test(test.expression, params)
        if inner is not None and not test.lpar:
            return inner[0], not inner[1]
    return None


def _param_names(fn: cst.FunctionDef) -> set[str]:
    p = fn.params
    return {x.name.value for x in list(p.posonly_params) + list(p.params) + list(p.kwonly_params)}


def passed_for(call: cst.Call, fn: cst.FunctionDef, name: str, bound: bool = False) -> cst.BaseExpression | None:
    """The expression `call` passes for parameter `name` of `fn` (by keyword or position), None when it
    passes none or `*args` / `**kwargs` may carry it."""
    p = fn.params
    positional = list(p.posonly_params) + list(p.params)
    if bound and positional and positional[0].name.value in ("self", "cls"):
        positional = positional[1:]
    pos = next((i for i, x in enumerate(positional) if x.name.value == name), None)
    n_positional = 0
    for a in call.args:
        if a.keyword is not None:
            if a.keyword.value == name:
                return a.value
            continue
        if a.star:
            return None
        if pos is not None and n_positional == pos:
            return a.value
        n_positional += 1
    return None


def flag_at_call(call: cst.Call, fn: cst.FunctionDef, name: str, bound: bool) -> tuple[bool, object]:
    """(known, value) of parameter `name` of `fn` at `call`: a literal `True`/`False`/`None`/number passed by
    keyword or position, or the parameter's literal default when the call leaves it out. `bound`: the call
    goes through an instance (`model(x)` for `forward(self, x, ...)`), so `self` takes no argument. Unknown
    (`(False, None)`) for any other value, for `*args` / `**kwargs` that may carry it, or a missing default."""
    p = fn.params
    target = next((x for x in list(p.posonly_params) + list(p.params) + list(p.kwonly_params)
                   if x.name.value == name), None)
    if target is None:
        return False, None
    arg = passed_for(call, fn, name, bound)
    if arg is not None:
        return _literal(arg)
    if any(a.star for a in call.args) or target.default is None:
        return False, None
    return _literal(target.default)


def _literal(expr: cst.BaseExpression) -> tuple[bool, object]:
    if isinstance(expr, cst.Name) and expr.value in _LITERALS:
        return True, _LITERALS[expr.value]
    if isinstance(expr, cst.Integer):
        return True, int(expr.value, 0)
    return False, None


def call_takes_branch(call: cst.Call, fn: cst.FunctionDef, guards, bound: bool) -> bool | None:
    """Whether every guard in `guards` holds at `call`: True, False (a guard is shown not to hold), or None
    (some guard's value is unknown and none is shown false)."""
    unknown = False
    for name, truthy in guards:
        known, value = flag_at_call(call, fn, name, bound)
        if not known:
            unknown = True
        elif bool(value) != truthy:
            return False
    return None if unknown else True


__all__ = ["guarding_flags", "flag_at_call", "call_takes_branch", "passed_for"]
