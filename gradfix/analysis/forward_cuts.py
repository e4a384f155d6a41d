"""What a module class's `forward` returns cut from autograd (`return out.detach()`, `{"w": w.data}`): the
training step's use of such an output carries no gradient however it is combined (GF104, GF307)."""

from __future__ import annotations

import re

import libcst as cst

from gradfix.analysis.flow import Flow
from gradfix.analysis.tree import walk


_MODE_TEST = re.compile(r"training|eval|infer|export|predict|deploy|test", re.I)


def forward_cuts(index, cls_name: str) -> dict:
    """What the forward of module class `cls_name` returns cut from autograd: {key: (cut node,
    "detach" or "data")}, the key a dict key or tuple position of the returned value (None: the
    whole value), when every return of forward cuts it: `weights = weights.detach(); return
    {"weight": weights, ...}`, `outputs = outputs.data; return outputs`. A cut under a test of the
    mode (`if not self.training:`, `if self.export:`) is an inference path and left out."""
    return index.memo(f"gradpath.forward_cuts.{cls_name}", lambda: _forward_cuts(index, cls_name))


def _forward_cuts(index, cls_name: str) -> dict:
    fn = index.method(cls_name, "forward")
    if fn is None:
        return {}
    flow = index.flow(fn)
    per_return = []
    for node in walk(fn.body):
        if type(node) is cst.Return and index.enclosing(node, (cst.FunctionDef, cst.Lambda)) is fn:
            value = node.value
            if isinstance(value, cst.Dict):
                items = [(literal_key(e.key), e.value) for e in value.elements if isinstance(e, cst.DictElement)]
            elif isinstance(value, cst.Tuple):
                items = [(i, e.value) for i, e in enumerate(value.elements)]
            else:
                items = [(None, value)]
            per_return.append({k: c for k, v in items if k is not None or v is value
                               for c in [_returned_cut(index, flow, fn, v)] if c is not None})
    if not per_return:
        return {}
    common = set(per_return[0])
    for cuts in per_return[1:]:
        common &= set(cuts)
    return {k: per_return[0][k] for k in common}


def _returned_cut(index, flow: Flow, fn, expr) -> tuple[cst.CSTNode, str] | None:
    """(cut, kind) when `expr` (or the value its name holds where it is returned) is `x.detach()`
    or `x.data` of an `x` that requires grad, outside a test of the mode."""
    if isinstance(expr, cst.Name):
        b = flow.name_binding(expr)
        if b is None or b.step < 0 or not isinstance(b.value, cst.BaseExpression) or b.no_grad:
            return None
        expr = b.value
    if isinstance(expr, cst.Call) and isinstance(expr.func, cst.Attribute) and expr.func.attr.value == "detach" \
            and not expr.args:
        inner, kind = expr.func.value, "detach"
    elif isinstance(expr, cst.Attribute) and expr.attr.value == "data":
        inner, kind = expr.value, "data"
    else:
        return None
    if flow.requires_grad(inner) is not True:
        return None
    cur = index.parents.get(expr)
    while cur is not None and cur is not fn:
        if type(cur) is cst.If and _MODE_TEST.search(index.code(cur.test)):
            return None
        cur = index.parents.get(cur)
    return expr, kind


def literal_key(expr):
    """The value of a string or integer literal key, else None."""
    if isinstance(expr, cst.SimpleString):
        value = expr.evaluated_value
        return value if isinstance(value, str) else None
    if isinstance(expr, cst.Integer):
        return int(expr.value)
    return None
