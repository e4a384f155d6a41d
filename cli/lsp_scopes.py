"""Per-scope reuse of findings between versions of one open document (the language server).

A file is cut into units, its top-level statements (a `def` or `class` with its decorators
and the comment lines above it). Outside the rest of the file's text, a rule can learn about
another unit only through a name bound at module level: a function called, a class built or
subclassed, a global read. So the units are grouped into components, two units joined when one
binds a module-level name the other binds or mentions. Imports do not join units (every unit
mentions `torch`); they are context kept in every analysis. An edit to a unit holding an import
re-analyses the whole file, unless it only changes imports of the standard library: then the
units that mention the names those bind are analysed again. Module-level loops and blocks form one component, because
their training loops are numbered in order in one scope (the verifier's loop locator).

After an edit, only the components holding a changed or removed unit (and those whose units
moved, if they had findings: messages and fix contracts name lines) are analysed again, by the
engine, on the document's text with every other unit blanked out line for line, so positions
stay the file's own. The findings of the other components are those of the previous version.
`tests/test_lsp_scopes.py` checks, on every golden file, that each component's findings alone
equal its findings in the whole file, and over random edit sequences that the result always
equals a from-scratch analysis.
"""

from __future__ import annotations

import ast
import bisect
import re
import sys
from collections.abc import Callable
from dataclasses import dataclass

from gradfix.model import FileError, Finding

_LINE = re.compile(r"[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+$")
# analyse the whole file when the components to analyse again hold more than this share of it
FULL_SHARE = 0.6
_MODULE_BLOCKS = (ast.For, ast.AsyncFor, ast.While, ast.With, ast.AsyncWith, ast.If, ast.Try, ast.Match)
if hasattr(ast, "TryStar"):
    _MODULE_BLOCKS += (ast.TryStar,)

Result = tuple[list[Finding], list[FileError]]
_STANDARD = frozenset(getattr(sys, "stdlib_module_names", ())) - {"__future__"}


BACKWARD = " backward"  # a pseudo-name (no identifier has a space): links a class's own backward() to its callers


@dataclass(frozen=True)
class Facts:
    """What a unit shares with the rest of the file."""

    bound: frozenset[str]        # module-level names it binds (imports excluded)
    mentioned: frozenset[str]    # every name it mentions
    imported: frozenset[str]     # names its imports bind
    has_import: bool             # an import anywhere inside (the file's import table changes with it)
    block: bool                  # module-level code holding a block (a loop may sit in it)
    kind: str                    # "def" (a top-level function), "class" or "code"
    imports: tuple[tuple[str, str], ...] = ()   # (alias, what it names) of a unit of imports only
    only_imports: bool = False


