"""Lists whose every element is a tensor autograd saved as an op's output: `laterals = [F.relu(conv(f)) for
conv, f in zip(self.lateral, feats)]` in a module's `forward`. An in-place op on one element (`laterals[i - 1]
+= up`) then changes a saved tensor, and backward() raises "modified by an inplace operation" (GF101).

Shown only for a list comprehension (no `if` clause) whose element is a call of an output-saving function or
method (`F.relu(h)`, `torch.sigmoid(h)`, `h.relu()`; torchapi's tables), whose argument requires grad: shown by
the flow's provenance, or a call of a comprehension variable that iterates a submodule container of the
module class (`self.lateral = nn.ModuleList(...)`, through `zip`/`enumerate` too), whose modules have
parameters. Anything else (a list display, `append`s, an element chosen at run time) is not shown.
"""

from __future__ import annotations

import ast

import libcst as cst

from gradfix.analysis import astindex, torchapi
from gradfix.analysis.graph_walks import backward_ran_since
from gradfix.analysis.reaching import reaching
from gradfix.analysis.names import qualname
from gradfix.analysis.provenance import expr_grad
from gradfix.analysis.tree import walk

_CONTAINERS = frozenset({"torch.nn.ModuleList", "torch.nn.Sequential"})


def saved_list_elements(flow, value) -> str | None:
    """`value` (a binding's value) is a list comprehension of saved outputs that require grad: the saving
    op's text for the message, else None."""
    if not isinstance(value, cst.ListComp) or value.for_in.ifs or value.for_in.inner_for_in is not None:
        return None
    elt = value.elt
    if not isinstance(elt, cst.Call) or not elt.args or elt.args[0].keyword is not None or elt.args[0].star:
        return None
    q = qualname(elt.func, flow.index.imports)
    if q in torchapi.OUTPUT_SAVING_FUNCS:
        if any(a.keyword is not None and a.keyword.value == "inplace" for a in elt.args):
            return None
        arg = elt.args[0].value
    elif q is None and isinstance(elt.func, cst.Attribute) and elt.func.attr.value in torchapi.OUTPUT_SAVING_METHODS \
            and not elt.args:
        arg = elt.func.value
    else:
        return None
    if not (flow.holds(expr_grad(flow, arg)) is True or _container_module_call(flow, value.for_in, arg)):
        return None
    name = qualname(elt.func, flow.index.imports) or f".{elt.func.attr.value}()"
    return name.replace("torch.nn.functional.", "F.")


def _container_module_call(flow, for_in: cst.CompFor, arg) -> bool:
    """`conv(f)` where `conv` is bound by `for conv, f in zip(self.lateral, feats)` (or `for conv in
    self.lateral`, `for i, conv in enumerate(self.lateral)`) and `self.lateral` is a ModuleList or Sequential
    attribute of the module class."""
    if not (isinstance(arg, cst.Call) and isinstance(arg.func, cst.Name) and flow.in_module_class):
        return False
    name = arg.func.value
    target, it = for_in.target, for_in.iter
    pairs: list[tuple[cst.BaseExpression, cst.BaseExpression]] = []
    if isinstance(target, cst.Name):
        pairs = [(target, it)]
    elif isinstance(target, cst.Tuple) and isinstance(it, cst.Call) and isinstance(it.func, cst.Name):
        elems = [e.value for e in target.elements]
        args = [a.value for a in it.args if a.keyword is None and not a.star]
        if it.func.value == "zip" and len(args) == len(elems) == len(it.args):
            pairs = list(zip(elems, args))
        elif it.func.value == "enumerate" and len(elems) == 2 and len(args) == 1:
            pairs = [(elems[1], args[0])]
    for t, source in pairs:
        if isinstance(t, cst.Name) and t.value == name and isinstance(source, cst.Attribute) and \
                isinstance(source.value, cst.Name) and source.value.value == "self":
            ctor = flow.index.submodules.get(flow.class_name, {}).get(source.attr.value)
            return ctor in _CONTAINERS and _holds_parameter_modules(flow, source.attr.value)
    return False


def _holds_parameter_modules(flow, attr: str) -> bool:
    """Every assignment of `self.<attr>` in the class builds the container from modules with parameters
    (`nn.ModuleList(nn.Conv2d(c, out, 1) for c in chans)`, `nn.ModuleList([nn.Linear(4, 4), ...])`)."""
    index = flow.index
    cls = index.enclosing_class(flow.scope)
    found = False
    for node in walk(cls) if cls is not None else ():
        if not isinstance(node, cst.Assign):
            continue
        for t in node.targets:
            tgt = t.target
            if not (isinstance(tgt, cst.Attribute) and isinstance(tgt.value, cst.Name) and tgt.value.value == "self"
                    and tgt.attr.value == attr):
                continue
            value = node.value
            if not (isinstance(value, cst.Call) and len(value.args) == 1 and value.args[0].keyword is None and
                    not value.args[0].star and index.ctor_of(value) in _CONTAINERS):
                return False
            inner = value.args[0].value
            elts = [inner.elt] if isinstance(inner, (cst.ListComp, cst.GeneratorExp)) else \
                [e.value for e in inner.elements] if isinstance(inner, (cst.List, cst.Tuple)) else []
            if not elts or not all(_has_parameters(index, e) for e in elts):
                return False
            found = True
    return found


def _has_parameters(index, expr) -> bool:
    ctor = index.ctor_of(expr) if isinstance(expr, cst.Call) else None
    return ctor is not None and ctor.startswith("torch.nn.") and index.is_module_ctor(ctor) and \
        ctor not in torchapi.PARAMETER_FREE_MODULES and ctor not in _CONTAINERS


_LIST_FILLS = frozenset({"append", "insert", "extend", "__setitem__"})


def saved_list_element_at(flow, binding, step: int) -> str | None:
    """An element of the list `binding` read at `step` is a saved output (`saved_list_elements`), and that is
    all the element can be: the list is bound once on the way (analysis/reaching.py), never filled or
    item-assigned in the scope (an augmented assignment of an item is the in-place op itself), and no
    backward() ran since it was made. The saving op's text, else None."""
    made = saved_list_elements(flow, binding.value)
    if made is None:
        return None
    reaches = reaching(flow, binding.name, step)
    if len(reaches) != 1 or reaches[0].binding is not binding or reaches[0].skipped:
        return None
    for n in walk(flow.scope):
        if isinstance(n, cst.AssignTarget) and isinstance(n.target, cst.Subscript) and \
                isinstance(n.target.value, cst.Name) and n.target.value.value == binding.name:
            return None
        if isinstance(n, cst.Call) and isinstance(n.func, cst.Attribute) and n.func.attr.value in _LIST_FILLS and \
                isinstance(n.func.value, cst.Name) and n.func.value.value == binding.name:
            return None
    if backward_ran_since(flow, [binding.step], step):
        return None
    return made


def listcomp_subscripted(tree: ast.Module | None) -> bool:
    """The pre-pass condition (ast) for `saved_list_element_at`: `lst = [f(...) for ...]` and `lst[...]` in the
    file. Without a tree: True."""
    if tree is None:
        return True
    ix = astindex.of(tree)
    bound = {t.id for node in ix.of_type(ast.Assign) if type(node.value) is ast.ListComp and
             type(node.value.elt) is ast.Call for t in node.targets if type(t) is ast.Name}
    return bool(bound) and any(type(n.value) is ast.Name and n.value.id in bound for n in ix.of_type(ast.Subscript))


__all__ = ["listcomp_subscripted", "saved_list_element_at", "saved_list_elements"]
