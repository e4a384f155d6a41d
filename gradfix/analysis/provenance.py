"""Gradient provenance: may a value require grad, and does a function run with grad enabled?

Autograd saves a tensor only for an op some input of which requires grad, and only while grad
mode is on. So an in-place op can break `backward()` only on code that (a) runs with gradients
enabled and (b) handles values derived from something that requires grad: a module's parameter,
a model call's output, a tensor created with `requires_grad=True` (or `.requires_grad_()`), or a
function argument whose call sites pass such a value. Everything else (literals, `arange` grids,
integer images, data batches, scheduler tables, `.detach()`/`.item()`/`.data` results) cannot.

A value's provenance is kept *symbolic* in the flow of its own function: `Grad(deps=...)` names
the function parameters it derives from. They are resolved against the call sites only when a
rule asks (`FileIndex.holds`), so a function's flow stays local and the incremental parser can
keep reusing the flows of unchanged functions.

Unknown provenance resolves to `None`, and the rules stay silent on it.
"""

from __future__ import annotations

from dataclasses import dataclass

import libcst as cst

from gradfix.analysis import torchapi
from gradfix.analysis.names import dotted, qualname


@dataclass(frozen=True)
class Grad:
    """Whether a value may require grad: `yes` when shown, else the function parameters it
    derives from (`deps`), and `unknown` when some part of it is not known."""

    yes: bool = False
    deps: frozenset = frozenset()
    unknown: bool = False

    def __or__(self, other: "Grad") -> "Grad":
        if self.yes or other.yes:
            return YES
        if not other.deps and not other.unknown:
            return self
        if not self.deps and not self.unknown:
            return other
        return Grad(False, self.deps | other.deps, self.unknown or other.unknown)


YES = Grad(yes=True)
NO = Grad()
UNKNOWN = Grad(unknown=True)


def any_of(grads) -> Grad:
    out = NO
    for g in grads:
        out = out | g
        if out.yes:
            break
    return out


def module_output_grad(ctor: str | None, args_grad: Grad) -> Grad:
    """A module call's output: a module with parameters makes it require grad; a parameter-free
    one (activations, pooling, dropout, losses) passes its inputs' provenance through."""
    if ctor is not None and (ctor in torchapi.PARAMETER_FREE_MODULES or
                             (ctor.startswith("torch.nn.") and ctor.endswith("Loss"))):
        return args_grad
    return YES


_CUT_ATTRIBUTES = frozenset({"data", "grad", "shape", "dtype", "device", "ndim", "is_cuda", "requires_grad",
                             "grad_fn", "is_leaf", "layout"})
_PASSTHROUGH_ATTRIBUTES = frozenset({"T", "mT", "H", "mH", "real", "imag"})


def _flag(call: cst.Call, name: str, default: bool) -> bool | None:
    """The literal value of keyword `name` (`requires_grad=True`), `default` when it is not
    passed, None when it is passed as something else than a literal."""
    for arg in call.args:
        if arg.keyword is not None and arg.keyword.value == name:
            v = arg.value
            if isinstance(v, cst.Name) and v.value in ("True", "False"):
                return v.value == "True"
            return None
    return default


def expr_grad(flow, expr) -> Grad:
    """The provenance of `expr` in `flow` (names read through `flow.name_binding`)."""
    return _GradOf(flow).g(expr)


