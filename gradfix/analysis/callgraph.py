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
            b = flow.name_binding(func)
            fn = index.functions.get(func.value)
            if fn is not None and (b is None or b.value is fn):
                return fn, False
            if b is not None and b.kind.value == "module" and b.ctor in index.classes:
                return self.index.method(b.ctor, "forward"), True
            return None, False
        if isinstance(func, cst.Attribute):
            recv, meth = func.value, func.attr.value
            if isinstance(recv, cst.Name) and recv.value == "self" and flow.class_name:
                m = self.index.method(flow.class_name, meth)
                if m is not None:
                    return m, True
                ctor = index.submodules.get(flow.class_name, {}).get(meth)
                if ctor in index.classes:
                    return self.index.method(ctor, "forward"), True
                return None, False
            ctor = flow.classify(recv)[1]
            if ctor in index.classes:
                return self.index.method(ctor, meth), True
            if isinstance(recv, cst.Call) and isinstance(recv.func, cst.Name) and recv.func.value in index.classes:
                # `Evaluator().evaluate(model, x)`: a method of an instance made inline (the name not rebound)
                rebound = flow.name_binding(recv.func)
                if rebound is None or rebound.value is index.classes[recv.func.value]:
                    m = self.index.method(recv.func.value, meth)
                    if m is not None:
                        return m, True
        return None, False

    def loop_sites(self, fn: cst.FunctionDef) -> list:
        """(caller flow, step, call) for each call of `fn` in the file made inside a loop of its caller. Besides
        the resolved sites this reads `obj.m(...)` on a name bound to an instance of a class of the file
        (`actor = Trainer()` then `actor.train_step(...)` in a loop): the flow keeps no class for a plain
        object, so `sites` leaves that call unresolved."""
        out = [(flow, st, call) for flow, st, call, _b in self.sites(fn) if st.loops]
        cls = self.index.enclosing_class(fn)
        if cls is None or self.index.method(cls, fn.name.value) is not fn:
            return out
        seen = {id(call) for _f, _s, call in out}
        for scope in self.index.scopes():
            flow = self.index.flow(scope)
            for st, call in flow.calls:
                if id(call) in seen or not st.loops or instance_class(flow, call) is not cls or \
                        call.func.attr.value != fn.name.value:
                    continue
                out.append((flow, st, call))
        return out

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
        elsewhere = self._callers_elsewhere(fn)
        if not sites:
            # called only from other files, all with grad disabled: no value of theirs requires grad
            return False if elsewhere is False else None
        answers = [None] if elsewhere else []  # other files' arguments are not analysed: unknown
        for flow, st, call, bound in sites:
            if st.no_grad or not self.grad_enabled(flow.function):
                answers.append(False)
                continue
            arg = argument_for(fn, call, name, bound)
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
        elsewhere = self._callers_elsewhere(fn)
        if not sites:
            if elsewhere is not None:
                return elsewhere
            # no caller in the project: an inference entry point by its name (`generate`,
            # `predict`, `evaluate`, `sample`, ...) is called from a no_grad context elsewhere;
            # anything else may well train
            return not _INFERENCE_NAME.match(fn.name.value)
        return bool(elsewhere) or any(not st.no_grad and self.grad_enabled(flow.function)
                                      for flow, st, _call, _b in sites)

    def called_elsewhere(self, fn: cst.FunctionDef) -> bool:
        """Whether another file of the project calls `fn` (what those calls do with its result is unknown)."""
        return self._callers_elsewhere(fn) is not None

    def _callers_elsewhere(self, fn: cst.FunctionDef) -> bool | None:
        """For a top-level function or a method of a top-level class, whether calls from the
        project's other files run it with grad enabled (None: no other file calls it, or no
        project index)."""
        index = self.index
        if index.project is None:
            return None
        name = fn.name.value
        if index.functions.get(name) is not fn:
            cls = index.enclosing_class(fn)
            if cls is None or index.classes.get(cls.name.value) is not cls or index.method(cls, name) is not fn:
                return None
            name = f"{cls.name.value}.{name}"
        return index.project.callers_grad(name, lambda caller: bool(_INFERENCE_NAME.match(caller)))


