"""Real-code precision survey: run ``gradfix check`` over extracted public repositories and score judged findings.

Inputs
------
``bench/survey_repos.tsv`` (tab separated, ``#`` lines are comments, an optional header line starting with
``repo``): ``repo`` (``owner/name``), ``commit`` (40-hex sha), ``category``, ``note``.

Each repository is expected extracted (a plain tree, no ``.git`` needed) under ``--root DIR`` (default
``/work/survey/repos``) as ``DIR/owner+name/``.  A repository whose folder is missing is reported and skipped.

How the repositories were obtained
----------------------------------
The survey's repositories came from the session tool ``fetch`` (``github:owner/name``), which hands back a
*bare* git directory, ``/work/.mirror/owner+name/repo``.  The commit recorded in the TSV is

    git --git-dir=DIR rev-parse HEAD

and the tree is extracted with

    git --git-dir=DIR archive HEAD | tar -x -C DEST          # or `archive HEAD examples` for a subfolder

Snapshots lack files of 4 MiB and more (and LFS content); ``git archive`` then stops at the first missing blob.
For those repositories use this script's ``extract`` subcommand, which writes every blob that is present and
skips the missing ones (``--under`` keeps one subfolder, e.g. ``examples``):

    python bench/survey.py extract --git-dir /work/.mirror/owner+name/repo --dest /work/survey/repos/owner+name

Running
-------
    python bench/survey.py                                   # findings per rule and per repository, size scanned
    python bench/survey.py --judged bench/survey_judged.tsv  # ... and precision per rule
    python bench/survey.py --json /tmp/findings.json         # dump every finding

To score a fixed gradfix commit while the working tree changes, lay that commit out as an importable package and
pass ``--pythonpath``::

    git archive COMMIT gradfix codemods cli | tar -x -C /tmp/gf/src
    mkdir -p /tmp/gf/pkg && cp -r /tmp/gf/src/gradfix /tmp/gf/pkg/
    cp -r /tmp/gf/src/codemods /tmp/gf/pkg/gradfix/codemods && cp -r /tmp/gf/src/cli /tmp/gf/pkg/gradfix/cli
    python bench/survey.py --pythonpath /tmp/gf/pkg --judged bench/survey_judged.tsv

gradfix runs as a subprocess (``sys.executable -m gradfix check . --format json``, working directory the repository
root, so every path is relative to the repository).  Only the standard library is used.

``bench/survey_judged.tsv`` columns: ``repo``, ``commit``, ``path:line``, ``rule``, ``verdict`` (``right`` or
``wrong``), ``reason``.  A finding is joined to a judgment on (repo, path, line, rule).  Precision is
right / (right + wrong); unjudged findings are not counted in it.
"""

from __future__ import annotations

import argparse
import collections
import json
import os
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
DEFAULT_REPOS = HERE / "survey_repos.tsv"
DEFAULT_ROOT = Path("/work/survey/repos")
SKIP_DIRS = {".git", "__pycache__", "node_modules", "build", "dist", ".tox", ".venv", "venv"}


def read_tsv(path: Path, ncols: int) -> list[list[str]]:
    rows = []
    for raw in path.read_text(encoding="utf-8").splitlines():
        if not raw.strip() or raw.startswith("#"):
            continue
        cols = raw.split("\t")
        if cols[0] == "repo":  # header
            continue
        cols += [""] * (ncols - len(cols))
        rows.append(cols[:ncols])
    return rows


def repo_dir(root: Path, repo: str) -> Path:
    return root / repo.replace("/", "+")


def count_python(tree: Path) -> tuple[int, int]:
    files = lines = 0
    for dirpath, dirnames, filenames in os.walk(tree):
        dirnames[:] = [d for d in dirnames if d not in SKIP_DIRS and not d.endswith(".egg-info")]
        for name in filenames:
            if name.endswith(".py"):
                files += 1
                try:
                    with open(os.path.join(dirpath, name), "rb") as fh:
                        lines += sum(1 for _ in fh)
                except OSError:
                    pass
    return files, lines


