"""Re-parse only what an edit touched (for the language server's diagnostics).

A document is cut into top-level statements at the line where CPython's parser says
each one ends (comment and blank lines before a statement go with it). A chunk whose
text did not change since the previous version keeps its libcst tree, its recorded
children, its pre-order and its suppression comments, so an edit inside one function
costs the parse and the tree record of that function only. The file-wide tables are
kept between versions and patched: the entries of the chunks that went away are
dropped and those of the new chunks added.

Used for diagnostics only: rewrites always parse the whole file, because trailing
comments of an indented block may be owned differently here (by the next statement
instead of the block's footer), which changes nothing the rules look at.
"""

from __future__ import annotations

import ast
import re

import libcst as cst

from gradfix import suppression
from gradfix.analysis.tree import index_tree, preorder_spans

_LINE = re.compile(r"[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+$")
RETAINED = 256   # chunks of earlier versions a parser keeps for reuse


class _Chunk:
    __slots__ = ("text", "stmt", "children", "parents", "indent", "newline", "header", "footer", "trailing",
                 "order", "spans", "_suppressions")

    def __init__(self, text: str, first: bool, last: bool):
        module = cst.parse_module(text)
        if len(module.body) != 1:
            raise ValueError("a chunk must hold one statement")
        stmt = module.body[0]
        self.text = text
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
        self._suppressions: dict[int, set[str]] | None = None

    def suppressions(self) -> dict[int, set[str]]:
        """Suppression comments by line within the chunk (a chunk is whole logical lines,
        so it tokenizes on its own)."""
        if self._suppressions is None:
            self._suppressions = suppression.suppressions(self.text)
        return self._suppressions


