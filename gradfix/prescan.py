"""One CPython parse per file in a cold run: the project summary and the pre-pass together.

A cold `check` parsed every file with `ast` twice, once for its project summary
(`ProjectIndex.build`, serially, before any worker started) and once more in the engine for
the pre-pass (analysis/prepass.py) that picks the rules that may match it. Here one parse gives
both, in the pool of worker processes when the run is big enough for one: the summary goes to the
project index, and the ids of the rules whose condition holds to the engine (`Engine.rule_hints`,
keyed by path and checked against the text), which then lints a file none may match without
parsing it again and runs the others' rules without recomputing the pre-pass. The rules chosen are
those the engine would choose itself: the same `prepass.rules_for` on the same tree of the same text.
`tests/test_prescan.py` counts the parses and compares with a run without hints.
"""

from __future__ import annotations

import ast
import gc
import os

from gradfix.analysis import prepass
from gradfix.analysis.project import ProjectIndex
from gradfix.analysis.summary import summarise

# CPython parses of a file's text made here (a counted-operations test reads it)
OPERATIONS = {"ast_parses": 0}

_worker = None     # (rules, root) in a pool worker


def scan_one(rules, root: str, path: str, text: str):
    """(summary, ids of the rules that may match) of one file; (None, None) when it does not parse
    (the engine reports that itself, as without this pass)."""
    was = gc.isenabled()
    gc.disable()    # the collector's passes over a worker's heap (inherited at fork) were a third of the scan
    try:
        return _scan(rules, root, path, text)
    finally:
        gc.collect(0)   # what this file made and dropped in a cycle, if anything (summarise makes none)
        if was:
            gc.enable()


def _scan(rules, root: str, path: str, text: str):
    OPERATIONS["ast_parses"] += 1
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None, None
    summary = summarise(os.path.abspath(path), text, root, tree)
    ids = tuple(r.id for r in prepass.rules_for(rules, tree, text, path))
    return summary, ids


def _start(rules, config, root: str) -> None:
    global _worker
    from gradfix.engine import Engine

    _worker = (Engine(rules, config).rules, root)


def _scan_item(item: tuple[str, str]):
    rules, root = _worker
    return scan_one(rules, root, *item)


def build(engine, files: dict[str, str], root: str, jobs: int = 1) -> ProjectIndex:
    """The run's project index (what `ProjectIndex.build` gives), and `engine.rule_hints` filled for
    every file that parses."""
    from gradfix.parallel import uses_pool

    items = list(files.items())
    root = os.path.abspath(root)
    if uses_pool(items, jobs):
        import multiprocessing
        from concurrent.futures import ProcessPoolExecutor

        methods = multiprocessing.get_all_start_methods()
        context = multiprocessing.get_context("fork" if "fork" in methods else "spawn")
        rules = [type(r) for r in engine.rules]
        with ProcessPoolExecutor(max_workers=min(jobs, len(items)), mp_context=context, initializer=_start,
                                 initargs=(rules, engine.config, root)) as pool:
            scanned = list(pool.map(_scan_item, items, chunksize=max(1, len(items) // (8 * jobs))))
    else:
        scanned = [scan_one(engine.rules, root, path, text) for path, text in items]
    index = ProjectIndex(root)
    hints = {}
    for (path, text), (summary, ids) in zip(items, scanned):
        index.put(path, summary)
        if ids is not None:
            hints[path] = (text, ids, summary.factories)
    engine.rule_hints = hints
    return index
