"""Which module class a callee constructs (`crit`, `self.crit`, `nn.Softmax(1)(x)`, a parameter every caller
passes `nn.CrossEntropyLoss()` for): shared by the gradient paths (GF307, GF104) and the probability facts (GF308)."""

from __future__ import annotations

import libcst as cst

from gradfix.analysis.callgraph import passed_arguments
from gradfix.analysis.flow import Flow, Kind


def module_ctor_of(index, flow: Flow | None, func: cst.BaseExpression, depth: int = 0) -> str | None:
    """Constructor qualname of the module `func` calls: `crit`, `self.crit`, `nn.Softmax(1)`."""
    if isinstance(func, cst.Call):
        return index.ctor_of(func)
    if isinstance(func, cst.Attribute) and isinstance(func.value, cst.Name) and func.value.value == "self":
        cls = index.enclosing_class(func)
        if cls is not None:
            return index.submodules.get(cls.name.value, {}).get(func.attr.value)
        return None
    if isinstance(func, cst.Name) and flow is not None:
        b = flow.load_binding.get(id(func))
        if b is None:
            for bd in flow.bindings:
                if bd.name == func.value and bd.kind is Kind.MODULE:
                    b = bd
        if b is None and flow.scope is not index.module:
            for bd in index.flow(index.module).bindings:
                if bd.name == func.value and bd.kind is Kind.MODULE:
                    b = bd
        if b is not None and b.kind is Kind.MODULE:
            return b.ctor
        if b is not None and b.is_param and b.kind is Kind.UNKNOWN and b.ctor is None and flow.function is not None \
                and depth < 3:
            return passed_ctor(index, flow, func.value, depth)
    return None


def passed_ctor(index, flow: Flow, name: str, depth: int) -> str | None:
    """The module constructor every call of the function in the file passes for parameter `name`
    (`train(model, nn.CrossEntropyLoss(), ...)`), else None."""
    args = passed_arguments(index, flow.function, name)
    if not args:
        return None
    ctors = set()
    for caller, arg in args:
        ctors.add(module_ctor_of(index, caller, arg, depth + 1) if isinstance(arg, cst.Name) else
                  index.ctor_of(arg) if isinstance(arg, cst.Call) else None)
    return ctors.pop() if len(ctors) == 1 else None
