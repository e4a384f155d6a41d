"""Jupyter notebooks (nbformat 4) as one Python module for the engine, and back.

The engine, the rules and the verifier only ever see Python text. A notebook becomes
that text here: its code cells in order, each after a marker comment line
(`# gradfix:cell 3`), with IPython syntax (line magics, `!` shell escapes, `x = !ls`,
`?`/`??` help, autocall escapes, cell magics) replaced by placeholders that keep the
line count (`pass  # gradfix:magic 0`). After a fix, `split` cuts the text back into
cells at the markers and puts the original magic lines back; a rewrite that moved or
changed a marker or a placeholder cannot be mapped back and is refused.

A code cell that is not valid Python even with its magics masked (a `<YOUR CODE>` blank in
a course assignment, a half-written line) is left out of that text and reported as one
error naming the notebook, the cell and the line in the cell; the other cells are still
checked, as Jupyter would still run them. A skipped cell is never rewritten.

Writing splices only the changed cells' `source` values into the file's own text (at
the offsets `gradfix.jsonspans` finds), so outputs, execution counts, metadata, key
order, indentation and the final newline stay as they were, byte for byte. nbformat
reads and validates; it never writes. The masking itself is `gradfix.magics`.
"""

from __future__ import annotations

import ast
import bisect
import dataclasses
import json
import re
import warnings
from dataclasses import dataclass

from gradfix.diffing import split_lines, unified_diff
from gradfix.engine import Change, Decide, Decision, FixResult
from gradfix.jsonspans import Node, get, parse
from gradfix.magics import MAGIC_MARK, PLACEHOLDER, mask
from gradfix.model import FileError, Finding, Span
from gradfix.sourcefile import SourceError, SourceFile

SUFFIX = ".ipynb"
CELL_MARK = "# gradfix:cell "


def is_notebook(path: str) -> bool:
    return path.endswith(SUFFIX)


class NotebookError(SourceError):
    """The file is not a notebook gradfix can read (bad JSON, not nbformat 4, invalid)."""


# --------------------------------------------------------------------------- the notebook


@dataclass
class Cell:
    number: int                 # 1-based among all cells, markdown included (Ruff's "cell 3")
    source: str                 # as the notebook holds it
    node: Node | None          # its "source" value in the file text (None: cells from an editor)
    code: str                   # Python with placeholders, ending with a newline
    masked: list[str]           # original text of each placeholder line


@dataclass(frozen=True)
class SkippedCell:
    """A code cell left out of the module because it does not parse."""

    number: int
    line: int | None            # 1-based, in the cell
    message: str


