"""Fast tree walks. libcst computes `node.children` anew on every access (a shallow
visit), which dominated scan time; a FileIndex records every node's children once,
and while it is active these helpers read that table instead."""

from __future__ import annotations

import contextlib
import dataclasses
import inspect
import operator
import re
from contextvars import ContextVar
from typing import Iterator

import libcst as cst

_TABLE: ContextVar[dict[int, list] | None] = ContextVar("gradfix_children", default=None)


# Per node class, the fields that hold children, in source order: the order in which the
# class's own `_visit_and_replace_children` visits them (read once from libcst's source).
# Children are then read straight from the fields; a class whose order cannot be read
# falls back to libcst's `children`.
_VISIT = re.compile(r"visit_\w+\(\s*self\s*,\s*[\"'](\w+)[\"']")


def _getter(cls: type):
    """A function returning the child-holding field values of a `cls` node in source order,
    or None when the order cannot be read from libcst's source."""
    if cls not in _GETTERS:
        try:
            names = tuple(dict.fromkeys(_VISIT.findall(inspect.getsource(cls._visit_and_replace_children))))
        except (OSError, TypeError):
            names = ()
        fields = tuple(f.name for f in dataclasses.fields(cls))
        _FIELDS[cls] = fields
        if names and set(names) <= set(fields):
            get = operator.attrgetter(*names)
            _GETTERS[cls] = get if len(names) > 1 else (lambda node, _g=get: (_g(node),))
        else:
            _GETTERS[cls] = None
    return _GETTERS[cls]


_GETTERS: dict[type, object] = {}
_FIELDS: dict[type, tuple[str, ...]] = {}
_NODE = cst.CSTNode

# A field value's kind by its type, found once per type: 1 a node (`isinstance(value, CSTNode)`), 2 a list or
# tuple, 3 a subclass of one (a leaf's test below counts it, as its isinstance did), 0 anything else (str,
# None, MaybeSentinel). libcst's node classes are abstract base classes, so an
# isinstance against CSTNode runs ABCMeta.__instancecheck__ (a Python call): it was a third of the
# isinstance calls of a cold `check` (bench/PROFILE.md). A type's answer never changes (nothing registers
# virtual subclasses of CSTNode), so the table gives what isinstance gives.
_KIND: dict[type, int] = {list: 2, tuple: 2, str: 0, type(None): 0}


def _kind(value) -> int:
    kind = _KIND[type(value)] = 1 if isinstance(value, _NODE) else 2 if type(value) in (list, tuple) else \
        3 if isinstance(value, (list, tuple)) else 0
    return kind


def fast_children(node: cst.CSTNode) -> list:
    get = _getter(type(node))
    kinds = _KIND
    if get is None:
        # leaves such as whitespace and comments hold only strings
        for f in _FIELDS[type(node)]:
            value = getattr(node, f)
            kind = kinds.get(type(value))
            if (kind if kind is not None else _kind(value)) != 0:
                return list(node.children)
        return []
    out: list = []
    for value in get(node):
        kind = kinds.get(type(value))
        if kind is None:
            kind = _kind(value)
        if kind == 1:
            out.append(value)
        elif kind == 2:
            out.extend(value)  # sequences of nodes (libcst keeps no other values in them)
    return out


_UNREAD = object()


def index_tree(module: cst.Module) -> tuple[dict[int, list], dict]:
    """Children by node id and parent by node, in one traversal (`fast_children` inlined: one call per
    node of the file was a fifth of the index's time)."""
    table: dict[int, list] = {}
    parents: dict = {}
    stack: list[cst.CSTNode] = [module]
    pop, push = stack.pop, stack.extend
    getters, kinds = _GETTERS, _KIND
    while stack:
        node = pop()
        get = getters.get(type(node), _UNREAD)
        if get is _UNREAD:
            get = _getter(type(node))
        if get is None:
            kids = fast_children(node)
        else:
            kids = []
            for value in get(node):
                kind = kinds.get(type(value))
                if kind is None:
                    kind = _kind(value)
                if kind == 1:
                    kids.append(value)
                elif kind == 2:
                    kids.extend(value)
        table[id(node)] = kids
        for kid in kids:
            parents[kid] = node
        push(kids)
    return table, parents


