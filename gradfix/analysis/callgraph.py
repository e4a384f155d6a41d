"""The file's call graph: which calls reach which function, and what that tells about it.

Two facts the provenance needs come from a function's callers, not from its body:
- whether a parameter may require grad (`def norm(f): f /= f.norm()` is a hazard only if some
  caller passes an activation);
- whether the function runs with grad enabled at all (a helper called only from `no_grad`
  blocks, an optimizer's `step()`, `torch.autograd.Function.forward`).

Calls are resolved conservatively: `f(...)` to a top-level function of the file, `self.m(...)`
to a method of the same class, `obj.m(...)` / `obj(...)` to the class `obj` was built from when
the flow knows it. A function with no resolved call site keeps what its own body says.
"""

from __future__ import annotations

import re

import libcst as cst

from gradfix.analysis.names import qualname

_FUNCTION_BASES = ("torch.autograd.Function", "torch.autograd.function.Function")
_INFERENCE_NAME = re.compile(
    r"^_?(generate|inference|infer|predict|sample|evaluate|eval|validate|validation|test|beam_search|"
    r"greedy_decode|translate|postprocess|post_process|detect|visuali[sz]e)(_\w+)?$")


class CallGraph:
    def __init__(self, index):
        self.index = index
        self._sites: dict[int, list] | None = None
        self._param_grad: dict[tuple[int, str], bool | None] = {}
        self._enabled: dict[int, bool] = {}
        self._busy: set = set()

    # -- call sites ------------------------------------------------------
    def sites(self, fn: cst.FunctionDef) -> list:
        """(caller flow, step, call, bound_self) for each resolved call of `fn` in the file."""
        if self._sites is None:
            self._sites = self._collect()
        return self._sites.get(id(fn), [])

    def _collect(self) -> dict[int, list]:
        index = self.index
        table: dict[int, list] = {}
        for scope in index.scopes():
            flow = index.flow(scope)
            for st, call in flow.calls:
                target, bound = self._resolve(flow, call)
                if target is not None:
                    table.setdefault(id(target), []).append((flow, st, call, bound))
        return table

    def _resolve(self, flow, call: cst.Call):
        index = self.index
        func = call.func
        if isinstance(func, cst.Name):
            b = flow._name_binding(func)
            fn = index.functions.get(func.value)
            if fn is not None and (b is None or b.value is fn):
                return fn, False
            if b is not None and b.kind.value == "module" and b.ctor in index.classes:
                return self._method(b.ctor, "forward"), True
            return None, False
        if isinstance(func, cst.Attribute):
            recv, meth = func.value, func.attr.value
            if isinstance(recv, cst.Name) and recv.value == "self" and flow.class_name:
                m = self._method(flow.class_name, meth)
                if m is not None:
                    return m, True
                ctor = index.submodules.get(flow.class_name, {}).get(meth)
                if ctor in index.classes:
                    return self._method(ctor, "forward"), True
                return None, False
            kind, ctor = flow.classify(recv)[:2]
            if ctor in index.classes:
                return self._method(ctor, meth), True
        return None, False

    def _method(self, cls_name: str, meth: str):
        cls = self.index.classes.get(cls_name)
        if cls is None:
            return None
        for stmt in cls.body.body:
            if isinstance(stmt, cst.FunctionDef) and stmt.name.value == meth:
                return stmt
        return None

    # -- facts -------------------------------------------------------------
    def param_grad(self, fn: cst.FunctionDef, name: str) -> bool | None:
        """May parameter `name` of `fn` require grad? True when some call site with grad enabled
        passes such a value, False when every call site passes values that cannot, None when
        unknown (no call site in the file, or one passes a value of unknown provenance)."""
        key = (id(fn), name)
        if key in self._param_grad:
            return self._param_grad[key]
        if key in self._busy:
            return None  # recursion: unknown
        self._busy.add(key)
        try:
            answer = self._param_grad_uncached(fn, name)
        finally:
            self._busy.discard(key)
        self._param_grad[key] = answer
        return answer

    def _param_grad_uncached(self, fn, name) -> bool | None:
        sites = self.sites(fn)
        if not sites:
            return None
        position, has_self = _position(fn, name)
        answers = []
        for flow, st, call, bound in sites:
            if st.no_grad or not self.grad_enabled(flow.function):
                answers.append(False)
                continue
            arg = _argument(call, name, position - (1 if has_self and bound else 0))
            if arg is None:
                answers.append(None if _has_star(call) else False)  # the default value: not a tensor of the graph
                continue
            answers.append(flow.requires_grad(arg))
        if True in answers:
            return True
        return None if None in answers else False

    def grad_enabled(self, fn: cst.FunctionDef | None) -> bool:
        """False when `fn` runs only with grad disabled: decorated `no_grad`, the forward or
        backward of a `torch.autograd.Function`, an optimizer's `step()`, or a helper every
        resolved call of which runs with grad disabled. True otherwise (no call site: unknown
        callers, which may well train)."""
        if fn is None:
            return True
        key = id(fn)
        if key in self._enabled:
            return self._enabled[key]
        if ("mode", key) in self._busy:
            return True
        self._busy.add(("mode", key))
        try:
            answer = self._grad_enabled_uncached(fn)
        finally:
            self._busy.discard(("mode", key))
        self._enabled[key] = answer
        return answer

    def _grad_enabled_uncached(self, fn) -> bool:
        index = self.index
        if index.is_no_grad_function(fn):
            return False
        cls = index.enclosing_class(fn)
        if cls is not None and index.enclosing(fn, (cst.FunctionDef,)) is None:
            bases = [qualname(b.value, index.imports) or "" for b in cls.bases]
            if any(b in _FUNCTION_BASES for b in bases) and fn.name.value in ("forward", "backward"):
                return False
            if fn.name.value == "step" and any(b.startswith("torch.optim.") for b in bases):
                return False
        sites = self.sites(fn)
        if not sites:
            # no caller in the file: an inference entry point by its name (`generate`, `predict`,
            # `evaluate`, `sample`, ...) is called from a no_grad context elsewhere; anything else
            # may well train
            return not _INFERENCE_NAME.match(fn.name.value)
        return any(not st.no_grad and self.grad_enabled(flow.function) for flow, st, _call, _b in sites)


def _position(fn: cst.FunctionDef, name: str) -> tuple[int | None, bool]:
    params = list(fn.params.posonly_params) + list(fn.params.params)
    has_self = bool(params) and params[0].name.value in ("self", "cls")
    for i, p in enumerate(params):
        if p.name.value == name:
            return i, has_self
    return None, has_self


def _argument(call: cst.Call, name: str, position: int | None):
    for a in call.args:
        if a.keyword is not None and a.keyword.value == name:
            return a.value
    if position is None:
        return None
    positional = [a for a in call.args if a.keyword is None and not a.star]
    if any(a.star for a in call.args if a.keyword is None):
        return None
    return positional[position].value if 0 <= position < len(positional) else None


def _has_star(call: cst.Call) -> bool:
    return any(a.star for a in call.args)
