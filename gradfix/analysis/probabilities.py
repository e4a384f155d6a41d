"""Which tensors are probabilities or log-probabilities (GF308): a softmax / log_softmax output
written inline, through a name, from `nn.Softmax` modules, or the output of a model whose forward
ends in one; and which argument of a cross-entropy call is its logits input."""

from __future__ import annotations

import libcst as cst

from gradfix.analysis.callgraph import passed_arguments
from gradfix.analysis.flags import call_takes_branch, guarding_flags
from gradfix.analysis.flow import Flow, Kind
from gradfix.analysis.module_ctors import module_ctor_of
from gradfix.analysis.names import qualname
from gradfix.analysis.tree import walk


SOFTMAX_FUNCS = {
    "torch.softmax": "softmax", "torch.nn.functional.softmax": "softmax", "torch.special.softmax": "softmax",
    "torch.log_softmax": "log_softmax", "torch.nn.functional.log_softmax": "log_softmax",
    "torch.special.log_softmax": "log_softmax",
}
SOFTMAX_MODULES = {"torch.nn.Softmax": "softmax", "torch.nn.LogSoftmax": "log_softmax"}
CROSS_ENTROPY_FUNCS = frozenset({"torch.nn.functional.cross_entropy"})
CROSS_ENTROPY_MODULES = frozenset({"torch.nn.CrossEntropyLoss", "torch.nn.modules.loss.CrossEntropyLoss"})


def cross_entropy_input(call: cst.Call, index, flow: Flow | None) -> cst.BaseExpression | None:
    """The logits argument of `F.cross_entropy(x, y)` / `nn.CrossEntropyLoss()(x, y)` / `crit(x, y)`."""
    q = qualname(call.func, index.imports)
    if q not in CROSS_ENTROPY_FUNCS:
        ctor = module_ctor_of(index, flow, call.func)
        if ctor not in CROSS_ENTROPY_MODULES:
            return None
    for a in call.args:
        if a.keyword is not None and a.keyword.value == "input":
            return a.value
    if call.args and call.args[0].keyword is None and not call.args[0].star:
        return call.args[0].value
    return None


def maybe_criterion_call(call: cst.Call, index, funcs: frozenset[str]) -> bool:
    """A call that may be one of the loss functions `funcs` (qualified names) or a criterion module: a name, an
    inline module, `self.crit`; the module's constructor decides later (`module_ctor_of`)."""
    func = call.func
    if isinstance(func, (cst.Name, cst.Call)):
        return True
    if isinstance(func, cst.Attribute) and isinstance(func.value, cst.Name) and func.value.value == "self":
        return True
    return qualname(func, index.imports) in funcs


