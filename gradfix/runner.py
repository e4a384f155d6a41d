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
from typing import TYPE_CHECKING, Callable, Iterable

from gradfix.config import Config
from gradfix.diffing import display_path
from gradfix.discovery import discover
from gradfix.model import FileError, Finding
from gradfix.parallel import lint_many, uses_pool
from gradfix.sourcefile import ConcurrentModification, SourceError, SourceFile

if TYPE_CHECKING:   # a warm `check` whose results all come from the cache loads no engine (libcst)
    from gradfix.engine import Decide, Engine, FixResult

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


def iter_sources(paths: Iterable[str], config: Config, report: RunReport, stdin_name: str | None = None):
    """(shown path, SourceFile) per file; `-` is standard input, shown as `stdin_name`."""
    found: Iterable[str] = discover([p for p in paths if p != STDIN], config.exclude, root=config.root,
                                    include=config.include_patterns())
    if STDIN in paths:
        found = [STDIN, *found]
    for path in found:
        if path == STDIN:
            shown = stdin_name or STDIN
            try:
                source = SourceFile.from_bytes(STDIN, sys.stdin.buffer.read())
            except SourceError as exc:
                report.errors.append(FileError(shown, exc.line, str(exc)))
                continue
            report.files += 1
            yield shown, source
            continue
        shown = display_path(path)
        if not os.path.exists(path):
            report.errors.append(FileError(shown, None, _missing(path)))
            continue
        try:
            if path.endswith(".ipynb"):
                from gradfix.notebook import Notebook

                source = Notebook.read(path)
                report.errors.extend(source.skipped_errors(shown))   # the other cells are still checked
            else:
                source = SourceFile.read(path)
        except SourceError as exc:
            report.errors.append(FileError(shown, exc.line, str(exc)))
            continue
        report.files += 1
        yield shown, source


def with_project(engine: Engine, sources: list, config: Config, cache=None, jobs: int | None = None) -> list:
    """Give the engine the run's files as one project (imports, module classes and call sites
    across files), so a file is judged with what the others say about it. With a results cache,
    summaries and facts it holds are read, not computed (gradfix/projectcache.py)."""
    files = {shown: source.text for shown, source in sources}
    if cache is not None:
        from gradfix.projectcache import CachedProjectIndex

        engine.project = CachedProjectIndex(files, config.root or os.getcwd(), cache)
        return sources
    if jobs is not None and hasattr(engine, "rule_hints"):
        from gradfix import prescan

        # one `ast` parse per file for the summary and the pre-pass, on `jobs` cores
        engine.project = prescan.build(engine, files, config.root or os.getcwd(), jobs)
        return sources
    from gradfix.analysis.project import ProjectIndex

    engine.project = ProjectIndex.build(files, config.root or os.getcwd())
    return sources


def lint_paths(engine: Engine, paths: Iterable[str], config: Config, stdin_name: str | None = None,
               progress=None, jobs: int = 1, cache=None, shard: tuple[int, int] | None = None) -> RunReport:
    """Findings of every file, in discovery order: from the cache (gradfix/cache.py) when a
    file, the rules and the project facts it reads are unchanged, else linted (in a pool of
    `jobs` processes when that pays). With `shard` (i, n), only the files of that share
    (gradfix/shard.py), judged with the project facts of all."""
    report = RunReport()
    sources = with_project(engine, list(iter_sources(paths, config, report, stdin_name)), config, cache, jobs)
    if shard is not None:
        from gradfix.shard import owns

        sources = [s for s in sources if owns(s[0], shard)]
        report.files = len(sources)
        report.errors = [e for e in report.errors if owns(e.path, shard)]
    linted = lint_sources(engine, sources, jobs, cache, progress)
    for (shown, source), (findings, errors) in zip(sources, linted):
        if not isinstance(source, SourceFile):
            from gradfix.notebook import locate_error, locate_finding

            findings = [locate_finding(source, f) for f in findings]
            errors = [locate_error(source, e) for e in errors]
        report.errors.extend(errors)
        report.lints.append(FileLint(shown, findings))
    return report


