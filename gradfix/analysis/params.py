"""Facts the parameter and API rules share (GF301-GF306): how a file spells `torch` and
`torch.nn`, tensor factories and the copies chained after them, `nn.Parameter(...)`
calls, submodule constructors, and small libcst builders for the rewrites.

A "copy" is a method that returns a new tensor on the hardware the code is written
for: `.cuda()`, `.to(device)`, `.double()`. On a CPU machine `.to("cpu")` and `.cuda()`
under the verifier's redirect return the tensor itself, which is why the rules only
fire on moves that copy where the code runs (see hazards.md, parameter-moved-in-init).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import libcst as cst

from gradfix.analysis import torchapi
from gradfix.analysis.names import ImportMap, dotted, qualname
from gradfix.analysis.tree import walk

# Factories that accept `requires_grad=` and `device=`.
FACTORIES = frozenset(
    "torch." + n for n in (
        "randn", "rand", "zeros", "ones", "empty", "full", "tensor", "arange", "linspace", "logspace", "eye",
        "randn_like", "rand_like", "zeros_like", "ones_like", "empty_like", "full_like",
    )
)
PARAMETER_CTORS = frozenset({"torch.nn.Parameter", "torch.nn.parameter.Parameter"})
# The legacy wrapper `Variable(tensor, requires_grad=True)`: a leaf like a factory's, but with no `device=`
VARIABLE_CTORS = frozenset({"torch.autograd.Variable", "torch.autograd.variable.Variable"})
# dtype methods that copy from a float32 tensor
DTYPE_METHODS = {"double": "torch.float64", "half": "torch.float16", "bfloat16": "torch.bfloat16"}
DTYPE_NAMES = {
    "torch.float64": "torch.float64", "torch.double": "torch.float64", "torch.float16": "torch.float16",
    "torch.half": "torch.float16", "torch.bfloat16": "torch.bfloat16", "torch.float32": "torch.float32",
    "torch.float": "torch.float32",
}
DEVICE_WORDS = ("device", "dev")
MOVE_METHODS = frozenset({"cuda", "to", "cpu", "float", "double", "half", "bfloat16"})

# nn modules without parameters or buffers: a plain list of them registers nothing that trains.
PARAMETERLESS_MODULES = frozenset(
    "torch.nn." + n for n in (
        "ReLU", "ReLU6", "LeakyReLU", "ELU", "SELU", "CELU", "GELU", "SiLU", "Mish", "Sigmoid", "Tanh", "Softmax",
        "LogSoftmax", "Softplus", "Softsign", "Hardtanh", "Hardswish", "Hardsigmoid", "Tanhshrink", "Identity",
        "Flatten", "Unflatten", "MaxPool1d", "MaxPool2d", "MaxPool3d", "AvgPool1d", "AvgPool2d", "AvgPool3d",
        "AdaptiveAvgPool1d", "AdaptiveAvgPool2d", "AdaptiveAvgPool3d", "AdaptiveMaxPool1d", "AdaptiveMaxPool2d",
        "AdaptiveMaxPool3d", "Upsample", "PixelShuffle", "PixelUnshuffle", "Dropout", "Dropout1d", "Dropout2d",
        "Dropout3d", "AlphaDropout", "ZeroPad1d", "ZeroPad2d", "ZeroPad3d", "ConstantPad1d", "ConstantPad2d",
        "ConstantPad3d", "ReflectionPad1d", "ReflectionPad2d", "ReflectionPad3d", "ReplicationPad1d", "ReplicationPad2d",
        "ReplicationPad3d", "CircularPad1d", "CircularPad2d", "CircularPad3d", "Threshold", "LogSigmoid", "Softmin",
        "Softmax2d", "ChannelShuffle",
    )
)

EMPTY = cst.Module([])
def all_calls(index) -> list[cst.Call]:
    """Every call of the file in source order, collected once per FileIndex for all the rules that scan calls."""
    return index.memo("calls", lambda: [n for n in walk(index.module) if type(n) is cst.Call])


def last_name(func: cst.BaseExpression) -> str | None:
    """`autocast` of `torch.cuda.amp.autocast` / `autocast`; None for other callees."""
    if isinstance(func, cst.Attribute):
        return func.attr.value
    if isinstance(func, cst.Name):
        return func.value
    return None


def code_of(node: cst.CSTNode) -> str:
    return EMPTY.code_for_node(node).strip()


# --------------------------------------------------------------------------- names


def module_alias(imports: ImportMap, full: str) -> str | None:
    """The local spelling of module `full` (`torch`, `torch.nn`): `th`, `nn`, `torch.nn`; None if unbound."""
    best = None
    for local, target in imports.aliases.items():
        if target == full:
            return local
        if full.startswith(target + ".") and best is None:
            best = local + full[len(target):]
    return best


def attr_chain(dotted_name: str) -> cst.BaseExpression:
    parts = dotted_name.split(".")
    expr: cst.BaseExpression = cst.Name(parts[0])
    for p in parts[1:]:
        expr = cst.Attribute(value=expr, attr=cst.Name(p))
    return expr


def root_name(expr: cst.BaseExpression) -> cst.Name | None:
    while isinstance(expr, cst.Attribute):
        expr = expr.value
    return expr if isinstance(expr, cst.Name) else None


def torch_expr_for(func: cst.BaseExpression, imports: ImportMap, suffix: str) -> cst.BaseExpression | None:
    """An expression for `torch.<suffix>`: reuses the root of `func` when it is `torch` itself
    (`torch.cuda.amp.autocast` -> `torch.autocast`), else the file's alias of torch."""
    root = root_name(func)
    if root is not None and isinstance(func, cst.Attribute) and imports.resolve(root.value) == "torch":
        return attr_chain(f"{root.value}.{suffix}")
    alias = module_alias(imports, "torch")
    if alias is None:
        return None
    return attr_chain(f"{alias}.{suffix}")