class Notebook:
    """One .ipynb file (or an editor's notebook): `text` is the Python module the engine analyses."""

    def __init__(self, file: SourceFile | None, raw_text: str, tree: Node | None,
                 cells: tuple[list[Cell], list[SkippedCell]], path: str | None = None):
        self.file = file
        self.path = file.path if file is not None else path
        self.raw_text = raw_text
        self.tree = tree
        self.cells, self.skipped = cells
        self.text = "".join(f"{CELL_MARK}{c.number}\n{c.code}" for c in self.cells)
        self._ascii = _uses_ascii_escapes(raw_text)
        self._marks_of: tuple[str, list] | None = None

    # -- reading ---------------------------------------------------------------
    @classmethod
    def read(cls, path: str) -> "Notebook":
        return cls.from_source(SourceFile.read(path))

    @classmethod
    def from_bytes(cls, path: str, raw: bytes) -> "Notebook":
        return cls.from_source(SourceFile.from_bytes(path, raw))

    @classmethod
    def from_source(cls, file: SourceFile) -> "Notebook":
        text = file.text
        validate(text)
        try:
            tree = parse(text)
        except (ValueError, IndexError) as exc:
            raise NotebookError(f"not a notebook: {exc}") from exc
        cells_node = get(tree, "cells") if tree.kind == "object" else None
        if cells_node is None or cells_node.kind != "array":
            raise NotebookError("not a notebook: no \"cells\" list")
        if not _is_python(tree):
            return cls(file, text, tree, ([], []))
        code_cells = []
        for number, node in enumerate(cells_node.items, start=1):
            kind = get(node, "cell_type")
            src = get(node, "source")
            if kind is None or kind.value != "code" or src is None:
                continue
            source = "".join(i.value for i in src.items) if src.kind == "array" else src.value
            code_cells.append((number, source, src))
        return cls(file, text, tree, _cells(code_cells))

    @classmethod
    def from_cells(cls, path: str, cells: list[tuple[int, str]]) -> "Notebook":
        """From an editor's code cells, (1-based number among all cells, text); no file to render."""
        return cls(None, "", None, _cells([(n, s, None) for n, s in cells]), path=path)

    def skipped_errors(self, path: str) -> list[FileError]:
        """One error per skipped cell, in cell coordinates, for `path` as shown."""
        return [FileError(path, s.line, f"{s.message}; cell {s.number} not checked (the other cells were)",
                          cell=s.number) for s in self.skipped]

    # -- positions -------------------------------------------------------------
    def locate(self, line: int, text: str | None = None) -> tuple[int | None, int]:
        """(cell number, 1-based line in that cell) of a line of `text` (default: this
        notebook's module); (None, line) for a marker line or a text without markers."""
        marks = self._marks(self.text if text is None else text)
        k = bisect.bisect_right(marks, (line, float("inf"))) - 1
        if k < 0 or marks[k][0] == line:
            return None, line
        return marks[k][1], line - marks[k][0]

    def _marks(self, text: str) -> list[tuple[int, int]]:
        """(1-based line, cell number) of each marker line in `text`; the last text's is kept."""
        if self._marks_of is not None and self._marks_of[0] is text:
            return self._marks_of[1]
        marks = []
        for k, line in enumerate(split_lines(text), start=1):
            if line.startswith(CELL_MARK) and line[len(CELL_MARK):].strip().isdigit():
                marks.append((k, int(line[len(CELL_MARK):])))
        self._marks_of = (text, marks)
        return marks

    # -- mapping a rewritten module back ---------------------------------------
    def split(self, text: str) -> dict[int, str] | None:
        """New source of each code cell in `text`, magics restored; None when `text` cannot be
        mapped back (a marker or a placeholder moved, changed or vanished)."""
        lines = split_lines(text)
        chunks: list[list[str]] = []
        numbers: list[int] = []
        for line in lines:
            if line.startswith(CELL_MARK) and line.endswith("\n"):
                numbers.append(int(line[len(CELL_MARK):-1]) if line[len(CELL_MARK):-1].isdigit() else -1)
                chunks.append([])
            elif not chunks:
                return None   # text before the first cell
            else:
                chunks[-1].append(line)
        if numbers != [c.number for c in self.cells]:
            return None
        out: dict[int, str] = {}
        for cell, chunk in zip(self.cells, chunks):
            restored: list[str] = []
            seen = 0
            placeholders = split_lines(cell.code)
            expected = [p for p in placeholders if PLACEHOLDER.fullmatch(p.rstrip("\n"))]
            for line in chunk:
                m = PLACEHOLDER.fullmatch(line.rstrip("\n"))
                if m is None:
                    if MAGIC_MARK.strip() in line:
                        return None
                    restored.append(line)
                    continue
                k = int(m.group(1))
                if k != seen or k >= len(expected) or line.rstrip("\n") != expected[k].rstrip("\n"):
                    return None
                restored.append(cell.masked[k] + ("\n" if line.endswith("\n") else ""))
                seen += 1
            if seen != len(cell.masked):
                return None
            new = "".join(restored)
            if not cell.source.endswith("\n") and new.endswith("\n"):
                new = new[:-1]
            out[cell.number] = new
        return out

    def render(self, sources: dict[int, str]) -> str:
        """The file's text with the given cells' sources replaced and nothing else touched."""
        text = self.raw_text
        for cell in sorted(self.cells, key=lambda c: c.node.start, reverse=True):
            new = sources.get(cell.number, cell.source)
            if new == cell.source:
                continue
            text = text[: cell.node.start] + self._source_json(cell, new) + text[cell.node.end:]
        return text

    def write(self, new_text: str) -> None:
        """Atomically replace the file with `new_text` (a rendering), as SourceFile.write does."""
        assert self.file is not None
        self.file.write(new_text)

    def rendered(self, text: str) -> str | None:
        """The notebook file's text for a rewritten module, or None (see `split`)."""
        sources = self.split(text)
        return None if sources is None else self.render(sources)

    def _source_json(self, cell: Cell, new: str) -> str:
        node = cell.node
        dump = lambda s: json.dumps(s, ensure_ascii=self._ascii)  # noqa: E731
        if node.kind == "string":
            return dump(new)
        lines = new.splitlines(True)   # how nbformat splits a source into a list
        if not lines:
            return "[]"
        tokens = {}
        for item in node.items:
            tokens.setdefault(item.value, self.raw_text[item.start:item.end])
        opening, separator, closing = self._list_layout(node)
        return "[" + opening + separator.join(tokens.get(l) or dump(l) for l in lines) + closing + "]"

    def _list_layout(self, node: Node) -> tuple[str, str, str]:
        """Whitespace after '[', between items (after the comma included) and before ']'."""
        raw = self.raw_text
        if node.items:
            opening = raw[node.start + 1: node.items[0].start]
            closing = raw[node.items[-1].end: node.end - 1]
            if len(node.items) > 1:
                separator = raw[node.items[0].end: node.items[1].start]
            else:
                separator = "," + opening
            return opening, separator, closing
        # an empty list: indent one level deeper than the "source" key's line
        line_start = raw.rfind("\n", 0, node.start) + 1
        before = raw[line_start: node.start]
        key_indent = before[: len(before) - len(before.lstrip(" \t"))]
        if line_start == 0:
            return "", ", ", ""
        unit = _indent_unit(raw)
        return "\n" + key_indent + unit, ",\n" + key_indent + unit, "\n" + key_indent