def argument_for(fn: cst.FunctionDef, call: cst.Call, name: str, bound: bool = False):
    """The expression `call` passes for `fn`'s parameter `name` (by keyword or position; `bound`:
    called as a method, so `self` is not among the arguments), or None: not passed, or a `*args`
    that may hold it."""
    for a in call.args:
        if a.keyword is not None and a.keyword.value == name:
            return a.value
    params = [p.name.value for p in (*fn.params.posonly_params, *fn.params.params)]
    if bound and params and params[0] in ("self", "cls"):
        params = params[1:]
    if name not in params:
        return None
    positional = [a for a in call.args if a.keyword is None]
    if any(a.star for a in positional):
        return None
    i = params.index(name)
    return positional[i].value if i < len(positional) else None


def instance_class(flow, call: cst.Call) -> cst.ClassDef | None:
    """The class of the file whose instance `call` calls a method on: `obj.m(...)` where the binding `obj`
    reads is a constructor call of that class (`obj = Cls(...)`)."""
    func = call.func
    if not (isinstance(func, cst.Attribute) and isinstance(func.value, cst.Name)):
        return None
    b = flow.name_binding(func.value)
    if b is None or not isinstance(b.value, cst.Call) or not isinstance(b.value.func, cst.Name):
        return None
    cls = flow.index.classes.get(b.value.func.value)
    rebound = flow.name_binding(b.value.func)
    if cls is None or (rebound is not None and rebound.value is not cls):
        return None
    return cls


def unpacked_tensor(flow, name: cst.Name) -> bool:
    """`name` reads a binding made by tuple unpacking, `t, w = sampler.sample(n)`, from a call of a function
    or a method of the file (`obj.m(...)` on an instance of a class of the file) that returns a tuple
    display on every path whose element at that position is a tensor in the callee's own flow
    (`return torch.from_numpy(idx).long(), torch.ones(n)`)."""
    from gradfix.analysis.flow import TENSORISH

    b = flow.name_binding(name)
    if b is None or b.is_param or not isinstance(b.value, cst.Call) or not (0 <= b.step < len(flow.steps)):
        return False
    position = _unpack_position(flow.steps[b.step].node, b)
    if position is None:
        return False
    index = flow.index
    call = b.value
    fn = None
    if isinstance(call.func, cst.Name):
        fn = index.functions.get(call.func.value)
        rebound = flow.name_binding(call.func)
        if rebound is not None and rebound.value is not fn:
            fn = None
    else:
        cls = instance_class(flow, call)
        fn = index.method(cls, call.func.attr.value) if cls is not None else None
    if fn is None or fn.decorators or not fn.body.body:
        return False
    last = fn.body.body[-1]
    if not (isinstance(last, cst.SimpleStatementLine) and isinstance(last.body[-1], cst.Return)):
        return False  # a path may fall off the end and return None
    callee = index.flow(fn)
    returns = []
    for node in _own_nodes(fn.body):
        if isinstance(node, (cst.Yield, cst.Await)):
            return False
        if isinstance(node, cst.Return):
            returns.append(node)
    for ret in returns:
        value = ret.value
        if not isinstance(value, cst.Tuple) or position >= len(value.elements) or \
                any(isinstance(el, cst.StarredElement) for el in value.elements):
            return False
        element = value.elements[position].value
        kind = callee.name_binding(element).kind if isinstance(element, cst.Name) and \
            callee.name_binding(element) is not None else callee.classify(element)[0]
        if kind not in TENSORISH:
            return False
    return bool(returns)


def _unpack_position(node, b) -> int | None:
    """The position of `b`'s name among the targets of `a, name = value` (None with a starred target)."""
    if not isinstance(node, cst.Assign) or node.value is not b.value or len(node.targets) != 1:
        return None
    target = node.targets[0].target
    if not isinstance(target, (cst.Tuple, cst.List)) or any(isinstance(e, cst.StarredElement) for e in target.elements):
        return None
    for k, el in enumerate(target.elements):
        if isinstance(el.value, cst.Name) and el.value.value == b.name:
            return k
    return None


def _own_nodes(node):
    """The nodes of a function body's own scope (not those of nested functions, lambdas or classes)."""
    stack = [node]
    while stack:
        n = stack.pop()
        yield n
        if not isinstance(n, (cst.FunctionDef, cst.Lambda, cst.ClassDef)):
            stack.extend(n.children)


def _has_star(call: cst.Call) -> bool:
    return any(a.star for a in call.args)