def lint_sources(engine: Engine, sources: list, jobs: int = 1, cache=None, progress=None) -> list:
    if progress is not None:
        progress.start(len(sources))

    results, keys, todo = _cached(engine, sources, cache, progress)
    project = engine.project
    if cache is not None and hasattr(project, "save"):
        project.save()                  # the run's facts, for the next run over these files
        if todo:
            project.load()              # once, before a pool forks
    if todo and hasattr(engine, "materialise"):
        engine = engine.materialise()   # gradfix/warmstart.py: the rules are loaded only now
    fresh = lint_many(engine, [(sources[i][0], sources[i][1].text) for i in todo], jobs,
                      progress.advance if progress is not None else None)
    for i, result in zip(todo, fresh):
        results[i] = result
        if cache is not None:
            cache.put(keys[i], *result)
    return results


def _cached(engine: Engine, sources: list, cache, progress=None) -> tuple[list, dict[int, str], list[int]]:
    """The cached (findings, errors) of each file (None where not cached), the cache key of each,
    and the indices of the files not cached."""
    results: list = [None] * len(sources)
    keys: dict[int, str] = {}
    todo: list[int] = []
    rules = engine.fingerprint if cache is not None else ""
    for i, (shown, source) in enumerate(sources):
        if cache is not None:
            project = engine.project
            facts = project.fingerprint(shown) if project is not None else ""
            hashed = project.text_digest(shown) if hasattr(project, "text_digest") else None
            keys[i] = cache.key(shown, source.text, rules, facts, hashed)
            hit = cache.get(keys[i])
            if hit is not None:
                results[i] = hit
                if progress is not None:
                    progress.advance(shown)
                continue
        todo.append(i)
    return results, keys, todo


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
    jobs: int = 1,
    cache=None,
) -> RunReport:
    """Fix every file; `decide_for(path)` gives the decider for that file (policy or a person).
    A first pass lints every file (cached, in parallel); only files with a fixable finding are
    parsed again to build and verify their fixes. Standard input is never written: the caller
    prints its fixed text."""
    from gradfix.engine import FixResult

    report = RunReport()
    sources = with_project(engine, list(iter_sources(paths, config, report, stdin_name)), config, cache)
    if cache is None and not uses_pool([(s, src.text) for s, src in sources], jobs):
        # in one process and uncached, a first pass would analyse every file with a fix twice:
        # fix_source's first round is that lint
        linted = [None] * len(sources)
        if progress is not None:
            progress.start(len(sources))
    else:
        linted = lint_sources(engine, sources, jobs, cache, progress)
        fixable = sum(1 for findings, _e in linted if any(f.fixable for f in findings))
        if progress is not None:
            progress.stop()
            if fixable:
                progress.start(fixable)
    for (shown, source), first in zip(sources, linted):
        notebook = not isinstance(source, SourceFile)
        findings, errors = first if first is not None else (None, None)
        if findings is not None and not any(f.fixable for f in findings):
            result = FixResult(path=shown, original=source.text, fixed=source.text, findings=list(findings),
                               errors=list(errors))
        else:
            if progress is not None:
                progress.advance(shown)
            decide = decide_for(shown)
            if notebook:
                from gradfix.notebook import guard

                decide = guard(source, decide)
            try:
                result = engine.fix_source(source.text, shown, decide, verifier=verifier,
                                           project_root=config.root or os.getcwd())
            except RecursionError:
                findings, errors = engine.lint_source(source.text, shown)   # it says why
                result = FixResult(path=shown, original=source.text, fixed=source.text, findings=findings,
                                   errors=errors)
        if notebook:
            from gradfix.notebook import map_result

            result = map_result(source, result)
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
