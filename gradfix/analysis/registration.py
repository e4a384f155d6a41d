"""Which of a module class's attributes are registered some other way than by assignment.

`nn.Module.__setattr__` registers an attribute's own module or Parameter value; code also registers the members
of a plain container one by one (`add_module`, `setattr(self, ...)`, a helper method that does), or keeps a table
of candidates whose pick is stored in another attribute. GF304 asks these questions before it calls a container
unregistered: wrapping such a container in `nn.ModuleList` / `nn.ModuleDict` would save each weight under a
second state_dict key, or register candidates the model never uses.
"""

from __future__ import annotations

import libcst as cst

from gradfix.analysis.params import code_of
from gradfix.analysis.tree import children as children_of, walk

# calls that register what they are given (the attribute is then a second, harmless reference)
REGISTERING_METHODS = frozenset({"add_module", "register_module", "register_parameter", "register_buffer"})


def self_attr(expr) -> str | None:
    """`x` of `self.x`, else None."""
    if type(expr) is cst.Attribute and type(expr.value) is cst.Name and expr.value.value == "self":
        return expr.attr.value
    return None


def registering_call(node, helpers: frozenset[str]) -> bool:
    """`self.add_module(name, m)` / `self.register_module(...)` / `setattr(self, name, m)` /
    `self.__setattr__(name, m)`, or a method of the class that registers what it is given."""
    if type(node) is not cst.Call:
        return False
    func = node.func
    if type(func) is cst.Attribute:
        if func.attr.value in REGISTERING_METHODS:
            return True
        if func.attr.value == "__setattr__" and type(func.value) is cst.Name and func.value.value == "self":
            return True
        return self_attr(func) in helpers
    return type(func) is cst.Name and func.value == "setattr" and bool(node.args) and \
        type(node.args[0].value) is cst.Name and node.args[0].value.value == "self"


def registering_helpers(cls: cst.ClassDef) -> frozenset[str]:
    """Methods of the class that register one of their parameters (`def _add(self, name, layer):
    self.add_module(name, layer)`)."""
    found = set()
    for stmt in cls.body.body:
        if type(stmt) is not cst.FunctionDef or stmt.name.value == "__init__":
            continue
        params = {p.name.value for p in (*stmt.params.posonly_params, *stmt.params.params, *stmt.params.kwonly_params)}
        params.discard("self")
        for node in walk(stmt.body):
            if registering_call(node, frozenset()) and any(
                    type(n) is cst.Name and n.value in params for a in node.args for n in walk(a.value)):
                found.add(stmt.name.value)
                break
    return frozenset(found)


def loop_parts(loop) -> tuple[list, list]:
    """(the expressions iterated over, the nodes run per element) of a loop or comprehension."""
    kind = type(loop)
    if kind is cst.For:
        return [loop.iter], [loop.body]
    if kind is cst.While:
        return [], [loop.body]
    iters, comp = [], loop.for_in
    while comp is not None:
        iters.append(comp.iter)
        iters.extend(cond.test for cond in comp.ifs)
        comp = comp.inner_for_in
    body = [loop.key, loop.value] if kind is cst.DictComp else [loop.elt]
    return iters, body


def registered_by_loop(loop, helpers: frozenset[str]) -> set[str]:
    """Attributes whose modules a loop (or comprehension) registers one by one: the list it
    iterates over, and the list it fills with the same values it registers."""
    iters, body = loop_parts(loop)
    calls = [n for b in body for n in walk(b) if registering_call(n, helpers)]
    if not calls:
        return set()
    found = {a for it in iters for a in (self_attr(n) for n in walk(it)) if a}
    given = {code_of(a.value) for c in calls for a in c.args}
    for b in body:
        for node in walk(b):
            kind = type(node)
            values, attr = [], None
            if kind is cst.Call and type(node.func) is cst.Attribute and node.args and \
                    node.func.attr.value in ("append", "insert", "extend"):
                attr, last = self_attr(node.func.value), node.args[-1].value
                values = list(element_values(last)) if node.func.attr.value == "extend" else [last]
            elif kind is cst.Assign and len(node.targets) == 1 and type(node.targets[0].target) is cst.Subscript:
                attr, values = self_attr(node.targets[0].target.value), [node.value]
            elif kind is cst.AugAssign:
                attr, values = self_attr(node.target), list(element_values(node.value))
            if attr is not None and any(code_of(v) in given for v in values):
                found.add(attr)
    return found


