"""Which scopes of a file may hold a value that requires grad, decided on CPython's tree.

GF101 reports an in-place op only where autograd saved the tensor, or where the tensor requires
grad and an alias shares it; both need `Flow.holds(...) is True` in the flow of the scope that
holds the op. `holds` is True only for a provenance that is `YES`, or that depends on a parameter
of the function some call site passes such a value for (callgraph.param_grad). So a scope can
hold one only if it has a *source* of its own (the list below, each the syntax that a `YES` of
provenance.py or flow.py needs), or if it is a function with parameters that a scope which can
hold one calls. The least fixed point of that over the file's scopes is computed here, with
every test an over-approximation of what the flow resolves (call sites by the callee's last
name, any binding a name may have), so a scope left out can never give `holds(...) is True`.

A scope is the module body or a function (methods and nested functions included), as
`FileIndex.scopes()` lists them; its own code is what its `Flow` walks: its statements, minus
nested functions, lambdas and class bodies (no flow walks a class body; the methods in it are
scopes of their own).

Sources (provenance.py `_GradOf`, flow.py `_for_grad`):
- `x.requires_grad_(...)`; `m.parameters()` / `m.named_parameters()` (a module's, or iterated by a
  `for` or a comprehension);
- `m.forward(...)` / `m.__call__(...)` / `m(...)` on a module: the receiver classifies as a module
  only when it is a name the scope assigns or annotates, or an expression other than an
  attribute, a subscript or a literal (`nn.Linear(2, 2).forward(x)`, `super().forward(x)`);
- `self.sub(...)` in a method of a class whose body assigns `self.sub = <call>` (a submodule or
  a parameter) or registers `"sub"` with `register_parameter`; `self.w` read where the class
  assigns `self.w = Parameter(...)` or registers `"w"`;
- `nn.Parameter(...)` (a callee whose last name is `Parameter`, or a name imported as one);
- a tensor factory given `requires_grad=...` (any call given that keyword).
Call sites (callgraph.py `_resolve`): `f(...)` reaches a function named `f`, `x.m(...)` a method
named `m`, and a module call `m(...)` / `self.sub(...)` a `forward`: here every call of a name
or attribute reaches every function of the file with that last name, and every call reaches
every `forward`.

The same walk records, per scope, the discarded `x.<method>(...)` statements whose receiver a flow
may classify as a tensor (GF209's condition, `Facts.discarded_on_tensors`).

tests/test_prepass.py checks the golden cases against these conditions; bench/same_findings.py
compares every finding of the survey sets and the pinned corpus before and after a change here.
"""

from __future__ import annotations

import ast

from gradfix.analysis.torchapi import INPLACE_METHODS, is_inplace_method

_DEFS = (ast.FunctionDef, ast.AsyncFunctionDef)
_SOURCE_METHODS = frozenset({"requires_grad_", "parameters", "named_parameters"})
_MODULE_CALLS = frozenset({"forward", "__call__"})
_NOT_MODULE_RECEIVERS = (ast.Attribute, ast.Subscript, ast.Constant, ast.JoinedStr)


class Scope:
    """What the ast shows of one scope's own code."""

    __slots__ = ("name", "has_params", "calls", "any_call", "source", "inplace", "called_names", "bound",
                 "stored", "discarded", "true_call", "params", "receivers")

    def __init__(self, name: str | None, has_params: bool):
        self.name = name
        self.has_params = has_params
        self.calls: set[str] = set()        # last names of the callees of its own calls
        self.any_call = False
        self.source = False                 # a source of a value that requires grad (above)
        self.inplace = False
        self.called_names: set[str] = set()  # names called (or whose .forward is called) directly
        self.bound: set[str] = set()         # names it assigns, or parameters it annotates
        self.stored: set[str] = set()        # every name it stores (assignments, loop and `with` targets, ...)
        self.params: dict[str, bool] = {}    # its parameters but `self` / `cls`: annotated?
        self.receivers: list[tuple[str, str]] = []  # (method, name) of discarded `name.<method>(...)`
        # methods of the `x.<method>(...)` statements whose value is dropped and whose receiver may be
        # a tensor (what GF209's `flow.classify(recv)` can find tensor-typed, see `_tensor_receiver`)
        self.discarded: set[str] = set()
        self.true_call = False               # a call given a literal True (`F.relu(h, inplace=True)`)


def _last(func) -> str | None:
    t = type(func)
    if t is ast.Name:
        return func.id
    if t is ast.Attribute:
        return func.attr
    return None