class _GradOf:
    """One evaluation. A class, not nested closures: closures that call each other form a
    reference cycle through their cells, which kept every version of an edited document (its
    index and flows) alive until the cyclic collector ran."""

    __slots__ = ("flow", "index", "depth")

    def __init__(self, flow):
        self.flow, self.index, self.depth = flow, flow.index, 0

    def g(self, node) -> Grad:
        memo = self.flow.grad_memo
        found = memo.get(id(node))
        if found is not None:
            return found
        self.depth += 1
        try:
            if self.depth > 60:
                return UNKNOWN
            found = memo[id(node)] = self.visit(node)
            return found
        finally:
            self.depth -= 1

    def visit(self, node) -> Grad:
        t = type(node)
        if t is cst.Name:
            if node.value in ("True", "False", "None"):
                return NO
            b = self.flow.name_binding(node)
            return b.grad if b is not None else UNKNOWN
        if t in (cst.Integer, cst.Float, cst.Imaginary, cst.SimpleString, cst.ConcatenatedString,
                 cst.FormattedString, cst.Comparison, cst.Lambda):
            return NO
        if t is cst.UnaryOperation:
            return NO if isinstance(node.operator, cst.Not) else self.g(node.expression)
        if t is cst.BinaryOperation:
            return self.g(node.left) | self.g(node.right)
        if t is cst.BooleanOperation:
            return self.g(node.left) | self.g(node.right)
        if t is cst.IfExp:
            return self.g(node.body) | self.g(node.orelse)
        if t in (cst.List, cst.Tuple, cst.Set):
            return any_of(self.g(e.value) for e in node.elements)
        if t is cst.Dict:
            return any_of(self.g(e.value) for e in node.elements if isinstance(e, cst.DictElement))
        if t in (cst.ListComp, cst.GeneratorExp, cst.SetComp):
            return self.g(node.elt) if not _iterates_parameters(node) else YES
        if t is cst.Subscript:
            return self.g(node.value)
        if t is cst.Attribute:
            attr = node.attr.value
            if attr in _CUT_ATTRIBUTES:
                return NO
            b = self.flow.env.get(dotted(node) or "")
            if b is not None:
                return b.grad
            if attr in _PASSTHROUGH_ATTRIBUTES:
                return self.g(node.value)
            if isinstance(node.value, cst.Name) and node.value.value == "self" and self.flow.in_module_class:
                return YES if attr in self.index.class_parameters(self.flow.class_name) else UNKNOWN
            return UNKNOWN
        if t is cst.Call:
            return self.call(node)
        if t is cst.StarredElement:
            return self.g(node.value)
        if t is cst.NamedExpr:
            return self.g(node.value)
        return UNKNOWN

    def args_grad(self, c: cst.Call) -> Grad:
        return any_of(self.g(a.value) for a in c.args
                      if a.keyword is None or a.keyword.value not in ("dim", "keepdim", "dtype", "device"))

    def call(self, c: cst.Call) -> Grad:
        func = c.func
        q = qualname(func, self.index.imports)
        if type(func) is cst.Attribute and (q is None or not q.startswith(("torch.", "numpy."))):
            meth = func.attr.value
            if meth in torchapi.NON_DIFFERENTIABLE_METHODS:
                return NO
            if meth == "requires_grad_":
                flag = c.args[0].value if c.args else None
                return NO if isinstance(flag, cst.Name) and flag.value == "False" else YES
            recv = func.value
            if type(recv) is cst.Call and type(recv.func) is cst.Name and recv.func.value == "super":
                return YES if meth == "forward" and self.flow.in_module_class else UNKNOWN
            kind, ctor = self.flow.classify(recv)[:2]
            if kind.value == "module":
                if meth in ("forward", "__call__"):
                    return module_output_grad(ctor, self.args_grad(c))
                return UNKNOWN if meth not in ("parameters", "named_parameters") else YES
            if kind.value in ("tensor", "parameter"):
                if meth in ("to", "type", "float", "double", "half", "bfloat16") and c.args:
                    first = c.args[0].value
                    dq = qualname(first, self.index.imports) or ""
                    if dq.startswith("torch.") and dq.split(".")[-1] in ("long", "int", "int64", "int32", "bool",
                                                                         "uint8", "int8", "int16"):
                        return NO
                return self.g(func.value) | self.args_grad(c)
            if isinstance(func.value, cst.Name) and func.value.value == "self" and self.flow.in_module_class:
                ctor = self.index.submodules.get(self.flow.class_name, {}).get(meth)
                if ctor is not None and self.index.is_module_ctor(ctor) or meth in self.index.class_parameters(self.flow.class_name):
                    return module_output_grad(ctor, self.args_grad(c))
                return UNKNOWN
            if meth in torchapi.OUTPUT_SAVING_METHODS or meth in torchapi.INPUT_SAVING_METHODS or \
                    meth in torchapi.VIEW_METHODS or meth in torchapi.INPLACE_METHODS or meth == "clone":
                return self.g(func.value) | self.args_grad(c)
            return UNKNOWN
        if type(func) is cst.Name:
            b = self.flow.name_binding(func)
            if b is not None and b.kind.value == "module":
                return module_output_grad(b.ctor, self.args_grad(c))
        if q is None:
            return UNKNOWN
        if self.index.is_module_ctor(q) or q.startswith(torchapi.OPTIMIZER_PREFIXES + torchapi.SCHEDULER_PREFIXES):
            return NO  # building a module or an optimizer, not computing a tensor
        if q in ("torch.nn.Parameter", "torch.nn.parameter.Parameter"):
            flag = _flag(c, "requires_grad", True)
            return NO if flag is False else YES
        if q in torchapi.TENSOR_FACTORIES:
            # `torch.tensor(out)` too: it copies the values out of the graph
            flag = _flag(c, "requires_grad", False)
            return UNKNOWN if flag is None else YES if flag else NO
        if q in torchapi.NON_DIFFERENTIABLE_FUNCS or q.startswith("numpy."):
            return NO
        if q.startswith("torch."):
            return self.args_grad(c)
        return UNKNOWN




def is_parameters_call(expr) -> bool:
    """`m.parameters()` / `m.named_parameters()`: iterating it yields tensors that require grad."""
    return isinstance(expr, cst.Call) and isinstance(expr.func, cst.Attribute) and \
        expr.func.attr.value in ("parameters", "named_parameters")


def _iterates_parameters(comp) -> bool:
    f = comp.for_in
    while f is not None:
        if is_parameters_call(f.iter):
            return True
        f = f.inner_for_in
    return False