def nn_expr(imports: ImportMap, cls: str) -> cst.BaseExpression | None:
    """`nn.ModuleList` (or `torch.nn.ModuleList`, ...) as the file spells torch.nn; None if neither is bound."""
    for local, target in imports.aliases.items():
        if target == f"torch.nn.{cls}":
            return cst.Name(local)
    alias = module_alias(imports, "torch.nn")
    if alias is None:
        return None
    return attr_chain(f"{alias}.{cls}")


# --------------------------------------------------------------------------- args


def kwarg(call: cst.Call, name: str) -> cst.Arg | None:
    for a in call.args:
        if a.keyword is not None and a.keyword.value == name:
            return a
    return None


def has_star(call: cst.Call) -> bool:
    return any(a.star for a in call.args)


def is_true(expr: cst.BaseExpression | None) -> bool:
    return isinstance(expr, cst.Name) and expr.value == "True"


def make_kwarg(name: str, value: cst.BaseExpression) -> cst.Arg:
    return cst.Arg(value=value, keyword=cst.Name(name),
                   equal=cst.AssignEqual(whitespace_before=cst.SimpleWhitespace(""),
                                         whitespace_after=cst.SimpleWhitespace("")))


def append_arg(args: list[cst.Arg], new: cst.Arg) -> list[cst.Arg]:
    """`args` + `new`, keeping a multi-line call's layout (a trailing comma stays trailing)."""
    if not args:
        return [new]
    out = list(args)
    last = out[-1]
    if isinstance(last.comma, cst.Comma):
        between = out[-2].comma if len(out) >= 2 and isinstance(out[-2].comma, cst.Comma) else \
            cst.Comma(whitespace_after=cst.SimpleWhitespace(" "))
        out[-1] = last.with_changes(comma=between)
        out.append(new.with_changes(comma=last.comma))
    else:
        out[-1] = last.with_changes(comma=cst.Comma(whitespace_after=cst.SimpleWhitespace(" ")))
        out.append(new)
    return out


def without_arg(args, drop: cst.Arg) -> list[cst.Arg]:
    """`args` without `drop`; the new last argument takes the dropped one's comma (trailing or none)."""
    out = list(args)
    i = next(k for k, a in enumerate(out) if a is drop)
    del out[i]
    if out and i == len(out):
        out[-1] = out[-1].with_changes(comma=drop.comma)
    return out