class Probabilities:
    """Whether an expression is a softmax / log_softmax output (directly, through a name, or as the
    output of a model whose forward ends in one)."""

    def __init__(self, index):
        self.index = index
        self._class_cache: dict[str, tuple[str, str] | None] = {}
        self._guard_cache: dict[str, tuple] = {}   # class -> the flag tests its forward's softmax runs under

    def of(self, expr: cst.BaseExpression, flow: Flow | None, depth: int = 0) -> tuple[str, str] | None:
        """(kind, where) with kind "softmax" or "log_softmax", or None."""
        if depth > 4:
            return None
        index = self.index
        if isinstance(expr, cst.Call):
            q = qualname(expr.func, index.imports)
            if q in SOFTMAX_FUNCS:
                return SOFTMAX_FUNCS[q], index.code(expr)
            if isinstance(expr.func, cst.Attribute) and expr.func.attr.value in ("softmax", "log_softmax") and \
                    (q is None or not q.startswith("torch.")) and not _module_receiver(expr.func.value, flow):
                # `x.softmax(dim=1)`, a tensor method; `self.softmax(x)` calls a submodule, whatever its name
                # says (an `nn.LogSoftmax` named `softmax`): its constructor decides, below
                return expr.func.attr.value, index.code(expr)
            if isinstance(expr.func, cst.Attribute) and expr.func.attr.value == "forward" and \
                    isinstance(expr.func.value, cst.Name) and expr.func.value.value != "self":
                return self._callee_output(expr, expr.func.value, flow, depth)  # `model.forward(x)`: its forward
            return self._callee_output(expr, expr.func, flow, depth)
        if isinstance(expr, cst.Name) and flow is not None:
            b = flow.load_binding.get(id(expr))
            if b is not None and (b.mutations or _written_out(flow, b.name)):
                return None     # `p.log_()` or `torch.log(p, out=p)`: no longer what it was bound to
            if b is not None and isinstance(b.value, cst.BaseExpression) and b.step >= 0:
                position = _tuple_position(flow, b)
                if position is not None:   # `validity, label = disc(img)`
                    return self._element_of(b.value, position, flow) if position >= 0 else None
                return self.of(b.value, flow, depth + 1)
        return None

    def _callee_output(self, expr: cst.Call, callee, flow: Flow | None, depth: int) -> tuple[str, str] | None:
        """What the call `expr` returns when its callee is the module `callee` names in `flow` (the call's
        own scope, or a caller's for a module passed in as an argument)."""
        index = self.index
        func = self._compiled(callee, flow)
        ctor = module_ctor_of(index, flow, func)
        if ctor in SOFTMAX_MODULES:
            return SOFTMAX_MODULES[ctor], index.code(expr)
        if ctor == "torch.nn.Sequential" and isinstance(func, cst.Name) and flow is not None:
            return self._sequential_binding(func, flow)
        if ctor == "torch.nn.Sequential" and isinstance(func, cst.Attribute):
            cls = index.enclosing_class(expr)   # `label = self.head(h)`: a Sequential built in __init__
            return self._self_sequential(cls, expr) if cls is not None else None
        if ctor is not None and ctor in index.module_classes and \
                not index.defined_after(ctor, expr, self._built_at(func, flow)):
            found = self.class_output(ctor)
            if found is not None and self._takes_guarded_branch(ctor, expr) is True:
                return found[0], f"{ctor}.forward ({found[1]})"
        if ctor is not None and "." in ctor and index.project is not None:
            head = index.project.forward_head(ctor)   # a module class of another file (analysis/returns.py)
            if head is not None:
                return head, f"{ctor}.forward, which ends in {head}"
        if ctor is None and isinstance(func, cst.Name) and flow is not None:
            return self._factory_output(func, flow, depth) or self._parameter_output(expr, func, flow, depth)
        if ctor in index.functions and isinstance(func, cst.Name) and flow is not None:
            # a parameter its callers fill with a factory's call (`fit(build_model(...))`): each call decides
            return self._parameter_output(expr, func, flow, depth)
        return None

    def _parameter_output(self, expr: cst.Call, func: cst.Name, flow: Flow, depth: int) -> tuple[str, str] | None:
        """`def training_routine(net, ...)`: `net(x)` where `net` is a parameter (or that parameter moved,
        `net = net.cuda()`) and every call of the function, all of them in this file, passes a model
        whose output is a softmax. A call that passes anything else, or none in view, means unknown."""
        fn = flow.function
        name = func.value
        if fn is None or depth > 2 or not _only_the_parameter(flow, name) or _called_elsewhere(self.index, fn):
            return None
        args = passed_arguments(self.index, fn, name)
        if not args:
            return None
        found = []
        for caller, arg in args:
            if isinstance(arg, cst.Name):
                hit = self._callee_output(expr, arg, caller, depth + 1)
            else:  # `fit(build_model(...), ...)`: the factory's call passed inline
                hit = self._factory_call_output(arg, depth + 1) if isinstance(arg, cst.Call) else None
            if hit is None:
                return None
            found.append(hit)
        if len({k for k, _ in found}) != 1:
            return None
        return found[0][0], f"{name} as every call passes it: {found[0][1]}"

    def _compiled(self, func, flow: Flow | None):
        """`model` bound by `model = torch.compile(model)`: the name as compile() read it (the module)."""
        for _ in range(4):
            if not isinstance(func, cst.Name) or flow is None:
                return func
            b = flow.load_binding.get(id(func))
            value = b.value if b is not None else None
            if not (isinstance(value, cst.Call) and qualname(value.func, self.index.imports) == "torch.compile"
                    and value.args and value.args[0].keyword is None and not value.args[0].star
                    and isinstance(value.args[0].value, cst.Name)):
                return func
            func = value.args[0].value
        return func

    def _factory_output(self, func: cst.Name, flow: Flow, depth: int) -> tuple[str, str] | None:
        """`model = build_model()` then `model(x)`: every `return` of the file's function `build_model`
        is an nn.Sequential (built there, or bound to a name first) ending in a softmax."""
        b = flow.load_binding.get(id(func))
        value = b.value if b is not None else None
        if isinstance(value, cst.Name) and b.step >= 0 and isinstance(flow.steps[b.step].node, cst.For):
            # `for model in models:` over `models = [build_model() for _ in range(k)]`
            lb = flow.load_binding.get(id(value))
            listed = lb.value if lb is not None else None
            value = listed.elt if isinstance(listed, cst.ListComp) else None
        return self._factory_call_output(value, depth)

    def _factory_call_output(self, value, depth: int) -> tuple[str, str] | None:
        """What the call `value` of a factory function returns (`build_model()`, bound to a name first or
        passed inline as an argument): every `return` an nn.Sequential ending in a softmax, or such a class."""
        if not (isinstance(value, cst.Call) and isinstance(value.func, (cst.Name, cst.Attribute))):
            return None
        fn = self.index.functions.get(value.func.value) if isinstance(value.func, cst.Name) else None
        if fn is None:
            # a function of another file of the project (analysis/returns.py)
            q = qualname(value.func, self.index.imports)
            made = self.index.module_factory(q) if q and "." in q else None
            heads = {r.head for r in made} if made else set()
            if len(heads) == 1 and None not in heads:
                kind = heads.pop()
                return kind, f"{q}() returns a module ending in {kind}"
            return None
        if depth > 2:
            return None
        fn_flow = self.index.flow(fn)
        found = []
        for node in walk(fn.body):
            if isinstance(node, (cst.FunctionDef, cst.Lambda)):
                return None
            if isinstance(node, cst.Return):
                ret = node.value
                hit = None
                if isinstance(ret, cst.Name):
                    rb = fn_flow.load_binding.get(id(ret))
                    hit = _added_last(self.index, fn, ret.value, rb.value if rb is not None else None)
                    ret = rb.value if rb is not None else None
                if hit is None:
                    hit = self._sequential_last(ret) if isinstance(ret, cst.Call) else None
                if hit is not None:
                    hit = (hit[0], f"an {hit[1]}")
                elif isinstance(ret, cst.Call) and isinstance(ret.func, cst.Name) and \
                        ret.func.value in self.index.module_classes:
                    # a model class of the file whose forward ends in a softmax, with no flag guarding it
                    out = self.class_output(ret.func.value)
                    if out is not None and not self._guard_cache.get(ret.func.value):
                        hit = (out[0], f"a {ret.func.value}, whose forward ends in {out[1]}")
                if hit is None:
                    return None
                found.append(hit)
        if not found or len({k for k, _ in found}) != 1:
            return None
        return found[0][0], f"{value.func.value}() returns {found[0][1]}"

    def _element_of(self, value, position: int, flow: Flow) -> tuple[str, str] | None:
        """Element `position` of what `value` returns, when `value` calls a model class of the file
        whose every `return` is a tuple (`validity, label = disc(img)`)."""
        if not isinstance(value, cst.Call):
            return None
        ctor = module_ctor_of(self.index, flow, self._compiled(value.func, flow))
        if ctor is None or ctor not in self.index.module_classes or \
                self.index.defined_after(ctor, value, self._built_at(value.func, flow)):
            return None
        found = self.class_output(ctor, position)
        if found is not None and self._takes_guarded_branch(ctor, value, f"{ctor}[{position}]") is not True:
            return None
        return (found[0], f"{ctor}.forward, element {position} ({found[1]})") if found is not None else None

    @staticmethod
    def _built_at(func, flow: Flow | None) -> cst.CSTNode | None:
        """The value a called model name was bound to (`net = Net()`): where its class was looked up."""
        if not isinstance(func, cst.Name) or flow is None:
            return None
        b = flow.load_binding.get(id(func))
        return b.value if b is not None and isinstance(b.value, cst.CSTNode) else None

    def _sequential_binding(self, func: cst.Name, flow: Flow) -> tuple[str, str] | None:
        b = flow.load_binding.get(id(func))
        if b is None:
            for bd in list(flow.bindings) + list(self.index.flow(self.index.module).bindings):
                if bd.name == func.value and bd.kind is Kind.MODULE:
                    b = bd
        if b is not None and isinstance(b.value, cst.Call):
            return self._sequential_last(b.value)
        return None

    def _sequential_last(self, call: cst.Call) -> tuple[str, str] | None:
        index = self.index
        while isinstance(call, cst.Call) and isinstance(call.func, cst.Attribute) and \
                call.func.attr.value in ("to", "cuda", "double", "float", "train", "eval"):
            call = call.func.value  # type: ignore[assignment]
        if not isinstance(call, cst.Call) or qualname(call.func, index.imports) != "torch.nn.Sequential":
            return None
        pos = [a for a in call.args if a.keyword is None and not a.star]
        if len(call.args) == 1 and call.args[0].star == "*" and isinstance(call.args[0].value, cst.Name):
            last = _last_listed(index, call, call.args[0].value.value)   # `nn.Sequential(*layers)`
            if last is None:
                return None
        elif not pos or len(pos) != len(call.args):
            return None
        else:
            last = pos[-1].value
        ctor = index.ctor_of(last)
        if ctor in SOFTMAX_MODULES:
            return SOFTMAX_MODULES[ctor], f"nn.Sequential ending in {index.code(last)}"
        return None

    def class_output(self, cname: str, position: int | None = None) -> tuple[str, str] | None:
        """Whether every `return` of `cname.forward` is a softmax / log_softmax output (with
        `position`: returns a tuple whose element `position` is one)."""
        key = cname if position is None else f"{cname}[{position}]"
        if key in self._class_cache:
            return self._class_cache[key]
        self._class_cache[key] = None
        index = self.index
        fwd = index.method(cname, "forward")
        result = None
        if fwd is not None:
            flow = index.flow(fwd)
            kinds = []
            guards = set()
            for node in walk(fwd.body):
                if isinstance(node, cst.Return):
                    if index.enclosing(node, (cst.FunctionDef,)) is not fwd:
                        continue   # a nested function's return
                    value = node.value
                    if position is not None:
                        ok = isinstance(value, cst.Tuple) and len(value.elements) > position and \
                            not any(isinstance(e, cst.StarredElement) for e in value.elements)
                        value = value.elements[position].value if ok else None
                    if value is None:
                        kinds = []
                        break
                    found = self.of(value, flow)
                    if found is None and isinstance(value, cst.Call):
                        found = self._self_sequential(index.classes[cname], value)
                    kinds.append(found)
                    guards.add(self._guards(node, flow, fwd))
            if kinds and all(k is not None for k in kinds) and len({k[0] for k in kinds}) == 1:  # type: ignore[index]
                result = kinds[0]
                if len(guards) == 1:
                    self._guard_cache[key] = guards.pop()
                else:
                    result = None  # the returns run under different flags: what a call gets is not shown
        self._class_cache[key] = result
        return result

    def _guards(self, ret: cst.Return, flow: Flow, fwd: cst.FunctionDef) -> tuple:
        """The flag tests (`if apply_softmax:`) of forward's parameters that the returned softmax runs under:
        those around the `return` and around each assignment the returned name is read through."""
        index = self.index
        guards = set(guarding_flags(index, ret, fwd))
        expr = ret.value
        for _ in range(5):
            if not isinstance(expr, cst.Name):
                break
            b = flow.load_binding.get(id(expr))
            if b is None or b.step < 0 or not isinstance(b.value, cst.BaseExpression):
                break
            guards |= set(guarding_flags(index, b.value, fwd))
            expr = b.value
        return tuple(sorted(guards))

    def _takes_guarded_branch(self, cname: str, call: cst.Call, key: str | None = None) -> bool | None:
        """Whether `call` (an instance call of module class `cname`) runs forward's softmax: True when it is
        unguarded or every flag it runs under is shown to hold at the call; False or None (unknown) otherwise."""
        guards = self._guard_cache.get(key or cname, ())
        if not guards:
            return True
        fwd = self.index.method(cname, "forward")
        return call_takes_branch(call, fwd, guards, bound=True) if fwd is not None else None

    def _self_sequential(self, cls: cst.ClassDef, call: cst.Call) -> tuple[str, str] | None:
        func = call.func
        if not (isinstance(func, cst.Attribute) and isinstance(func.value, cst.Name) and func.value.value == "self"):
            return None
        for stmt in cls.body.body:
            if isinstance(stmt, cst.FunctionDef) and stmt.name.value == "__init__":
                for node in walk(stmt.body):
                    if isinstance(node, cst.Assign) and len(node.targets) == 1 and \
                            isinstance(node.targets[0].target, cst.Attribute) and \
                            node.targets[0].target.attr.value == func.attr.value and isinstance(node.value, cst.Call):
                        return self._sequential_last(node.value)
        return None