def _class_attrs(cls: ast.ClassDef, parameter_names: frozenset[str]) -> tuple[set[str], set[str]]:
    """(attributes the class assigns a call to or registers, those it makes parameters): the
    supersets of FileIndex.submodules / class_parameters that `self.x` sources are tested on."""
    called: set[str] = set()
    params: set[str] = set()
    for n in ast.walk(cls):
        t = type(n)
        if t is ast.Assign and len(n.targets) == 1:
            tgt = n.targets[0]
            if type(tgt) is ast.Attribute and type(tgt.value) is ast.Name and tgt.value.id == "self" \
                    and type(n.value) is ast.Call:
                called.add(tgt.attr)
                if _last(n.value.func) in parameter_names:
                    params.add(tgt.attr)
        elif t is ast.Call and _last(n.func) == "register_parameter" and n.args \
                and type(n.args[0]) is ast.Constant and isinstance(n.args[0].value, str):
            called.add(n.args[0].value)
            params.add(n.args[0].value)
    return called, params


# receivers `Flow.classify` never finds tensor-typed: literals, displays, comprehensions, lambdas
_NEVER_TENSOR = (ast.Constant, ast.JoinedStr, ast.List, ast.Tuple, ast.Dict, ast.Set, ast.ListComp, ast.SetComp,
                 ast.DictComp, ast.GeneratorExp, ast.Lambda)
_BINDERS = (ast.Assign, ast.AnnAssign, ast.For, ast.AsyncFor)
_TENSOR_ATTRIBUTES = frozenset({"grad", "data", "T", "mT", "H", "real", "imag"})


def _tensor_receiver(recv) -> str | bool:
    """Whether GF209 may take `recv` of a discarded `recv.m(...)` for a tensor: a name (the scope must
    bind it: an unbound name has no binding to classify, and `_passed_tensor` wants a parameter; returned
    as the name, decided once the scope is walked), an attribute chain through `.grad` or `.data`
    (`_grad_chain`) or ending in a view attribute of a tensor (`classify`'s Attribute case: any other
    attribute is of unknown kind), or any other expression but a literal or a display."""
    t = type(recv)
    if t is ast.Name:
        return recv.id
    if t is ast.Attribute:
        node = recv
        while type(node) in (ast.Attribute, ast.Subscript):
            if type(node) is ast.Attribute and node.attr in _TENSOR_ATTRIBUTES:
                return True
            node = node.value
        return False
    return not isinstance(recv, _NEVER_TENSOR)


def _members(cls: ast.ClassDef):
    """The functions and classes a class body defines, through its compound statements (no flow walks a
    class body's own statements)."""
    stack = list(reversed(cls.body))
    while stack:
        node = stack.pop()
        if type(node) in _DEFS or type(node) is ast.ClassDef:
            yield node
            continue
        stack.extend(reversed([c for c in ast.iter_child_nodes(node)
                               if isinstance(c, (ast.stmt, ast.excepthandler, ast.match_case))]))


def _true_arg(call: ast.Call) -> bool:
    return any(type(a) is ast.Constant and a.value is True for a in call.args) or any(
        type(k.value) is ast.Constant and k.value.value is True for k in call.keywords)


