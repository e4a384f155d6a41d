"""Where a training loop keeps the loss tensor beyond its iteration without a `+=` of its own (GF208): a list
that outlives the optimizer step (`losses.append(loss)` into a list made before the training loop, or per
epoch around it), or a meter object of the file whose method adds the value it is handed into an attribute
(`meter.update(loss)` with `self.sum += val * n`). Each keeps every step's autograd graph alive.

Only what the file shows counts: the list's binding, the meter's class and method, a helper of the file the
method passes the value through (`self.sum += all_reduce(val)` with `def all_reduce(t): return t.clone() /
world`); a class or helper defined elsewhere, a conversion (`.item()`, `float`, `.detach()`) or a rebinding
of the value keeps the rule silent.
"""

from __future__ import annotations

import libcst as cst

from gradfix.analysis.expressions import _walk, code_of
from gradfix.analysis.tree import contains, walk

def meter_updates(it):
    """(call, argument, attribute) for `meter.update(loss)` in the loop, where `meter` is an instance of a
    class of this file whose `update` adds that parameter into an attribute (`self.sum += val * n`,
    `self.history.append(val)`) as it is: a running total kept inside an object."""
    names = it.loss_names()
    for node in _walk(it.loop.body):
        if not (isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute)):
            continue
        for pos, a in enumerate(node.args):
            value = a.value
            if isinstance(value, cst.Call) and isinstance(value.func, cst.Attribute) and \
                    value.func.attr.value == "clone" and not value.args:
                value = value.func.value  # `meter.add(loss.clone())`: a clone keeps the graph
            if a.star or not (isinstance(value, cst.Name) and value.value in names):
                continue
            b = it.flow.load_binding.get(id(value))
            if b is not None and b.no_grad:
                continue  # re-evaluated under no_grad: no graph
            cls = _instance_class(it, node.func.value)
            if cls is None:
                continue
            attr = _adds_parameter(it.index, cls, node.func.attr.value, pos, a)
            if attr is not None:
                yield node, value, attr
                break


def _instance_class(it, recv) -> str | None:
    """The class of this file `recv` is bound to (`losses = AverageMeter()`), None when not shown."""
    ctors = {b.ctor if b.ctor else (it.index.ctor_of(b.value) if isinstance(b.value, cst.BaseExpression) else None)
             for b in it.bindings(recv)}
    if len(ctors) != 1:
        return None
    ctor = ctors.pop()
    return ctor if ctor in it.index.classes and ctor not in it.index.module_classes else None


def _adds_parameter(index, cls: str, meth: str, pos: int, arg) -> str | None:
    """The attribute that `cls.meth` adds its parameter (given as `arg`, at position `pos`) into unchanged:
    `self.sum += val * n` or `self.values.append(val)`. None when the method converts it first (`val.item()`,
    `float(val)`, a type test) or rebinds it."""
    fn = index.method(cls, meth)
    if fn is None:
        return None
    params = [p.name.value for p in fn.params.params]
    if arg.keyword is not None:
        name = arg.keyword.value
    elif params and params[0] == "self" and pos + 1 < len(params):
        name = params[pos + 1]
    else:
        return None
    if name not in params:
        return None
    found = None
    for node in _walk(fn.body):
        if isinstance(node, (cst.Assign, cst.AugAssign, cst.AnnAssign)):
            targets = [t.target for t in node.targets] if isinstance(node, cst.Assign) else [node.target]
            if any(isinstance(t, cst.Name) and t.value == name for t in targets) and not isinstance(node, cst.AugAssign):
                return None  # rebound (converted) before use
            if isinstance(node, cst.AugAssign) and isinstance(node.operator, cst.AddAssign) and \
                    isinstance(node.target, cst.Attribute) and code_of(node.target.value) == "self" and \
                    _plain_use(node.value, name, index):
                found = found or node.target.attr.value
        elif isinstance(node, cst.Call):
            f = node.func
            if isinstance(f, cst.Name) and f.value in ("float", "int", "isinstance", "round") or \
                    isinstance(f, cst.Attribute) and f.attr.value in ("item", "detach", "tolist", "cpu", "numpy",
                                                                       "is_tensor"):
                if any(isinstance(n, cst.Name) and n.value == name for n in _walk(node)):
                    return None  # the value is converted (or its type tested) somewhere in the method
            if isinstance(f, cst.Attribute) and f.attr.value == "append" and code_of(f.value).startswith("self.") \
                    and len(node.args) == 1 and _plain_use(node.args[0].value, name, index):
                found = found or code_of(f.value)[len("self."):]
    return found


