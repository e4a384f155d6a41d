"""Can the verifier build and run real modules without fixtures? A probe over extracted repository trees.

For every `nn.Module` class (by syntax: a base named `Module` or `nn.Module`) of the selected files whose constructor
takes a configuration-like argument (`cfg`, `config`, `args`, `opt`, `hparams`, ...) or whose `forward(self, x)`
reads string keys of its argument (`x["input_ids"]`), a probe rewrite inserts `_gf_probe = 0` as the first statement
of `forward` (it changes nothing, and must run for a definitive verdict), and the pair goes through the verifier's
`equal` contract like a real fix. Printed: the verdict counts, the definitive share (every verdict but untestable)
and the untestable reasons by their first clause (bench/verify_survey.py's grouping).

    python bench/verify_build_probe.py --root /work/survey --json /tmp/probe.json
    python bench/verify_build_probe.py --root /work/survey --pythonpath /tmp/pinned   # another gradfix copy

Each repository tree (owner+name/ below a set folder of --root) is copied to a scratch folder first: the verifier
runs the project's code. Runs with gradfix's own interpreter (torch and numpy); missing packages are stubbed as in
any check.
"""

from __future__ import annotations

import argparse
import ast
import collections
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from verify_survey import reason_group  # noqa: E402

CONFIG_NAMES = {"cfg", "config", "args", "opt", "opts", "hparams", "hp", "params", "conf", "options", "flags"}
SKIP = {".git", "node_modules", "__pycache__", ".venv", "venv"}


def _is_module(cls: ast.ClassDef) -> bool:
    return any((isinstance(b, ast.Attribute) and b.attr == "Module") or (isinstance(b, ast.Name) and b.id == "Module")
               for b in cls.bases)


def _string_keys(fn: ast.FunctionDef) -> bool:
    args = [a.arg for a in fn.args.args][1:]
    if len(args) != 1:
        return False
    return any(isinstance(n, ast.Subscript) and isinstance(n.value, ast.Name) and n.value.id == args[0]
               and isinstance(n.slice, ast.Constant) and isinstance(n.slice.value, str) for n in ast.walk(fn))


def probe_targets(path: Path) -> list[tuple[str, int, str]]:
    """(class, line of forward's first statement, form) of each class the probe applies to."""
    try:
        tree = ast.parse(path.read_text(encoding="utf-8", errors="replace"))
    except (SyntaxError, ValueError):
        return []
    out = []
    for cls in tree.body:
        if not (isinstance(cls, ast.ClassDef) and _is_module(cls)):
            continue
        fns = {s.name: s for s in cls.body if isinstance(s, ast.FunctionDef)}
        init, fwd = fns.get("__init__"), fns.get("forward")
        if fwd is None or not fwd.body:
            continue
        form = None
        if init is not None:
            req = [a.arg for a in init.args.args[1:len(init.args.args) - len(init.args.defaults)]]
            if req and all(a in CONFIG_NAMES for a in req):
                form = "config"
        if form is None and _string_keys(fwd):
            form = "dict-batch"
        if form is None:
            continue
        first = fwd.body[0]
        if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant) and len(fwd.body) > 1:
            first = fwd.body[1]  # after the docstring
        out.append((cls.name, first.lineno, form))
    return out


def probe_source(src: str, line: int) -> str:
    lines = src.splitlines(keepends=True)
    target = lines[line - 1]
    indent = target[: len(target) - len(target.lstrip())]
    return "".join(lines[: line - 1] + [f"{indent}_gf_probe = 0\n"] + lines[line - 1:])


def collect(root: Path) -> list[tuple[Path, Path]]:
    """(repository folder, file) for every .py file under root/<set>/<owner+name>/."""
    out = []
    for set_dir in sorted(p for p in root.iterdir() if p.is_dir()):
        for repo in sorted(p for p in set_dir.iterdir() if p.is_dir() and "+" in p.name):
            for dirpath, dirnames, files in os.walk(repo):
                dirnames[:] = [d for d in dirnames if d not in SKIP]
                out += [(repo, Path(dirpath) / f) for f in sorted(files) if f.endswith(".py")]
    return out


