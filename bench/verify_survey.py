"""Verdicts on real code: run ``gradfix check --verify`` over the survey's repositories, each with its own venv.

For each repository of the list (default ``bench/survey_repos.tsv``, the format of ``bench/survey.py``), whose tree
is extracted under ``--root`` (default ``/work/survey/repos``) as ``owner+name/``:

1. the tree is copied to a scratch folder under ``/tmp`` (the verifier runs the project's code; the extracted trees
   stay untouched), and
2. ``gradfix check . --verify --output-format json --no-cache --python VENV`` runs there, with the repository's
   project venv from ``--envs`` (default ``bench/verify_survey_envs.tsv``: ``repo``, ``venv``, ``installed``,
   ``skipped``).  A repository without an entry there (or whose venv folder is missing) runs with gradfix's own
   interpreter, and the table says so (``env: own``).

Printed per repository and in total: proposed fixes (findings with a fix), verdict counts, the definitive share
(every verdict but ``untestable``), and the ``untestable`` reasons grouped by the first clause of their detail.

    python bench/verify_survey.py                       # all repositories of the list
    python bench/verify_survey.py --scan                # no verification: fixable findings per repository
    python bench/verify_survey.py --only owner/name --json /tmp/verdicts.json
    python bench/verify_survey.py --from-json /tmp/verdicts.json   # the summary of a saved run

Only the standard library is used; gradfix runs as ``sys.executable -m gradfix`` (pass ``--pythonpath`` to score
a pinned copy, as in ``bench/survey.py``).
"""

from __future__ import annotations

import argparse
import collections
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from survey import DEFAULT_REPOS, DEFAULT_ROOT, SKIP_DIRS, norm_path, read_tsv, repo_dir  # noqa: E402

DEFAULT_ENVS = HERE / "verify_survey_envs.tsv"
# --set NAME: the repository list, the extracted trees and the envs TSV of one of the measured sets.
SETS = {
    "survey": (DEFAULT_REPOS, DEFAULT_ROOT, DEFAULT_ENVS),
    "heldout": (HERE / "heldout_repos.tsv", Path("/work/survey/heldout"), HERE / "verify_heldout_envs.tsv"),
    "heldout2": (HERE / "heldout2_repos.tsv", Path("/work/survey/heldout2"), HERE / "verify_heldout2_envs.tsv"),
    "heldout3": (HERE / "heldout3_repos.tsv", Path("/work/survey/heldout3"), HERE / "verify_heldout3_envs.tsv"),
    "heldout4a": (HERE / "heldout4a_repos.tsv", Path("/work/survey/heldout4a"), HERE / "verify_heldout4a_envs.tsv"),
    "heldout4b": (HERE / "heldout4b_repos.tsv", Path("/work/survey/heldout4b"), HERE / "verify_heldout4b_envs.tsv"),
}
VERDICTS = ("equivalent", "fixes-crash", "fixes-hazard", "changes-behaviour", "failed", "untestable")


class Envs(dict):
    """repo -> venv; a `*` row names the shared venv of every repository not listed on its own."""

    def get(self, repo, default=""):
        return super().get(repo) or super().get("*") or default

    def __contains__(self, repo):
        return super().__contains__(repo) or super().__contains__("*")


def read_envs(path: Path) -> Envs:
    if not path.is_file():
        return Envs()
    return Envs({repo: venv for repo, venv, _inst, _skip in read_tsv(path, 4) if venv})


def gradfix_env(pythonpath: str) -> dict[str, str]:
    env = dict(os.environ)
    env["GRADFIX_NO_CACHE"] = "1"
    env.pop("VIRTUAL_ENV", None)  # the interpreter is given with --python
    if pythonpath:
        env["PYTHONPATH"] = pythonpath + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    return env


def run_check(tree: Path, extra: list[str], timeout: float, pythonpath: str) -> dict:
    cmd = [sys.executable, "-m", "gradfix", "check", ".", "--output-format", "json", "--no-cache",
           "--exit-zero"] + extra
    try:
        proc = subprocess.run(cmd, cwd=tree, capture_output=True, text=True, timeout=timeout,
                              env=gradfix_env(pythonpath))
    except subprocess.TimeoutExpired:
        return {"error": f"timed out after {timeout:.0f} s"}
    try:
        return json.loads(proc.stdout)
    except json.JSONDecodeError:
        return {"error": f"no JSON (rc {proc.returncode}): {proc.stderr.strip()[-500:]}"}