def scan(tree: ast.Module, parameter_names: frozenset[str], true_arg: bool) -> list[Scope]:
    """The file's scopes, module first (FileIndex.scopes()' set, in another order)."""
    classes: dict[str, tuple[set[str], set[str]]] = {}
    for stmt in tree.body:
        if type(stmt) is ast.ClassDef:
            called, params = _class_attrs(stmt, parameter_names)
            old = classes.get(stmt.name)
            classes[stmt.name] = (called | old[0], params | old[1]) if old else (called, params)
    scopes: list[Scope] = []
    # names and attributes assigned a call given a literal True (`self.act = nn.ReLU(inplace=True)`): the
    # modules `_inplace_module` may find built in place (`_constructor_call`: the value is that call)
    true_targets: set[str] = set()
    # (scope node, nearest class name when the scope is a method no function encloses)
    todo: list[tuple[ast.AST, str | None]] = [(tree, None)]
    while todo:
        node, cls_name = todo.pop()
        if type(node) is ast.Module:
            sc = Scope(None, False)
            body = node.body
            in_function = False
        else:
            a = node.args
            params = [*a.posonlyargs, *a.args, *a.kwonlyargs, *(p for p in (a.vararg, a.kwarg) if p is not None)]
            sc = Scope(node.name, any(p.arg not in ("self", "cls") for p in params))
            sc.bound.update(p.arg for p in params if p.annotation is not None)
            # `self` / `cls` are bound as Kind.OTHER, never a tensor (and `_passed_tensor` wants UNKNOWN)
            sc.params.update((p.arg, p.annotation is not None) for p in params if p.arg not in ("self", "cls"))
            body = node.body
            in_function = True
        scopes.append(sc)
        attrs = classes.get(cls_name) if cls_name is not None else None
        self_calls, self_params = attrs if attrs is not None else ((), ())
        stack: list[tuple[ast.AST, str | None]] = [(s, None) for s in body]
        while stack:
            n, _ = stack.pop()
            t = type(n)
            if t in _DEFS:
                todo.append((n, None))
                continue
            if t is ast.ClassDef:
                # its methods are scopes (also those under an `if` or `try` of the class body: FileIndex.scopes
                # walks those); `self` in them is that class's only when no function encloses it
                for member in _members(n):
                    if type(member) is ast.ClassDef:
                        stack.append((member, None))
                    else:
                        todo.append((member, None if in_function else n.name))
                continue
            if t is ast.Lambda:
                continue
            if t is ast.Call:
                sc.any_call = True
                func = n.func
                last = _last(func)
                if last is not None:
                    sc.calls.add(last)
                if type(func) is ast.Attribute:
                    attr = func.attr
                    if attr in _SOURCE_METHODS:
                        sc.source = True
                    elif attr in _MODULE_CALLS:
                        recv = func.value
                        if type(recv) is ast.Name:
                            sc.called_names.add(recv.id)
                        elif not isinstance(recv, _NOT_MODULE_RECEIVERS):
                            sc.source = True
                    if type(func.value) is ast.Name and func.value.id == "self" and attr in self_calls:
                        sc.source = True
                    if attr in INPLACE_METHODS or is_inplace_method(attr):
                        sc.inplace = True
                elif type(func) is ast.Name:
                    sc.called_names.add(func.id)
                if last in parameter_names:
                    sc.source = True
                for k in n.keywords:
                    if k.arg == "requires_grad":
                        sc.source = True
                if true_arg and _true_arg(n):
                    sc.true_call = True
            elif t is ast.Assign:
                for tgt in n.targets:
                    if type(tgt) is ast.Name:
                        sc.bound.add(tgt.id)
            elif t is ast.AnnAssign:
                if type(n.target) is ast.Name:
                    sc.bound.add(n.target.id)
            elif t is ast.AugAssign:
                if type(n.target) in (ast.Name, ast.Subscript):
                    sc.inplace = True
            elif t is ast.Subscript:
                if type(n.ctx) is ast.Store:
                    sc.inplace = True
            elif t is ast.Attribute:
                if type(n.value) is ast.Name and n.value.id == "self" and n.attr in self_params:
                    sc.source = True
            elif t is ast.Name:
                if type(n.ctx) is ast.Store:
                    sc.stored.add(n.id)
            elif t is ast.Expr:
                value = n.value
                if type(value) is ast.Call and type(value.func) is ast.Attribute:
                    how = _tensor_receiver(value.func.value)
                    if how is True:
                        sc.discarded.add(value.func.attr)
                    elif how:
                        sc.receivers.append((value.func.attr, how))
            if true_arg and t in _BINDERS:
                # a binding's value (`visible_bindings`): an assignment's right side, a loop's iterable
                value = n.iter if t in (ast.For, ast.AsyncFor) else n.value
                if type(value) is ast.Call and _true_arg(value):
                    for tgt in (n.targets if t is ast.Assign else [n.target]):
                        for x in ast.walk(tgt):
                            if type(x) is ast.Name:
                                true_targets.add(x.id)
                            elif type(x) is ast.Attribute:
                                true_targets.add(x.attr)
            for child in ast.iter_child_nodes(n):
                stack.append((child, None))
        if sc.called_names & sc.bound:
            sc.source = True
    # a discarded call on a name: a tensor for `classify` only when the scope binds the name (a store:
    # any value may classify as a tensor), or as a parameter that is tensor-typed (annotated: `Tensor`;
    # `forward` of a module class) or of unknown type that call sites in the file may show to be one
    # (`_passed_tensor`: a resolved call of the function, by its name)
    called = {name for sc in scopes for name in sc.calls}
    for sc in scopes:
        for meth, name in sc.receivers:
            if name in sc.stored:
                sc.discarded.add(meth)
            elif name in sc.params and (sc.params[name] or sc.name == "forward" or sc.name in called):
                sc.discarded.add(meth)
    # `_inplace_module`: a call given `inplace=True` itself (the functional form), or of a name or
    # `self.<attr>` that some statement assigns such a call (the module built in place)
    for sc in scopes:
        if sc.true_call or sc.calls & true_targets:
            sc.inplace = True
    return scopes


def grad_inplace_scopes(scopes: list[Scope]) -> int:
    """How many scopes have an in-place op (an augmented or item assignment, a `x.<name>_()` call, a call
    given a literal True, or a call of a name or attribute assigned such a call: an `inplace=True` module)
    and may hold a value that requires grad. 0: GF101 can report nothing in the file."""
    by_name: dict[str, list[Scope]] = {}
    forwards: list[Scope] = []
    for sc in scopes:
        if sc.name is not None and sc.has_params:
            by_name.setdefault(sc.name, []).append(sc)
            if sc.name == "forward":
                forwards.append(sc)
    reached = {id(sc) for sc in scopes if sc.source}
    work = [sc for sc in scopes if sc.source]
    while work:
        caller = work.pop()
        targets = [t for name in caller.calls for t in by_name.get(name, ())]
        if caller.any_call:
            targets += forwards
        for t in targets:
            if id(t) not in reached:
                reached.add(id(t))
                work.append(t)
    return sum(1 for sc in scopes if sc.inplace and id(sc) in reached)