WORKER = r'''
import json, sys
from gradfix.verify import Verifier, VerifyRequest
jobs = json.load(open(sys.argv[1]))
reqs = [VerifyRequest(path=j["path"], original=j["original"], rewritten=j["rewritten"], rule="GF101", line=j["line"],
                      contract={"kind": "equal"}, project_root=j["root"]) for j in jobs]
with Verifier(jobs=int(sys.argv[3]), timeout_s=float(sys.argv[4])) as v:
    res = v.verify_many(reqs)
json.dump([{"verdict": r.verdict, "detail": r.detail} for r in res], open(sys.argv[2], "w"))
'''


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--root", default="/work/survey", help="folder of set folders holding owner+name/ trees")
    p.add_argument("--pythonpath", default="", help="folder put first on PYTHONPATH for gradfix (a pinned copy)")
    p.add_argument("--jobs", type=int, default=2)
    p.add_argument("--timeout", type=float, default=20.0, help="seconds per check")
    p.add_argument("--json", help="write every probe's verdict here")
    p.add_argument("--skip", action="append", default=[], help="leave out this owner+name folder (repeatable)")
    args = p.parse_args(argv)
    targets = []
    for repo, f in collect(Path(args.root)):
        if repo.name in args.skip:
            continue
        for cls, line, form in probe_targets(f):
            targets.append((repo, f, cls, line, form))
    with tempfile.TemporaryDirectory(prefix="gf-build-probe-") as scratch:
        copies: dict[Path, Path] = {}
        jobs = []
        for repo, f, cls, line, form in targets:
            if repo not in copies:
                copies[repo] = Path(scratch) / repo.parent.name / repo.name
                shutil.copytree(repo, copies[repo], symlinks=True, ignore=lambda _d, n: [x for x in n if x in SKIP])
            path = copies[repo] / f.relative_to(repo)
            src = f.read_text(encoding="utf-8", errors="replace")
            jobs.append({"path": str(path), "original": src, "rewritten": probe_source(src, line), "line": line,
                         "root": str(copies[repo])})
        jobs_file, out_file = Path(scratch) / "jobs.json", Path(scratch) / "out.json"
        jobs_file.write_text(json.dumps(jobs))
        env = dict(os.environ, GRADFIX_NO_CACHE="1")
        if args.pythonpath:
            env["PYTHONPATH"] = args.pythonpath + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
        subprocess.run([sys.executable, "-c", WORKER, str(jobs_file), str(out_file), str(args.jobs), str(args.timeout)],
                       check=True, env=env, cwd=scratch)
        results = json.loads(out_file.read_text())
    rows = []
    counts: dict[str, collections.Counter] = collections.defaultdict(collections.Counter)
    reasons = collections.Counter()
    for (repo, f, cls, line, form), r in zip(targets, results):
        counts[form][r["verdict"]] += 1
        counts["all"][r["verdict"]] += 1
        if r["verdict"] == "untestable":
            reasons[reason_group(r["detail"])] += 1
        rows.append({"repo": f"{repo.parent.name}/{repo.name}", "path": str(f.relative_to(repo)), "class": cls,
                     "form": form, **r})
    for form, c in sorted(counts.items()):
        n = sum(c.values())
        print(f"{form:10} {n:4d} probes, definitive {n - c['untestable']:4d} ({100.0 * (n - c['untestable']) / n:.0f} %): "
              + ", ".join(f"{k}={v}" for k, v in c.most_common()))
    print(f"\nuntestable reasons, {counts['all']['untestable']} in all:")
    for r, n in reasons.most_common(15):
        print(f"  {n:4d}  {r}")
    if args.json:
        Path(args.json).write_text(json.dumps(rows, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