def scratch_copy(tree: Path, base: Path) -> Path:
    dest = base / tree.name
    shutil.copytree(tree, dest, symlinks=True,
                    ignore=lambda _d, names: [n for n in names if n in SKIP_DIRS or n.endswith(".egg-info")])
    return dest


_CLAUSE = re.compile(r"[;:(]|\. ")


def reason_group(detail: str) -> str:
    """The first clause of an untestable detail, with quoted names and numbers generalised."""
    text = (detail or "").strip()
    m = _CLAUSE.search(text)
    head = text[: m.start()] if m else text
    head = re.sub(r"`[^`]*`|'[^']*'", "X", head)
    head = re.sub(r"\b(constructor|forward|helper|function|class|fixture)(s?) of [\w.]+", r"\1\2 of X", head)
    head = re.sub(r"[\w.]+ uses the module-level name", "X uses the module-level name", head)
    head = re.sub(r"\buses (?!the\b)[\w.]+", "uses X", head)
    head = re.sub(r"\d+", "N", head)
    return head.strip() or "(no detail)"


def share(c: collections.Counter) -> str:
    n = sum(c.values())
    return f"{100.0 * (n - c['untestable']) / n:.0f} %" if n else "-"


def cmd_scan(args, repos) -> int:
    print(f"{'repo':58} {'finds':>6} {'fixable':>7}  rules with a fix")
    for repo in repos:
        tree = repo_dir(Path(args.root), repo)
        data = run_check(tree, [], args.timeout, args.pythonpath)
        if "error" in data:
            print(f"{repo:58} error: {data['error']}")
            continue
        finds = data.get("findings", [])
        fix = [f for f in finds if f.get("fixable")]
        rules = collections.Counter(f["rule"] for f in fix)
        print(f"{repo:58} {len(finds):6d} {len(fix):7d}  " + " ".join(f"{r}x{n}" for r, n in sorted(rules.items())))
    return 0