def run_gradfix(tree: Path, timeout: float, pythonpath: str = "", select: str = "") -> tuple[list[dict], list[dict], int]:
    env = dict(os.environ)
    env["GRADFIX_NO_CACHE"] = "1"  # measure the analysis, and write nothing into the surveyed trees
    if pythonpath:
        env["PYTHONPATH"] = pythonpath + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    proc = subprocess.run(
        [sys.executable, "-m", "gradfix", "check", ".", "--format", "json"] + (["--select", select] if select else []),
        cwd=tree,
        capture_output=True,
        text=True,
        timeout=timeout,
        env=env,
    )
    try:
        data = json.loads(proc.stdout)
    except json.JSONDecodeError:
        sys.stderr.write(f"{tree}: gradfix gave no JSON (rc {proc.returncode}): {proc.stderr[-2000:]}\n")
        return [], [], proc.returncode
    return data.get("findings", []), data.get("errors", []), proc.returncode


def norm_path(p: str) -> str:
    p = p.replace(os.sep, "/")
    while p.startswith("./"):
        p = p[2:]
    return p


def cmd_extract(args: argparse.Namespace) -> int:
    """Write every blob of HEAD present in a (possibly incomplete) bare git dir; skip the missing ones."""
    git = ["git", f"--git-dir={args.git_dir}"]
    listing = subprocess.run(git + ["ls-tree", "-r", "-z", "HEAD"], capture_output=True, check=True).stdout
    entries = []
    for item in listing.split(b"\0"):
        if not item:
            continue
        meta, path = item.split(b"\t", 1)
        mode, kind, sha = meta.split()
        path_s = path.decode("utf-8", "surrogateescape")
        if kind != b"blob" or mode == b"120000":  # skip submodules and symlinks
            continue
        if args.under and not (path_s == args.under or path_s.startswith(args.under.rstrip("/") + "/")):
            continue
        entries.append((sha.decode(), path_s))
    dest = Path(args.dest)
    dest.mkdir(parents=True, exist_ok=True)
    proc = subprocess.Popen(git + ["cat-file", "--batch"], stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    written = missing = 0
    assert proc.stdin and proc.stdout
    for sha, path_s in entries:
        proc.stdin.write(sha.encode() + b"\n")
        proc.stdin.flush()
        header = proc.stdout.readline().split()
        if len(header) < 3:  # "<sha> missing"
            missing += 1
            continue
        size = int(header[2])
        body = proc.stdout.read(size)
        proc.stdout.read(1)  # trailing newline
        out = dest / path_s
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_bytes(body)
        written += 1
    proc.stdin.close()
    proc.wait()
    head = subprocess.run(git + ["rev-parse", "HEAD"], capture_output=True, text=True).stdout.strip()
    print(f"{dest}: {written} files written, {missing} missing blobs skipped; commit {head}")
    return 0


def cmd_survey(args: argparse.Namespace) -> int:
    repos = read_tsv(Path(args.repos), 4)
    root = Path(args.root)
    all_findings: list[dict] = []
    per_repo = []
    tot_files = tot_lines = 0
    errors_total = 0
    for repo, commit, category, _note in repos:
        tree = repo_dir(root, repo)
        if not tree.is_dir():
            sys.stderr.write(f"missing: {tree} (extract {repo} first)\n")
            continue
        files, lines = count_python(tree)
        tot_files += files
        tot_lines += lines
        findings, errors, _rc = run_gradfix(tree, args.timeout, args.pythonpath, args.select)
        errors_total += len(errors)
        for e in errors:
            sys.stderr.write(f"{repo}: error {norm_path(str(e.get('path')))}:{e.get('line')}: {e.get('message')}\n")
        for f in findings:
            all_findings.append(
                {
                    "repo": repo,
                    "commit": commit,
                    "path": norm_path(f["path"]),
                    "line": f["line"],
                    "column": f.get("column"),
                    "rule": f["rule"],
                    "message": f["message"],
                }
            )
        per_repo.append((repo, category, files, lines, len(findings), len(errors)))

    all_findings.sort(key=lambda f: (f["repo"], f["path"], f["line"], f["rule"]))

    print(f"{'repo':58} {'category':14} {'files':>6} {'lines':>8} {'finds':>6} {'errs':>5}")
    for repo, category, files, lines, nf, ne in per_repo:
        print(f"{repo:58} {category:14} {files:6d} {lines:8d} {nf:6d} {ne:5d}")
    print(f"{'TOTAL (' + str(len(per_repo)) + ' repos)':58} {'':14} {tot_files:6d} {tot_lines:8d} "
          f"{len(all_findings):6d} {errors_total:5d}")
    print()

    by_rule = collections.Counter(f["rule"] for f in all_findings)
    if not args.judged:
        print(f"{'rule':6} {'findings':>8}")
        for rule in sorted(by_rule):
            print(f"{rule:6} {by_rule[rule]:8d}")
    else:
        judged = {}
        for repo, _commit, where, rule, verdict, _reason in read_tsv(Path(args.judged), 6):
            path, _, line = where.rpartition(":")
            judged[(repo, norm_path(path), int(line), rule)] = verdict.strip()
        stats = collections.defaultdict(lambda: collections.Counter())
        seen = set()
        for f in all_findings:
            key = (f["repo"], f["path"], f["line"], f["rule"])
            seen.add(key)
            verdict = judged.get(key, "unjudged")
            if verdict not in ("right", "wrong"):
                verdict = "unjudged"
            stats[f["rule"]][verdict] += 1
            f["verdict"] = verdict
        stale = sorted(set(judged) - seen)
        header = f"{'rule':6} {'findings':>8} {'right':>6} {'wrong':>6} {'unjudged':>9} {'precision':>9}"
        print(header)
        tot = collections.Counter()
        for rule in sorted(stats):
            c = stats[rule]
            tot.update(c)
            n = c["right"] + c["wrong"]
            prec = f"{c['right'] / n:.2f}" if n else "-"
            print(f"{rule:6} {sum(c.values()):8d} {c['right']:6d} {c['wrong']:6d} {c['unjudged']:9d} {prec:>9}")
        n = tot["right"] + tot["wrong"]
        prec = f"{tot['right'] / n:.2f}" if n else "-"
        print(f"{'all':6} {sum(tot.values()):8d} {tot['right']:6d} {tot['wrong']:6d} {tot['unjudged']:9d} {prec:>9}")
        if stale:
            print(f"\n{len(stale)} judgments match no current finding:")
            for repo, path, line, rule in stale:
                print(f"  {repo} {path}:{line} {rule}")
        if args.list_unjudged:
            print("\nunjudged:")
            for f in all_findings:
                if f.get("verdict") == "unjudged":
                    print(f"  {f['repo']}\t{f['path']}:{f['line']}\t{f['rule']}\t{f['message']}")

    if args.json:
        Path(args.json).write_text(
            json.dumps(
                [{k: f[k] for k in ("repo", "path", "line", "rule", "message") if k in f} for f in all_findings],
                indent=1,
            )
            + "\n",
            encoding="utf-8",
        )
    return 0


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv and argv[0] == "extract":
        p = argparse.ArgumentParser(prog="survey.py extract", description=cmd_extract.__doc__)
        p.add_argument("--git-dir", required=True)
        p.add_argument("--dest", required=True)
        p.add_argument("--under", default="", help="keep only this subfolder of the tree")
        return cmd_extract(p.parse_args(argv[1:]))
    p = argparse.ArgumentParser(description="gradfix precision survey over extracted public repositories")
    p.add_argument("--repos", default=str(DEFAULT_REPOS), help="repository list (TSV)")
    p.add_argument("--root", default=str(DEFAULT_ROOT), help="folder holding owner+name/ trees")
    p.add_argument("--judged", help="judgments TSV; prints precision per rule")
    p.add_argument("--json", help="write every finding to this JSON file")
    p.add_argument("--list-unjudged", action="store_true", help="with --judged: list findings not yet judged")
    p.add_argument("--timeout", type=float, default=1800.0, help="seconds per repository")
    p.add_argument("--pythonpath", default="", help="folder put first on PYTHONPATH for gradfix (a pinned copy)")
    p.add_argument("--select", default="", help="only these rules (`gradfix check --select`, e.g. GF101,GF208): "
                   "a before/after comparison of the rules a change touches, in a fraction of the time")
    return cmd_survey(p.parse_args(argv))


if __name__ == "__main__":
    sys.exit(main())