# -- what call sites pass ------------------------------------------------------
# A parameter's type is often shown only by its callers: `def train(model, ...)` called with
# `model = Net()`, `Trainer(model)` whose `__init__` keeps it as `self._model`. These give the
# arguments; the rules decide what the arguments show.


def passed_arguments(index, fn: cst.FunctionDef, name: str) -> list | None:
    """(caller flow, argument expression) for each resolved call of `fn` in the file, or None
    when there is none, or a call leaves `name` to its default or may pass it through `*args`."""
    sites = index.callgraph.sites(fn)
    if not sites:
        return None
    out = []
    for flow, _st, call, bound in sites:
        arg = argument_for(fn, call, name, bound)
        if arg is None:
            return None
        out.append((flow, arg))
    return out


def constructor_arguments(index, cls_name: str, attr: str) -> list | None:
    """The values the file's `Cls(...)` calls pass for the `__init__` parameter that `__init__`
    keeps as `self.<attr>` (`self._model = model`; the parameter not rebound before), as
    (caller flow, argument) pairs; None when `__init__` does not store a parameter there,
    assigns `self.<attr>` anything else in the class, or a constructor call cannot tell."""
    cls = index.classes.get(cls_name)
    init = index.method(cls_name, "__init__")
    if cls is None or init is None:
        return None
    params = {p.name.value for p in (*init.params.posonly_params, *init.params.params, *init.params.kwonly_params)}
    stored = None
    flow = index.flow(init)
    for b in flow.bindings:
        if b.name == f"self.{attr}":
            value = b.value
            if stored is not None or not (isinstance(value, cst.Name) and value.value in params):
                return None
            source = flow.name_binding(value)
            if source is None or not source.is_param:
                return None  # rebound before it is stored
            stored = value.value
    if stored is None:
        return None
    for stmt in cls.body.body:
        if isinstance(stmt, cst.FunctionDef) and stmt is not init and \
                any(b.name == f"self.{attr}" for b in index.flow(stmt).bindings):
            return None  # reassigned by another method
    return init_arguments(index, cls_name, stored)


def init_arguments(index, cls_name: str, name: str) -> list | None:
    """(caller flow, argument) that each `Cls(...)` call of the file passes for parameter `name`
    of `Cls.__init__`; None when there is no such call, or one leaves it to its default or may
    pass it through `*args`."""
    cls = index.classes.get(cls_name)
    init = index.method(cls_name, "__init__")
    if cls is None or init is None:
        return None
    out = []
    for scope in index.scopes():
        caller = index.flow(scope)
        for _st, call in caller.calls:
            if not (isinstance(call.func, cst.Name) and call.func.value == cls_name):
                continue
            bound = caller.name_binding(call.func)
            if bound is None or bound.value is cls:
                arg = argument_for(init, call, name, bound=True)
                if arg is None:
                    return None
                out.append((caller, arg))
    return out or None


def elements_passed_for(index, flow, name: cst.Name) -> list | None:
    """`def freeze(modules): for m in modules: m...` with every call of the file passing a list or tuple
    display (`freeze([net.encoder, net.neck])`): (caller flow, element) for each element of each call, read
    at `name`, a use of the loop variable. None when `name` is not the target of a `for` over a parameter of
    its function (not rebound there), the loop variable is bound anywhere else in the function, or a call
    passes anything but a display of plain elements (a name, a starred element, a default)."""
    fn = flow.scope
    if not isinstance(fn, cst.FunctionDef):
        return None
    loop = index.parents.get(name)
    while loop is not None and loop is not fn and not (
            isinstance(loop, cst.For) and isinstance(loop.target, cst.Name) and loop.target.value == name.value):
        loop = index.parents.get(loop)
    if not isinstance(loop, cst.For) or not isinstance(loop.iter, cst.Name):
        return None
    source = flow.name_binding(loop.iter)
    if source is None or not source.is_param or sum(b.name == name.value for b in flow.bindings) != 1:
        return None
    passed = passed_arguments(index, fn, loop.iter.value)
    if not passed:
        return None
    out = []
    for caller, arg in passed:
        if not isinstance(arg, (cst.List, cst.Tuple)) or not arg.elements or \
                any(isinstance(el, cst.StarredElement) for el in arg.elements):
            return None
        out += [(caller, el.value) for el in arg.elements]
    return out