@contextlib.contextmanager
def active(table: dict[int, list], preorder=None):
    """Make `children` and `walk` read `table` (and `preorder()`, a function returning for
    each node the pre-order list holding its subtree and the subtree's slice) while the block runs."""
    token = _TABLE.set(table)
    token2 = _PREORDER.set(preorder)
    try:
        yield
    finally:
        _TABLE.reset(token)
        _PREORDER.reset(token2)


_PREORDER: ContextVar = ContextVar("gradfix_preorder", default=None)


def preorder_spans(root: cst.CSTNode, table: dict[int, list]) -> tuple[list, dict[int, tuple[list, int, int]]]:
    """All nodes under `root` in pre-order, and for each node (that list, start, end) of its subtree."""
    order: list = []
    spans: dict[int, tuple[list, int, int]] = {}
    # the stack holds nodes to open, and a (node, start) tuple to close each node with children (no libcst
    # node is a tuple): a leaf's span is known when it is opened, and no tuple is made per child
    stack: list = [root]
    pop, push, extend, append, get = stack.pop, stack.append, stack.extend, order.append, table.get
    while stack:
        node = pop()
        if node.__class__ is tuple:
            node, start = node
            spans[id(node)] = (order, start, len(order))
            continue
        start = len(order)
        append(node)
        kids = get(id(node))
        if kids is None:
            kids = list(node.children)
        if kids:
            push((node, start))
            extend(reversed(kids))
        else:
            spans[id(node)] = (order, start, start + 1)
    return order, spans


def concrete(*classes: type) -> frozenset[type]:
    """The node classes that are `classes` or derive from them, for `type(node) in ...`: an
    isinstance against libcst's classes (abstract base classes) costs several times as much."""
    found: set[type] = set()
    stack = list(classes)
    while stack:
        cls = stack.pop()
        if cls not in found:
            found.add(cls)
            stack.extend(cls.__subclasses__())
    return frozenset(found)


def children(node: cst.CSTNode) -> list:
    table = _TABLE.get()
    if table is not None:
        found = table.get(id(node))
        if found is not None:
            return found
    return list(node.children)


def preorder_spans_table() -> dict | None:
    """The active index's (pre-order list, start, end) per node id, or None."""
    provider = _PREORDER.get()
    return provider() if provider is not None else None


def preorder_span(node: cst.CSTNode) -> tuple[list, int, int] | None:
    """`node`'s subtree as a slice of the active index's pre-order list, or None."""
    table = preorder_spans_table()
    return table.get(id(node)) if table is not None else None


def walk(node: cst.CSTNode) -> Iterator[cst.CSTNode]:
    """Pre-order, source order (a slice of the file's pre-order list while an index is active)."""
    provider = _PREORDER.get()
    if provider is not None:
        span = provider().get(id(node))
        if span is not None:
            order, start, end = span
            return iter(order[start:end])
    return _walk(node)


def _walk(node: cst.CSTNode) -> Iterator[cst.CSTNode]:
    stack = [node]
    while stack:
        cur = stack.pop()
        yield cur
        stack.extend(reversed(children(cur)))


def contains(tree: cst.CSTNode, node: cst.CSTNode) -> bool:
    """Whether `node` is `tree` or inside it (by identity)."""
    return any(n is node for n in walk(tree))


def if_branches(stmt: cst.If) -> Iterator[tuple[int, cst.CSTNode]]:
    """(k, owner) for each branch of an if/elif/else chain, in order: the `If` of the k-th test
    (the statement itself, then each `elif`) or the final `Else`. The branches exclude each other."""
    k, node = 0, stmt
    while True:
        yield k, node
        orelse = node.orelse
        k += 1
        if isinstance(orelse, cst.If):
            node = orelse
            continue
        if isinstance(orelse, cst.Else):
            yield k, orelse
        return


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