def cmd_verify(args, repos) -> int:
    envs = read_envs(Path(args.envs))
    total = collections.Counter()
    reasons = collections.Counter()
    dump = []
    rows = []
    envs_used: dict[str, str] = {}
    t0 = time.time()
    with tempfile.TemporaryDirectory(prefix="gf-verify-survey-") as scratch:
        for repo in repos:
            tree = repo_dir(Path(args.root), repo)
            if not tree.is_dir():
                sys.stderr.write(f"missing: {tree}\n")
                continue
            venv = envs.get(repo, "")
            extra = ["--verify", "--timeout", str(args.check_timeout)]
            if args.jobs:
                extra += ["--jobs", str(args.jobs)]
            env_note = "own"
            if venv and Path(venv).is_dir():
                extra += ["--python", venv]
                env_note = "venv"
            elif venv:
                env_note = "own (venv missing)"
            t1 = time.time()
            copy = scratch_copy(tree, Path(scratch))
            data = run_check(copy, extra, args.timeout, args.pythonpath)
            shutil.rmtree(copy, ignore_errors=True)
            secs = time.time() - t1
            if "error" in data:
                print(f"{repo}: {data['error']}", flush=True)
                continue
            c = collections.Counter()
            repo_reasons = collections.Counter()
            for f in data.get("findings", []):
                if not f.get("fixable"):
                    continue
                verdict = f.get("verdict") or "(none)"
                c[verdict] += 1
                if verdict == "untestable":
                    repo_reasons[reason_group(f.get("detail", ""))] += 1
                dump.append({"repo": repo, "path": norm_path(f["path"]), "line": f["line"], "rule": f["rule"],
                             "verdict": verdict, "detail": f.get("detail", ""), "applies": f.get("applies")})
            total.update(c)
            reasons.update(repo_reasons)
            rows.append((repo, env_note, c, secs))
            envs_used[repo] = env_note
            counts = " ".join(f"{v}={c[v]}" for v in VERDICTS if c[v])
            print(f"{repo}: {sum(c.values())} fixes, {counts or '-'}, definitive {share(c)} "
                  f"(env {env_note}, {secs:.0f} s)", flush=True)
            for r, n in repo_reasons.most_common():
                print(f"    untestable x{n}: {r}", flush=True)

    summary(rows, total, reasons)
    print(f"\n{time.time() - t0:.0f} s wall; load average at the end: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    if args.json:
        for d in dump:
            d["env"] = envs_used.get(d["repo"], "")
        Path(args.json).write_text(json.dumps(dump, indent=1) + "\n", encoding="utf-8")
    return 0


def summary(rows, total, reasons) -> None:
    print()
    head = "".join(f" {v[:11]:>11}" for v in VERDICTS)
    print(f"{'repo':50} {'env':5} {'fixes':>5}{head} {'defin.':>7}")
    for repo, env_note, c, _secs in rows:
        if not sum(c.values()):
            continue
        cells = "".join(f" {c[v]:11d}" for v in VERDICTS)
        print(f"{repo:50} {env_note[:5]:5} {sum(c.values()):5d}{cells} {share(c):>7}")
    cells = "".join(f" {total[v]:11d}" for v in VERDICTS)
    print(f"{'TOTAL (' + str(len(rows)) + ' repos)':50} {'':5} {sum(total.values()):5d}{cells} {share(total):>7}")
    print(f"\nuntestable reasons (first clause of the detail), {total['untestable']} in all:")
    for r, n in reasons.most_common():
        print(f"  {n:4d}  {r}")


def cmd_from_json(path: str) -> int:
    """The summary of a saved run (`--json`), e.g. to regroup the reasons without running again."""
    per: dict[str, collections.Counter] = {}
    env: dict[str, str] = {}
    total, reasons = collections.Counter(), collections.Counter()
    for d in json.loads(Path(path).read_text(encoding="utf-8")):
        per.setdefault(d["repo"], collections.Counter())[d["verdict"]] += 1
        env[d["repo"]] = d.get("env", "")
        total[d["verdict"]] += 1
        if d["verdict"] == "untestable":
            reasons[reason_group(d.get("detail", ""))] += 1
    summary([(r, env[r], c, 0.0) for r, c in per.items()], total, reasons)
    return 0


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description="verdict shares of gradfix's verifier on real repositories")
    p.add_argument("--set", choices=sorted(SETS), default="survey",
                   help="the measured set whose --repos, --root and --envs are the defaults (default: survey)")
    p.add_argument("--repos", help="repository list (TSV, as bench/survey.py)")
    p.add_argument("--root", help="folder holding owner+name/ trees")
    p.add_argument("--envs", help="TSV: repo, venv, installed, skipped (repo `*`: the venv of every repository)")
    p.add_argument("--only", action="append", default=[], help="only this owner/name (repeatable)")
    p.add_argument("--with-env", action="store_true", help="only repositories that have a venv entry in --envs")
    p.add_argument("--scan", action="store_true", help="no verification: count fixable findings per repository")
    p.add_argument("--json", help="write every verdict to this JSON file")
    p.add_argument("--from-json", metavar="FILE", help="print the summary of a run saved with --json; runs nothing")
    p.add_argument("--jobs", type=int, default=0, help="gradfix --jobs (default: gradfix's)")
    p.add_argument("--check-timeout", type=float, default=20.0, help="gradfix --timeout, seconds per check")
    p.add_argument("--timeout", type=float, default=1800.0, help="seconds per repository")
    p.add_argument("--pythonpath", default="", help="folder put first on PYTHONPATH for gradfix (a pinned copy)")
    args = p.parse_args(argv)
    set_repos, set_root, set_envs = SETS[args.set]
    args.repos = args.repos or str(set_repos)
    args.root = args.root or str(set_root)
    args.envs = args.envs or str(set_envs)
    if args.from_json:
        return cmd_from_json(args.from_json)
    repos = [row[0] for row in read_tsv(Path(args.repos), 4)]
    if args.only:
        repos = [r for r in repos if r in args.only]
    if args.with_env:
        have = read_envs(Path(args.envs))
        repos = [r for r in repos if r in have]
    return cmd_scan(args, repos) if args.scan else cmd_verify(args, repos)


if __name__ == "__main__":
    sys.exit(main())