def insert_before(args, anchor: cst.Arg, new: cst.Arg) -> list[cst.Arg]:
    out = list(args)
    i = next(k for k, a in enumerate(out) if a is anchor)
    comma = out[i - 1].comma if i > 0 and isinstance(out[i - 1].comma, cst.Comma) else \
        cst.Comma(whitespace_after=cst.SimpleWhitespace(" "))
    out.insert(i, new.with_changes(comma=comma))
    return out


def method_text(call: cst.Call) -> str:
    """`.to(device)` of `x.to(device)`."""
    assert isinstance(call.func, cst.Attribute)
    whole = " ".join(code_of(call).split())
    recv = " ".join(code_of(call.func.value).split())
    return whole[len(recv):] if whole.startswith(recv) else f".{call.func.attr.value}(...)"


# --------------------------------------------------------------------------- copies after a leaf


@dataclass
class Move:
    call: cst.Call           # the `.cuda()` / `.to(dev)` / `.double()` call
    method: str
    device: cst.BaseExpression | None = None   # device it moves to, when it is a pure device move
    dtype: str | None = None                   # dtype qualname, when it is a pure dtype change


@dataclass
class CopyChain:
    """`torch.randn(3, requires_grad=True).cuda()` and the like: a leaf that requires grad, then copies."""

    outer: cst.Call                          # the whole expression
    base: cst.Call                           # the factory (or Parameter) call
    kind: str                                # "factory" or "parameter"
    requires_grad_arg: cst.Arg | None        # `requires_grad=True` of the factory
    requires_grad_call: cst.Call | None      # `.requires_grad_()` between factory and the copies
    moves: list[Move] = field(default_factory=list)   # innermost first
    copying: list[Move] = field(default_factory=list)  # the moves that copy on the code's hardware
    device_kw: bool = True                   # the base accepts `device=` (a factory; not `Variable(...)`)


def _device_like(expr: cst.BaseExpression, imports: ImportMap) -> bool:
    if isinstance(expr, cst.SimpleString):
        return True
    if isinstance(expr, cst.Call) and qualname(expr.func, imports) == "torch.device":
        return True
    name = dotted(expr)
    if name is None:
        return False
    last = name.rsplit(".", 1)[-1].lower()
    return any(w in last for w in DEVICE_WORDS)


def _string_value(expr: cst.BaseExpression) -> str | None:
    if isinstance(expr, cst.SimpleString):
        try:
            value = expr.evaluated_value
        except Exception:  # noqa: BLE001
            return None
        return value if isinstance(value, str) else None
    return None


def classify_move(call: cst.Call, imports: ImportMap) -> Move | None:
    """A call that may copy its receiver, or None when it is something else."""
    if not isinstance(call.func, cst.Attribute):
        return None
    meth = call.func.attr.value
    if meth == "cuda":
        if has_star(call) or any(a.keyword is not None and a.keyword.value not in ("device", "non_blocking")
                                 for a in call.args):
            return Move(call, meth)
        pos = [a for a in call.args if a.keyword is None]
        dev_kw = kwarg(call, "device")
        if not pos and dev_kw is None:
            return Move(call, meth, device=cst.SimpleString('"cuda"'))
        arg = pos[0].value if pos else dev_kw.value  # type: ignore[union-attr]
        if isinstance(arg, cst.Integer):
            return Move(call, meth, device=cst.SimpleString(f'"cuda:{arg.value}"'))
        return Move(call, meth)
    if meth in DTYPE_METHODS:
        return Move(call, meth, dtype=DTYPE_METHODS[meth]) if not call.args else Move(call, meth)
    if meth in ("float", "cpu"):
        return Move(call, meth, dtype="torch.float32" if meth == "float" and not call.args else None)
    if meth == "to":
        if has_star(call):
            return Move(call, meth)
        pos = [a for a in call.args if a.keyword is None]
        kws = {a.keyword.value: a for a in call.args if a.keyword is not None}
        if set(kws) - {"device", "dtype", "non_blocking", "copy"}:
            return Move(call, meth)
        if len(pos) == 1 and not ({"device", "dtype"} & set(kws)):
            arg = pos[0].value
            q = qualname(arg, imports)
            if q in DTYPE_NAMES:
                return Move(call, meth, dtype=DTYPE_NAMES[q])
            if _device_like(arg, imports):
                return Move(call, meth, device=arg)
            return Move(call, meth)
        if not pos and set(kws) & {"device", "dtype"} == {"device"}:
            return Move(call, meth, device=kws["device"].value)
        if not pos and set(kws) & {"device", "dtype"} == {"dtype"}:
            q = qualname(kws["dtype"].value, imports)
            return Move(call, meth, dtype=DTYPE_NAMES.get(q or ""))
        return Move(call, meth)
    return None


