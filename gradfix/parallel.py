"""`check` on every core: files are independent units, linted in a pool of worker processes.

A file's findings depend only on its text, the rules and the project facts, all of which the
workers get at start-up, so the results are the same whatever the scheduling; they come back
as plain records (model.Finding.to_record) and are put in discovery order by the caller.
Small runs stay in-process: forking workers costs more than linting a few files.
"""

from __future__ import annotations

import os

from gradfix.model import FileError, Finding

# below this many lines in all, one process is faster than a pool
POOL_MIN_LINES = 4000

_engine = None


def default_jobs() -> int:
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):
        return max(1, os.cpu_count() or 1)


def _start(rules, config, project, hints=None) -> None:
    global _engine
    from gradfix.engine import Engine

    _engine = Engine(rules, config)
    _engine.project = project
    _engine.rule_hints = hints or {}


def _lint_one(item: tuple[str, str]) -> tuple[list[dict], list[dict]]:
    path, text = item
    try:
        findings, errors = _engine.lint_source(text, path)
    except Exception as exc:  # one file's crash must not cost the run its other files
        return [], [FileError(path, None, f"gradfix internal error: {type(exc).__name__}: {exc}").to_record()]
    return [f.to_record() for f in findings], [e.to_record() for e in errors]


def uses_pool(items: list[tuple[str, str]], jobs: int) -> bool:
    """Whether linting these (path, text) items pays for a pool of `jobs` processes."""
    return jobs > 1 and len(items) > 1 and sum(text.count("\n") for _p, text in items) >= POOL_MIN_LINES


def lint_many(engine, items: list[tuple[str, str]], jobs: int,
              advance=None) -> list[tuple[list[Finding], list[FileError]]]:
    """(findings, errors) for each (path, text), in the order given; `advance(path)` is called
    as each file starts (in-process) or completes (in the pool), for a progress bar."""
    hints = getattr(engine, "rule_hints", None)
    if hints and jobs > 1:
        # a file no rule may match (gradfix/prescan.py) costs the engine nothing: not sent to a worker
        idle = [i for i, (path, text) in enumerate(items)
                if (h := hints.get(path)) is not None and not h[1] and h[0] == text]
        if idle:
            skipped = set(idle)
            busy = [i for i in range(len(items)) if i not in skipped]
            done = lint_many(engine, [items[i] for i in busy], jobs, advance)
            out: list = [None] * len(items)
            for i in idle:
                if advance is not None:
                    advance(items[i][0])
                out[i] = engine.lint_source(items[i][1], items[i][0])
            for i, result in zip(busy, done):
                out[i] = result
            return out
    if not uses_pool(items, jobs):
        out = []
        for path, text in items:
            if advance is not None:
                advance(path)
            out.append(engine.lint_source(text, path))
        return out
    import multiprocessing      # here: a run linting in-process (a warm one) does without them
    from concurrent.futures import ProcessPoolExecutor
    from concurrent.futures.process import BrokenProcessPool

    methods = multiprocessing.get_all_start_methods()
    context = multiprocessing.get_context("fork" if "fork" in methods else "spawn")
    rules = [type(r) for r in engine.rules]
    # the largest files first, so that no worker is left with a big one at the end
    order = sorted(range(len(items)), key=lambda i: -len(items[i][1]))
    results: list = [None] * len(items)
    with ProcessPoolExecutor(max_workers=min(jobs, len(items)), mp_context=context, initializer=_start,
                             initargs=(rules, engine.config, engine.project,
                                       getattr(engine, "rule_hints", None))) as pool:
        futures = {i: pool.submit(_lint_one, items[i]) for i in order}
        for i, future in futures.items():
            if advance is not None:
                advance(items[i][0])
            try:
                findings, errors = future.result()
            except BrokenProcessPool:
                path = items[i][0]
                results[i] = ([], [FileError(path, None, "an analysis worker died (out of memory or a crash in the "
                                                         "parser); rerun with --jobs 1 to see which file")])
                continue
            results[i] = ([Finding.from_record(f) for f in findings], [FileError.from_record(e) for e in errors])
    return results