_MOVES = frozenset({"to", "cuda", "cpu", "double", "float", "half", "train", "eval"})


def _added_last(index, fn: cst.FunctionDef, name: str, value) -> tuple[str, str] | None:
    """`model = nn.Sequential()` then `model.add_module("...", layer)` statements, the last adding an
    `nn.Softmax` / `nn.LogSoftmax`, before `return model`: (kind, description). Every use of `model` in the
    function must be that binding, those `add_module` calls at the top level of its body (not in a branch or
    a loop) and the `return`; anything else (another method, an item assignment, a second binding) means
    unknown."""
    if not (isinstance(value, cst.Call) and not value.args and
            qualname(value.func, index.imports) == "torch.nn.Sequential"):
        return None
    added = []
    for stmt in fn.body.body:
        if isinstance(stmt, cst.SimpleStatementLine) and len(stmt.body) == 1 and isinstance(stmt.body[0], cst.Expr):
            call = stmt.body[0].value
            if isinstance(call, cst.Call) and isinstance(call.func, cst.Attribute) and \
                    call.func.attr.value == "add_module" and isinstance(call.func.value, cst.Name) and \
                    call.func.value.value == name and len(call.args) == 2 and \
                    not any(a.star or (a.keyword is not None and a.keyword.value != "module") for a in call.args):
                added.append(call)
    uses = [n for n in walk(fn.body) if isinstance(n, cst.Name) and n.value == name]
    allowed = {id(c.func.value) for c in added}
    others = [n for n in uses if id(n) not in allowed]
    binds = [n for n in walk(fn.body) if isinstance(n, cst.AssignTarget) and
             isinstance(n.target, cst.Name) and n.target.value == name]
    returns = [n for n in walk(fn.body) if isinstance(n, cst.Return) and isinstance(n.value, cst.Name) and
               n.value.value == name]
    if not added or len(binds) != 1 or len(others) != 1 + len(returns):
        return None  # a use other than the binding, the add_module calls and the returns
    last = added[-1].args[1].value
    ctor = index.ctor_of(last)
    if ctor in SOFTMAX_MODULES:
        return SOFTMAX_MODULES[ctor], f"nn.Sequential whose last add_module adds {index.code(last)}"
    return None