def lookup_table(index, cls: cst.ClassDef, attr: str, assign: cst.Assign) -> bool:
    """`self.x` is only read as `self.x[key]`, and each pick is kept in another attribute:
    `self.backbone = self.models[name]`, or a method returns the pick (directly or through a
    local name) and every call of that method is stored as `self.attr = self.pick(...)`. The
    container is a table of candidates; registering it would add the unused ones and save the
    chosen one under two state_dict keys."""
    parents = index.parents
    picks = 0
    for node in walk(cls):
        if not (type(node) is cst.Attribute and self_attr(node) == attr) or index.parents.get(node) is \
                assign.targets[0]:
            continue
        sub = parents.get(node)
        if type(sub) is not cst.Subscript or sub.value is not node:
            return False
        holder = parents.get(sub)
        if type(holder) is cst.Assign and holder.value is sub and len(holder.targets) == 1:
            target = holder.targets[0].target
            if self_attr(target) is not None:
                picks += 1
                continue
            fn = index.enclosing(sub, (cst.FunctionDef,))
            if type(target) is cst.Name and fn is not None and returned_only(fn, target.value) and \
                    stored_method(cls, fn):
                picks += 1
                continue
            return False
        if type(holder) is cst.Return:
            fn = index.enclosing(sub, (cst.FunctionDef,))
            if fn is not None and stored_method(cls, fn):
                picks += 1
                continue
        return False
    return picks > 0


def returned_only(fn: cst.FunctionDef, name: str) -> bool:
    """Local `name` of `fn` is bound once and read only by `return name`."""
    reads = [n for n in walk(fn.body) if type(n) is cst.Name and n.value == name]
    returns = [n for n in walk(fn.body) if type(n) is cst.Return and type(n.value) is cst.Name and n.value.value == name]
    return len(returns) >= 1 and len(reads) == len(returns) + 1


def stored_method(cls: cst.ClassDef, fn: cst.FunctionDef) -> bool:
    """Every call of method `fn` in the class is `self.attr = self.fn(...)` (at least one)."""
    calls = [n for n in walk(cls) if type(n) is cst.Call and type(n.func) is cst.Attribute and
             self_attr(n.func) == fn.name.value]
    if not calls:
        return False
    ids = {id(c) for c in calls}
    stored = [n for n in walk(cls) if type(n) is cst.Assign and len(n.targets) == 1 and
              id(n.value) in ids and (self_attr(n.targets[0].target) is not None or
                                      registered_through_children(cls, n))]
    return len(stored) == len(calls)


def registered_through_children(cls: cst.ClassDef, assign: cst.Assign) -> bool:
    """`resnet = self._get_basemodel(name)` then `self.features = nn.Sequential(*list(resnet.children())[:-1])`:
    the pick's layers are registered under another attribute. Every read of the local is an attribute of it
    (`resnet.fc.in_features`, `resnet.children()`), and one is `.children()` inside a `self.x = ...` value."""
    target = assign.targets[0].target
    if type(target) is not cst.Name:
        return False
    fn = next((f for f in walk(cls) if type(f) is cst.FunctionDef and any(n is assign for n in walk(f.body))), None)
    if fn is None:
        return False
    name = target.value
    reads = [n for n in walk(fn.body) if type(n) is cst.Name and n.value == name and n is not target]
    owners = {}
    for node in walk(fn.body):
        for child in children_of(node):
            owners[id(child)] = node
    registered = False
    for r in reads:
        attr = owners.get(id(r))
        if type(attr) is not cst.Attribute or attr.value is not r:
            return False
        if attr.attr.value in ("children", "named_children"):
            stmt = next((a for a in walk(fn.body) if type(a) is cst.Assign and len(a.targets) == 1 and
                         self_attr(a.targets[0].target) is not None and any(n is r for n in walk(a.value))), None)
            registered = registered or stmt is not None
    return registered


def element_values(expr):
    if type(expr) in (cst.List, cst.Tuple):
        for el in expr.elements:
            yield el.value
    else:
        yield expr
