"""Fast tree walks. libcst computes `node.children` anew on every access (a shallow
visit), which dominated scan time; a FileIndex records every node's children once,
and while it is active these helpers read that table instead."""

from __future__ import annotations

import contextlib
import dataclasses
import inspect
import re
from contextvars import ContextVar
from typing import Iterator

import libcst as cst

_TABLE: ContextVar[dict[int, list] | None] = ContextVar("gradfix_children", default=None)


# Per node class, the fields that hold children, in source order: the order in which the
# class's own `_visit_and_replace_children` visits them (read once from libcst's source).
# Children are then read straight from the fields; a class whose order cannot be read
# falls back to libcst's `children`.
_ORDER: dict[type, tuple[str, ...] | None] = {}
_VISIT = re.compile(r"visit_\w+\(\s*self\s*,\s*[\"'](\w+)[\"']")


def _order(cls: type) -> tuple[str, ...] | None:
    if cls not in _ORDER:
        try:
            names = tuple(dict.fromkeys(_VISIT.findall(inspect.getsource(cls._visit_and_replace_children))))
        except (OSError, TypeError):
            names = ()
        fields = {f.name for f in dataclasses.fields(cls)}
        _ORDER[cls] = names if names and set(names) <= fields else None
        _FIELDS[cls] = tuple(fields)
    return _ORDER[cls]


_FIELDS: dict[type, tuple[str, ...]] = {}


def fast_children(node: cst.CSTNode) -> list:
    order = _order(type(node))
    if order is None:
        # leaves such as whitespace and comments hold only strings
        if not any(isinstance(getattr(node, f), (cst.CSTNode, list, tuple)) for f in _FIELDS[type(node)]):
            return []
        return list(node.children)
    out: list = []
    for name in order:
        value = getattr(node, name)
        if isinstance(value, cst.CSTNode):
            out.append(value)
        elif isinstance(value, (list, tuple)):
            out.extend(v for v in value if isinstance(v, cst.CSTNode))
    return out


def index_tree(module: cst.Module) -> tuple[dict[int, list], dict]:
    """Children by node id and parent by node, in one traversal."""
    table: dict[int, list] = {}
    parents: dict = {}
    stack: list[cst.CSTNode] = [module]
    while stack:
        node = stack.pop()
        kids = fast_children(node)
        table[id(node)] = kids
        for kid in kids:
            parents[kid] = node
        stack.extend(kids)
    return table, parents


@contextlib.contextmanager
def active(table: dict[int, list]):
    token = _TABLE.set(table)
    try:
        yield
    finally:
        _TABLE.reset(token)


def children(node: cst.CSTNode) -> list:
    table = _TABLE.get()
    if table is not None:
        found = table.get(id(node))
        if found is not None:
            return found
    return list(node.children)


def walk(node: cst.CSTNode) -> Iterator[cst.CSTNode]:
    """Pre-order, source order."""
    stack = [node]
    while stack:
        cur = stack.pop()
        yield cur
        stack.extend(reversed(children(cur)))


def calls_in(node: cst.CSTNode) -> Iterator[cst.Call]:
    """Calls inside `node`, not descending into lambdas."""
    stack = [node]
    while stack:
        cur = stack.pop()
        if isinstance(cur, cst.Lambda):
            continue
        if isinstance(cur, cst.Call):
            yield cur
        stack.extend(children(cur))
