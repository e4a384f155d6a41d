"""IPython syntax in a notebook cell, masked so that the cell parses as Python.

Line magics, `!` shell escapes (with their `\\` continuation lines), assignments from
them, `?`/`??` help and autocall escapes are recognised only where a statement starts
(a light lexer tracks open brackets and strings), and each becomes a placeholder line of
the same indentation: `pass  # gradfix:magic 0`, continuation lines a comment. A cell
magic whose body IPython runs as Python masks its first line only; any other makes the
cell not Python.

Automagic: a cell of one line such as `pip install torchviz` (no `%`) is the `%pip` magic
in IPython, which turns a line whose first word names a line magic into that magic
(`%automagic`, on by default), but only when the whole cell is that one line: checked with
IPython 7.34 and 9.18, whose `transform_cell` applies these "dynamic" transforms to single-
line cells only (leading blank lines dropped; a second line, even blank, turns them off).
gradfix masks such a line only when it is not valid Python, because IPython also leaves it
alone when a variable of that name exists, which gradfix cannot know.
"""

from __future__ import annotations

import ast
import re

from gradfix.diffing import split_lines

MAGIC_MARK = "# gradfix:magic "
# cell magics whose body IPython runs as Python in the kernel's namespace; any other
# (`%%bash`, `%%writefile`, `%%html`...) makes the whole cell not Python
PYTHON_CELL_MAGICS = frozenset({"time", "timeit", "capture", "prun", "debug", "python", "python3", "pypy"})
# the line magics and aliases of IPython 9.18's shell on Linux (`%lsmagic`, `%alias`), plus
# those ipykernel adds; the names automagic can turn a one-line cell into
AUTOMAGICS = frozenset("""
    alias alias_magic autoawait autocall automagic bookmark cat cd clear code_wrap colors conda config
    connect_info cp debug dhist dirs doctest_mode ed edit env gui hist history killbgscripts ldir less lf lk ll
    load load_ext loadpy logoff logon logstart logstate logstop ls lsmagic lx macro magic mamba man matplotlib
    micromamba mkdir more mv notebook page pastebin pdb pdef pdoc pfile pinfo pinfo2 pip popd pprint precision
    prun psearch psource pushd pwd pycat pylab qtconsole quickref recall rehashx reload_ext rep rerun reset
    reset_selective rm rmdir run save sc set_env sx system tb time timeit unalias unload_ext uv who who_ls
    whos xdel xmode""".split())
_FIRST_WORD = re.compile(r"[ \t]*([A-Za-z_][\w.]*)")
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


def _is_automagic(lines: list[str], start: int) -> bool:
    """Whether the cell is one line (after leading blank ones) that IPython runs as a magic
    without its `%` and that is not Python (see the module docstring)."""
    rest = lines[start:]
    if len(rest) != 1 or lines[start].endswith(("\\\n", "\\")):
        return False
    m = _FIRST_WORD.match(rest[0])
    if m is None or m.group(1) not in AUTOMAGICS:
        return False
    try:
        ast.parse(rest[0].strip())
    except (SyntaxError, ValueError):
        return True
    return False


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
    elif start is not None and _is_automagic(lines, start):
        out.extend(lines[:start])
        hide(lines[start], True, "")    # IPython drops a one-line cell's indent too
        return out, masked
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
