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
- `x.requires_grad_(...)`, `x.requires_grad = ...` (a leaf for GF101's `_leaf_inplace`);
  `m.parameters()` / `m.named_parameters()` (a module's, or iterated by a `for` or a comprehension);
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
may classify as a tensor (GF209's condition, `Facts.discarded_on_tensors`): a name counts only when
one of the scope's bindings of it may be tensor-typed (`_tensor_bindings`: not a literal, a display,
a comparison, a call of a builtin the file does not rebind, a `with` or an unpacking `for` target),
and the scopes with a `.detach()` call and an in-place op (GF102's condition, `grad_detach_mutated`).
A call given a literal True counts as in place only when its callee may be an activation or dropout
(its functional form, or a constructor of one: torchapi.INPLACE_FUNCTIONAL_POSITION / _MODULE_POSITION).

For GF101 an in-place op also needs a target `Flow.alias_root` can take to a tensor binding of the scope:
its chain's root name must be a parameter, or a name some statement of the scope binds to a value that
`classify` may make a tensor (`_value_kind`: an attribute only through a view attribute or `.grad`), or binds
another way (unpacking, walrus or comprehension target; a `for` target only over a call that may make a leaf,
never a `with` target: `_loop_or_with_targets`): `kwargs = {}; kwargs["eta"] = eta` is no in-place op on a
tensor. GF209's parameter receivers count only when the annotation may resolve to torch.Tensor or is no
dotted name (`_annotation_kind`). And the scope must be one GF101
looks at (`FileIndex.training_code_flows`): not an initialiser, not decorated with a context that surely
resolves to torch's no_grad or inference_mode (`_no_grad_decorator`). These two tests are GF101's only.

tests/test_prepass.py checks the golden cases against these conditions; bench/same_findings.py
compares every finding of the survey sets and the pinned corpus before and after a change here.
"""

from __future__ import annotations

import ast
import re

from gradfix.analysis import astindex, inplace_hazards
from gradfix.analysis.hazard_facts import dotted_name, registered_names
from gradfix.analysis.torchapi import INPLACE_METHODS, NO_GRAD_CONTEXTS, VIEW_ATTRIBUTES, is_inplace_method

_DEFS = (ast.FunctionDef, ast.AsyncFunctionDef)
_SOURCE_METHODS = frozenset({"requires_grad_", "parameters", "named_parameters"})
_MODULE_CALLS = frozenset({"forward", "__call__"})
_NOT_MODULE_RECEIVERS = (ast.Attribute, ast.Subscript, ast.Constant, ast.JoinedStr)

_INIT_NAME = re.compile(r"^(__init__|reset_parameters|_?init(ialize)?(_\w*)?|_?\w*_init(_\w*)?|_?\w*init_weights?)$")


def is_initialiser(name: str) -> bool:
    """`__init__`, `reset_parameters`, `_init_weights`, `init_weights`, `initialize`, ... (GF101 skips them:
    in-place updates of fresh tensors are the norm there; FileIndex.training_code_flows reads this too)."""
    return bool(_INIT_NAME.match(name))


def _root_name(expr) -> str | None:
    """The name an in-place target's chain starts from (`x` of `x.view(-1)[0]`, `x.data.add_()`): the only
    name `Flow.alias_root` can reach through views, subscripts and attributes (a `self.x` it resolves stops
    earlier, at a binding GF101 leaves alone; a chain from a call or a literal reaches no binding)."""
    while True:
        t = type(expr)
        if t is ast.Attribute or t is ast.Subscript:
            expr = expr.value
        elif t is ast.Call and type(expr.func) is ast.Attribute:
            expr = expr.func.value
        else:
            return expr.id if t is ast.Name else None


def _no_grad_decorator(ix: astindex.AstIndex):
    """A test of a decorator's dotted name: True only when `qualname` (names.py ImportMap.resolve) surely makes
    it one of NO_GRAD_CONTEXTS whatever import reaches it: every import of the file that binds its first name
    binds it to the same known name (or none binds it). An under-approximation of
    `FileIndex.is_no_grad_function`, so a scope it calls no_grad is one GF101 never looks at."""
    bound: dict[str, set[str | None]] = {}
    for node in ix.of_type(ast.Import, ast.ImportFrom):
        for a in node.names:
            if type(node) is ast.Import:
                local = a.asname or a.name.split(".")[0]
                value = a.name if a.asname else local
            elif a.name == "*":
                continue
            else:
                local = a.asname or a.name
                value = f"{node.module}.{a.name}" if node.module and not node.level else None
            bound.setdefault(local, set()).add(value)

    def surely(dotted: str | None) -> bool:
        if dotted is None:
            return False
        head, _, rest = dotted.partition(".")
        values = bound.get(head)
        if values is None:
            return dotted in NO_GRAD_CONTEXTS
        if len(values) != 1 or None in values:
            return False
        (value,) = values
        return (f"{value}.{rest}" if rest else value) in NO_GRAD_CONTEXTS
    return surely


def _trains(node, surely_no_grad) -> bool:
    """Whether GF101 may look at a function's flow: not an initialiser, not decorated with a no_grad context."""
    if is_initialiser(node.name):
        return False
    return not any(surely_no_grad(dotted_name(d.func if type(d) is ast.Call else d)) for d in node.decorator_list)


class Scope:
    """What the ast shows of one scope's own code."""

    __slots__ = ("name", "has_params", "calls", "any_call", "source", "inplace", "called_names", "bound",
                 "stored", "tensor_bound", "builtin_bound", "discarded", "true_call", "params", "receivers",
                 "detach", "trains", "written", "other_bound", "module_inplace", "writes_tensor", "builtin_loop",
                 "node", "cls_name", "facts")

    def __init__(self, name: str | None, has_params: bool, trains: bool = True):
        self.name = name
        self.has_params = has_params
        # False: GF101 never looks at it (`FileIndex.training_code_flows`: an initialiser, or shown no_grad)
        self.trains = trains
        self.written: set[str] = set()      # the root names of its in-place ops' targets (`x` of `x[i] += 1`)
        self.other_bound: set[str] = set()  # names stored other than as a plain assignment's Name target
        self.module_inplace = False         # an activation run in place (`F.relu(h, inplace=True)`, `self.act(h)`)
        self.writes_tensor = False          # GF101: an in-place op on a name some binding may make a tensor
        self.calls: set[str] = set()        # last names of the callees of its own calls
        self.any_call = False
        self.source = False                 # a source of a value that requires grad (above)
        self.inplace = False
        self.called_names: set[str] = set()  # names called (or whose .forward is called) directly
        self.bound: set[str] = set()         # names it assigns, or parameters it annotates
        self.stored: set[str] = set()        # every name it stores (assignments, loop and `with` targets, ...)
        # names a binding of the flow may make tensor-typed (`_tensor_bindings`); builtin callees resolved last
        self.tensor_bound: set[str] = set()
        self.builtin_bound: list[tuple[str, str]] = []  # (name, builtin) of `name = set()`-like bindings
        # (name, builtin) of `for name in zip(...)`-like targets: other_bound only if the builtin is rebound
        self.builtin_loop: list[tuple[str, str]] = []
        # its parameters but `self` / `cls`: may their annotation make them tensor-typed (`_annotation_kind`)?
        self.params: dict[str, bool | None] = {}
        self.receivers: list[tuple[str, str]] = []  # (method, name) of discarded `name.<method>(...)`
        # methods of the `x.<method>(...)` statements whose value is dropped and whose receiver may be
        # a tensor (what GF209's `flow.classify(recv)` can find tensor-typed, see `_tensor_receiver`)
        self.discarded: set[str] = set()
        self.true_call = False               # a call given a literal True (`F.relu(h, inplace=True)`)
        self.detach = False                  # a `x.detach()` call (GF102: flow.detaches)
        # for GF101's sharper test (analysis/inplace_hazards.py): the scope's node, the class whose `self` it
        # sees, and the file's facts
        self.node = None
        self.cls_name: str | None = None
        self.facts = None


def _last(func) -> str | None:
    t = type(func)
    if t is ast.Name:
        return func.id
    if t is ast.Attribute:
        return func.attr
    return None


def _class_attrs(cls: ast.ClassDef, parameter_names: frozenset[str],
                 ix: astindex.AstIndex) -> tuple[set[str], set[str]]:
    """(attributes the class assigns a call to or registers, those it makes parameters): the
    supersets of FileIndex.submodules / class_parameters that `self.x` sources are tested on."""
    called: set[str] = set()
    params: set[str] = set()
    for n in ix.walk(cls):
        t = type(n)
        if t is ast.Assign and len(n.targets) == 1:
            tgt = n.targets[0]
            if type(tgt) is ast.Attribute and type(tgt.value) is ast.Name and tgt.value.id == "self" \
                    and type(n.value) is ast.Call:
                called.add(tgt.attr)
                if _last(n.value.func) in parameter_names:
                    params.add(tgt.attr)
        elif t is ast.Call and _last(n.func) == "register_parameter":
            names = registered_names(n)     # positional or `name="w"`
            called.update(names)
            params.update(names)
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


# builtins whose call `classify` never finds tensor-typed (a Name callee that is not a module binding and
# resolves to no torch name: the file must not import, define or assign the name, checked after the walk)
_BUILTIN_CALLS = frozenset({"set", "list", "dict", "tuple", "frozenset", "str", "bytes", "int", "float", "bool",
                            "len", "sorted", "repr", "format", "isinstance", "hasattr", "getattr", "vars", "id",
                            "object", "range", "enumerate", "zip", "open", "print", "type"})
# values `classify` gives a kind other than tensor or parameter whatever the names in them (a number, a
# string, a display or comprehension: OTHER; a comparison, a boolean operation, a lambda, ...: UNKNOWN)
_NOT_TENSOR_VALUES = (ast.Constant, ast.JoinedStr, ast.List, ast.Tuple, ast.Dict, ast.Set, ast.ListComp, ast.SetComp,
                      ast.DictComp, ast.GeneratorExp, ast.Lambda, ast.Compare, ast.BoolOp, ast.Await, ast.Yield,
                      ast.YieldFrom, ast.NamedExpr)


_VIEW_OR_GRAD = VIEW_ATTRIBUTES | {"grad"}


def _value_kind(value) -> str | bool:
    """Whether `classify(value)` may be TENSOR or PARAMETER (True), never (False), or only if the builtin
    returned is not rebound in the file (a call `set()`): an over-approximation of flow_classify.py, which
    gives a tensor only through a name, a call, or an operation, subscript or attribute of one."""
    t = type(value)
    if isinstance(value, _NOT_TENSOR_VALUES):
        return False
    if t is ast.UnaryOp:
        return _value_kind(value.operand)
    if t is ast.Subscript:
        return _value_kind(value.value)
    if t is ast.Attribute:
        # `classify`'s Attribute case: TENSOR only for a view attribute or `.grad` of a tensor-typed value;
        # any other attribute (`self.model`, `cfg.lr`) is UNKNOWN (or OTHER), whatever `self.x` was bound to
        return _value_kind(value.value) if value.attr in _VIEW_OR_GRAD else False
    if t is ast.Call and type(value.func) is ast.Name and value.func.id in _BUILTIN_CALLS:
        return value.func.id
    return True


def _tensor_bindings(sc: "Scope", n, ix: astindex.AstIndex) -> None:
    """The names a statement binds in the scope's flow with a kind that may be tensor-typed (flow.py's
    bindings of a name: an assignment or annotated assignment with a value, classified; a name unpacked
    from a tuple target, which keeps a tensor kind; a `for` target over `.parameters()` / `.buffers()`,
    PARAMETER; every other `for` target, `with ... as`, def and class is UNKNOWN or OTHER)."""
    t = type(n)
    if t is ast.Assign or t is ast.AnnAssign:
        if n.value is None:
            return
        for tgt in (n.targets if t is ast.Assign else [n.target]):
            if type(tgt) is ast.Name:
                how = _value_kind(n.value)
                if how is True:
                    sc.tensor_bound.add(tgt.id)
                elif how:
                    sc.builtin_bound.append((tgt.id, how))
            elif type(tgt) in (ast.Tuple, ast.List, ast.Starred):
                # parallel pairs are classified one by one: any name in the target may be a tensor
                sc.tensor_bound.update(x.id for x in ix.walk(tgt) if type(x) is ast.Name)
    elif t is ast.For or t is ast.AsyncFor:
        it = n.iter
        if type(n.target) is ast.Name and type(it) is ast.Call and type(it.func) is ast.Attribute \
                and it.func.attr in ("parameters", "buffers"):
            sc.tensor_bound.add(n.target.id)


def _loop_or_with_targets(sc: "Scope", n, plain: set[int], ix: astindex.AstIndex) -> None:
    """GF101's view of the names a `for` or `with` statement binds (the ids of those it decides are put in
    `plain`, so they are not other_bound by default). Flow.py binds a `with ... as` target as OTHER or UNKNOWN
    with no value, and a `for` target as PARAMETER, NUMBER or UNKNOWN (each element of a tuple target
    UNKNOWN) with the loop's iterable for value: never TENSOR, and not a parameter of the function, so
    `flow.is_tensor` is False for it and `_inspect` can report only through `_leaf_inplace`, which needs
    `leaves.leaf_ctor(value)`: a call (a factory given requires_grad, a Parameter, `.requires_grad_()`,
    `.float()`). So a `with` target never counts, a `for` target only when the iterable is a call, and a
    call of a builtin (`zip`, `enumerate`, `range`) only if the file rebinds its name (`qualname` resolves it
    through the imports: `from torch import zeros as zip`)."""
    names = []
    if type(n) is ast.For or type(n) is ast.AsyncFor:
        targets = (n.target,)
    else:
        targets = tuple(item.optional_vars for item in n.items if item.optional_vars is not None)
    for tgt in targets:
        for x in ix.walk(tgt):
            if type(x) is ast.Name and type(x.ctx) is ast.Store:
                names.append(x.id)
                plain.add(id(x))
    if not names or type(n) is ast.With or type(n) is ast.AsyncWith:
        return
    it = n.iter
    if type(it) is not ast.Call:
        return
    if type(it.func) is ast.Name and it.func.id in _BUILTIN_CALLS:
        sc.builtin_loop.extend((name, it.func.id) for name in names)
    else:
        sc.other_bound.update(names)


def _members(cls: ast.ClassDef, ix: astindex.AstIndex):
    """The functions and classes a class body defines, through its compound statements (no flow walks a
    class body's own statements)."""
    stack = list(reversed(cls.body))
    while stack:
        node = stack.pop()
        if type(node) in _DEFS or type(node) is ast.ClassDef:
            yield node
            continue
        stack.extend(reversed([c for c in ix.children(node)
                               if isinstance(c, (ast.stmt, ast.excepthandler, ast.match_case))]))


# the last names of the annotations `Flow._bind_params` makes Kind.TENSOR (`torch.Tensor`, `torch.FloatTensor`,
# `Tensor`, as `qualname` resolves them through the imports)
_TENSOR_ANNOTATIONS = frozenset({"Tensor", "FloatTensor"})


def _tensor_aliases(ix: astindex.AstIndex) -> set[str]:
    """The local names an import of the file renames a `...Tensor` / `...FloatTensor` to (`from torch import
    Tensor as T`): the only single names besides those two that `ImportMap.resolve` may take to one of them."""
    return {a.asname for node in ix.of_type(ast.Import, ast.ImportFrom) for a in node.names
            if a.asname and a.name.rpartition(".")[2] in _TENSOR_ANNOTATIONS}


def _annotation_kind(ann, tensor_aliases: set[str]) -> bool | None:
    """What a parameter's annotation lets `Flow._bind_params` make of it: None when it has none or one that is
    not a dotted name (`Optional[Tensor]`, `"Tensor"`: `qualname` is None, so the kind is UNKNOWN and the ctor
    None, as unannotated, and GF209's `_passed_tensor` may still read its call sites); True when the dotted
    name may resolve to torch.Tensor / torch.FloatTensor / Tensor (Kind.TENSOR); False otherwise: Kind.UNKNOWN
    or MODULE with a ctor, which neither `is TENSORISH` nor `_passed_tensor` (it wants no ctor) accepts."""
    if ann is None:
        return None
    t = type(ann)
    if t is ast.Attribute:
        node = ann
        while type(node) is ast.Attribute:
            node = node.value
        if type(node) is not ast.Name:
            return None
        return ann.attr in _TENSOR_ANNOTATIONS      # `resolve` keeps every part after the first
    if t is ast.Name:
        return ann.id in _TENSOR_ANNOTATIONS or ann.id in tensor_aliases
    return None


def _true_arg(call: ast.Call) -> bool:
    return any(type(a) is ast.Constant and a.value is True for a in call.args) or any(
        type(k.value) is ast.Constant and k.value.value is True for k in call.keywords)


def _built_in_place(value, ctors: frozenset[str] | None) -> bool:
    """`value` (or an element of a tuple or list display: parallel assignments bind each alone) is a call
    given a literal True whose callee's last name may be one of `ctors` (None: any callee)."""
    values = value.elts if type(value) in (ast.Tuple, ast.List) else (value,)
    # `nn.Sequential(nn.ReLU(inplace=True), ...)`: the first layer runs in place on the Sequential's input
    values = [v.args[0] if type(v) is ast.Call and _last(v.func) == "Sequential" and v.args else v for v in values]
    return any(type(v) is ast.Call and _true_arg(v) and (ctors is None or _last(v.func) in ctors) for v in values)


def scan(tree: ast.Module, parameter_names: frozenset[str], true_arg: bool,
         inplace_functions: frozenset[str] | None = None, inplace_ctors: frozenset[str] | None = None) -> list[Scope]:
    """The file's scopes, module first (FileIndex.scopes()' set, in another order). `inplace_functions`: the
    last names a call given a literal True must have to run in place (`F.relu(h, inplace=True)`);
    `inplace_ctors`: those of a call building a module that runs in place (`nn.ReLU(True)`, also seen through
    `.cuda()` and `weight_norm(...)`); None: any name."""
    ix = astindex.of(tree)      # the walk the project summary and the pre-pass facts read too
    children = ix.children
    classes: dict[str, tuple[set[str], set[str]]] = {}
    for stmt in tree.body:
        if type(stmt) is ast.ClassDef:
            called, params = _class_attrs(stmt, parameter_names, ix)
            old = classes.get(stmt.name)
            classes[stmt.name] = (called | old[0], params | old[1]) if old else (called, params)
    scopes: list[Scope] = []
    # names and attributes assigned a call given a literal True (`self.act = nn.ReLU(inplace=True)`): the
    # modules `_inplace_module` may find built in place (analysis/inplace_modules.py `_constructor_call`: the value is that call)
    true_targets: set[str] = set()
    switched = [False]              # some `X.inplace = True` (GF101 `_switched_inplace`)
    surely_no_grad = _no_grad_decorator(ix)
    tensor_aliases = _tensor_aliases(ix)
    facts = inplace_hazards.FileFacts(tree, ix, surely_no_grad, parameter_names)
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
            sc = Scope(node.name, any(p.arg not in ("self", "cls") for p in params), _trains(node, surely_no_grad))
            sc.bound.update(p.arg for p in params if p.annotation is not None)
            # `self` / `cls` are bound as Kind.OTHER, never a tensor (and `_passed_tensor` wants UNKNOWN)
            sc.params.update((p.arg, _annotation_kind(p.annotation, tensor_aliases))
                             for p in params if p.arg not in ("self", "cls"))
            body = node.body
            in_function = True
        scopes.append(sc)
        sc.node, sc.cls_name, sc.facts = node, cls_name, facts
        attrs = classes.get(cls_name) if cls_name is not None else None
        self_calls, self_params = attrs if attrs is not None else ((), ())
        stack: list[ast.AST] = list(body)
        # ids of the Name targets of plain assignments (`_tensor_bindings` reads those) and of augmented ones
        plain: set[int] = set()
        while stack:
            n = stack.pop()
            t = type(n)
            if t in _DEFS:
                todo.append((n, None))
                continue
            if t is ast.ClassDef:
                # its methods are scopes (also those under an `if` or `try` of the class body: FileIndex.scopes
                # walks those); `self` in them is that class's only when no function encloses it
                for member in _members(n, ix):
                    if type(member) is ast.ClassDef:
                        stack.append(member)
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
                        root = _root_name(func.value)
                        if root is not None:
                            sc.written.add(root)
                    elif attr == "detach":
                        sc.detach = True
                elif type(func) is ast.Name:
                    sc.called_names.add(func.id)
                if last in parameter_names:
                    sc.source = True
                for k in n.keywords:
                    if k.arg == "requires_grad":
                        sc.source = True
                if true_arg and _true_arg(n) and (inplace_functions is None or last in inplace_functions):
                    sc.true_call = True
            elif t is ast.Assign:
                if true_arg and len(n.targets) == 1 and type(n.targets[0]) is ast.Attribute and \
                        n.targets[0].attr == "inplace" and type(n.value) is ast.Constant and n.value.value is True:
                    switched[0] = True  # `m.inplace = True`: any module call may now run in place
                for tgt in n.targets:
                    if type(tgt) is ast.Name:
                        sc.bound.add(tgt.id)
                        plain.add(id(tgt))
                    elif type(tgt) is ast.Attribute and tgt.attr == "requires_grad":
                        sc.source = True    # `w.requires_grad = True` makes a leaf that requires grad (leaves.py)
            elif t is ast.AnnAssign:
                if type(n.target) is ast.Name:
                    sc.bound.add(n.target.id)
                    plain.add(id(n.target))
            elif t is ast.For or t is ast.AsyncFor or t is ast.With or t is ast.AsyncWith:
                _loop_or_with_targets(sc, n, plain, ix)
            elif t is ast.AugAssign:
                if type(n.target) in (ast.Name, ast.Subscript):
                    sc.inplace = True
                    if type(n.target) is ast.Name:
                        sc.written.add(n.target.id)
                        plain.add(id(n.target))     # `x += 1` binds nothing new (Flow._mutate_target)
            elif t is ast.Subscript:
                if type(n.ctx) is ast.Store:
                    sc.inplace = True
                    root = _root_name(n.value)
                    if root is not None:
                        sc.written.add(root)
            elif t is ast.Attribute:
                if type(n.value) is ast.Name and n.value.id == "self" and n.attr in self_params:
                    sc.source = True
            elif t is ast.Name:
                if type(n.ctx) is ast.Store:
                    sc.stored.add(n.id)
                    if id(n) not in plain:      # an unpacking, walrus or comprehension target, ...: any kind
                        sc.other_bound.add(n.id)
            if t in _BINDERS:
                _tensor_bindings(sc, n, ix)
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
                if _built_in_place(value, inplace_ctors):
                    for tgt in (n.targets if t is ast.Assign else [n.target]):
                        for x in ix.walk(tgt):
                            if type(x) is ast.Name:
                                true_targets.add(x.id)
                            elif type(x) is ast.Attribute:
                                true_targets.add(x.attr)
            stack.extend(children(n))
        if sc.called_names & sc.bound:
            sc.source = True
    # a discarded call on a name: a tensor for `classify` only when the scope binds the name (a store:
    # any value may classify as a tensor), or as a parameter that is tensor-typed (annotated with a name
    # that may resolve to `torch.Tensor`; `forward` of a module class) or of unknown type without a ctor
    # that call sites in the file may show to be one (`_passed_tensor`: a resolved call of the function,
    # by its name). A parameter annotated with any other dotted name (`module: torch.nn.Module`,
    # `config: dict`) is never one: GF209 reads the parameter's own binding, whose kind and ctor are its
    # annotation's
    called = {name for sc in scopes for name in sc.calls}
    facts.called = called
    facts.scopes = [(sc.node, sc.cls_name, sc.calls) for sc in scopes]
    # a builtin callee is a builtin only when no scope of the file binds its name and no import or
    # definition does (`classify` resolves a name through the imports, `from m import *` included, and a
    # module binding makes a call of it a tensor)
    if any(sc.builtin_bound or sc.builtin_loop for sc in scopes):
        rebound = {name for sc in scopes for name in sc.stored}
        for x in ix.of_type(ast.alias, *_DEFS, ast.ClassDef):
            if type(x) is ast.alias:
                rebound.add(x.asname or x.name.split(".")[0])
                if x.name == "*":
                    rebound |= _BUILTIN_CALLS
            elif type(x) in _DEFS or type(x) is ast.ClassDef:
                rebound.add(x.name)
        for sc in scopes:
            sc.tensor_bound.update(name for name, builtin in sc.builtin_bound if builtin in rebound)
            sc.other_bound.update(name for name, builtin in sc.builtin_loop if builtin in rebound)
    for sc in scopes:
        for meth, name in sc.receivers:
            if name in sc.tensor_bound:
                sc.discarded.add(meth)
            elif name in sc.params:
                how = sc.params[name]
                if how or (how is None and (sc.name == "forward" or sc.name in called)):
                    sc.discarded.add(meth)
    # `_inplace_module`: a call given `inplace=True` itself (the functional form), or of a name or
    # `self.<attr>` that some statement assigns such a call (the module built in place)
    for sc in scopes:
        if sc.true_call or sc.calls & true_targets or (switched[0] and sc.calls):
            sc.inplace = sc.module_inplace = True
        # GF101's `_inspect` needs the target's binding (`alias_root`: of its root name, in the scope's own flow)
        # tensor-typed, a parameter of unknown type, or a leaf factory: a name the scope binds only to values
        # `classify` never makes a tensor (`kwargs = {}`, `kwargs["eta"] = eta`), or does not bind, is none
        sc.writes_tensor = sc.module_inplace or not sc.written.isdisjoint(
            sc.tensor_bound | sc.other_bound | sc.params.keys())
    return scopes


def grad_scopes(scopes: list[Scope]) -> set[int]:
    """The ids of the scopes that may hold a value requiring grad: a source of their own, or a function with
    parameters that such a scope may call (the least fixed point; calls resolved by last name, and every
    call may reach every `forward`)."""
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
    return reached


def grad_inplace_scopes(scopes: list[Scope], reached: set[int] | None = None) -> bool:
    """Whether some scope GF101 looks at (`trains`) has an in-place op on a name the scope may bind to a tensor
    (an augmented or item assignment, a `x.<name>_()` call: `writes_tensor`), or a call given a literal True or
    of a name or attribute assigned such a call (an `inplace=True` module), and may hold a value that requires
    grad, and (but for the `inplace=True` module) an op whose hazard the rule may show
    (analysis/inplace_hazards.py). False: GF101 can report nothing in the file."""
    reached = grad_scopes(scopes) if reached is None else reached
    return any(sc.writes_tensor and sc.trains and id(sc) in reached and (
        sc.module_inplace or inplace_hazards.may_show(sc.facts, sc.node, sc.cls_name)) for sc in scopes)


def grad_detach_mutated(scopes: list[Scope], reached: set[int] | None = None) -> bool:
    """A scope with a `x.detach()` call and an in-place op that may hold a value requiring grad: GF102
    reports a detached copy mutated in place (a mutation of the flow: an augmented or item assignment, an
    in-place method) only when `flow.holds` the source's grad is True in the same flow (`_hazard_shown`)."""
    reached = grad_scopes(scopes) if reached is None else reached
    return any(sc.detach and sc.inplace and id(sc) in reached for sc in scopes)