def _plain_use(expr, name: str, index=None, depth: int = 0) -> bool:
    """`val`, `val * n`, `n * val`, `val.clone()`: the parameter itself, at most scaled or cloned; also
    `helper(val)` for a function of the file whose every `return` is its first parameter so used
    (`def all_reduce(t, world=1): return t.clone() / world`): each keeps the value's graph."""
    if isinstance(expr, cst.Name):
        return expr.value == name
    if isinstance(expr, cst.BinaryOperation) and isinstance(expr.operator, (cst.Multiply, cst.Divide)):
        return _plain_use(expr.left, name, index, depth) or _plain_use(expr.right, name, index, depth)
    if not isinstance(expr, cst.Call):
        return False
    if isinstance(expr.func, cst.Attribute) and expr.func.attr.value == "clone" and not expr.args:
        return _plain_use(expr.func.value, name, index, depth)
    if index is None or depth > 3 or not isinstance(expr.func, cst.Name) or not expr.args or \
            expr.args[0].keyword is not None or expr.args[0].star or \
            not _plain_use(expr.args[0].value, name, index, depth):
        return False
    fn = index.functions.get(expr.func.value)
    if fn is None or fn.decorators or not fn.params.params:
        return False
    param = fn.params.params[0].name.value
    returns = [n for n in _walk(fn.body) if isinstance(n, cst.Return)]
    if not returns or any(isinstance(n, (cst.FunctionDef, cst.Lambda, cst.ClassDef)) for n in _walk(fn.body)):
        return False
    for n in _walk(fn.body):
        if isinstance(n, (cst.Assign, cst.AugAssign, cst.AnnAssign)):
            targets = [t.target for t in n.targets] if isinstance(n, cst.Assign) else [n.target]
            if any(isinstance(x, cst.Name) and x.value == param for t in targets for x in walk(t)):
                return False  # rebound (converted) before it is returned
    return all(r.value is not None and _plain_use(r.value, param, index, depth + 1) for r in returns)


def kept_backpropagated(index, it):
    """(append call, what it keeps) for `lst.append(y)` in the loop body where `y` is the very binding whose
    value (`y.backward()`) or item (`y["loss"].backward()`) this iteration backpropagates, `lst` is bound
    outside every loop of the scope to an empty list (`[]` / `list()`) and nothing in the loop rebinds it:
    the list outlives the iteration and holds each step's loss tensor with its graph (TRI-ML/packnet-sfm#51). A backward with
    `retain_graph` is left alone: a later backward over the list may be meant."""
    call_b = it.backward.node if it.backward is not None else None
    if not isinstance(call_b, cst.Call) or any(a.keyword is not None and a.keyword.value == "retain_graph"
                                               for a in call_b.args):
        return
    if not isinstance(call_b.func, cst.Attribute):
        return
    recv = call_b.func.value
    while isinstance(recv, cst.Subscript):
        recv = recv.value
    if not isinstance(recv, cst.Name):
        return
    flow = it.flow
    loss_b = flow.name_binding(recv)
    if loss_b is None or loss_b.no_grad:
        return
    held = f"`{recv.value}`" if recv is call_b.func.value else f"`{recv.value}` (it holds the backpropagated loss)"
    item = code_of(call_b.func.value) if recv is not call_b.func.value else None  # `out["loss"]`
    steps_here = any(e.op == "step" for e in it.events)
    for node in walk(it.loop.body):
        if not (isinstance(node, cst.Expr) and isinstance(node.value, cst.Call)):
            continue
        call = node.value
        f = call.func
        if not (isinstance(f, cst.Attribute) and f.attr.value == "append" and len(call.args) == 1
                and call.args[0].keyword is None):
            continue
        holder, key = _list_slot(f.value)
        if holder is None:
            continue
        arg = call.args[0].value
        if isinstance(arg, cst.Subscript) and item is not None and code_of(arg) == item:
            base = arg
            while isinstance(base, cst.Subscript):
                base = base.value
            if not (isinstance(base, cst.Name) and flow.name_binding(base) is loss_b):
                continue
            what = f"`{item}` (the backpropagated loss)"
        elif isinstance(arg, cst.Name) and arg.value == recv.value and flow.name_binding(arg) is loss_b:
            what = held
        else:
            continue
        lst = flow.name_binding(holder)
        made = lst.value if lst is not None else None
        if key is not None:
            made = _dict_entry(made, key)   # `history = {"loss": [], ...}`, then `history["loss"].append(loss)`
        if lst is None or made is None or not _empty_list(made) or not (0 <= lst.step < len(flow.steps)):
            continue
        if flow.steps[lst.step].loops and (contains(it.loop, lst.value) or not steps_here):
            # made inside the training loop, or in a loop around one that steps no optimizer (per batch
            # around micro-batches): not shown to outlive a step; per epoch around the stepping loop, it
            # holds every step of the epoch
            continue
        if any(b.name == holder.value and b.value is not None and contains(it.loop, b.value)
               for b in flow.bindings):
            continue  # rebound in the loop: a fresh list per iteration
        if _trimmed(it.loop, code_of(f.value)):
            continue  # `losses.clear()`, `del losses[:-k]`, `losses[:] = ...` in the loop: not shown to grow
        if key is not None and _slot_replaced(it.scope, holder.value, key):
            continue  # `history["loss"] = []` (or `history[k] = ...`, `history.update(...)`) after the display
        yield call, what


