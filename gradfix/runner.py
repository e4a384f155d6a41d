"""Running the engine over files: discover, read, lint or fix, write.

Front ends (the CLI, interactive review) call these; they only format output
and ask questions. A file that cannot be read, parsed or written becomes a
FileError and the run goes on.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Callable, Iterable

from gradfix.config import Config
from gradfix.diffing import display_path
from gradfix.discovery import discover
from gradfix.engine import Decide, Engine, FixResult
from gradfix.model import FileError, Finding
from gradfix.sourcefile import ConcurrentModification, SourceError, SourceFile

# Notebooks (gradfix.notebook) are read as a Notebook whose `text` is the module the engine
# sees; their findings, changes and errors are mapped to cell coordinates here, and their
# FixResult's original/fixed are the notebook file's text.


@dataclass
class FileLint:
    path: str
    findings: list[Finding]


@dataclass
class RunReport:
    lints: list[FileLint] = field(default_factory=list)
    fixes: list[FixResult] = field(default_factory=list)
    errors: list[FileError] = field(default_factory=list)
    files: int = 0


def iter_sources(paths: Iterable[str], config: Config, report: RunReport):
    for path in discover(paths, config.exclude, root=config.root, include=config.include_patterns()):
        shown = display_path(path)
        if not os.path.exists(path):
            report.errors.append(FileError(shown, None, "no such file or directory"))
            continue
        try:
            if path.endswith(".ipynb"):
                from gradfix.notebook import Notebook

                source = Notebook.read(path)
            else:
                source = SourceFile.read(path)
        except SourceError as exc:
            report.errors.append(FileError(shown, exc.line, str(exc)))
            continue
        report.files += 1
        yield shown, source


def lint_paths(engine: Engine, paths: Iterable[str], config: Config) -> RunReport:
    report = RunReport()
    for shown, source in iter_sources(paths, config, report):
        findings, errors = engine.lint_source(source.text, shown)
        if not isinstance(source, SourceFile):
            from gradfix.notebook import locate_error, locate_finding

            findings = [locate_finding(source, f) for f in findings]
            errors = [locate_error(source, e) for e in errors]
        report.errors.extend(errors)
        report.lints.append(FileLint(shown, findings))
    return report


def fix_paths(
    engine: Engine,
    paths: Iterable[str],
    config: Config,
    decide_for: Callable[[str], Decide],
    verifier=None,
    write: bool = False,
    after_file: Callable[[FixResult], None] | None = None,
) -> RunReport:
    """Fix every file; `decide_for(path)` gives the decider for that file (policy or a person)."""
    report = RunReport()
    for shown, source in iter_sources(paths, config, report):
        decide = decide_for(shown)
        if not isinstance(source, SourceFile):
            from gradfix.notebook import guard

            decide = guard(source, decide)
        result = engine.fix_source(source.text, shown, decide, verifier=verifier,
                                   project_root=config.root or os.getcwd())
        if not isinstance(source, SourceFile):
            from gradfix.notebook import map_result

            result = map_result(source, result)
        report.errors.extend(result.errors)
        if write and result.fixed != result.original:
            try:
                source.write(result.fixed)
            except (ConcurrentModification, OSError) as exc:
                report.errors.append(FileError(shown, None, f"not written: {exc}"))
                for change in result.changes:
                    if change.applied:
                        change.applied = False
                        change.reason = "file not written"
                result.fixed = result.original
        report.fixes.append(result)
        if after_file is not None:
            after_file(result)
        if result.stopped:
            break
    return report
