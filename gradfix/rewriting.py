"""Applying fixes to a libcst tree, and telling which changes' edits overlap.

A visit rebuilds every node it passes, so a fix is applied by rebuilding only the top-level
statements that hold its edits, and its syntax is checked on the smallest statement around each
edit before the whole file is asked (`_parses_locally`). `_Claims` keeps the changes taken in one
round from editing the same nodes.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Iterable, Sequence

import libcst as cst

from gradfix.model import Fix
from gradfix.parsing import OPERATIONS, _syntax_problem

if TYPE_CHECKING:
    from gradfix.engine import Change


class _ApplyEdits(cst.CSTTransformer):
    def __init__(self, edits: Iterable):
        super().__init__()
        self.by_node = {id(e.node): e.replacement for e in edits}

    def on_leave(self, original_node, updated_node):
        replacement = self.by_node.get(id(original_node))
        if replacement is None:
            return updated_node
        return replacement


def apply_fixes(module: cst.Module, fixes: Sequence[Fix], parents: dict | None = None) -> str:
    """The module's text with `fixes` applied. With the tree's parent table, only the top-level
    statements holding an edit are rebuilt (a visit rebuilds every node it passes)."""
    OPERATIONS["file_codegens"] += 1
    edits = [e for f in fixes for e in f.edits]
    transformer = _ApplyEdits(edits)
    tops = _top_statements(edits, parents, module) if parents is not None else None
    if tops is None:
        return module.visit(transformer).code
    body: list = []
    for stmt in module.body:
        if id(stmt) not in tops:
            body.append(stmt)
            continue
        new = stmt.visit(transformer)
        if isinstance(new, cst.FlattenSentinel):
            body.extend(new.nodes)
        elif not isinstance(new, cst.RemovalSentinel):
            body.append(new)
    return module.with_changes(body=body).code


def _top_statements(edits, parents: dict, module: cst.Module) -> set[int] | None:
    """Ids of the top-level statements holding `edits` (None when an edit is the module itself
    or a node outside it)."""
    tops: set[int] = set()
    for e in edits:
        node = e.node
        cur = parents.get(node)
        while cur is not None and cur is not module:
            node, cur = cur, parents.get(cur)
        if cur is None:
            return None
        tops.add(id(node))
    return tops


def _unit(node: cst.CSTNode, parents: dict, module: cst.Module) -> cst.CSTNode | None:
    """The smallest statement around `node` that compiles on its own the way it does in the file:
    the innermost `def` strictly above it, else its top-level statement (None: the module itself,
    or a node not in this tree)."""
    found = None
    top = node
    cur = parents.get(node)
    while cur is not None and cur is not module:
        if found is None and isinstance(cur, cst.FunctionDef):
            found = cur
        top = cur
        cur = parents.get(cur)
    if cur is None:
        return None
    return found if found is not None else top


def _parses_locally(module: cst.Module, fix: Fix, parents: dict, strict: bool) -> bool:
    """Whether the statements `fix` touches parse and compile with the fix applied, each on its
    own (cost: their size, not the file's). True is a fast accept that the whole-file check of
    the round's combined output confirms; False says only "ask the whole file"."""
    units = []
    for e in fix.edits:
        u = _unit(e.node, parents, module)
        if u is None:
            return False
        units.append(u)
    chosen = {id(u): u for u in units}
    outer = []
    for u in chosen.values():
        cur = parents.get(u)
        while cur is not None and id(cur) not in chosen:
            cur = parents.get(cur)
        if cur is None:
            outer.append(u)
    body: list = []
    transformer = _ApplyEdits(fix.edits)
    for u in outer:
        new = u.visit(transformer)
        if isinstance(new, cst.FlattenSentinel):
            body.extend(new.nodes)
        elif not isinstance(new, cst.RemovalSentinel):
            body.append(new)
    try:
        code = module.with_changes(body=body, header=(), footer=()).code
    except Exception:  # a replacement that cannot stand at module level: let the whole file decide
        return False
    OPERATIONS["local_checks"] += 1
    OPERATIONS["local_chars"] += len(code)
    return _syntax_problem(code, strict) is None


class _Claims:
    """The nodes the changes taken this round edit: a change overlaps them when one of its edited
    nodes is, holds or lies inside one of theirs (what _overlaps says of two changes, found by
    walking up the parent table: linear in the number of changes)."""

    def __init__(self, parents: dict):
        self.parents = parents
        self.edited: set[int] = set()     # ids of the edited nodes
        self.above: set[int] = set()      # ids of the edited nodes and of every node above one

    def _up(self, node):
        while node is not None:
            yield node
            node = self.parents.get(node)

    def overlaps(self, change: Change) -> bool:
        for e in change.fix.edits:
            if id(e.node) in self.above or any(id(n) in self.edited for n in self._up(e.node)):
                return True
        return False

    def take(self, change: Change) -> None:
        for e in change.fix.edits:
            self.edited.add(id(e.node))
            self.above.update(id(n) for n in self._up(e.node))


def _overlaps(a: Change, b: Change) -> bool:
    index_a = [(e.node) for e in a.fix.edits]
    index_b = [(e.node) for e in b.fix.edits]
    ids_a = set()
    for n in index_a:
        ids_a.update(_subtree_ids(n))
    return any(id(n) in ids_a or any(id(m) in _subtree_ids(n) for m in index_a) for n in index_b)


def _subtree_ids(node: cst.CSTNode) -> set[int]:
    ids = set()
    stack = [node]
    while stack:
        cur = stack.pop()
        ids.add(id(cur))
        stack.extend(cur.children)
    return ids
