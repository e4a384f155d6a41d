"""Which changed statements ran: a verdict other than `untestable` needs every one of them to have run.

`changed_statements` maps a line diff of the two sources onto the statements inside top-level
functions and classes (module-level code is judged elsewhere); `instrument` puts a marker call
before each of them in the code the verifier loads, and `Hits` records which markers ran.
stdlib only: no torch here.
"""

from __future__ import annotations

import ast
import copy
import difflib
from dataclasses import dataclass

_DEFS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)


@dataclass(frozen=True)
class Stmt:
    """A changed statement of one version: lines [first, last] (a compound statement's header only)."""

    first: int
    last: int
    text: str


def _header_end(node: ast.stmt) -> int:
    body = getattr(node, "body", None)
    if isinstance(body, list) and body and isinstance(body[0], ast.stmt):
        return max(node.lineno, body[0].lineno - 1)
    return node.end_lineno or node.lineno


def _child_blocks(node: ast.AST) -> list[list[ast.stmt]]:
    out = []
    for name in ("body", "orelse", "finalbody"):
        block = getattr(node, name, None)
        if isinstance(block, list) and block and isinstance(block[0], ast.stmt):
            out.append(block)
    for h in getattr(node, "handlers", []) or []:
        out.append(h.body)
    for c in getattr(node, "cases", []) or []:
        out.append(c.body)
    return out


def _innermost(stmts: list[ast.stmt], line: int) -> ast.stmt | None:
    for s in stmts:
        if not (s.lineno <= line <= (s.end_lineno or s.lineno)):
            continue
        for block in _child_blocks(s):
            inner = _innermost(block, line)
            if inner is not None:
                return inner
        if line <= _header_end(s):
            return s
        return None  # a blank or comment line inside the compound statement
    return None


def _is_docstring(s: ast.stmt) -> bool:
    return isinstance(s, ast.Expr) and isinstance(s.value, ast.Constant) and isinstance(s.value.value, str)


def _statements(tree: ast.Module, lines: list[str], changed: set[int]) -> list[Stmt]:
    out: dict[tuple[int, int], Stmt] = {}
    for top in tree.body:
        if not isinstance(top, _DEFS):
            continue
        end = top.end_lineno or top.lineno
        for line in sorted(x for x in changed if top.lineno < x <= end):
            s = _innermost(top.body, line)
            if s is None or _is_docstring(s):
                continue
            if isinstance(s, _DEFS) and line < s.lineno:
                continue  # a decorator line
            first, last = s.lineno, _header_end(s)
            text = " ".join(x.strip() for x in lines[first - 1:last])
            out[(first, last)] = Stmt(first, last, text)
    return sorted(out.values(), key=lambda s: s.first)


def changed_statements(old_src: str, new_src: str, old_tree: ast.Module,
                       new_tree: ast.Module) -> tuple[list[Stmt], list[Stmt]]:
    """(changed statements of the original, of the rewrite), from a line diff of the two files."""
    a, b = old_src.splitlines(), new_src.splitlines()
    old_lines: set[int] = set()
    new_lines: set[int] = set()
    sm = difflib.SequenceMatcher(None, a, b, autojunk=False)
    for tag, i1, i2, j1, j2 in sm.get_opcodes():
        if tag == "equal":
            continue
        old_lines.update(range(i1 + 1, i2 + 1))
        new_lines.update(range(j1 + 1, j2 + 1))
    return _statements(old_tree, a, old_lines), _statements(new_tree, b, new_lines)


def _norm_line(s: str) -> str:
    return "".join(s.split())


def run_by_snippet(stmt: Stmt, snippets: list[str]) -> bool:
    """Whether the statement's text is part of code the contract runs directly (a train step,
    a term, a loss expression): that code runs as the contract's snippet, not from the file."""
    text = _norm_line(stmt.text)
    return bool(text) and any(text in _norm_line(s) for s in snippets if s)


HIT = "__gradfix_hit__"


class Hits:
    """Which changed statements ran, per version: each loaded version's code carries a marker call
    `__gradfix_hit__(line)` right before every changed statement (see `instrument`), so recording
    costs one call per executed changed statement and nothing elsewhere (no tracing)."""

    def __init__(self) -> None:
        self.lines: dict[str, set[int]] = {"old": set(), "new": set()}

    def recorder(self, tag: str):
        lines = self.lines.setdefault(tag, set())
        return lines.add

    def ran(self, tag: str, stmt: Stmt) -> bool:
        return stmt.first in self.lines.get(tag, set())

    def missing(self, required: dict[str, list[Stmt]]) -> list[tuple[str, Stmt]]:
        return [(tag, s) for tag, stmts in required.items() for s in stmts if not self.ran(tag, s)]


class _Instrument(ast.NodeTransformer):
    def __init__(self, lines: set[int]) -> None:
        self.lines = lines

    def _block(self, stmts: list) -> list:
        out = []
        for s in stmts:
            s = self.visit(s)
            if isinstance(s, ast.stmt) and s.lineno in self.lines:
                call = ast.Expr(ast.Call(ast.Name(HIT, ast.Load()), [ast.Constant(s.lineno)], []))
                out.append(ast.copy_location(call, s))
            out.append(s)
        return out

    def generic_visit(self, node: ast.AST) -> ast.AST:
        for name in ("body", "orelse", "finalbody"):
            block = getattr(node, name, None)
            if isinstance(block, list) and block and isinstance(block[0], ast.stmt):
                setattr(node, name, self._block(block))
        for h in getattr(node, "handlers", []) or []:
            h.body = self._block(h.body)
        for c in getattr(node, "cases", []) or []:
            c.body = self._block(c.body)
        return node


def instrument(tree: ast.Module, stmts: list[Stmt]) -> ast.Module:
    """A copy of `tree` with a marker call before each of `stmts` (inside top-level defs and classes)."""
    if not stmts:
        return tree
    lines = {s.first for s in stmts}
    tr = _Instrument(lines)
    body = []
    for top in tree.body:
        if isinstance(top, _DEFS) and any(top.lineno <= ln <= (top.end_lineno or top.lineno) for ln in lines):
            # only the definitions holding a marked line are copied and changed; the others are shared with
            # `tree`, which nothing changes (a whole-tree deepcopy was a fifth of a check's CPU)
            top = ast.fix_missing_locations(tr.visit(copy.deepcopy(top)))
        body.append(top)
    return ast.Module(body=body, type_ignores=list(tree.type_ignores))