def unit_facts(nodes: list[ast.stmt]) -> Facts:
    bound: set[str] = set()
    mentioned: set[str] = set()
    imported: set[str] = set()
    has_import = False
    for top in nodes:
        if isinstance(top, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            bound.add(top.name)
        for node in ast.walk(top):
            kind = type(node)
            if kind is ast.Name:
                mentioned.add(node.id)
                if not isinstance(node.ctx, ast.Load) and not isinstance(top, (ast.FunctionDef, ast.AsyncFunctionDef,
                                                                                ast.ClassDef)):
                    bound.add(node.id)     # over-approximated: a comprehension's variable counts too
            elif kind is ast.Global:
                bound.update(node.names)
            elif kind in (ast.Import, ast.ImportFrom):
                has_import = True
                for a in node.names:
                    imported.add(a.asname or a.name.split(".")[0])
            elif kind in (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef) and node is not top \
                    and not isinstance(top, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                bound.add(node.name)       # `if ...: def f()` at module level
            elif kind is ast.MatchAs or kind is ast.MatchStar:
                if node.name:
                    mentioned.add(node.name)
                    bound.add(node.name)
            elif kind is ast.Attribute and node.attr == "backward":
                mentioned.add(BACKWARD)    # `x.backward()` reads whether a class of the file has its own backward
            elif kind is ast.ClassDef and any(isinstance(m, ast.FunctionDef) and m.name == "backward"
                                              for m in node.body):
                bound.add(BACKWARD)        # analysis/loops.hand_written_backward: a file-wide fact
            elif kind is ast.ExceptHandler and node.name:
                mentioned.add(node.name)
                if not isinstance(top, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                    bound.add(node.name)
    block = any(isinstance(n, _MODULE_BLOCKS) for n in nodes)
    kind = "code"
    if len(nodes) == 1 and isinstance(nodes[0], (ast.FunctionDef, ast.AsyncFunctionDef)):
        kind = "def"
    elif any(isinstance(n, ast.ClassDef) for n in nodes):
        kind = "class"
    only = all(isinstance(n, (ast.Import, ast.ImportFrom)) for n in nodes)
    pairs: list[tuple[str, str]] = []
    for n in nodes if only else ():
        if isinstance(n, ast.Import):
            pairs.extend((a.asname or a.name.split(".")[0], a.name) for a in n.names)
        else:
            base = "." * n.level + (n.module or "")
            pairs.extend((a.asname or a.name, f"{base}.{a.name}") for a in n.names)
    return Facts(frozenset(bound), frozenset(mentioned), frozenset(imported), has_import, block, kind,
                 tuple(pairs), only)


@dataclass
class Unit:
    text: str
    first: int      # 1-based first line (its leading comment and blank lines included)
    last: int       # 1-based last line
    facts: Facts


def split_units(source: str, tree: ast.Module, memo: dict[str, Facts]) -> list[Unit]:
    """The document's units, cut where CPython's parser says each top-level statement ends
    (as gradfix.incremental cuts it); facts are computed once per unit text."""
    lines = _LINE.findall(source)
    groups: list[list[ast.stmt]] = []
    ends: list[int] = []
    for node in tree.body:
        if ends and node.lineno <= ends[-1]:              # `a; b` on one line
            ends[-1] = max(ends[-1], node.end_lineno or node.lineno)
            groups[-1].append(node)
        else:
            ends.append(node.end_lineno or node.lineno)
            groups.append([node])
    units: list[Unit] = []
    start = 0
    for i, (end, nodes) in enumerate(zip(ends, groups)):
        stop = len(lines) if i == len(ends) - 1 else end
        text = "".join(lines[start:stop])
        facts = memo.get(text)
        if facts is None:
            facts = memo[text] = unit_facts(nodes)
        units.append(Unit(text, start + 1, max(stop, start + 1), facts))
        start = stop
    return units


def components(units: list[Unit]) -> list[int]:
    """A component number per unit (union-find over shared module-level names)."""
    parent = list(range(len(units)))

    def find(i: int) -> int:
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    def union(i: int, j: int) -> None:
        a, b = find(i), find(j)
        if a != b:
            parent[b] = a

    names: set[str] = set()
    for u in units:
        names |= u.facts.bound
    owner: dict[str, int] = {}
    blocks = None
    for i, u in enumerate(units):
        for n in (u.facts.bound | u.facts.mentioned) & names:
            j = owner.setdefault(n, i)
            if j != i:
                union(i, j)
        if u.facts.block and not u.facts.has_import:
            if blocks is None:
                blocks = i
            else:
                union(blocks, i)
    return [find(i) for i in range(len(units))]


@dataclass
class _Version:
    units: list[Unit]
    comp: list[int]
    findings: list[list[Finding]]       # per unit, the findings that start in it


def _by_unit(units: list[Unit], findings: list[Finding]) -> list[list[Finding]] | None:
    out: list[list[Finding]] = [[] for _ in units]
    firsts = [u.first for u in units]
    for f in findings:
        k = bisect.bisect_right(firsts, f.span.line) - 1
        if k < 0 or f.span.line > units[k].last or f.cell is not None:
            return None
        out[k].append(f)
    return out


class ScopeCache:
    """One per open document: the previous version's units, components and findings."""

    def __init__(self) -> None:
        self._prev: _Version | None = None
        self._memo: dict[str, Facts] = {}
        self._lines: list[str] = []           # the previous version's lines
        self._next_lines: list[str] = []
        self._split: tuple | None = None      # (source, its units) of the latest split
        self.tree: ast.Module | None = None
        self.last: str = "full"               # how the latest version was analysed (for tests and debugInfo)
        self._diffed: tuple | None = None     # (old units, new units, their _diff): asked twice per edit
        self.analysed_share = 1.0

    def forget(self) -> None:
        self._prev = None

    def summary_unchanged(self, units: list[Unit] | None, signature: Callable[[str], object],
                          outside: Callable[[str], bool] | None = None) -> bool:
        """Whether the edit since the previous version leaves what the project index keeps of this
        file for the file's own analysis as it was: its imports, classes (bases, methods, state)
        and top-level function names (gradfix.analysis.summary.summarise). Only its call sites
        may differ, which other files' analyses read: the caller updates the index before those.
        `signature(unit_text)` gives those facts of one unit. With `outside(module)` (whether a
        dotted name is no module of the project), an edit of import statements only, each of the
        standard library and none naming a project module, counts as unchanged too: the names it
        binds resolve to no project file, so no answer of the index changes for any file."""
        if units is None or self._prev is None:
            return False
        changed, removed = self._diff(self._prev.units, units)[1:]
        if not changed and not removed:
            return True
        if outside is not None:
            pairs = _changed_imports([self._prev.units[k] for k in removed], [units[i] for i in changed])
            if pairs is not None and all(outside(target) for _alias, target in pairs):
                return True
        if len(changed) != 1 or len(removed) != 1:
            return False
        new, old = units[changed[0]], self._prev.units[removed[0]]
        if new.facts.has_import or old.facts.has_import:
            return False
        if new.facts.kind == old.facts.kind == "code":
            return True          # module-level code: no class, no top-level function
        return signature(new.text) == signature(old.text)

    def split(self, source: str) -> list[Unit] | None:
        """The units of `source` (None: it does not parse). After an edit only the units around
        the changed lines are parsed again, when they parse alone into statements that end where
        they end (else the whole text is parsed). `self.tree` is CPython's tree when the whole
        text was parsed, else None."""
        if self._split is not None and self._split[0] is source:
            return self._split[1]
        lines = _LINE.findall(source)
        units = _split_edit(lines, self._lines, self._prev.units, self._memo) if self._prev is not None else None
        self.tree = None
        if units is None:
            try:
                self.tree = ast.parse(source)
            except (SyntaxError, ValueError, RecursionError, MemoryError):
                self._split = (source, None)
                return None
            units = split_units(source, self.tree, self._memo)
        self._split = (source, units)
        self._next_lines = lines
        return units

    def lint(self, source: str, units: list[Unit] | None, full: Callable[[], Result],
             partial: Callable[[str], Result]) -> Result:
        """Findings of `source`: `full()` analyses the whole text, `partial(text)` a text of the
        same lines with some units blanked out (each run of them left as one empty string statement)."""
        if units is None:
            return self._full(None, full)
        self._lines = self._next_lines if self._split is not None and self._split[0] is source else \
            _LINE.findall(source)
        prev = self._prev
        if prev is None or not units:
            return self._full(units, full)
        comp = components(units)
        match, changed, removed = self._diff(prev.units, units)
        # components to analyse again (in the new version's numbering)
        dirty: set[int] = {comp[i] for i in changed}
        if any(units[i].facts.has_import for i in changed) or any(prev.units[k].facts.has_import for k in removed):
            aliases = _standard_import_change([prev.units[k] for k in removed if prev.units[k].facts.has_import],
                                              [units[i] for i in changed if units[i].facts.has_import])
            if aliases is None or any(prev.findings[k] for k in removed if prev.units[k].facts.has_import):
                return self._full(units, full)
            # only what names those aliases is read differently
            dirty |= {comp[i] for i, u in enumerate(units) if u.facts.mentioned & aliases}
        gone_comps = {prev.comp[k] for k in removed}
        for i, k in enumerate(match):
            if k is None:
                continue
            if prev.comp[k] in gone_comps:
                dirty.add(comp[i])            # it was joined to a unit that changed or went
            elif units[i].first != prev.units[k].first and prev.findings[k]:
                dirty.add(comp[i])            # it moved, and its findings name lines
        # a component whose units did not all move by the same number of lines (their order or
        # spacing changed: only a uniform shift is known to leave findings as they were)
        deltas: dict[int, set[int]] = {}
        for i, k in enumerate(match):
            if k is not None:
                deltas.setdefault(comp[i], set()).add(units[i].first - prev.units[k].first)
        dirty |= {c for c, d in deltas.items() if len(d) > 1}
        # a component now joined differently from before
        old_members: dict[int, set[int]] = {}
        for i, k in enumerate(match):
            if k is not None:
                old_members.setdefault(comp[i], set()).add(prev.comp[k])
        for c, olds in old_members.items():
            if len(olds) > 1:
                dirty.add(c)
        # an old component now split: its members saw each other's facts
        split_old: dict[int, set[int]] = {}
        for i, k in enumerate(match):
            if k is not None:
                split_old.setdefault(prev.comp[k], set()).add(comp[i])
        for news in split_old.values():
            if len(news) > 1:
                dirty |= news
        lines_total = sum(u.last - u.first + 1 for u in units)
        keep = [comp[i] in dirty for i in range(len(units))]
        share = sum(u.last - u.first + 1 for u, k in zip(units, keep) if k) / max(lines_total, 1)
        if share > FULL_SHARE:
            return self._full(units, full, comp)
        if not dirty:
            findings = [f for i, k in enumerate(match) for f in prev.findings[k]]  # type: ignore[index]
            self._store(units, comp, [prev.findings[k] for k in match])  # type: ignore[index]
            self.last, self.analysed_share = "reused", 0.0
            return _sorted(findings), []
        text = _reduced(units, [k or u.facts.has_import for u, k in zip(units, keep)])
        found, errors = partial(text)
        if errors:
            return self._full(units, full, comp)
        fresh = _by_unit(units, found)
        if fresh is None or any(fresh[i] and u.facts.has_import and not keep[i] for i, u in enumerate(units)) \
                or any(fresh[i] for i in changed if units[i].facts.has_import):
            return self._full(units, full, comp)
        per_unit: list[list[Finding]] = []
        for i, k in enumerate(match):
            # an import kept as context of the others, not analysed again, keeps its findings
            per_unit.append(fresh[i] if keep[i] else prev.findings[k])  # type: ignore[index]
        self._store(units, comp, per_unit)
        self.last, self.analysed_share = "partial", share
        return _sorted([f for fs in per_unit for f in fs]), []

    def _diff(self, old: list[Unit], new: list[Unit]) -> tuple[list[int | None], list[int], list[int]]:
        """_diff(old, new), computed once for the edit that summary_unchanged and lint both read."""
        if self._diffed is None or self._diffed[0] is not old or self._diffed[1] is not new:
            self._diffed = (old, new, _diff(old, new))
        return self._diffed[2]

    def _full(self, units: list[Unit] | None, full: Callable[[], Result], comp: list[int] | None = None) -> Result:
        findings, errors = full()
        self.last, self.analysed_share = "full", 1.0
        per_unit = _by_unit(units, findings) if units and not errors else None
        if per_unit is None:
            self._prev = None
        else:
            self._store(units, comp if comp is not None else components(units), per_unit)
        return findings, errors

    def _store(self, units: list[Unit], comp: list[int], per_unit: list[list[Finding]]) -> None:
        self._prev = _Version(units, comp, per_unit)
        live = {u.text for u in units}
        if len(self._memo) > 2 * len(live) + 64:
            self._memo = {t: f for t, f in self._memo.items() if t in live}


def _split_edit(lines: list[str], old_lines: list[str], old: list[Unit], memo: dict[str, Facts]) -> list[Unit] | None:
    """The units of the new text `lines`, parsing only the old units that hold changed lines (and
    the one before them: a line typed at the end of a function body), or None."""
    n_old, n_new = len(old_lines), len(lines)
    if not old or sum(u.last - u.first + 1 for u in old) != n_old:
        return None
    lim = min(n_old, n_new)
    p = 0
    while p < lim and lines[p] == old_lines[p]:
        p += 1
    if p == n_old == n_new:
        return [Unit(u.text, u.first, u.last, u.facts) for u in old]
    q = 0
    while q < lim - p and lines[n_new - 1 - q] == old_lines[n_old - 1 - q]:
        q += 1
    lo = 0
    while lo < len(old) - 1 and old[lo].last <= p:      # the unit holding old line p + 1
        lo += 1
    hi = lo
    while hi < len(old) - 1 and old[hi + 1].first <= n_old - q:
        hi += 1
    lo = max(lo - 1, 0)
    delta = n_new - n_old
    start, stop = old[lo].first - 1, old[hi].last + delta      # 0-based, in the new text
    if stop <= start:
        return None
    region = "".join(lines[start:stop])
    try:
        tree = ast.parse(region)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    if not tree.body:
        return None
    at_end = hi == len(old) - 1
    last_end = max(n.end_lineno or n.lineno for n in tree.body)
    if not at_end and last_end != stop - start:
        return None          # comment lines after its last statement would go with the next unit
    mid = split_units(region, tree, memo)
    shifted = [Unit(u.text, u.first + start, u.last + start, u.facts) for u in mid]
    if lo == 0 and shifted:
        shifted[0].first = 1
    after = [Unit(u.text, u.first + delta, u.last + delta, u.facts) for u in old[hi + 1:]]
    return [Unit(u.text, u.first, u.last, u.facts) for u in old[:lo]] + shifted + after


def _standard_import_change(old: list[Unit], new: list[Unit]) -> set[str] | None:
    """The aliases an edit of import statements binds differently, when each of those imports is
    of the standard library (`import os`, `from math import sqrt`: nothing a rule asks about, as
    a torch or project import is); None otherwise (the whole file is analysed again)."""
    pairs = _changed_imports(old, new)
    return None if pairs is None else {alias for alias, _ in pairs}


def _changed_imports(old: list[Unit], new: list[Unit]) -> set[tuple[str, str]] | None:
    """(alias, what it names) of the imports an edit of import-only units adds or removes, when
    each is of the standard library; None otherwise."""
    if not all(u.facts.only_imports for u in old + new):
        return None
    before = {p for u in old for p in u.facts.imports}
    after = {p for u in new for p in u.facts.imports}
    changed = before ^ after
    for alias, target in changed:
        top = target.split(".")[0]
        if alias == "*" or target.endswith(".*") or not top or top not in _STANDARD or top.startswith("torch"):
            return None
    return changed


def _diff(old: list[Unit], new: list[Unit]) -> tuple[list[int | None], list[int], list[int]]:
    """For each new unit the old one with its text (at the same line first, then moved), the new
    units without one, and the old units left over."""
    old_at = {(u.text, u.first): k for k, u in enumerate(old)}
    old_by_text: dict[str, list[int]] = {}
    for k, u in enumerate(old):
        old_by_text.setdefault(u.text, []).append(k)
    taken: set[int] = set()
    match: list[int | None] = [None] * len(new)
    for i, u in enumerate(new):
        k = old_at.get((u.text, u.first))
        if k is not None and k not in taken:
            match[i] = k
            taken.add(k)
    for i, u in enumerate(new):
        if match[i] is None:
            for k in old_by_text.get(u.text, ()):
                if k not in taken:
                    match[i] = k
                    taken.add(k)
                    break
    removed = [k for k in range(len(old)) if k not in taken]
    changed = [i for i, k in enumerate(match) if k is None]
    return match, changed, removed


def _reduced(units: list[Unit], kept: list[bool]) -> str:
    """The document with the units not kept blanked out line for line; each run of them is one
    statement ending on its last line (_run), so that the kept units are cut exactly as in the
    whole document (and the parser reuses their trees)."""
    out: list[str] = []
    run = 0
    for u, k in zip(units, kept):
        if not k:
            run += u.last - u.first + 1
            last_line = u.text
            continue
        if run:
            out.append(_run(run, last_line))
            run = 0
        out.append(u.text)
    if run:
        out.append(_run(run, last_line))
    return "".join(out)


def _run(lines: int, text: str) -> str:
    """`lines` lines holding one statement that ends on the last: an empty string literal across
    them (one tree node, where blank lines and a `pass` cost libcst a node per line: a run of
    1,500 blanked lines was most of an edit's parse)."""
    end = "\r\n" if text.endswith("\r\n") else "\r" if text.endswith("\r") else "\n" if text.endswith("\n") else ""
    newline = end or ("\r\n" if "\r\n" in text else "\n")
    if lines < 2:
        return "pass" + end
    return '"""' + newline * (lines - 1) + '"""' + end


def _sorted(findings: list[Finding]) -> list[Finding]:
    return sorted(findings, key=lambda f: (f.span.line, f.span.column, f.rule))