class IncrementalParser:
    """One per open document: the previous version's chunks, reused by text."""

    def __init__(self) -> None:
        self._chunks: dict[tuple[str, bool, bool], list[_Chunk]] = {}
        self._live: list[tuple[int, _Chunk]] = []       # (first line, chunk) of the current version
        self._extra: tuple[list, list, list] = ([], [], [])  # table keys not owned by a chunk
        self.children: dict[int, list] = {}
        self.parents: dict = {}
        self.spans: dict = {}
        self.reused = 0
        self.parsed = 0
        # the previous version's data flow per function (gradfix.analysis.FileIndex reuses
        # those whose node was kept, when the file-level facts they read are unchanged)
        self.flows: dict[int, object] = {}
        self.flow_facts: tuple | None = None
        # positions generated per statement, for the statements still in the document
        self.positions: dict[tuple, tuple] = {}
        # where else a statement's tree may be found before it is parsed: another parser of the
        # same document (the language server's parser of whole texts lends its chunks to the one
        # of texts with units blanked out), and this parser's chunks of earlier versions, up to
        # RETAINED of them (an edit of a function analysed before re-parses only that function)
        self.donor: IncrementalParser | None = None
        self._retained: dict[tuple[str, bool, bool], list[_Chunk]] = {}

    def parse(self, source: str, py_tree: ast.Module):
        """(module, children table, parents, pre-order spans) or None when the document does not
        cut cleanly. The tables are the parser's own, patched in place from one version to the next."""
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
        texts: list[tuple[int, str]] = []
        start = 0
        for i, end in enumerate(ends):
            stop = len(lines) if i == len(ends) - 1 else end
            texts.append((start + 1, "".join(lines[start:stop])))
            start = stop
        # identical statements (two copies of a function) each get a chunk of their own:
        # one tree node in two places would put both findings on one line
        pool = {key: list(chunks) for key, chunks in self._chunks.items()}
        borrowed: set[int] = set()     # ids of the chunks placed in this version
        live: list[tuple[int, _Chunk]] = []
        keys: list[tuple[str, bool, bool]] = []
        new: list[_Chunk] = []
        try:
            for i, (first_line, text) in enumerate(texts):
                key = (text, i == 0, i == len(texts) - 1)
                keys.append(key)
                spare = pool.get(key)
                if spare:
                    chunk = spare.pop()
                    borrowed.add(id(chunk))
                    self.reused += 1
                elif (chunk := self._lent(key, borrowed)) is not None:
                    new.append(chunk)          # known to another table: recorded in this one
                    self.reused += 1
                else:
                    chunk = _Chunk(text, key[1], key[2])
                    borrowed.add(id(chunk))
                    new.append(chunk)
                    self.parsed += 1
                live.append((first_line, chunk))
        except (cst.ParserSyntaxError, ValueError, RecursionError):
            return None
        chunks = [c for _, c in live]
        indents = {c.indent for c in chunks if c.indent is not None}
        newlines = {c.newline for c in chunks}
        if len(indents) > 1 or len(newlines) > 1:
            return None  # mixed conventions: a whole-file parse renders them faithfully
        module = cst.Module(
            body=[c.stmt for c in chunks], header=chunks[0].header, footer=chunks[-1].footer,
            default_indent=indents.pop() if indents else "    ", default_newline=newlines.pop(),
            has_trailing_newline=chunks[-1].trailing,
        )
        gone = [c for spare in pool.values() for c in spare]
        self._patch_tables(module, chunks, gone, new)
        self._retain(pool)
        self._chunks = {}
        for key, chunk in zip(keys, chunks):
            self._chunks.setdefault(key, []).append(chunk)
        self._live = live
        return module, self.children, self.parents, self.spans

    def _lent(self, key: tuple[str, bool, bool], borrowed: set[int]) -> _Chunk | None:
        """A chunk of `key` kept from an earlier version or held by the donor, not yet placed in
        the module being built (one tree node in two places would put two findings on one line)."""
        kept = self._retained.get(key)
        if kept:
            chunk = kept.pop()
            if not kept:
                del self._retained[key]
            borrowed.add(id(chunk))
            return chunk
        if self.donor is not None:
            for chunk in self.donor._chunks.get(key, ()):
                if id(chunk) not in borrowed:
                    borrowed.add(id(chunk))
                    return chunk
        return None

    def _retain(self, unused: dict[tuple[str, bool, bool], list[_Chunk]]) -> None:
        for key, chunks in unused.items():
            if chunks:
                self._retained.setdefault(key, []).extend(chunks)
        total = sum(len(v) for v in self._retained.values())
        while total > RETAINED:                    # oldest first (dicts keep insertion order)
            key = next(iter(self._retained))
            total -= len(self._retained.pop(key))

    def _patch_tables(self, module: cst.Module, chunks: list[_Chunk], gone: list[_Chunk], new: list[_Chunk]) -> None:
        children, parents, spans = self.children, self.parents, self.spans
        old_children, old_parents, old_spans = self._extra
        for k in old_children:
            children.pop(k, None)
        for n in old_parents:
            parents.pop(n, None)
        for k in old_spans:
            spans.pop(k, None)
        for c in gone:
            for k in c.children:
                del children[k]
            for n in c.parents:
                del parents[n]
            parents.pop(c.stmt, None)
            for k in c.spans:
                del spans[k]
        for c in new:
            children.update(c.children)
            parents.update(c.parents)
            spans.update(c.spans)
        # the module node itself, and the comment lines above the first and below the last statement
        extra_children: dict[int, list] = {}
        extra_parents: dict = {}
        order: list = [module]
        extra_spans: dict = {}

        def record(comment_lines: list) -> None:
            for line in comment_lines:
                t, p = index_tree(line)
                extra_children.update(t)
                extra_parents.update(p)
                o, sp = preorder_spans(line, t)
                extra_spans.update(sp)
                order.extend(o)

        record(module.header)
        for c in module.body:
            parents[c] = module
        for c in chunks:
            order.extend(c.order)
        record(module.footer)
        top = [*module.header, *module.body, *module.footer]
        extra_children[id(module)] = top
        for node in (*module.header, *module.footer):
            extra_parents[node] = module
        extra_spans[id(module)] = (order, 0, len(order))
        children.update(extra_children)
        parents.update(extra_parents)
        spans.update(extra_spans)
        self._extra = (list(extra_children), list(extra_parents), list(extra_spans))

    def suppressions(self) -> dict[int, set[str]]:
        """The current version's suppression comments, tokenizing only chunks that changed."""
        table: dict[int, set[str]] = {}
        for first_line, chunk in self._live:
            for line, codes in chunk.suppressions().items():
                table[line + first_line - 1] = codes
        return table
