"""Where a cold `check` spends its CPU, phase by phase, in one process (bench/PROFILE.md).

cProfile inflates pure-Python code and not libcst's native parser, so each phase is timed alone
with `time.process_time()`: the phases `gradfix check --no-cache` runs, over the same files.

    cd ~/.cache/gradfix-bench/src
    /path/to/.venv/bin/python /path/to/bench/profile_cold.py accelerate-1.15.0 pytorch_lightning-2.6.6
    PYTHONPATH=/tmp/gf/pkg ... profile_cold.py ...      # a version laid out as bench/survey.py says

The parts of a phase (indented) are timed again on their own, so they add up to their phase only
roughly; "lint_source total" is the engine's whole work per file, as a worker does it. Each figure
is the least of REPEAT runs (environment variable, default 2): on a shared machine a phase's CPU
time grows with the load, and the least is the steadiest. The parts run with the cyclic collector
paused (`least`), as the run pauses it for the lint and, since branch p10, for the scan; before p10
the parts' figures held the collector's passes over the trees this script keeps alive.
"""

from __future__ import annotations

import ast
import gc
import os
import sys
import time

REPEAT = int(os.environ.get("REPEAT", "2"))


def least(step, paused: bool = True) -> float:
    """The least CPU time of REPEAT runs of `step`. A part (paused) runs with the cyclic collector off and
    collected after, untimed: this profiler keeps every file's tree alive between the parts, and with the
    collector on, its passes over those trees were timed as the part's own work (`ast.parse` of every file
    read 2.6-3.3 s here for 0.44 s of parsing). A phase (not paused) runs as the version runs it: its own
    pauses (the engine's lint, the prescan's scan since p10), its own collections."""
    best = None
    for _ in range(REPEAT):
        was = gc.isenabled()
        if paused:
            gc.disable()
        try:
            t = time.process_time()
            step()
            spent = time.process_time() - t
        finally:
            if paused and was:
                gc.enable()
        if paused:
            gc.collect()
        best = spent if best is None else min(best, spent)
    return best


def main() -> None:
    t0 = time.process_time()
    import libcst as cst

    from gradfix.analysis import prepass
    from gradfix.analysis.project import ProjectIndex
    from gradfix.analysis.summary import summarise
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
    rows.append((name, least(index, paused=False)))
    trees = {p: ast.parse(s) for p, s in files.items()}
    rows.append(("  ast.parse of every file", least(lambda: [ast.parse(s) for s in files.values()])))
    try:        # a version with analysis/astindex.py: the one walk the readers below share
        from gradfix.analysis import astindex
    except ImportError:
        astindex = None
    if astindex is not None:
        rows.append(("  astindex: the one walk of every tree", least(lambda: [astindex.AstIndex(t)
                                                                           for t in trees.values()])))
        for t in trees.values():
            astindex.of(t)      # made once; the rows below are each reader's own work
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
    lint = least(lambda: [engine.lint_source(s, p) for p, s in files.items()], paused=False)
    rows.append(("lint_source total", lint))
    ast_kept = least(lambda: [ast.parse(files[p]) for p in kept])
    rows.append(("  ast.parse of the files libcst parses", ast_kept))
    cst_kept = least(lambda: [cst.parse_module(files[p]) for p in kept])
    rows.append(("  libcst parse of those files", cst_kept))
    if os.environ.get("BREAKDOWN", "1") != "0":
        rows.extend(breakdown(engine, files, kept))
    lines = sum(s.count("\n") for s in files.values())
    kept_lines = sum(files[p].count("\n") for p in kept)
    print(f"{len(files)} files, {lines} lines; libcst parses {len(kept)} files, {kept_lines} lines")
    for label, value in rows:
        print(f"{label:52s} {value:7.2f} s")
    print(f"{'  the rest (tree index, flows, rules; pre-pass without hints)':52s} "
          f"{lint - ast_kept - cst_kept:7.2f} s")
    print(f"one run's phases (imports + read + index + lint): "
          f"{rows[0][1] + rows[1][1] + rows[2][1] + lint:.2f} s CPU")


def breakdown(engine, files: dict[str, str], kept: list[str]) -> list[tuple[str, float]]:
    """The rest of `lint_source` on the files libcst parses, one more run with timers: the tree index
    (children and parents), pre-order spans, flows (`Flow.__init__`, built lazily by the first rule that
    asks) and each rule's `check` (its own work: the flows it builds first are subtracted)."""
    import libcst as cst

    from gradfix.analysis import fileindex, flow as flow_module, tree as tree_module
    from gradfix.parsing import _python_tree

    spent: dict[str, float] = {}
    stack: list[float] = []          # time spent in nested timed calls, per open frame

    def timed(label, fn):
        def wrapper(*a, **k):
            stack.append(0.0)
            t = time.process_time()
            try:
                return fn(*a, **k)
            finally:
                total = time.process_time() - t
                inner = stack.pop()
                spent[label] = spent.get(label, 0.0) + total - inner
                if stack:
                    stack[-1] += total
        return wrapper

    saved = (fileindex.index_tree, fileindex.preorder_spans, flow_module.Flow.__init__)
    fileindex.index_tree = timed("tree index (children, parents)", tree_module.index_tree)
    fileindex.preorder_spans = timed("pre-order spans", tree_module.preorder_spans)
    flow_module.Flow.__init__ = timed("flows (Flow.__init__)", saved[2])
    checks = {}
    for r in engine.rules:
        checks[r] = r.check
        r.check = timed(f"rule {r.id}", lambda ctx, _c=r.check: list(_c(ctx)))
    was = gc.isenabled()
    gc.disable()        # as lint_source runs (the engine's gc_paused)
    try:
        hints = getattr(engine, "rule_hints", {})
        for p in kept:
            text = files[p]
            hint = hints.get(p)
            rules = [r for r in engine.rules if hint is None or r.id in hint[1]]
            if hint is None:
                rules = engine.rules_for(_python_tree(text), text, p)
            engine._findings(cst.parse_module(text), text, p, _python_tree(text), rules=rules)
    finally:
        if was:
            gc.enable()
        fileindex.index_tree, fileindex.preorder_spans, flow_module.Flow.__init__ = saved
        for r, c in checks.items():
            r.check = c
    rules = sorted((v, k) for k, v in spent.items() if k.startswith("rule "))
    out = [(f"  {k}", v) for k, v in spent.items() if not k.startswith("rule ")]
    out.append(("  rules, own work (sum)", sum(v for v, _ in rules)))
    out += [(f"    {k}", v) for v, k in reversed(rules) if v >= 0.05]
    return out


if __name__ == "__main__":
    main()