def _copies(move: Move, base_device: str | None, base_dtype: str | None, has_device_kw: bool) -> bool:
    """Whether `move` copies a tensor created on `base_device` with `base_dtype` (float32 by default)."""
    if move.dtype is not None:
        return move.dtype != (base_dtype or "torch.float32")
    if move.method == "cpu":
        return base_device is not None and base_device != "cpu"
    if move.device is not None:
        target = _string_value(move.device)
        if target is not None:
            target = target.split(":")[0]
            if has_device_kw:
                return base_device is not None and base_device != target
            return target != "cpu"
        return not has_device_kw  # `.to(device)`: a copy wherever device is an accelerator
    return False


def copy_chain(expr: cst.BaseExpression, imports: ImportMap, leaf: cst.BaseExpression | None = None) -> CopyChain | None:
    """Recognise `factory(..., requires_grad=True).<copies>`, `factory(...).requires_grad_().<copies>`
    and `nn.Parameter(t).<copies>`; None unless at least one move copies. With `leaf`, the copies
    may start from a name that holds `leaf` (`x = x.to(device)` after `x = torch.rand(..., requires_grad=True)`)."""
    moves: list[Move] = []
    cur = expr
    while isinstance(cur, cst.Call) and isinstance(cur.func, cst.Attribute) and (
            isinstance(cur.func.value, cst.Call) or leaf is not None and isinstance(cur.func.value, cst.Name)):
        if cur.func.attr.value == "requires_grad_":
            break
        mv = classify_move(cur, imports)
        if mv is None:
            return None
        moves.append(mv)
        cur = cur.func.value
        if isinstance(cur, cst.Name):
            cur = leaf
            break
    if not moves or not isinstance(cur, cst.Call):
        return None
    moves.reverse()
    rg_call = None
    if isinstance(cur.func, cst.Attribute) and cur.func.attr.value == "requires_grad_":
        if cur.args and not (len(cur.args) == 1 and is_true(cur.args[0].value)):
            return None
        rg_call = cur
        cur = cur.func.value
        if not isinstance(cur, cst.Call):
            return None
    q = qualname(cur.func, imports)
    if q in PARAMETER_CTORS:
        if rg_call is not None:
            return None
        chain = CopyChain(expr, cur, "parameter", None, None, moves)
        base_device, base_dtype, has_dev = None, None, False
    elif q in FACTORIES:
        rg = kwarg(cur, "requires_grad")
        if rg_call is None and (rg is None or not is_true(rg.value)):
            return None
        if rg_call is not None and rg is not None:
            return None
        if q.endswith("_like"):
            return None  # device and dtype come from the other tensor: unknown here
        chain = CopyChain(expr, cur, "factory", rg, rg_call, moves)
        dev = kwarg(cur, "device")
        has_dev = dev is not None
        base_device = _string_value(dev.value).split(":")[0] if dev is not None and _string_value(dev.value) else None
        dt = kwarg(cur, "dtype")
        base_dtype = DTYPE_NAMES.get(qualname(dt.value, imports) or "") if dt is not None else None
        if dt is not None and base_dtype is None:
            return None
    elif q in VARIABLE_CTORS:
        # `Variable(torch.ones(3), requires_grad=True).cuda()`: only around a factory of known (CPU, float32)
        # device and dtype, so that which moves copy is known
        rg = kwarg(cur, "requires_grad")
        inner = cur.args[0].value if cur.args and cur.args[0].keyword is None else None
        if rg_call is not None or rg is None or not is_true(rg.value) or not isinstance(inner, cst.Call) or \
                qualname(inner.func, imports) not in FACTORIES or q is None or \
                kwarg(inner, "device") is not None or kwarg(inner, "dtype") is not None:
            return None
        chain = CopyChain(expr, cur, "factory", rg, None, moves, device_kw=False)
        base_device, base_dtype, has_dev = None, None, False
    else:
        return None
    dtype = base_dtype
    device = base_device
    for mv in moves:
        if _copies(mv, device, dtype, has_dev):
            chain.copying.append(mv)
        if mv.dtype is not None:
            dtype = mv.dtype
        elif mv.device is not None and _string_value(mv.device):
            device = _string_value(mv.device).split(":")[0]  # type: ignore[union-attr]
    if not chain.copying:
        return None
    return chain


