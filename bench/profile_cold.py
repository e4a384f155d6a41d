"""Where a cold `check` spends its CPU, phase by phase, in one process (bench/PROFILE.md).

cProfile inflates pure-Python code and not libcst's native parser, so each phase is timed alone
with `time.process_time()`: the phases `gradfix check --no-cache` runs, over the same files.

    cd ~/.cache/gradfix-bench/src
    /path/to/.venv/bin/python /path/to/bench/profile_cold.py accelerate-1.15.0 pytorch_lightning-2.6.6
    PYTHONPATH=/tmp/gf/pkg ... profile_cold.py ...      # a version laid out as bench/survey.py says

The parts of a phase (indented) are timed again on their own, so they add up to their phase only
roughly; "lint_source total" is the engine's whole work per file, as a worker does it. Each figure
is the least of REPEAT runs (environment variable, default 2): on a shared machine a phase's CPU
time grows with the load, and the least is the steadiest.
"""

from __future__ import annotations

import ast
import os
import sys
import time

REPEAT = int(os.environ.get("REPEAT", "2"))


def least(step) -> float:
    best = None
    for _ in range(REPEAT):
        t = time.process_time()
        step()
        spent = time.process_time() - t
        best = spent if best is None else min(best, spent)
    return best


def main() -> None:
    t0 = time.process_time()
    import libcst as cst

    from gradfix.analysis import prepass
    from gradfix.analysis.project import ProjectIndex, summarise
    from gradfix.cli.main import _build
    from gradfix.runner import RunReport, iter_sources
    rows = [("imports", time.process_time() - t0)]
    paths = sys.argv[1:]
    engine, config = _build(tuple(paths), (), ())
    prescan = None
    if hasattr(engine, "rule_hints"):   # a version with gradfix/prescan.py
        from gradfix import prescan
    t = time.process_time()
    files = {shown: s.text for shown, s in iter_sources(paths, config, RunReport())}
    rows.append(("discover + read", time.process_time() - t))
    root = os.path.abspath(config.root or os.getcwd())
    if prescan is not None:
        def index():
            engine.project = prescan.build(engine, files, root, 1)
        name = "prescan.build (one ast parse: summary + pre-pass)"
    else:
        def index():
            engine.project = ProjectIndex.build(files, root)
        name = "ProjectIndex.build (its own ast parse + summary)"
    rows.append((name, least(index)))
    trees = {p: ast.parse(s) for p, s in files.items()}
    rows.append(("  ast.parse of every file", least(lambda: [ast.parse(s) for s in files.values()])))
    rows.append(("  summarise", least(lambda: [summarise(os.path.abspath(p), s, root, trees[p])
                                               for p, s in files.items()])))
    rows.append(("  pre-pass facts_of", least(lambda: [prepass.facts_of(trees[p], s, p) for p, s in files.items()])))
    facts: list = []
    rows.append(("  pre-pass facts_of + may_match (every rule)",
                 least(lambda: facts.append([p for p, s in files.items()
                                             if any([r.may_match(f) for f in [prepass.facts_of(trees[p], s, p)]
                                                     for r in engine.rules])]))))
    kept = facts[-1]
    del trees
    lint = least(lambda: [engine.lint_source(s, p) for p, s in files.items()])
    rows.append(("lint_source total", lint))
    ast_kept = least(lambda: [ast.parse(files[p]) for p in kept])
    rows.append(("  ast.parse of the files libcst parses", ast_kept))
    cst_kept = least(lambda: [cst.parse_module(files[p]) for p in kept])
    rows.append(("  libcst parse of those files", cst_kept))
    lines = sum(s.count("\n") for s in files.values())
    kept_lines = sum(files[p].count("\n") for p in kept)
    print(f"{len(files)} files, {lines} lines; libcst parses {len(kept)} files, {kept_lines} lines")
    for label, value in rows:
        print(f"{label:52s} {value:7.2f} s")
    print(f"{'  the rest (tree index, flows, rules; pre-pass without hints)':52s} "
          f"{lint - ast_kept - cst_kept:7.2f} s")
    print(f"one run's phases (imports + read + index + lint): "
          f"{rows[0][1] + rows[1][1] + rows[2][1] + lint:.2f} s CPU")


if __name__ == "__main__":
    main()
