"""A project file that does not parse as a whole still gives the calls of its parts that do.

Research code often keeps Python 2 functions beside its Python 3 `__main__` block (`x.cuda(async=True)`,
`print "..."`, `except E, e:`): the block that builds the model from constants parses, the file does not, and
call_sites.project_sites skipped it, losing the model's only constructor call. `salvage` blanks out each top-level
`def`/`class` (with its decorators) that holds a syntax error and parses the rest, line numbers kept.

Why that is sound for call sites: a module-level `def`/`class` statement only binds its own name when the module
runs; the statements kept compute what they compute in the file, unless they read a dropped name or a dropped
body, once called, rebinds or mutates a module name. So salvage refuses (None) when an error is not inside a
top-level definition (a module-level Python 2 statement), when more than MAX_DROPPED definitions fail, or when a
dropped definition's name is bound elsewhere in the file; and `Salvaged.touches` lets the caller reject a call
whose arguments read, directly or through the module-level statements that bind them, any identifier written
anywhere in the dropped text (a word-level over-approximation: strings and comments included), so no argument can
depend on what was left out.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass

MAX_DROPPED = 12
_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_HEAD = re.compile(r"(async\s+def|def|class)\s+([A-Za-z_][A-Za-z0-9_]*)")


@dataclass
class Salvaged:
    tree: ast.Module  # the file without the dropped definitions (their lines blank)
    dropped: list[str]  # the names of the dropped definitions, in source order
    words: frozenset  # every identifier-like word of the dropped text

    def touches(self, names: set[str]) -> bool:
        """Whether the dropped text mentions any of `names`, or a name the module-level statements binding them
        read, in turn (`Y = X * 2` when a dropped body may rebind `X`)."""
        seen, todo = set(), set(names)
        while todo:
            name = todo.pop()
            if name in seen:
                continue
            seen.add(name)
            for st in self.tree.body:
                if name in {n.id for n in ast.walk(st) if isinstance(n, ast.Name) and not isinstance(n.ctx, ast.Load)}:
                    todo |= {n.id for n in ast.walk(st) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)}
        return bool(seen & self.words)

    @property
    def note(self) -> str:
        shown = ", ".join(self.dropped[:4]) + (f" and {len(self.dropped) - 4} more" if len(self.dropped) > 4 else "")
        return f"parsed without {shown}, which do{'es' if len(self.dropped) == 1 else ''} not parse"


def _top(line: str) -> bool:
    """A line that starts a module-level statement (column 0, not blank, not a comment)."""
    return bool(line) and not line[0].isspace() and not line.startswith("#")


def _chunk(lines: list[str], err: int) -> tuple[int, int, str] | None:
    """[first, end) of the top-level definition holding 0-based line `err`, and its name; None unless the error
    is inside one (its header or its indented body)."""
    i = min(err, len(lines) - 1)
    while i >= 0 and not _top(lines[i]):
        i -= 1
    if i < 0:
        return None
    m = _HEAD.match(lines[i])
    if m is None:
        return None
    first = i
    while first > 0 and lines[first - 1].startswith("@"):
        first -= 1
    end = err + 1
    while end < len(lines) and not _top(lines[end]):
        end += 1
    return first, end, m.group(2)


def salvage(text: str) -> Salvaged | None:
    """The file's parse without its unparseable top-level definitions; None when that is not possible (see the
    module docstring). A file that parses needs no salvage: None too."""
    lines = text.splitlines()
    dropped: list[str] = []
    words: set[str] = set()
    for _ in range(MAX_DROPPED + 1):
        try:
            tree = ast.parse("\n".join(lines) + "\n")
        except SyntaxError as e:
            if not e.lineno or len(dropped) >= MAX_DROPPED:
                return None
            got = _chunk(lines, e.lineno - 1)
            if got is None:
                return None
            first, end, name = got
            for j in range(first, end):
                words.update(_WORD.findall(lines[j]))
                lines[j] = ""
            dropped.append(name)
            continue
        except (ValueError, RecursionError, MemoryError):
            return None
        if not dropped:
            return None
        bound = {n.id for n in ast.walk(tree) if isinstance(n, ast.Name) and not isinstance(n.ctx, ast.Load)}
        bound |= {n.name for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef,
                                                                    ast.ClassDef))}
        bound |= {(a.asname or a.name).split(".")[0] for n in ast.walk(tree)
                  if isinstance(n, (ast.Import, ast.ImportFrom)) for a in n.names}
        if bound & set(dropped):
            return None
        return Salvaged(tree, dropped, frozenset(words))
    return None
