"""Do two gradfix versions give the same findings? (the proof a speed-up must come with)

`bench/survey.py --json` keeps (repo, path, line, rule, message); a shortcut in the analysis must
also leave the column, the end of the span and the fix (description, safety, contract) as they
were, and the errors. `dump` runs one version over the trees the way `gradfix check .` does
(every core, no cache, the tree's own configuration) and writes every finding's full record;
`diff` compares two dumps and exits 1 when they differ.

    .venv/bin/python bench/same_findings.py dump --repos bench/survey_repos.tsv --root /work/survey/repos \
        --pythonpath /tmp/gf/pkg --out before.json          # the version before (laid out as survey.py says)
    .venv/bin/python bench/same_findings.py dump --repos bench/survey_repos.tsv --root /work/survey/repos \
        --out after.json                                    # this checkout
    .venv/bin/python bench/same_findings.py diff before.json after.json

`--trees DIR ...` instead of `--repos/--root` checks folders (the pinned corpus: bench_check.py
--corpus extracts it under ~/.cache/gradfix-bench/src). Only the standard library is used here;
gradfix runs in a subprocess per tree.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from survey import read_tsv, repo_dir  # noqa: E402

DRIVER = """
import json, sys
from gradfix.cli.main import _build
from gradfix.parallel import default_jobs
from gradfix.runner import lint_paths
engine, config = _build(('.',), (), ())
report = lint_paths(engine, ['.'], config, jobs=default_jobs())
json.dump({"files": report.files,
           "findings": [dict(path=lint.path, **f.to_record()) for lint in report.lints for f in lint.findings],
           "errors": [e.to_record() for e in report.errors]}, sys.stdout)
"""


def dump_tree(tree: Path, pythonpath: str) -> dict:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    if pythonpath:
        env["PYTHONPATH"] = pythonpath
    proc = subprocess.run([sys.executable, "-c", DRIVER], cwd=tree, capture_output=True, text=True, env=env)
    if proc.returncode != 0:
        return {"files": 0, "findings": [], "errors": [], "crash": proc.stderr[-2000:]}
    return json.loads(proc.stdout)


def cmd_dump(args) -> int:
    if args.repos:
        trees = [(repo, repo_dir(Path(args.root), repo)) for repo, *_ in read_tsv(Path(args.repos), 4)]
    else:
        trees = [(Path(t).name, Path(t)) for t in args.trees]
    out: dict[str, dict] = {}
    t0 = time.perf_counter()
    for name, tree in trees:
        if not tree.is_dir():
            sys.stderr.write(f"missing: {tree}\n")
            continue
        out[name] = dump_tree(tree, args.pythonpath)
        if "crash" in out[name]:
            sys.stderr.write(f"{name}: gradfix crashed: {out[name]['crash']}\n")
    Path(args.out).write_text(json.dumps(out, indent=0, sort_keys=True) + "\n", encoding="utf-8")
    files = sum(d["files"] for d in out.values())
    findings = sum(len(d["findings"]) for d in out.values())
    errors = sum(len(d["errors"]) for d in out.values())
    print(f"{args.out}: {len(out)} trees, {files} files, {findings} findings, {errors} errors "
          f"({time.perf_counter() - t0:.0f} s)")
    return 0


def _records(data: dict, key: str) -> list[str]:
    return sorted(json.dumps([tree, rec], sort_keys=True) for tree, d in data.items() for rec in d[key])


def cmd_diff(args) -> int:
    a = json.loads(Path(args.a).read_text(encoding="utf-8"))
    b = json.loads(Path(args.b).read_text(encoding="utf-8"))
    same = True
    if sorted(a) != sorted(b):
        print(f"trees differ: only in {args.a}: {sorted(set(a) - set(b))}, only in {args.b}: {sorted(set(b) - set(a))}")
        same = False
    for key in ("findings", "errors"):
        ra, rb = _records(a, key), _records(b, key)
        gone, new = sorted(set(ra) - set(rb)), sorted(set(rb) - set(ra))
        if len(ra) != len(rb) or gone or new:
            same = False
        for r in gone:
            print(f"- {key}: {r}")
        for r in new:
            print(f"+ {key}: {r}")
        print(f"{key}: {len(ra)} in {args.a}, {len(rb)} in {args.b}, {len(gone)} gone, {len(new)} new")
    files_a = sum(d["files"] for d in a.values())
    files_b = sum(d["files"] for d in b.values())
    if files_a != files_b:
        print(f"files: {files_a} against {files_b}")
        same = False
    print("identical" if same else "DIFFERENT")
    return 0 if same else 1


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    d = sub.add_parser("dump")
    d.add_argument("--repos", help="repository list (TSV, as bench/survey.py reads it)")
    d.add_argument("--root", default="/work/survey/repos", help="folder holding owner+name/ trees")
    d.add_argument("--trees", nargs="*", default=[], help="folders to check instead of --repos")
    d.add_argument("--pythonpath", default="", help="folder put first on PYTHONPATH (a pinned gradfix)")
    d.add_argument("--out", required=True)
    c = sub.add_parser("diff")
    c.add_argument("a")
    c.add_argument("b")
    args = ap.parse_args(argv)
    return cmd_dump(args) if args.cmd == "dump" else cmd_diff(args)


if __name__ == "__main__":
    sys.exit(main())
