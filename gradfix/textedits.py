"""Minimal text edits between two versions of a file (for the LSP and JSON output).

Positions are 0-based lines and columns in UTF-16 code units, as LSP expects by
default; `utf16=False` gives code points.
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass

from gradfix.diffing import split_lines


@dataclass(frozen=True)
class TextEdit:
    start_line: int
    start_col: int
    end_line: int
    end_col: int
    new_text: str


def _units(text: str, utf16: bool) -> int:
    if not utf16:
        return len(text)
    return sum(2 if ord(ch) > 0xFFFF else 1 for ch in text)


def text_edits(old: str, new: str, utf16: bool = True) -> list[TextEdit]:
    """Line-level diff, then each replaced block trimmed to its changed characters."""
    if old == new:
        return []
    a, b = split_lines(old), split_lines(new)
    edits: list[TextEdit] = []
    matcher = difflib.SequenceMatcher(None, a, b, autojunk=False)
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag == "equal":
            continue
        old_block = "".join(a[i1:i2])
        new_block = "".join(b[j1:j2])
        # trim the common prefix and suffix inside the block
        p = 0
        limit = min(len(old_block), len(new_block))
        while p < limit and old_block[p] == new_block[p]:
            p += 1
        s = 0
        while s < limit - p and old_block[len(old_block) - 1 - s] == new_block[len(new_block) - 1 - s]:
            s += 1
        start = _pos(a, i1, old_block[:p], utf16)
        end = _pos(a, i1, old_block[: len(old_block) - s], utf16)
        edits.append(TextEdit(start[0], start[1], end[0], end[1], new_block[p: len(new_block) - s]))
    return edits


def _pos(lines: list[str], first_line: int, consumed: str, utf16: bool) -> tuple[int, int]:
    line = first_line + consumed.count("\n")
    last = consumed.rsplit("\n", 1)[-1]
    return line, _units(last, utf16)


def apply_text_edits(text: str, edits: list[TextEdit], utf16: bool = True) -> str:
    """Apply edits (as an LSP client would); used by tests and fix-all."""
    lines = split_lines(text)

    def offset(line: int, col: int) -> int:
        base = sum(len(l) for l in lines[:line])
        if line >= len(lines):
            return base
        chars, units = 0, 0
        for ch in lines[line]:
            if units >= col:
                break
            units += 2 if (utf16 and ord(ch) > 0xFFFF) else 1
            chars += 1
        return base + chars

    out = text
    for e in sorted(edits, key=lambda e: (e.start_line, e.start_col), reverse=True):
        s, t = offset(e.start_line, e.start_col), offset(e.end_line, e.end_col)
        out = out[:s] + e.new_text + out[t:]
    return out
