"""Leaf tensors that require grad: which names of a flow hold one at a step (GF101, GF213).

A leaf that requires grad is what `torch.randn(3, requires_grad=True)`, `nn.Parameter(t)` and
`torch.zeros(3).requires_grad_()` (also `t.detach().requires_grad_()`, or `w.requires_grad_()` as a
statement after `w = torch.zeros(3)`) make. autograd refuses an in-place op on one with grad mode on
("a leaf Variable that requires grad is being used in an in-place operation"), so a manual update
`w -= lr * w.grad` must run under `torch.no_grad()`.

The fact is shown or absent: every binding of the name that may reach the step must be such a
construction with no copy after it (`.to(dev)`, `.cuda()` give a non-leaf: GF302's), nothing in
between may turn requires_grad off (`w.requires_grad_(False)`, `w.requires_grad = False`), and no
binding of the name may come after the step inside a loop around it (the next pass would read that
one). Function parameters, attributes and anything else are unknown: no fact.
"""

from __future__ import annotations

import libcst as cst

from gradfix.analysis.names import qualname
from gradfix.analysis.params import FACTORIES, PARAMETER_CTORS, is_true, kwarg
from gradfix.analysis.reaching import reaching
from gradfix.analysis.tree import walk


def leaf_ctor(expr, imports, default_float32: bool = False) -> str | None:
    """How `expr` makes a leaf that requires grad ("created with requires_grad=True", "an nn.Parameter",
    "given requires_grad by `.requires_grad_()`"), or None: `torch.randn(3, requires_grad=True)`,
    `nn.Parameter(t)` (not with `requires_grad=False`), `torch.zeros(3).requires_grad_()`,
    `t.detach().requires_grad_()`; no copy may follow. With `default_float32` (the file never changes the
    default dtype), a factory without `dtype=` followed by `.float()` counts: that `.float()` returns the
    tensor itself."""
    if not isinstance(expr, cst.Call):
        return None
    func = expr.func
    if isinstance(func, cst.Attribute) and func.attr.value == "float" and not expr.args and \
            isinstance(func.value, cst.Call) and qualname(func.value.func, imports) in FACTORIES and \
            kwarg(func.value, "dtype") is None and default_float32:
        # `torch.tensor(1.0, requires_grad=True).float()`: float32 already, `.float()` returns the leaf itself
        return leaf_ctor(func.value, imports)
    if isinstance(func, cst.Attribute) and func.attr.value == "requires_grad_":
        inner = func.value
        if expr.args and not is_true(expr.args[0].value):
            return None
        if isinstance(inner, cst.Call) and (qualname(inner.func, imports) in FACTORIES or
                                            isinstance(inner.func, cst.Attribute) and inner.func.attr.value == "detach"
                                            and not inner.args):
            return "given requires_grad by `.requires_grad_()`"
        return None
    q = qualname(func, imports)
    if q in FACTORIES:
        arg = kwarg(expr, "requires_grad")
        return "created with requires_grad=True" if arg is not None and is_true(arg.value) else None
    if q in PARAMETER_CTORS and expr.args:
        arg = kwarg(expr, "requires_grad")
        if arg is None and len(expr.args) > 1 and expr.args[1].keyword is None:
            arg = expr.args[1]
        return "an nn.Parameter" if arg is None or is_true(arg.value) else None
    return None


def requires_grad_set(node, name: str) -> bool | None:
    """True / False when the statement `node` turns requires_grad of `name` on / off
    (`w.requires_grad_()`, `w.requires_grad = False`); None when it does neither."""
    if isinstance(node, cst.Expr) and isinstance(node.value, cst.Call):
        call = node.value
        f = call.func
        if isinstance(f, cst.Attribute) and f.attr.value == "requires_grad_" and \
                isinstance(f.value, cst.Name) and f.value.value == name:
            if not call.args:
                return True
            return True if is_true(call.args[0].value) else (
                False if isinstance(call.args[0].value, cst.Name) and call.args[0].value.value == "False" else None)
    if isinstance(node, cst.Assign) and len(node.targets) == 1:
        t = node.targets[0].target
        if isinstance(t, cst.Attribute) and t.attr.value == "requires_grad" and isinstance(t.value, cst.Name) and \
                t.value.value == name and isinstance(node.value, cst.Name) and node.value.value in ("True", "False"):
            return node.value.value == "True"
    return False if _mentions_requires_grad(node, name) else None


def _mentions_requires_grad(node, name: str) -> bool:
    """Any other statement that sets `name.requires_grad` (a computed flag): the fact is not shown."""
    if isinstance(node, cst.Assign):
        for t in node.targets:
            if isinstance(t.target, cst.Attribute) and t.target.attr.value == "requires_grad" and \
                    isinstance(t.target.value, cst.Name) and t.target.value.value == name:
                return True
    if isinstance(node, cst.Expr) and isinstance(node.value, cst.Call):
        f = node.value.func
        return isinstance(f, cst.Attribute) and f.attr.value == "requires_grad_" and \
            isinstance(f.value, cst.Name) and f.value.value == name
    return False


def _default_float32(index) -> bool:
    """The file never calls `set_default_dtype` / `set_default_tensor_type` (from the tree)."""
    def compute() -> bool:
        return not any(type(n) is cst.Attribute and n.attr.value in ("set_default_dtype", "set_default_tensor_type")
                       or type(n) is cst.Name and n.value in ("set_default_dtype", "set_default_tensor_type")
                       for n in walk(index.module))
    return index.memo("leaves.default_float32", compute)


def leaf_at(flow, name: str, step: int) -> str | None:
    """How `name` holds a leaf that requires grad at step `step` of `flow` (see `leaf_ctor`), when every
    binding reaching the step shows it; None when not shown."""
    here = flow.steps[step]
    # a binding after the step inside a loop around it reaches the step on the next pass: it must make a
    # leaf too, with nothing after it in the loop turning requires_grad off
    for b in flow.bindings:
        if b.name == name and b.step > step and any(loop in flow.steps[b.step].loops for loop in here.loops):
            if b.value is None or leaf_ctor(b.value, flow.index.imports, _default_float32(flow.index)) is None:
                return None
    for st in flow.steps[step + 1:]:
        if any(loop in st.loops for loop in here.loops) and requires_grad_set(st.node, name) is not None:
            return None
    reaches = reaching(flow, name, step)
    if not reaches:
        return None
    how = None
    for reach in reaches:
        b = reach.binding
        if b.step < 0 or b.value is None:
            return None
        made = leaf_ctor(b.value, flow.index.imports, _default_float32(flow.index))
        between = [st for st in flow.steps[b.step + 1: step] if not flow.exclusive(st.index, step)]
        flags = [(st, requires_grad_set(st.node, name)) for st in between]
        flags = [(st, f) for st, f in flags if f is not None]
        if flags:
            if any(f is False for _st, f in flags):
                return None  # turned off (or set from a computed flag) before the step
            home = flow.steps[b.step]
            if not any(st.branch == home.branch and st.loops == home.loops for st, _f in flags):
                return None  # turned on only in a branch or a loop: not shown on every path
            if made is None and isinstance(b.value, cst.Call) and qualname(b.value.func, flow.index.imports) in FACTORIES \
                    and kwarg(b.value, "requires_grad") is None:
                made = "given requires_grad by `.requires_grad_()`"
        if made is None:
            return None
        how = how or made
    return how


__all__ = ["leaf_ctor", "leaf_at", "requires_grad_set"]
