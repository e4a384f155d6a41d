"""Re-parse only what an edit touched (for the language server's diagnostics).

A document is cut into top-level statements at the line where CPython's parser says
each one ends (comment and blank lines before a statement go with it). A chunk whose
text did not change since the previous version keeps its libcst tree and its recorded
children, so an edit inside one function costs the parse and the tree record of that
function only. Used for diagnostics only: rewrites always parse the whole file, because
trailing comments of an indented block may be owned differently here (by the next
statement instead of the block's footer), which changes nothing the rules look at.
"""

from __future__ import annotations

import ast
import re

import libcst as cst

from gradfix.analysis.tree import index_tree, preorder_spans

_LINE = re.compile(r"[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+$")


class _Chunk:
    __slots__ = ("stmt", "children", "parents", "indent", "newline", "header", "footer", "trailing", "order", "spans")

    def __init__(self, text: str, first: bool, last: bool):
        module = cst.parse_module(text)
        if len(module.body) != 1:
            raise ValueError("a chunk must hold one statement")
        stmt = module.body[0]
        self.header = list(module.header) if first else []
        if not first and module.header:
            stmt = stmt.with_changes(leading_lines=[*module.header, *stmt.leading_lines])
        self.stmt = stmt
        self.footer = list(module.footer) if last else []
        if not last and module.footer:
            raise ValueError("lines after a middle statement")
        self.trailing = module.has_trailing_newline
        self.children, self.parents = index_tree(stmt)
        self.order, self.spans = preorder_spans(stmt, self.children)
        block = getattr(stmt, "body", None)
        self.indent = module.default_indent if isinstance(block, cst.IndentedBlock) else None
        self.newline = module.default_newline


class IncrementalParser:
    """One per open document: the previous version's chunks, reused by text."""

    def __init__(self) -> None:
        self._chunks: dict[tuple[str, bool, bool], _Chunk] = {}
        self.reused = 0
        self.parsed = 0
        # the previous version's data flow per function (gradfix.analysis.FileIndex reuses
        # those whose node was kept, when the file-level facts they read are unchanged)
        self.flows: dict[int, object] = {}
        self.flow_facts: tuple | None = None

    def parse(self, source: str, py_tree: ast.Module):
        """(module, children table, parents, pre-order spans) or None when the document does not
        cut cleanly."""
        body = py_tree.body
        if not body:
            return None
        lines = _LINE.findall(source)
        ends: list[int] = []
        for node in body:
            if ends and node.lineno <= ends[-1]:
                ends[-1] = max(ends[-1], node.end_lineno or node.lineno)  # `a; b` on one line
            else:
                ends.append(node.end_lineno or node.lineno)
        texts = []
        start = 0
        for i, end in enumerate(ends):
            stop = len(lines) if i == len(ends) - 1 else end
            texts.append("".join(lines[start:stop]))
            start = stop
        try:
            chunks = []
            fresh: dict[tuple[str, bool, bool], _Chunk] = {}
            for i, text in enumerate(texts):
                key = (text, i == 0, i == len(texts) - 1)
                chunk = self._chunks.get(key) or fresh.get(key)
                if chunk is None:
                    chunk = _Chunk(text, key[1], key[2])
                    self.parsed += 1
                else:
                    self.reused += 1
                fresh[key] = chunk
                chunks.append(chunk)
        except (cst.ParserSyntaxError, ValueError, RecursionError):
            return None
        indents = {c.indent for c in chunks if c.indent is not None}
        newlines = {c.newline for c in chunks}
        if len(indents) > 1 or len(newlines) > 1:
            return None  # mixed conventions: a whole-file parse renders them faithfully
        self._chunks = fresh
        module = cst.Module(
            body=[c.stmt for c in chunks], header=chunks[0].header, footer=chunks[-1].footer,
            default_indent=indents.pop() if indents else "    ", default_newline=newlines.pop(),
            has_trailing_newline=chunks[-1].trailing,
        )
        children: dict[int, list] = {}
        parents: dict = {}
        for c in chunks:
            children.update(c.children)
            parents.update(c.parents)
        extra_children, extra_parents = {}, {}
        for line in [*module.header, *module.footer]:
            t, p = index_tree(line)
            extra_children.update(t)
            extra_parents.update(p)
        children.update(extra_children)
        parents.update(extra_parents)
        top = [*module.header, *module.body, *module.footer]
        children[id(module)] = top
        for node in top:
            parents[node] = module
        spans: dict = {}
        order: list = [module]
        for line in module.header:
            o, sp = preorder_spans(line, extra_children)
            spans.update(sp)
            order.extend(o)
        for c in chunks:
            spans.update(c.spans)
            order.extend(c.order)
        for line in module.footer:
            o, sp = preorder_spans(line, extra_children)
            spans.update(sp)
            order.extend(o)
        spans[id(module)] = (order, 0, len(order))
        return module, children, parents, spans
