"""Running the engine over files: discover, read, lint or fix, write.

Front ends (the CLI, interactive review) call these; they only format output
and ask questions. A file that cannot be read, parsed or written becomes a
FileError and the run goes on.
"""

from __future__ import annotations

import errno
import os
import sys
from dataclasses import dataclass, field
from typing import Callable, Iterable

from gradfix.config import Config
from gradfix.diffing import display_path
from gradfix.discovery import discover
from gradfix.engine import Decide, Engine, FixResult
from gradfix.model import FileError, Finding
from gradfix.sourcefile import ConcurrentModification, SourceError, SourceFile


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


STDIN = "-"


def _missing(path: str) -> str:
    """Why an existing-looking path cannot be opened: a symlink loop is not a missing file."""
    try:
        os.stat(path)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            return "symbolic link loop (too many levels of symbolic links)"
        if os.path.islink(path):
            return f"broken symbolic link to {os.readlink(path)!r}"
    return "no such file or directory"


def iter_sources(paths: Iterable[str], config: Config, report: RunReport, stdin_name: str | None = None,
                 progress=None):
    """(shown path, SourceFile) per file; `-` is standard input, shown as `stdin_name`."""
    found: Iterable[str] = discover([p for p in paths if p != STDIN], config.exclude, root=config.root)
    if STDIN in paths:
        found = [STDIN, *found]
    if progress is not None:
        found = list(found)
        progress.start(len(found))
    for path in found:
        if path == STDIN:
            shown = stdin_name or STDIN
            if progress is not None:
                progress.advance(shown)
            try:
                source = SourceFile.from_bytes(STDIN, sys.stdin.buffer.read())
            except SourceError as exc:
                report.errors.append(FileError(shown, exc.line, str(exc)))
                continue
            report.files += 1
            yield shown, source
            continue
        shown = display_path(path)
        if progress is not None:
            progress.advance(shown)
        if not os.path.exists(path):
            report.errors.append(FileError(shown, None, _missing(path)))
            continue
        try:
            source = SourceFile.read(path)
        except SourceError as exc:
            report.errors.append(FileError(shown, exc.line, str(exc)))
            continue
        report.files += 1
        yield shown, source


def lint_paths(engine: Engine, paths: Iterable[str], config: Config, stdin_name: str | None = None,
               progress=None) -> RunReport:
    report = RunReport()
    for shown, source in iter_sources(paths, config, report, stdin_name, progress):
        findings, errors = engine.lint_source(source.text, shown)
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
    stdin_name: str | None = None,
    progress=None,
) -> RunReport:
    """Fix every file; `decide_for(path)` gives the decider for that file (policy or a person).
    Standard input is never written: the caller prints its fixed text."""
    report = RunReport()
    for shown, source in iter_sources(paths, config, report, stdin_name, progress):
        result = engine.fix_source(source.text, shown, decide_for(shown), verifier=verifier,
                                   project_root=config.root or os.getcwd())
        report.errors.extend(result.errors)
        if write and result.fixed != result.original and source.path != STDIN:
            try:
                source.write(result.fixed)
            except (ConcurrentModification, OSError) as exc:
                report.errors.append(FileError(shown, None, f"not written: {exc}"))
                for change in result.changes:
                    if change.applied:
                        change.applied = False
                        change.reason = "file not written"
                result.fixed = result.original
                # what remains is what the file on disk still holds
                result.findings = engine.lint_source(result.original, shown)[0]
        report.fixes.append(result)
        if after_file is not None:
            after_file(result)
        if result.stopped:
            break
    return report