def _list_slot(target) -> tuple[cst.Name | None, str | None]:
    """(name, None) for `lst.append`, (name, key) for `d["key"].append` with a string literal key."""
    if isinstance(target, cst.Name):
        return target, None
    if isinstance(target, cst.Subscript) and isinstance(target.value, cst.Name) and len(target.slice) == 1:
        index = target.slice[0].slice
        if isinstance(index, cst.Index) and isinstance(index.value, cst.SimpleString):
            return target.value, index.value.evaluated_value
    return None, None


def _dict_entry(value, key: str):
    """The value a dict display gives `key` (`{"loss": [], "acc": []}`), or None."""
    if not isinstance(value, cst.Dict):
        return None
    found = None
    for el in value.elements:
        if not isinstance(el, cst.DictElement):
            return None   # `**other`: may replace the entry
        if isinstance(el.key, cst.SimpleString) and el.key.evaluated_value == key:
            found = el.value
    return found


def _slot_replaced(scope, name: str, key: str) -> bool:
    """Whether anything in `scope` may replace the entry `key` of `name` after its dict display: an item
    assignment with that key or one the rule cannot read (`name[k] = ...`), or a method that rewrites entries
    (`name.update(...)`, `setdefault`, `pop`, `clear`, ...). Conservative: any of them, wherever it is."""
    for node in walk(scope):
        if isinstance(node, (cst.Assign, cst.AugAssign, cst.AnnAssign)):
            targets = [t.target for t in node.targets] if isinstance(node, cst.Assign) else [node.target]
            for t in targets:
                if isinstance(t, cst.Subscript) and isinstance(t.value, cst.Name) and t.value.value == name:
                    slot = _list_slot(t)
                    if slot[1] in (key, None):
                        return True
        elif isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute) and \
                isinstance(node.func.value, cst.Name) and node.func.value.value == name and \
                node.func.attr.value in _DICT_WRITES:
            return True
        elif isinstance(node, cst.Del):
            if any(isinstance(n, cst.Subscript) and isinstance(n.value, cst.Name) and n.value.value == name
                   for n in walk(node)):
                return True
    return False


def _trimmed(loop, target: str) -> bool:
    """Whether the loop empties or cuts the list `target` (its code): `clear()`, `pop(...)`, `del t[...]`,
    `t[a:b] = ...`."""
    for node in walk(loop.body):
        if isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute) and \
                node.func.attr.value in ("clear", "pop", "remove") and code_of(node.func.value) == target:
            return True
        if isinstance(node, cst.Del) and any(isinstance(n, cst.Subscript) and code_of(n.value) == target
                                             for n in walk(node)):
            return True
        if isinstance(node, cst.Assign) and any(
                isinstance(t.target, cst.Subscript) and code_of(t.target.value) == target and
                any(isinstance(e.slice, cst.Slice) for e in t.target.slice) for t in node.targets):
            return True
    return False


_DICT_WRITES = frozenset({"update", "setdefault", "pop", "popitem", "clear", "__setitem__"})


def _empty_list(value) -> bool:
    if isinstance(value, cst.List):
        return not value.elements
    return isinstance(value, cst.Call) and isinstance(value.func, cst.Name) and value.func.value == "list" \
        and not value.args
