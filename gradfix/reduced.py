"""A cold `check` lints first a reduced text of each file: the top-level statements some kept rule may match.

libcst's parse and the tables built on it grow with the lines parsed, while the pre-pass (analysis/prepass.py)
already knows which rules may match a file. Here it is asked once more per top-level function or class: is a
rule's condition true on the module's own code (imports, assignments, `if` / `try` blocks: every statement but
a `def` or a `class`) with that one definition? A definition where none is true, and which no kept statement
names (`selection`), is replaced by a placeholder that keeps every other line and column where it was: a
string literal spanning the same lines (`reduce`), so positions, suppression comments and line numbers of the
kept code are those of the whole file.

The reduced text is only a filter, never a result: when its lint finds nothing, the file's result is "no
findings"; when it finds anything or reports an error, the whole file is linted as before and that result is
used (engine.Engine.lint_source). So a reported finding is always the whole file's; what the filter could
cost is a finding of the whole file whose reduced lint finds nothing at all, which bench/same_findings.py
(the pinned corpus, golden) and tests/test_reduced.py (every golden file, reduced against whole) check.
Only `check` uses it (`Engine.reduce`): fixes, the language server and anything that edits lint whole files.
"""

from __future__ import annotations

import ast
import re

# reduced texts linted, and whole files linted after their reduced text found something (tests read them)
OPERATIONS = {"reduced_lints": 0, "whole_lints": 0}

_DEFS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)
_LINE = re.compile(r"[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+$")


def _first_line(stmt) -> int:
    return min([stmt.lineno, *(d.lineno for d in getattr(stmt, "decorator_list", ()))])


def _mentions(stmt, ix) -> tuple[set[str], set[str]]:
    """(every name and attribute a statement mentions, the names it binds for the rest of the file: a function's
    or class's own name, a class's methods and class-level names, every attribute it stores (`self.w = ...`,
    read by other methods and classes), every name it declares `global`)."""
    mentioned: set[str] = set()
    binds = {stmt.name}
    if type(stmt) is ast.ClassDef:
        for s in stmt.body:
            if type(s) in _DEFS:
                binds.add(s.name)
            elif type(s) in (ast.Assign, ast.AnnAssign, ast.AugAssign):
                for t in (s.targets if type(s) is ast.Assign else [s.target]):
                    if type(t) is ast.Name:
                        binds.add(t.id)
    for node in ix.walk(stmt):
        kind = type(node)
        if kind is ast.Name:
            mentioned.add(node.id)
        elif kind is ast.Attribute:
            mentioned.add(node.attr)
            if type(node.ctx) is not ast.Load:
                binds.add(node.attr)
        elif kind is ast.Global or kind is ast.Nonlocal:
            binds.update(node.names)
    return mentioned, binds


def selection(rules, tree: ast.Module, text: str, path: str = "") -> list[tuple[int, int]] | None:
    """The (first, last) lines of the top-level definitions the reduced text leaves out, or None when it keeps
    everything. The definitions are grouped into components: two are joined when one binds a name the other
    mentions (so a function, its helpers, its callers, the classes it builds and their bases are one group), and
    the module's own code joins those whose names it mentions. A component is kept when some rule of `rules`
    (those whose condition holds in the file) has its condition true on the module's own code with the
    component's definitions: what a finding in the component, or read from it, needs of the file."""
    from gradfix.analysis import astindex, prepass

    body = tree.body
    defs = [i for i, st in enumerate(body) if type(st) in _DEFS]
    if len(defs) < 2 or not rules:
        return None
    ix = astindex.of(tree)
    module_code = [st for st in body if type(st) not in _DEFS]
    mentioned: dict[int, set[str]] = {}
    binders: dict[str, list[int]] = {}
    for i in defs:
        mentioned[i], binds = _mentions(body[i], ix)
        for name in binds:
            binders.setdefault(name, []).append(i)
    module_names: set[str] = set()
    for st in module_code:
        module_names.update(n.id if type(n) is ast.Name else n.attr for n in ix.walk(st)
                            if type(n) is ast.Name or type(n) is ast.Attribute)
    # union-find over the definitions; -1 stands for the module's own code
    parent = {i: i for i in defs}
    parent[-1] = -1

    def find(i: int) -> int:
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    for i in [*defs, -1]:
        for name in (mentioned[i] if i >= 0 else module_names):
            for j in binders.get(name, ()):
                a, b = find(i), find(j)
                if a != b:
                    parent[a] = b
    groups: dict[int, list[int]] = {}
    for i in defs:
        groups.setdefault(find(i), []).append(i)
    if len(groups) < 2:
        return None
    dropped = []
    for members in groups.values():
        part = ast.Module(body=[*module_code, *(body[i] for i in members)], type_ignores=[])
        astindex.of_part(ix, part)
        facts = prepass.facts_of(part, text, path)
        if not any(r.may_match(facts) for r in rules):
            dropped.extend(members)
    if not dropped:
        return None
    # statements sharing a line (`class A: pass; x = 1`) stay together: a line is left out only when every
    # statement on it is
    gone = set(dropped)
    kept_lines: set[int] = set()
    for i, st in enumerate(body):
        if i not in gone:
            kept_lines.update((_first_line(st), st.end_lineno or st.lineno))
    out = []
    for i in sorted(dropped):
        first, last = _first_line(body[i]), body[i].end_lineno or body[i].lineno
        if first not in kept_lines and last not in kept_lines:
            out.append((first, last))
    return out or None


def reduce(text: str, dropped: list[tuple[int, int]]) -> str:
    """`text` with each (first, last) range of lines replaced by a string literal over the same lines: one
    token for libcst, however long the definition, and every other line where it was."""
    lines = _LINE.findall(text)
    for first, last in dropped:
        a, b = first - 1, last - 1
        if a == b:
            lines[a] = '""' + _ending(lines[a])
            continue
        lines[a] = '"""' + _ending(lines[a])
        for k in range(a + 1, b):
            lines[k] = _ending(lines[k])
        lines[b] = '"""' + _ending(lines[b])
    return "".join(lines)


def _ending(line: str) -> str:
    if line.endswith("\r\n"):
        return "\r\n"
    if line.endswith(("\n", "\r")):
        return line[-1]
    return ""