class _Swap(cst.CSTTransformer):
    """Replace nodes of a subtree by identity (one replacement for a nested chain)."""

    def __init__(self, table: dict[int, cst.CSTNode]):
        super().__init__()
        self.table = table

    def on_leave(self, original, updated):
        return self.table.get(id(original), updated)


def swap(tree: cst.CSTNode, table: dict[int, cst.CSTNode]) -> cst.CSTNode:
    return tree.visit(_Swap(table))


def outermost_chain(node: cst.Call, index) -> bool:
    """False when `node` is the receiver of a further move (`node.double()`): the outer call is the finding."""
    parent = index.parents.get(node)
    if isinstance(parent, cst.Attribute) and parent.value is node:
        grand = index.parents.get(parent)
        if isinstance(grand, cst.Call) and grand.func is parent and copy_chain(grand, index.imports) is not None:
            return False
    return True


def stored_name(node: cst.CSTNode, index) -> str | None:
    """`w` in `w = <node>` (or `self.w = <node>`)."""
    parent = index.parents.get(node)
    if isinstance(parent, (cst.Assign, cst.AnnAssign)) and parent.value is node:
        targets = [t.target for t in parent.targets] if isinstance(parent, cst.Assign) else [parent.target]
        if len(targets) == 1 and isinstance(targets[0], (cst.Name, cst.Attribute)):
            return code_of(targets[0])
    return None


def _bound_targets(target: cst.BaseExpression) -> list[cst.BaseExpression]:
    """Names and attributes an assignment target rebinds (`x`, `self.x`, `a, b`); not `x[0] = ...`."""
    if isinstance(target, (cst.Name, cst.Attribute)):
        return [target]
    if isinstance(target, (cst.Tuple, cst.List)):
        out = []
        for el in target.elements:
            v = el.value.value if isinstance(el.value, cst.StarredElement) else el.value
            out += _bound_targets(v)
        return out
    return []


def is_optimizer_call(node, imports: ImportMap) -> bool:
    """`torch.optim.SGD(...)` and the other torch optimizers, however imported."""
    return isinstance(node, cst.Call) and (qualname(node.func, imports) or "").startswith(torchapi.OPTIMIZER_PREFIXES)