def _module_receiver(recv, flow: Flow | None) -> bool:
    """`self.softmax(x)`, `self.head.softmax(x)`, `model.softmax(x)` with `model` bound to a module: a call of a
    module's attribute, not the tensor method; what it returns is its constructor's to say."""
    root = recv
    while isinstance(root, cst.Attribute):
        root = root.value
    if isinstance(root, cst.Name) and root.value == "self":
        return True
    if isinstance(recv, cst.Name) and flow is not None:
        b = flow.load_binding.get(id(recv))
        return b is not None and b.kind is Kind.MODULE
    return False


def _written_out(flow: Flow, name: str) -> bool:
    """Whether the scope passes `name` as some call's `out=` (written in place)."""
    for node in walk(flow.scope):
        if isinstance(node, cst.Arg) and node.keyword is not None and node.keyword.value == "out" and \
                isinstance(node.value, cst.Name) and node.value.value == name:
            return True
    return False


def _only_the_parameter(flow: Flow, name: str) -> bool:
    """Every binding of `name` in the function is its parameter or the parameter moved or put in a mode
    (`net = net.cuda()`, `net = net.to(dev)`): whichever reaches a call is the module the caller passed."""
    bs = [b for b in flow.bindings if b.name == name]
    if not any(b.is_param for b in bs):
        return False
    for b in bs:
        if b.is_param:
            continue
        v = b.value
        if not (isinstance(v, cst.Call) and isinstance(v.func, cst.Attribute) and v.func.attr.value in _MOVES
                and isinstance(v.func.value, cst.Name) and v.func.value.value == name):
            return False
    return True


