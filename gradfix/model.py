"""The data that flows through the pipeline: findings, fixes, changes, verdicts.

Everything here is plain data so that every front end (CLI, interactive review,
LSP) consumes the same objects and none re-derives them.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Sequence, Union

if TYPE_CHECKING:   # a warm `check` reads findings from the cache without loading libcst
    import libcst as cst


class Safety(str, enum.Enum):
    """Ruff's fix-safety levels, as a static judgement before verification.

    SAFE: keeps what correct code computes. UNSAFE: changes values on purpose
    (an expected change) or may, depending on code the rule cannot see; the
    verifier decides.
    """

    SAFE = "safe"
    UNSAFE = "unsafe"


Replacement = Union["cst.CSTNode", "cst.FlattenSentinel", "cst.RemovalSentinel"]


@dataclass(frozen=True)
class Edit:
    """Replace one node of the parsed module (by identity) with `replacement`."""

    node: cst.CSTNode
    replacement: Replacement


@dataclass(frozen=True)
class Fix:
    """A rewrite: one or more node edits applied together, plus what it means."""

    description: str
    edits: Sequence[Edit]
    safety: Safety
    # The equivalence contract the verifier checks, JSON-serialisable:
    # {"kind": "equal"}, {"kind": "scale", "factor": 1e9, ...}, ...
    contract: dict[str, Any] = field(default_factory=lambda: {"kind": "equal"})


@dataclass(frozen=True)
class Span:
    """1-based lines and columns; end is exclusive like LSP ranges (column after the last char)."""

    line: int
    column: int
    end_line: int
    end_column: int


@dataclass(frozen=True)
class Finding:
    rule: str
    name: str
    message: str
    span: Span
    fix: Fix | None = None
    cell: int | None = None    # in a notebook: the 1-based cell (markdown counted); span lines are in that cell

    @property
    def fixable(self) -> bool:
        return self.fix is not None

    def position(self, line: int | None = None) -> str:
        """`2:5`, or `cell 3:2:5` in a notebook (Ruff's form); `line` overrides the span's."""
        return f"{line_label(self.span.line if line is None else line, self.cell)}:{self.span.column}"

    def to_record(self) -> dict[str, Any]:
        """Plain JSON data (the cache and the worker processes of `check -j` pass findings so); a
        fix keeps its description, safety and contract but not its edits, which point into a
        tree that stays with the process that parsed it."""
        fix = None if self.fix is None else {"description": self.fix.description, "safety": self.fix.safety.value,
                                             "contract": self.fix.contract}
        return {"rule": self.rule, "name": self.name, "message": self.message,
                "span": [self.span.line, self.span.column, self.span.end_line, self.span.end_column], "fix": fix,
                "cell": self.cell}

    @classmethod
    def from_record(cls, data: dict[str, Any]) -> "Finding":
        fix = data.get("fix")
        return cls(rule=data["rule"], name=data["name"], message=data["message"], span=Span(*data["span"]),
                   fix=None if fix is None else Fix(fix["description"], (), Safety(fix["safety"]), fix["contract"]),
                   cell=data.get("cell"))


def line_label(line: int, cell: int | None = None) -> str:
    """`12`, or `cell 3:2` for a line of a notebook cell."""
    return f"cell {cell}:{line}" if cell is not None else str(line)


@dataclass(frozen=True)
class FileError:
    """A file that could not be read, parsed or written. line is 1-based or None."""

    path: str
    line: int | None
    message: str
    cell: int | None = None    # in a notebook: the cell `line` is in

    def to_record(self) -> dict[str, Any]:
        return {"path": self.path, "line": self.line, "message": self.message, "cell": self.cell}

    @classmethod
    def from_record(cls, data: dict[str, Any]) -> "FileError":
        return cls(data["path"], data["line"], data["message"], data.get("cell"))


class Verdict(str, enum.Enum):
    """What running both versions showed. FIXES_HAZARD: the original shows the hazard when run
    (None/zero grads, updates lost to fp32 resolution or Adam's eps, an autograd-invisible write,
    an LR trace off its epoch schedule) and the rewrite does not. CHANGES_BEHAVIOUR: results
    differ as the rule intends, but no hazard was shown, so it is applied only on request."""

    EQUIVALENT = "equivalent"
    FIXES_CRASH = "fixes-crash"
    FIXES_HAZARD = "fixes-hazard"
    CHANGES_BEHAVIOUR = "changes-behaviour"
    FAILED = "failed"
    UNTESTABLE = "untestable"
    NOT_VERIFIED = "not-verified"
