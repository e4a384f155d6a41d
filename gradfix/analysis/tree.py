"""Fast tree walks. libcst computes `node.children` anew on every access (a shallow
visit), which dominated scan time; a FileIndex records every node's children once,
and while it is active these helpers read that table instead."""

from __future__ import annotations

import contextlib
from contextvars import ContextVar
from typing import Iterator

import libcst as cst

_TABLE: ContextVar[dict[int, list] | None] = ContextVar("gradfix_children", default=None)


class _Collector(cst.CSTVisitor):
    def __init__(self) -> None:
        super().__init__()
        self.children: dict[int, list] = {}
        self.parents: dict[cst.CSTNode, cst.CSTNode] = {}
        self.stack: list[cst.CSTNode] = []

    def on_visit(self, node: cst.CSTNode) -> bool:
        if self.stack:
            parent = self.stack[-1]
            self.children[id(parent)].append(node)
            self.parents[node] = parent
        self.children[id(node)] = []
        self.stack.append(node)
        return True

    def on_leave(self, original_node: cst.CSTNode) -> None:
        self.stack.pop()


def index_tree(module: cst.Module) -> tuple[dict[int, list], dict]:
    """Children by node id and parent by node, in one traversal."""
    collector = _Collector()
    module.visit(collector)
    return collector.children, collector.parents


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
