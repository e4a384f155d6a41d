"""The shape of a rule: identity, documentation, matcher and rewrite in one class.

A rule module in `codemods/` defines one subclass of `Rule`. The engine gives
it a `RuleContext` per file and collects what it reports; the documentation
fields feed `gradfix rule GF101`, the README and the LSP hover.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar, Iterable

import libcst as cst

from gradfix.analysis import FileIndex
from gradfix.model import Edit, Finding, Fix, Safety, Span


@dataclass(frozen=True)
class RuleDocs:
    what: str                 # what it finds
    why: str                  # why it stops learning or crashes (with measured figures)
    example: str              # code that fires
    fix: str                  # what the rewrite does (or "detect only")
    fix_safety: str           # when the rewrite is safe and when the verifier decides
    verification: str         # the equivalence contract the verifier checks
    fixed_example: str = ""   # the example after the rewrite


class Rule:
    id: ClassVar[str]
    name: ClassVar[str]
    summary: ClassVar[str]
    docs: ClassVar[RuleDocs]
    default_options: ClassVar[dict[str, Any]] = {}

    def __init__(self, options: dict[str, Any] | None = None):
        opts = dict(self.default_options)
        for key, value in (options or {}).items():
            if key not in self.default_options:
                raise ValueError(f"{self.id}: unknown option {key!r} (known: {sorted(self.default_options)})")
            default = self.default_options[key]
            if isinstance(default, (int, float)) and not isinstance(default, bool) and (
                    isinstance(value, bool) or not isinstance(value, (int, float))):
                raise ValueError(f"{self.id}: option {key!r} must be a number, not {value!r}")
            opts[key] = value
        self.options = opts

    def check(self, ctx: "RuleContext") -> Iterable[Finding]:
        raise NotImplementedError

    def may_match(self, facts) -> bool:
        """A cheap NECESSARY condition for `check` to report anything, on the file's `ast` facts
        (analysis/prepass.py): False skips the rule for the file, and a file no rule may match is
        not parsed with libcst. Each rule states its own next to its matcher; the default (run
        everywhere) is what a rule without one gets."""
        return True

    @classmethod
    def documentation(cls) -> str:
        d = cls.docs
        parts = [
            f"# {cls.name} ({cls.id})", "", cls.summary, "",
            "## What it does", d.what, "",
            "## Why is this bad?", d.why, "",
            "## Example", "```python", d.example.strip("\n"), "```", "",
        ]
        if d.fixed_example:
            parts += ["Use instead:", "```python", d.fixed_example.strip("\n"), "```", ""]
        parts += ["## Fix", d.fix, "", "## Fix safety", d.fix_safety, "", "## Verification", d.verification, ""]
        return "\n".join(parts)


class RuleContext:
    """What a rule sees of one file: the tree, shared analysis, and a reporter."""

    def __init__(self, index: FileIndex, path: str, rule: Rule):
        self.index = index
        self.module = index.module
        self.path = path
        self.rule = rule

    def span(self, node: cst.CSTNode) -> Span:
        pos = self.index.position(node)
        return Span(pos.start.line, pos.start.column + 1, pos.end.line, pos.end.column + 1)

    def finding(self, node: cst.CSTNode, message: str, fix: Fix | None = None) -> Finding:
        return Finding(rule=self.rule.id, name=self.rule.name, message=message, span=self.span(node), fix=fix)

    def fix(self, description: str, edits: list[Edit], safety: Safety, contract: dict | None = None) -> Fix:
        return Fix(description=description, edits=tuple(edits), safety=safety, contract=contract or {"kind": "equal"})

    def code(self, node: cst.CSTNode) -> str:
        return self.module.code_for_node(node)
