"""Emitters: one findings report, many output formats (text, concise, json, json-lines, github,
gitlab, sarif, junit).

Every front end hands the same `Report` to `render`; a format is one module that turns it into
text. Nothing here runs the engine.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from gradfix.model import FileError, Finding


@dataclass(frozen=True)
class Entry:
    """One finding as reported: where, what, and the verifier's verdict when it ran."""

    path: str
    finding: Finding
    verdict: str | None = None
    detail: str = ""


@dataclass
class Report:
    entries: list[Entry] = field(default_factory=list)
    errors: list[FileError] = field(default_factory=list)
    files: list[str] = field(default_factory=list)      # every file analysed, in order
    verified: bool = False
    unsafe_fixes: bool = False                            # `changes-behaviour` verdicts count as applicable

    def applies(self, entry: Entry) -> bool:
        """Whether `apply` with the same options would take the entry's fix."""
        v = entry.verdict
        if v is None:
            return False        # not verified (and the engine, with libcst, need not load)
        from gradfix.engine import APPLIED_VERDICTS

        return v in {x.value for x in APPLIED_VERDICTS} or (self.unsafe_fixes and v == "changes-behaviour")

    @property
    def files_with_findings(self) -> int:
        return len({e.path for e in self.entries})


FORMATS = ("text", "concise", "json", "json-lines", "github", "gitlab", "sarif", "junit")


def render(fmt: str, report: Report) -> str:
    """The report in `fmt`, ready for stdout (text formats end with a newline)."""
    if fmt in ("text", "concise"):
        from gradfix.report.text import render_text

        return render_text(report, concise=fmt == "concise")
    if fmt == "json":
        from gradfix.report.jsonfmt import render_json

        return render_json(report)
    if fmt == "json-lines":
        from gradfix.report.jsonfmt import render_json_lines

        return render_json_lines(report)
    if fmt == "github":
        from gradfix.report.github import render_github

        return render_github(report)
    if fmt == "gitlab":
        from gradfix.report.gitlab import render_gitlab

        return render_gitlab(report)
    if fmt == "sarif":
        from gradfix.report.sarif import render_sarif

        return render_sarif(report)
    if fmt == "junit":
        from gradfix.report.junit import render_junit

        return render_junit(report)
    raise ValueError(f"unknown output format {fmt!r}")


def plural(n: int, word: str, many: str | None = None) -> str:
    return f"{n} {word if n == 1 else (many or word + 's')}"


def from_lints(run, verdicts: dict | None = None, unsafe_fixes: bool = False) -> Report:
    """A Report of a `check` run; `verdicts` maps (path, cell, line, rule) to (verdict, detail)."""
    report = Report(errors=list(run.errors), files=[lint.path for lint in run.lints], verified=verdicts is not None,
                    unsafe_fixes=unsafe_fixes)
    for lint in run.lints:
        for f in lint.findings:
            v = (verdicts or {}).get((lint.path, f.cell, f.span.line, f.rule)) if f.fixable else None
            report.entries.append(Entry(lint.path, f, *(v or (None, ""))))
    return report


def from_fixes(run) -> Report:
    """A Report of what remains after an `apply` run."""
    report = Report(errors=list(run.errors), files=[r.path for r in run.fixes])
    for r in run.fixes:
        report.entries.extend(Entry(r.path, f) for f in r.findings)
    return report


# formats whose output carries the run's errors; for the others the CLI prints them on stderr
EMBEDS_ERRORS = frozenset({"json", "github", "gitlab", "sarif", "junit"})
