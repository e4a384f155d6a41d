"""Which module class a callee constructs (`crit`, `self.crit`, `nn.Softmax(1)(x)`, a parameter every caller
passes `nn.CrossEntropyLoss()` for): shared by the gradient paths (GF307, GF104) and the probability facts (GF308)."""

from __future__ import annotations

import libcst as cst

from gradfix.analysis.callgraph import argument_for, passed_arguments
from gradfix.analysis.flow import Flow, Kind


def module_ctor_of(index, flow: Flow | None, func: cst.BaseExpression, depth: int = 0) -> str | None:
    """Constructor qualname of the module `func` calls: `crit`, `self.crit`, `nn.Softmax(1)`."""
    if isinstance(func, cst.Call):
        return index.ctor_of(func)
    if isinstance(func, cst.Attribute) and isinstance(func.value, cst.Name) and func.value.value == "self":
        cls = index.enclosing_class(func)
        if cls is not None:
            found = index.submodules.get(cls.name.value, {}).get(func.attr.value)
            return found if found is not None else default_attribute_ctor(index, cls, func.attr.value)
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


def default_attribute_ctor(index, cls: cst.ClassDef, attr: str) -> str | None:
    """`self.<attr> = loss_func` in `__init__(self, loss_func=nn.CrossEntropyLoss())`: the constructor of the
    parameter's default, when that is the attribute's only assignment in the class, the parameter is not rebound
    in `__init__`, and every construction of the class in the file (at least one, `Evaluator()`) leaves the
    parameter to its default (no positional argument at its place, no keyword of its name, no `*` / `**`)."""
    from gradfix.analysis.tree import walk

    key = f"module_ctors.default:{cls.name.value}.{attr}"
    return index.memo(key, lambda: _default_attribute_ctor(index, cls, attr, walk))


def _default_attribute_ctor(index, cls: cst.ClassDef, attr: str, walk) -> str | None:
    init = index.method(cls, "__init__")
    if init is None:
        return None
    assigned = []
    for node in walk(cls):
        if isinstance(node, (cst.Assign, cst.AugAssign, cst.AnnAssign)):
            targets = [t.target for t in node.targets] if isinstance(node, cst.Assign) else [node.target]
            for t in targets:
                if isinstance(t, cst.Attribute) and isinstance(t.value, cst.Name) and t.value.value == "self" and \
                        t.attr.value == attr:
                    assigned.append(node)
    if len(assigned) != 1 or not isinstance(assigned[0], cst.Assign) or not isinstance(assigned[0].value, cst.Name) \
            or index.enclosing(assigned[0], (cst.FunctionDef,)) is not init:
        return None
    pname = assigned[0].value.value
    param = next((p for p in init.params.params if p.name.value == pname), None)
    if param is None or not isinstance(param.default, cst.Call):
        return None
    ctor = index.ctor_of(param.default)
    if ctor is None or not index.is_module_ctor(ctor):
        return None
    source = index.flow(init).name_binding(assigned[0].value)
    if source is None or not source.is_param:
        return None  # rebound before it is stored
    builds = 0
    for scope in index.scopes():
        caller = index.flow(scope)
        for _st, call in caller.calls:
            if not (isinstance(call.func, cst.Name) and call.func.value == cls.name.value):
                continue
            if any(a.star for a in call.args) or argument_for(init, call, pname, bound=True) is not None:
                return None  # passes a value (or may, through `*args` / `**kwargs`)
            builds += 1
    return ctor if builds else None


def passed_class(index, flow: Flow, name: cst.Name, depth: int = 0) -> str | None:
    """The class every call of `name`'s function passes for that parameter, in this file and, for a top-level
    function, in the project's other files (`train(..., metric=BinaryPrecision().to(dev))` in train.py for
    `def train(..., metric)` in engine.py; also through a function of this file that hands its own parameter
    on: `train_step(..., metric)` inside `train`). None when the name is not a parameter left unbound in its
    function, no call is known, or one call passes anything else (or may, by a default or `*args`)."""
    b = flow.name_binding(name)
    fn = flow.function
    if b is None or not b.is_param or fn is None or depth > 3 or \
            sum(x.name == name.value for x in flow.bindings) != 1:
        return None
    found: set[str | None] = set()
    if index.callgraph.sites(fn):
        args = passed_arguments(index, fn, name.value)
        if args is None:
            return None
        for caller, arg in args:
            found.add(_argument_class(index, caller, arg, depth))
    if index.parents.get(fn) is index.module and index.project is not None:
        p = fn.params
        positional = [q.name.value for q in (*p.posonly_params, *p.params)]
        position = positional.index(name.value) if name.value in positional else None
        elsewhere = index.project.passed_classes(fn.name.value, position, name.value)
        if elsewhere is None:
            return None
        found.update(elsewhere)
    return found.pop() if len(found) == 1 and None not in found else None


def _argument_class(index, caller: Flow, arg: cst.BaseExpression, depth: int) -> str | None:
    """The class a call's argument is surely an instance of: a constructor call (through `.to(...)`), a name
    the caller binds once to one, or a parameter of the caller that its own callers fill so."""
    if isinstance(arg, cst.Call):
        return index.ctor_of(arg)
    if not isinstance(arg, cst.Name):
        return None
    b = caller.name_binding(arg)
    if b is None:
        return None
    if b.is_param:
        return passed_class(index, caller, arg, depth + 1)
    if sum(x.name == arg.value for x in caller.bindings) == 1 and isinstance(b.value, cst.Call):
        return index.ctor_of(b.value)
    return None
