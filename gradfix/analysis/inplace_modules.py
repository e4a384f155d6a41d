"""Which module calls run in place on their input (GF101's `_inplace_module`): an activation or dropout
module built with `inplace=True` (`self.drop = nn.Dropout(0.1, inplace=True)`, `nn.ReLU(True)`), its
functional form called with it (`F.relu(h, inplace=True)`), or a module built plainly and switched to run in
place later in the same `__init__` (`self.drop.inplace = True`, or a walk of `self.modules()` that sets
`m.inplace = True`, under at most `isinstance(m, ...)` tests naming its class).

A module whose constructor is not one assignment the file shows, a switch in another method (not shown to
run), or a test naming other classes: not in place, as far as this module can show.
"""

from __future__ import annotations

import libcst as cst

from gradfix.analysis import torchapi
from gradfix.analysis.fileindex import inplace_flag
from gradfix.analysis.names import dotted, qualname
from gradfix.analysis.tree import walk

# Where each in-place-capable activation or dropout takes `inplace` positionally (module constructors and
# their functional forms, whose first argument is the input).
_INPLACE_POSITION = torchapi.INPLACE_MODULE_POSITION
_INPLACE_FUNCTIONAL_POSITION = torchapi.INPLACE_FUNCTIONAL_POSITION

def _constructor_call(index, flow, func) -> cst.Call | None:
    """The one `Ctor(...)` call that built the module `func` names (`self.drop` in `__init__`, or a local)."""
    found: list = []
    if isinstance(func, cst.Attribute) and isinstance(func.value, cst.Name) and func.value.value == "self":
        init = index.method(flow.class_name, "__init__") if flow.class_name else None
        if init is not None:
            for st in index.flow(init).steps:
                node = st.node
                if isinstance(node, cst.Assign) and any(isinstance(t.target, cst.Attribute) and
                                                        dotted(t.target) == dotted(func) for t in node.targets):
                    found.append(node.value)
    elif isinstance(func, cst.Name):
        found = [b.value for b in flow.visible_bindings(func.value)]
    return found[0] if len(found) == 1 and isinstance(found[0], cst.Call) else None


def inplace_callee(index, flow, call: cst.Call) -> str | None:
    """How `call` writes its input in place: an activation or dropout module built with `inplace=True`, or
    its functional form called with it; None otherwise."""
    q = qualname(call.func, index.imports) or ""
    if q.startswith("torch.nn.functional."):
        name = q.rsplit(".", 1)[-1]
        if name in _INPLACE_FUNCTIONAL_POSITION and inplace_flag(call, _INPLACE_FUNCTIONAL_POSITION[name]):
            return f"`F.{name}(..., inplace=True)`"
        return None
    ctor_call = _constructor_call(index, flow, call.func)
    if ctor_call is None:
        return None
    ctor = index.ctor_of(ctor_call) or ""
    short = ctor.rsplit(".", 1)[-1]
    if ctor.startswith("torch.nn.") and short in _INPLACE_POSITION and inplace_flag(ctor_call, _INPLACE_POSITION[short]):
        return f"it is an nn.{short} built with inplace=True"
    if ctor.startswith("torch.nn.") and short in _INPLACE_POSITION and _switched_inplace(index, flow, call.func, ctor):
        return f"it is an nn.{short} whose `inplace` the class's `__init__` sets to True afterwards"
    if ctor == "torch.nn.Sequential" and ctor_call.args and not ctor_call.args[0].star and \
            ctor_call.args[0].keyword is None and isinstance(ctor_call.args[0].value, cst.Call):
        first = ctor_call.args[0].value
        fctor = index.ctor_of(first) or ""
        fshort = fctor.rsplit(".", 1)[-1]
        if fctor.startswith("torch.nn.") and fshort in _INPLACE_POSITION and inplace_flag(first, _INPLACE_POSITION[fshort]):
            return f"it is an nn.Sequential whose first layer is an nn.{fshort} built with inplace=True"
    return None


def is_dropout(how: str) -> bool:
    """`inplace_callee`'s answer names a dropout (in place only in training mode; in eval it changes nothing)."""
    return "ropout" in how


def _switched_inplace(index, flow, func, ctor: str) -> bool:
    """`self.act = nn.ReLU()` in `__init__`, then, later in the same `__init__`, `self.act.inplace = True` or
    a walk of `self.modules()` that sets `m.inplace = True` on every module, or on those an `isinstance(m,
    (nn.ReLU, ...))` test naming `ctor` selects. Another method doing it is not shown to run."""
    if not (isinstance(func, cst.Attribute) and isinstance(func.value, cst.Name) and func.value.value == "self"
            and flow.class_name):
        return False
    init = index.method(flow.class_name, "__init__")
    if init is None:
        return False
    body = list(init.body.body)
    built = [i for i, stmt in enumerate(body) for n in walk(stmt) if isinstance(n, cst.Assign) and
             any(isinstance(t.target, cst.Attribute) and dotted(t.target) == dotted(func) for t in n.targets)]
    if len(built) != 1:
        return False
    for stmt in body[built[0] + 1:]:
        for node in walk(stmt):
            if not (isinstance(node, cst.Assign) and isinstance(node.value, cst.Name) and node.value.value == "True"
                    and len(node.targets) == 1 and isinstance(node.targets[0].target, cst.Attribute)
                    and node.targets[0].target.attr.value == "inplace"):
                continue
            holder = node.targets[0].target.value
            if dotted(holder) == dotted(func):
                return True
            if isinstance(holder, cst.Name) and _selected_in_modules_walk(index, node, holder.value, ctor):
                return True
    return False


def _selected_in_modules_walk(index, assign, var: str, ctor: str) -> bool:
    """`assign` (`m.inplace = True`) sits in `for m in self.modules():` with only `if isinstance(m, ...)`
    tests naming `ctor` between them."""
    cur = index.parents.get(assign)
    while cur is not None:
        if isinstance(cur, cst.If):
            test = cur.test
            if not (isinstance(test, cst.Call) and isinstance(test.func, cst.Name) and test.func.value == "isinstance"
                    and len(test.args) == 2 and isinstance(test.args[0].value, cst.Name)
                    and test.args[0].value.value == var):
                return False
            kinds = test.args[1].value
            kinds = [e.value for e in kinds.elements] if isinstance(kinds, cst.Tuple) else [kinds]
            if ctor not in {qualname(k, index.imports) for k in kinds}:
                return False
        elif isinstance(cur, cst.For):
            it = cur.iter
            return isinstance(cur.target, cst.Name) and cur.target.value == var and isinstance(it, cst.Call) and \
                not it.args and isinstance(it.func, cst.Attribute) and it.func.attr.value == "modules" and \
                isinstance(it.func.value, cst.Name) and it.func.value.value == "self"
        elif isinstance(cur, (cst.FunctionDef, cst.While, cst.With, cst.Try)):
            return False
        cur = index.parents.get(cur)
    return False