def _cells(code_cells: list[tuple[int, str, Node | None]]) -> tuple[list[Cell], list[SkippedCell]]:
    cells: list[Cell] = []
    skipped: list[SkippedCell] = []
    for number, source, node in code_cells:
        if CELL_MARK.strip() in source or MAGIC_MARK.strip() in source:
            raise NotebookError(f"cell {number} holds gradfix's own marker text ({CELL_MARK.strip()!r} "
                                f"or {MAGIC_MARK.strip()!r}); not analysed")
        masked = mask(source)
        if masked is None:
            continue
        lines, originals = masked
        code = "".join(lines)
        if code and not code.endswith("\n"):
            code += "\n"
        problem = _syntax_error(code)
        if problem is not None:
            skipped.append(SkippedCell(number, *problem))
            continue
        cells.append(Cell(number, source, node, code, originals))
    return cells, skipped


def _syntax_error(code: str) -> tuple[int | None, str] | None:
    """(line in the cell, message) when the masked cell is not valid Python on its own."""
    try:
        ast.parse(code)
    except SyntaxError as exc:
        return exc.lineno, f"syntax error: {exc.msg}"
    except (ValueError, RecursionError, MemoryError) as exc:
        return None, f"cannot parse: {exc}"
    return None


def _indent_unit(raw: str) -> str:
    m = re.match(r"\{\r?\n([ \t]+)", raw)
    return m.group(1) if m else " "


def _uses_ascii_escapes(raw: str) -> bool:
    """Whether the file escapes non-ASCII characters (`json.dumps` default) rather than
    writing them as they are (nbformat's `ensure_ascii=False`)."""
    if any(ord(ch) > 127 for ch in raw):
        return False
    return bool(re.search(r"\\u(?:00[89a-fA-F][0-9a-fA-F]|0[1-9a-fA-F][0-9a-fA-F]{2}|[1-9a-fA-F][0-9a-fA-F]{3})", raw))


def _is_python(tree: Node) -> bool:
    """Unless the notebook says its language is another one, its code cells are Python."""
    meta = get(tree, "metadata")
    if meta is None or meta.kind != "object":
        return True
    for key, sub in (("language_info", "name"), ("kernelspec", "language")):
        node = get(meta, key)
        if node is not None and node.kind == "object":
            lang = get(node, sub)
            if lang is not None and isinstance(lang.value, str) and lang.value:
                return lang.value.lower() == "python"
    return True


def validate(text: str) -> None:
    """Read with nbformat and validate against its schema; NotebookError says why not."""
    import nbformat
    from nbformat.reader import NotJSONError

    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            nb = nbformat.reader.reads(text)
            major = nb.get("nbformat")
            if major != 4:
                raise NotebookError(f"nbformat {major} notebooks are not supported (only nbformat 4; "
                                    f"open and save it in Jupyter to upgrade it)")
            nbformat.validate(nb)
    except NotJSONError as exc:
        raise NotebookError(f"not a notebook: invalid JSON ({str(exc).splitlines()[0][:120]})") from exc
    except nbformat.ValidationError as exc:
        raise NotebookError(f"not a valid nbformat 4 notebook: {exc.message}") from exc
    except (ValueError, KeyError, TypeError, AttributeError) as exc:   # JSON, but not a notebook's shape
        raise NotebookError(f"not a notebook: {exc}") from exc


# --------------------------------------------------------------------------- display


