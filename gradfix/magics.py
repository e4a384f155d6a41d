"""IPython syntax in a notebook cell, masked so that the cell parses as Python.

Line magics, `!` shell escapes (with their `\\` continuation lines), assignments from
them, `?`/`??` help and autocall escapes are recognised only where a statement starts
(a light lexer tracks open brackets and strings), and each becomes a placeholder line of
the same indentation: `pass  # gradfix:magic 0`, continuation lines a comment. A cell
magic whose body IPython runs as Python masks its first line only; any other makes the
cell not Python.
"""

from __future__ import annotations

import re

from gradfix.diffing import split_lines

MAGIC_MARK = "# gradfix:magic "
# cell magics whose body IPython runs as Python in the kernel's namespace; any other
# (`%%bash`, `%%writefile`, `%%html`...) makes the whole cell not Python
PYTHON_CELL_MAGICS = frozenset({"time", "timeit", "capture", "prun", "debug", "python", "python3", "pypy"})
_MAGIC_ASSIGN = re.compile(r"[A-Za-z_][\w.]*(\s*,\s*[A-Za-z_][\w.]*)*\s*=\s*[%!]")
PLACEHOLDER = re.compile(r"[ \t]*(?:pass  )?# gradfix:magic (\d+)\r?")


def _lex(line: str, state: dict) -> int | None:
    """Advance the lexical state (open brackets, open string) over one line of Python;
    return the offset where a comment starts, if one does."""
    i, n = 0, len(line)
    state["continued"] = False
    while i < n:
        quote = state["string"]
        if quote is not None:
            if line[i] == "\\":      # escapes the next character, in raw strings too
                i += 2
                continue
            if line.startswith(quote, i):
                state["string"] = None
                i += len(quote)
                continue
            i += 1
            continue
        ch = line[i]
        if ch == "#":
            return i
        if ch in "\"'":
            state["string"] = ch * 3 if line.startswith(ch * 3, i) else ch
            i += len(state["string"])
            continue
        if ch in "([{":
            state["depth"] += 1
        elif ch in ")]}":
            state["depth"] = max(0, state["depth"] - 1)
        elif ch == "\\" and line[i + 1:].strip("\r\n") == "":
            state["continued"] = True
        i += 1
    if state["string"] is not None and len(state["string"]) == 1 and not line.rstrip("\r\n").endswith("\\"):
        state["string"] = None  # an unterminated one-line string: a syntax error Python will report
    return None


def _is_magic(code: str, closed: bool) -> bool:
    """Whether a line that starts a statement is IPython syntax rather than Python; `closed`:
    the line leaves no string or bracket open (a triple-quoted string opened by `x = ` and ending the line in `?` is Python)."""
    s = code.strip()
    if not s:
        return False
    if s[0] in "%!?/,;":
        return True          # magic, shell escape, help, autocall
    if s.endswith("?") and closed:
        return True          # `obj?`, `obj??`
    return bool(_MAGIC_ASSIGN.match(s))   # `files = !ls`, `t = %timeit -o f()`


def mask(source: str) -> tuple[list[str], list[str]] | None:
    """(lines of Python with placeholders, original text of each masked line), or None when
    the cell is not Python (a cell magic such as `%%bash`)."""
    lines = split_lines(source)
    out: list[str] = []
    masked: list[str] = []

    def hide(line: str, first: bool, indent: str) -> None:
        body = line[:-1] if line.endswith("\n") else line
        cr = "\r" if body.endswith("\r") else ""
        out.append(f"{indent}{'pass  ' if first else ''}{MAGIC_MARK}{len(masked)}{cr}"
                   + ("\n" if line.endswith("\n") else ""))
        masked.append(body)

    start = next((k for k, l in enumerate(lines) if l.strip()), None)
    first_python = 0
    if start is not None and lines[start].lstrip().startswith("%%"):
        name = lines[start].lstrip()[2:].split(None, 1)[0] if lines[start].lstrip()[2:].strip() else ""
        if name not in PYTHON_CELL_MAGICS:
            return None
        out.extend(lines[:start])
        hide(lines[start], True, "")
        first_python = start + 1
    state = {"depth": 0, "string": None, "continued": False}
    continuing_magic = False
    indent = ""
    for line in lines[first_python:]:
        at_start = state["depth"] == 0 and state["string"] is None and not state["continued"]
        if continuing_magic:
            hide(line, False, indent)
            continuing_magic = line.rstrip("\r\n").endswith("\\")
            continue
        if at_start:
            probe = dict(state)
            comment = _lex(line, probe)
            code = line[:comment] if comment is not None else line
            if _is_magic(code, probe["string"] is None and probe["depth"] == 0):
                indent = line[: len(line) - len(line.lstrip(" \t"))]
                hide(line, True, indent)
                continuing_magic = line.rstrip("\r\n").endswith("\\")
                continue
        _lex(line, state)
        out.append(line)
    return out, masked