def used_as_leaf(node: cst.CSTNode, index, updates_in_place: bool = False) -> str | None:
    """How the value stored from `node` is used as a trainable leaf, or None when nothing shows it:
    given to an optimizer (directly, in a list, or through a name bound to such a list), its
    `.grad` read, or returned to the caller. A tensor used only through `torch.autograd.grad`, as an
    initial state or an accumulator, shows no hazard (a non-leaf works there). With `updates_in_place`,
    an augmented assignment under no_grad (`w -= lr * w.grad`, the manual update: in place on the same
    tensor) does not count as a rebinding."""
    parents = index.parents
    comp = parents.get(node)
    if isinstance(comp, (cst.ListComp, cst.GeneratorExp)) and comp.elt is node:
        node = comp  # `ws = [torch.ones(2, requires_grad=True).to(dev) for _ in ...]`: how the list is used
    cur = parents.get(node)
    while cur is not None and not isinstance(cur, (cst.BaseSmallStatement, cst.BaseCompoundStatement)):
        if is_optimizer_call(cur, index.imports):
            return "it is given to an optimizer"
        cur = parents.get(cur)
    name = stored_name(node, index)
    if name is None:
        return None
    scope = index.enclosing(node, (cst.FunctionDef,)) or index.module
    if name.startswith("self."):
        scope = index.enclosing_class(node) or scope
    bound = 0
    for n in walk(scope):  # rebound later (`total = total + x`): the uses may see another value
        if updates_in_place and isinstance(n, cst.AugAssign) and index.under_no_grad(n):
            continue
        targets = [t.target for t in n.targets] if isinstance(n, cst.Assign) else \
            [n.target] if isinstance(n, (cst.AugAssign, cst.AnnAssign, cst.For)) else []
        for t in targets:
            bound += sum(1 for x in _bound_targets(t) if code_of(x) == name)
    if bound > 1:
        return None
    listed: set[str] = {name}
    for n in walk(scope):  # names bound to containers that hold it: `params = [w, b]`
        if isinstance(n, cst.Assign) and len(n.targets) == 1 and isinstance(n.targets[0].target, cst.Name) and \
                isinstance(n.value, (cst.List, cst.Tuple)) and any(code_of(e.value) == name for e in n.value.elements):
            listed.add(n.targets[0].target.value)
    for n in walk(scope):
        if isinstance(n, cst.Attribute) and n.attr.value == "grad" and code_of(n.value) == name:
            return f"`{name}.grad` is read"
        if is_optimizer_call(n, index.imports):
            for sub in walk(n):
                if isinstance(sub, (cst.Name, cst.Attribute)) and code_of(sub) in listed:
                    return "it is given to an optimizer"
        if isinstance(n, cst.Return) and n.value is not None and isinstance(scope, cst.FunctionDef):
            vals = n.value.elements if isinstance(n.value, cst.Tuple) else [n.value]
            if any(code_of(v.value if isinstance(v, cst.Element) else v) == name for v in vals):
                return "it is returned to the caller"
    return None


def is_module_ctor_call(expr: cst.BaseExpression, index) -> str | None:
    """The constructor qualname when `expr` builds an nn.Module (`nn.Linear(...)`, `Block(...).to(dev)`)."""
    q = index.ctor_of(expr)
    if q is not None and index.is_module_ctor(q):
        return q
    return None


def trains(ctor: str, index=None) -> bool:
    """Whether a module built by `ctor` may hold parameters or buffers. A class of the file counts
    unless `index` shows it parameter-free (`parameter_free_class`), a class of another project
    file unless the project index does."""
    if ctor in PARAMETERLESS_MODULES:
        return False
    return index is None or not (parameter_free_class(index, ctor) or index.parameter_free_project_class(ctor))


# Calls that give a module state of its own: parameters, buffers, registered children.
_STATE_CALLS = frozenset({"register_buffer", "register_parameter", "add_module", "register_module", "__setattr__",
                          "setattr", "Parameter"})
# Builtins whose arguments are data: `range(self.k)`, `int(self.k)`.
_DATA_BUILTINS = frozenset({"int", "float", "bool", "str", "len", "range", "min", "max", "abs", "round", "print",
                            "isinstance", "tuple"})


def parameter_free_class(index, name: str) -> bool:
    """A module class of the file that can hold no parameter or buffer: its bases are
    `nn.Module` or such classes, it creates no `nn.Parameter`, registers nothing
    (`register_buffer`, `add_module`, `setattr`), constructs only parameter-free modules
    (`nn.AvgPool1d`, or such classes of the file), and every other attribute it keeps is data:
    read only in arithmetic, comparisons or as an argument of a torch function or a builtin
    (`self.kernel_size - 1`), never called, iterated or used as an object."""
    table = index.memo("params.parameter_free_classes", dict)
    if name not in table:
        table[name] = False  # recursion (a class built from itself): not shown
        table[name] = _parameter_free(index, name)
    return table[name]