def _called_elsewhere(index, fn: cst.FunctionDef) -> bool:
    """Another file of the project may call `fn`: what it passes is not read here. Only a top-level function's
    callers are known (a method may be reached through any instance)."""
    if index.functions.get(fn.name.value) is not fn:
        return True
    return index.project is not None and index.project.callers_grad(fn.name.value, lambda _c: False) is not None


def _tuple_position(flow: Flow, b) -> int | None:
    """The position of `b`'s name in `x, name = value` (-1 when a starred target makes it unknown)."""
    if not (0 <= b.step < len(flow.steps)):
        return None
    node = flow.steps[b.step].node
    stmts = node.body if isinstance(node, cst.SimpleStatementLine) else [node]
    for stmt in stmts:
        targets = []
        if isinstance(stmt, cst.Assign) and stmt.value is b.value:
            targets = [t.target for t in stmt.targets]
        for t in targets:
            if isinstance(t, (cst.Tuple, cst.List)):
                for k, el in enumerate(t.elements):
                    if isinstance(el.value, cst.Name) and el.value.value == b.name:
                        return -1 if any(isinstance(e, cst.StarredElement) for e in t.elements) else k
    return None


def _last_listed(index, call: cst.Call, name: str) -> cst.BaseExpression | None:
    """The last element of the list `name` when `call` (`nn.Sequential(*name)`) runs: the statements
    before it in its block, read backwards, must first meet `name.append(X)`, `name = [..., X]` or
    `name += [..., X]`; anything else touching `name` (a loop, a branch) is not followed."""
    line = index.enclosing(call, (cst.SimpleStatementLine,))
    block = index.parents.get(line) if line is not None else None
    body = getattr(block, "body", None)
    if not isinstance(body, (list, tuple)) or not any(s is line for s in body):
        return None
    k = next(i for i, s in enumerate(body) if s is line)
    for stmt in reversed(body[:k]):
        if not any(isinstance(n, cst.Name) and n.value == name for n in walk(stmt)):
            continue
        if not isinstance(stmt, cst.SimpleStatementLine) or len(stmt.body) != 1:
            return None
        small = stmt.body[0]
        if isinstance(small, cst.Expr) and isinstance(small.value, cst.Call):
            c = small.value
            if isinstance(c.func, cst.Attribute) and c.func.attr.value == "append" and \
                    isinstance(c.func.value, cst.Name) and c.func.value.value == name and \
                    len(c.args) == 1 and c.args[0].keyword is None and not c.args[0].star:
                return c.args[0].value
            return None
        value = None
        if isinstance(small, cst.Assign) and len(small.targets) == 1 and \
                isinstance(small.targets[0].target, cst.Name) and small.targets[0].target.value == name:
            value = small.value
        elif isinstance(small, cst.AugAssign) and isinstance(small.operator, cst.AddAssign) and \
                isinstance(small.target, cst.Name) and small.target.value == name:
            value = small.value
        if isinstance(value, cst.List) and value.elements and not isinstance(value.elements[-1], cst.StarredElement):
            return value.elements[-1].value
        return None
    return None


__all__ = ["Probabilities", "cross_entropy_input", "maybe_criterion_call", "CROSS_ENTROPY_FUNCS", "SOFTMAX_FUNCS", "SOFTMAX_MODULES"]
