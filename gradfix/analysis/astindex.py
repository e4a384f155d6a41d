"""One walk of a CPython tree, shared by every reader of the same tree.

A cold `check` reads each file's `ast` several times: the project summary (analysis/project.py,
returns.py), the pre-pass facts and the per-rule conditions (prepass.py), the grad-scope scan
(gradscopes.py). Each walked the tree with `ast.walk` / `ast.iter_child_nodes`, whose generators
(`iter_fields`, a `getattr` per field) cost more than what the readers do with the nodes: most
of the CPython side of a cold run (bench/PROFILE.md). Here the tree is walked once: each node's
children are listed (in `ast.iter_child_nodes` order) and every node is put in one list (in
`ast.walk` order, breadth first); the readers iterate those lists.

The one difference from `ast`'s walk: the context and operator nodes (`Load`, `Store`, `Del`,
`Add`, `And`, `Not`, `Eq`, ...: the `ctx`, `op` and `ops` fields) are not listed. They are shared
leaf singletons, and no reader dispatches on a walked node of those types (a reader that wants a
context reads the field: `type(node.ctx) is ast.Store`). tests/test_astindex.py compares the
lists with `ast.walk` / `ast.iter_child_nodes` on every golden file.

The index is made on first use and kept on the tree, so a tree must not be changed once read (no
reader changes one; verify/ builds its instrumented trees as copies, which are indexed afresh).
"""

from __future__ import annotations

import ast

_SKIPPED_FIELDS = frozenset({"ctx", "op", "ops"})
_FIELDS: dict[type, tuple[str, ...]] = {}
_AST = ast.AST


def _fields_of(kind: type) -> tuple[str, ...]:
    fields = _FIELDS.get(kind)
    if fields is None:
        fields = _FIELDS[kind] = tuple(f for f in kind._fields if f not in _SKIPPED_FIELDS)
    return fields


def child_nodes(node: ast.AST) -> list[ast.AST]:
    """`ast.iter_child_nodes(node)` as a list, without the context and operator nodes."""
    out: list[ast.AST] = []
    for name in _fields_of(type(node)):
        value = getattr(node, name, None)
        if value.__class__ is list:
            for item in value:
                if isinstance(item, _AST):
                    out.append(item)
        elif isinstance(value, _AST):
            out.append(value)
    return out


class AstIndex:
    """Every node of one tree below its root (`nodes`, in `ast.walk` order) and each node's children.
    It holds no reference to the root, which holds it (`of`): no cycle, the tree is freed as before."""

    __slots__ = ("_root", "nodes", "_children", "_typed")

    def __init__(self, tree: ast.AST):
        self._root = id(tree)
        children: dict[int, list[ast.AST]] = {}
        kids = children[id(tree)] = child_nodes(tree)
        nodes = list(kids)
        fields_of, node_type = _FIELDS, _AST
        for node in nodes:          # breadth first, as ast.walk's deque (the list grows as it is read)
            kids = []               # child_nodes(node), inlined: one call per node less
            kind = node.__class__
            fields = fields_of.get(kind)
            if fields is None:
                fields = _fields_of(kind)
            for name in fields:
                value = getattr(node, name, None)
                if value.__class__ is list:
                    for item in value:
                        if isinstance(item, node_type):
                            kids.append(item)
                elif isinstance(value, node_type):
                    kids.append(value)
            children[id(node)] = kids
            nodes.extend(kids)
        self.nodes = nodes
        self._children = children
        self._typed: dict[tuple[type, ...], list[ast.AST]] = {}

    def __deepcopy__(self, memo):
        return None     # a copy of the tree has other nodes: `of` indexes it again

    def __reduce__(self):
        return _nothing, ()

    def children(self, node: ast.AST) -> list[ast.AST]:
        """`ast.iter_child_nodes(node)` (a node of another tree, such as one a reader builds: computed)."""
        kids = self._children.get(id(node))
        return kids if kids is not None else child_nodes(node)

    def walk(self, node: ast.AST) -> list[ast.AST]:
        """`ast.walk(node)`: the node, then its descendants breadth first."""
        if id(node) == self._root:
            return [node, *self.nodes]
        out = [node]
        children = self._children
        i = 0
        while i < len(out):
            item = out[i]
            i += 1
            kids = children.get(id(item))
            out.extend(kids if kids is not None else child_nodes(item))
        return out

    def of_type(self, *kinds: type) -> list[ast.AST]:
        """The nodes below the root whose type is one of `kinds` (exactly: no subclass), in walk order."""
        found = self._typed.get(kinds)
        if found is None:
            wanted = frozenset(kinds)
            found = self._typed[kinds] = [n for n in self.nodes if type(n) in wanted]
        return found


def _nothing() -> None:
    return None


def of(tree: ast.AST) -> AstIndex:
    """The index of `tree`, made on first use and kept on the tree (an attribute `ast` ignores: `compile`,
    `ast.dump` and `unparse` read only the fields) for as long as it lives."""
    found = tree.__dict__.get("_gradfix_index")
    if found is None:
        found = tree._gradfix_index = AstIndex(tree)
    return found