def _parameter_free(index, name: str) -> bool:
    cls = index.classes.get(name)
    if cls is None or name not in index.module_classes:
        return False
    imports = index.imports
    for base in cls.bases:
        q = qualname(base.value, imports)
        if q != "torch.nn.Module" and q not in PARAMETERLESS_MODULES and not (
                (q in index.classes and parameter_free_class(index, q)) or index.parameter_free_project_class(q)):
            return False
    kept: dict[str, list] = {}
    for node in walk(cls):
        if isinstance(node, cst.Call):
            q = qualname(node.func, imports) or ""
            if (last_name(node.func) or "") in _STATE_CALLS:
                return False
            if index.is_module_ctor(q) and trains(q, index):
                return False
        elif isinstance(node, (cst.Assign, cst.AugAssign, cst.AnnAssign)):
            targets = [t.target for t in node.targets] if isinstance(node, cst.Assign) else [node.target]
            for t in targets:
                if not isinstance(t, cst.Attribute) or not (isinstance(t.value, cst.Name) and t.value.value == "self"):
                    if any(isinstance(n, cst.Attribute) and code_of(n.value) == "self" for n in walk(t)):
                        return False  # `self.x[k] = ...`, `self.a, self.b = ...`: not followed
                    continue
                value = node.value
                if value is None or not (_constant(value) or is_module_ctor_call(value, index) is not None):
                    kept.setdefault(t.attr.value, [])
    if not kept:
        return True
    parents = index.parents
    for node in walk(cls):
        if isinstance(node, cst.Attribute) and isinstance(node.value, cst.Name) and node.value.value == "self" and \
                node.attr.value in kept and not _data_use(node, parents, imports):
            return False
    return True


def _constant(expr) -> bool:
    if isinstance(expr, (cst.Integer, cst.Float, cst.SimpleString, cst.ConcatenatedString)):
        return True
    if isinstance(expr, cst.Name):
        return expr.value in ("True", "False", "None")
    if isinstance(expr, cst.UnaryOperation):
        return _constant(expr.expression)
    return isinstance(expr, cst.Tuple) and all(_constant(e.value) for e in expr.elements)


def _data_use(node: cst.Attribute, parents, imports) -> bool:
    """`self.k` read as data (or assigned): an operand, compared, or an argument of a torch
    function or a builtin."""
    parent = parents.get(node)
    if isinstance(parent, (cst.BinaryOperation, cst.UnaryOperation, cst.ComparisonTarget, cst.Comparison)):
        return True
    if isinstance(parent, (cst.AugAssign, cst.AnnAssign, cst.AssignTarget)) and parent.target is node:
        return True
    if isinstance(parent, cst.Arg) and parent.value is node:
        call = parents.get(parent)
        q = qualname(call.func, imports) or "" if isinstance(call, cst.Call) else ""
        return (q.startswith("torch.") and not q.startswith("torch.nn.") or q.startswith("torch.nn.functional.")
                or q in _DATA_BUILTINS or q in PARAMETERLESS_MODULES)
    return False


__all__ = [
    "FACTORIES", "PARAMETER_CTORS", "VARIABLE_CTORS", "is_optimizer_call", "MOVE_METHODS", "CopyChain", "Move", "copy_chain", "classify_move",
    "module_alias", "torch_expr_for", "nn_expr", "kwarg", "make_kwarg", "append_arg", "without_arg", "insert_before",
    "code_of", "all_calls", "last_name", "used_as_leaf", "is_module_ctor_call", "trains", "parameter_free_class",
    "outermost_chain",
    "stored_name", "swap", "method_text",
]


def freeze_target(node) -> str | None:
    """`model` for `model.requires_grad_(False)` / `for p in model.parameters(): p.requires_grad = False`."""
    if isinstance(node, cst.Expr) and isinstance(node.value, cst.Call):
        call = node.value
        if isinstance(call.func, cst.Attribute) and call.func.attr.value == "requires_grad_" and call.args and \
                code_of(call.args[0].value) == "False":
            return dotted(call.func.value)
    if isinstance(node, cst.For) and isinstance(node.target, cst.Name) and isinstance(node.iter, cst.Call) and \
            isinstance(node.iter.func, cst.Attribute) and node.iter.func.attr.value == "parameters":
        var = node.target.value
        for stmt in node.body.body:
            if isinstance(stmt, cst.SimpleStatementLine):
                for s in stmt.body:
                    if isinstance(s, cst.Assign) and len(s.targets) == 1 and \
                            code_of(s.targets[0].target) == f"{var}.requires_grad" and code_of(s.value) == "False":
                        return dotted(node.iter.func.value)
    return None
