"""Which module classes of a file return a tensor that autograd saved for backward, so that an in-place op on
what they return breaks backward: `class ConvUnit(nn.Module)` whose `forward` ends in `return
self.act(self.bn(self.conv(x)))` with `self.act = nn.ReLU()`; used inside `nn.Sequential(ConvUnit(...),
ConvUnit(...))`, that Sequential's output is a ReLU's saved output too (GF101: `out = self.block(x)`, then
`out += residual`).

Shown only when every `return` of the class's own `forward` gives such a value directly: a call of a submodule
attribute that keeps its output (analysis/fileindex.py `output_saving_submodules`: ReLU, Sigmoid, Tanh,
Softmax, an in-place LeakyReLU, a Sequential ending in one, a class of the file that is one by this test), a
call of an output-saving function (`torch.relu(h)`, `F.sigmoid(h)`) or method (`h.relu()`), or a name whose
every binding in `forward` is one of those. A `forward` the class does not define (inherited), one with a
`return` of anything else or with no `return`, or a submodule chosen at run time (`nn.ReLU() if relu else
nn.Identity()`): not shown, and the answer is False (precision over recall).
"""

from __future__ import annotations

import libcst as cst

from gradfix.analysis import torchapi
from gradfix.analysis.fileindex import inplace_flag, strip_moves
from gradfix.analysis.numbers import own_nodes
from gradfix.analysis.names import qualname
from gradfix.analysis.tree import walk



def _saving_value(index, cname: str, expr, active: frozenset[str]) -> bool:
    """`expr` (returned or bound in `cname.forward`) is the result of an op that keeps its output."""
    if not isinstance(expr, cst.Call):
        return False
    func = expr.func
    if isinstance(func, cst.Attribute) and isinstance(func.value, cst.Name) and func.value.value == "self":
        return func.attr.value in output_saving_attrs(index, cname, active)
    q = qualname(func, index.imports)
    if q in torchapi.OUTPUT_SAVING_FUNCS:
        return True
    if q in torchapi.INPLACE_OUTPUT_SAVING_FUNCS:
        return inplace_flag(expr, torchapi.INPLACE_OUTPUT_SAVING_FUNCS[q])
    if q is None and isinstance(func, cst.Attribute) and func.attr.value in torchapi.OUTPUT_SAVING_METHODS:
        return True  # `h.relu()`, `logits.softmax(-1)` on a value of forward
    return False


def output_saving_attrs(index, cname: str, active: frozenset[str] = frozenset()) -> frozenset[str]:
    """The attributes `cname.__init__` sets, once each, to a module that keeps its output for backward."""
    init = index.method(cname, "__init__")
    if init is None:
        return frozenset()
    values: dict[str, list] = {}
    for node in walk(init.body):
        if isinstance(node, (cst.Assign, cst.AnnAssign, cst.AugAssign)):
            targets = [t.target for t in node.targets] if isinstance(node, cst.Assign) else [node.target]
            for target in targets:
                if isinstance(target, cst.Attribute) and isinstance(target.value, cst.Name) and \
                        target.value.value == "self":
                    values.setdefault(target.attr.value, []).append(node.value if len(targets) == 1 else None)
    return frozenset(attr for attr, vals in values.items()
                     if len(vals) == 1 and vals[0] is not None and saves_output(index, vals[0], active))


def saves_output(index, expr, active: frozenset[str] = frozenset()) -> bool:
    """Whether the module `expr` builds keeps its output for backward: a torch activation of torchapi's
    tables, an `nn.Sequential(...)` whose last layer is one, or a module class of this file whose every
    `forward` return is such an output (`class_returns_saved_output`)."""
    for _ in range(8):
        expr = strip_moves(expr)
        if not isinstance(expr, cst.Call):
            return False
        ctor = index.ctor_of(expr)
        if ctor in torchapi.OUTPUT_SAVING_MODULES:
            return True
        if ctor in torchapi.INPLACE_OUTPUT_SAVING_MODULES:
            return inplace_flag(expr, torchapi.INPLACE_OUTPUT_SAVING_MODULES[ctor])
        if ctor is not None and ctor in index.module_classes:
            return class_returns_saved_output(index, ctor, active)
        if ctor != "torch.nn.Sequential" or not expr.args:
            return False
        last = expr.args[-1]
        if last.star or last.keyword is not None:
            return False
        expr = last.value
    return False


def class_returns_saved_output(index, cname: str, active: frozenset[str] = frozenset()) -> bool:
    """Every `return` of `cname.forward` (defined by the class itself) gives a tensor an op saved as its
    output. `active`: the classes being asked about up the stack (a cycle answers False)."""
    if cname in active:
        return False
    key = f"output_saves.class:{cname}"
    return index.memo(key, lambda: _class_returns_saved_output(index, cname, active | {cname}))


def _class_returns_saved_output(index, cname: str, active: frozenset[str]) -> bool:
    forward = index.method(cname, "forward")
    if forward is None:
        return False
    returns = [n for n in own_nodes(forward) if isinstance(n, cst.Return)]  # not those of nested scopes
    if not returns:
        return False
    bound: dict[str, list] = {}
    for node in walk(forward.body):
        if isinstance(node, (cst.FunctionDef, cst.Lambda)):
            return False  # a nested scope may rebind names: not read here
        if isinstance(node, cst.Assign):
            for t in node.targets:
                names = [t.target] if isinstance(t.target, cst.Name) else \
                    [n for n in walk(t.target) if isinstance(n, cst.Name)]
                for n in names:
                    bound.setdefault(n.value, []).append(node.value if t.target is n else None)
        elif isinstance(node, (cst.AugAssign, cst.AnnAssign, cst.For, cst.With, cst.NamedExpr)):
            for n in walk(getattr(node, "target", None) or cst.Name("_")) if not isinstance(node, cst.With) else \
                    [n for item in node.items if item.asname is not None for n in walk(item.asname.name)]:
                if isinstance(n, cst.Name):
                    bound.setdefault(n.value, []).append(None)
    params = {p.name.value for p in forward.params.params + forward.params.kwonly_params +
              forward.params.posonly_params}
    for ret in returns:
        value = ret.value
        if isinstance(value, cst.Name):
            if value.value in params or not bound.get(value.value):
                return False
            if not all(v is not None and _saving_value(index, cname, v, active) for v in bound[value.value]):
                return False
        elif not _saving_value(index, cname, value, active):
            return False
    return True