def cell_sources(text: str) -> list[tuple[int, str, str]]:
    """(cell number, cell type, source) of every cell in a notebook file's text."""
    tree = parse(text)
    cells = get(tree, "cells")
    out = []
    for number, node in enumerate(cells.items if cells is not None else [], start=1):
        kind = get(node, "cell_type")
        src = get(node, "source")
        if src is None:
            continue
        source = "".join(i.value for i in src.items) if src.kind == "array" else src.value
        out.append((number, kind.value if kind is not None else "", source))
    return out


def cell_diff(old: str, new: str, path: str, context: int = 3) -> str:
    """A readable diff of two versions of a notebook file, one section per changed cell
    (`--- a/nb.ipynb:cell 3`), with line numbers inside the cell."""
    if old == new:
        return ""
    before = {n: s for n, _, s in cell_sources(old)}
    out = []
    for number, _kind, source in cell_sources(new):
        previous = before.get(number, "")
        if previous == source:
            continue
        diff = unified_diff(_terminated(previous), _terminated(source), f"{path}:cell {number}", context)
        out.append(diff.split("\n", 1)[1])   # no `diff --git` line: these are not file paths
    return "".join(out)


def _terminated(text: str) -> str:
    return text if not text or text.endswith("\n") else text + "\n"


def file_diff(old: str, new: str, path: str) -> str:
    """The diff to show for one file: per cell for a notebook, unified otherwise."""
    if is_notebook(path):
        try:
            return cell_diff(old, new, path)
        except (ValueError, IndexError):
            pass
    return unified_diff(old, new, path)


# --------------------------------------------------------------------------- engine results


def locate_finding(nb: Notebook, finding: Finding, text: str | None = None, line: int | None = None) -> Finding:
    """`finding` (a line of `text`, default the notebook's module) in cell coordinates;
    `line`, when given, is the line of the notebook's own module to report instead."""
    cell, in_cell = nb.locate(finding.span.line if line is None else line, None if line is not None else text)
    if cell is None:
        return finding
    shift = in_cell - finding.span.line
    span = Span(finding.span.line + shift, finding.span.column, finding.span.end_line + shift, finding.span.end_column)
    return dataclasses.replace(finding, span=span, cell=cell)


def locate_error(nb: Notebook, error: FileError, text: str | None = None) -> FileError:
    if error.line is None:
        return error
    cell, line = nb.locate(error.line, text)
    return error if cell is None else dataclasses.replace(error, line=line, cell=cell)


def guard(nb: Notebook, decide: Decide) -> Decide:
    """Refuse the changes that cannot be mapped back to the notebook (they would touch a
    masked magic or a cell marker) and show the others to `decide` in cell coordinates:
    `decide` sees copies whose `before`/`after` are the notebook file's text."""
    def decide_in_cells(changes: list[Change]) -> Decision:
        flags = [False] * len(changes)
        offered: list[tuple[int, Change]] = []
        befores: dict[str, str | None] = {}     # a round's changes share their `before`
        for k, change in enumerate(changes):
            after = nb.rendered(change.after)
            if change.before not in befores:
                befores[change.before] = nb.rendered(change.before)
            before = befores[change.before]
            if after is None or before is None:
                change.reason = "would change an IPython magic or a cell boundary of the notebook"
                continue
            view = dataclasses.replace(change, finding=locate_finding(nb, change.finding, line=change.line),
                                       line=nb.locate(change.line)[1], before=before, after=after)
            offered.append((k, view))
        if not offered:
            return Decision(flags)
        decision = decide([view for _, view in offered])
        for (k, view), ok in zip(offered, decision.accept):
            flags[k] = ok
            changes[k].reason = view.reason
        return Decision(flags, stop=decision.stop)

    return decide_in_cells


def map_result(nb: Notebook, result: FixResult) -> FixResult:
    """Turn the engine's result on the module into one on the notebook file: `original` and
    `fixed` become the file's text, lines become cell lines."""
    fixed_text = result.fixed
    fixed = nb.raw_text if fixed_text == result.original else nb.rendered(fixed_text)
    if fixed is None:
        result.errors.append(FileError(result.path, None, "the fixes cannot be mapped back to the notebook's "
                                                          "cells; nothing written"))
        for change in result.changes:
            if change.applied:
                change.applied = False
                change.reason = "could not be mapped back to the notebook"
        fixed = nb.raw_text
    for change in result.changes:
        change.finding = locate_finding(nb, change.finding, line=change.line)
        change.line = nb.locate(change.line)[1]
    result.findings = [locate_finding(nb, f, fixed_text) for f in result.findings]
    result.errors = [locate_error(nb, e) for e in result.errors]
    result.original, result.fixed = nb.raw_text, fixed
    return result
