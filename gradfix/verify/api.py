"""Plain data exchanged between the engine and the verifier (no torch here)."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

VERDICTS = ("equivalent", "fixes-crash", "fixes-hazard", "changes-behaviour", "failed", "untestable")

# Worst first wins when several units are checked for one request.
_RANK = {"equivalent": 0, "fixes-hazard": 1, "fixes-crash": 2, "changes-behaviour": 3, "untestable": 4, "failed": 5}


def verdict_rank(verdict: str) -> int:
    return _RANK.get(verdict, 4)


@dataclass(frozen=True)
class VerifyRequest:
    path: str  # display path of the file
    original: str  # whole original file source text
    rewritten: str  # whole file source text after applying exactly one change
    rule: str  # e.g. "GF101"
    line: int  # 1-based line of the finding in `original`
    contract: dict  # JSON-serialisable equivalence contract, e.g. {"kind": "equal"}
    project_root: str | None = None  # where gradfix_fixtures.py lives; put on sys.path in the worker

    def to_json(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> "VerifyRequest":
        return cls(
            path=data["path"],
            original=data["original"],
            rewritten=data["rewritten"],
            rule=data.get("rule", ""),
            line=int(data.get("line", 0)),
            contract=dict(data.get("contract") or {"kind": "equal"}),
            project_root=data.get("project_root"),
        )


@dataclass(frozen=True)
class VerifyResult:
    verdict: str  # one of VERDICTS
    detail: str  # one or two human sentences
    unit: str | None  # class or function name, or "<module-level loss expression>"

    def to_json(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> "VerifyResult":
        verdict = data.get("verdict", "untestable")
        if verdict not in VERDICTS:
            return cls("untestable", f"verifier returned an unknown verdict {verdict!r}", data.get("unit"))
        return cls(verdict, str(data.get("detail", "")), data.get("unit"))

