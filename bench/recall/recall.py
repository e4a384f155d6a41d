"""Recall of gradfix on reproductions of real, public bug reports.

Each file in cases/ models one report (URL and title in its docstring) and marks the hazard
with a trailing comment `# expect: GFxxx` (or `# expect: none-covers (reason)` when no rule
covers it). A case is recalled when `gradfix check` reports a finding of the expected rule on
the expected line, +-1 line. A file may carry several expectations; each is scored.

The docstring's `scope:` line says whether the modelled pattern is one the rule documents
(`documented`) or the same hazard family in a form its documentation does not describe
(`extension`); recall is reported overall and for each scope.

A case may also be a folder of files (`cases/0xx_name/`), for a hazard that spans modules (a
model class imported from a sibling file): gradfix checks the folder as a project (`gradfix check
.` run inside it), the docstring fields are read from the file that carries the expectation, and
a finding counts only in that file.

Usage:
    python bench/recall/recall.py            # table, per-rule recall, misses
    python bench/recall/recall.py --json     # the same as JSON
    python bench/recall/recall.py -k 0xx     # only cases whose file name contains 0xx

Only the standard library is used; gradfix runs as `sys.executable -m gradfix check
--format json` on each file (run it with the project's virtual environment's python).
"""

from __future__ import annotations

import argparse
import ast
import json
import re
import subprocess
import sys
from collections import defaultdict
from pathlib import Path

HERE = Path(__file__).resolve().parent
CASES = HERE / "cases"
EXPECT_RE = re.compile(r"#\s*expect:\s*(GF\d{3}|none-covers)\b\s*(.*)$")
TOLERANCE = 1


def parse_case(path: Path) -> dict:
    files = sorted(path.glob("*.py")) if path.is_dir() else [path]
    fields = {}
    expectations = []
    for f in files:
        text = f.read_text()
        found = []
        for lineno, line in enumerate(text.splitlines(), start=1):
            m = EXPECT_RE.search(line)
            if m:
                found.append({"line": lineno, "rule": m.group(1), "note": m.group(2).strip(),
                              "file": f.name if path.is_dir() else None})
        if not found and path.is_dir():
            continue
        expectations += found
        doc = ast.get_docstring(ast.parse(text)) or ""
        for line in doc.splitlines():
            m = re.match(r"\s*(Source|Title|scope|runs):\s*(.*)", line)
            if m and m.group(1) not in fields:
                fields[m.group(1)] = m.group(2).strip()
    scope = fields.get("scope", "documented").split()[0].rstrip(",;") if fields.get("scope") else "documented"
    return {
        "case": path.name,
        "source": fields.get("Source", ""),
        "title": fields.get("Title", ""),
        "scope": scope,
        "expectations": expectations,
    }


def run_gradfix(path: Path) -> tuple[list[dict], list[dict], str]:
    folder = path.is_dir()
    proc = subprocess.run(
        [sys.executable, "-m", "gradfix", "check", "--no-cache", "--format", "json", "." if folder else str(path)],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=str(path) if folder else None,
    )
    try:
        data = json.loads(proc.stdout)
    except json.JSONDecodeError:
        return [], [{"path": str(path), "line": 0, "message": (proc.stderr or proc.stdout).strip()[-500:]}], ""
    return data.get("findings", []), data.get("errors", []), proc.stderr


def score(cases: list[dict]) -> dict:
    per_rule = defaultdict(lambda: {"expected": 0, "recalled": 0})
    per_scope = defaultdict(lambda: {"expected": 0, "recalled": 0})
    rows, misses, uncovered = [], [], []
    for case in cases:
        path = CASES / case["case"]
        findings, errors, _ = run_gradfix(path)
        for exp in case["expectations"]:
            found = sorted({(f["line"], f["rule"]) for f in findings
                            if exp.get("file") is None or Path(f.get("path", "")).name == exp["file"]})
            row = {
                "case": case["case"] + (f"/{exp['file']}" if exp.get("file") else ""),
                "line": exp["line"],
                "expected": exp["rule"],
                "scope": case["scope"],
                "source": case["source"],
                "found": [f"{r}@{ln}" for ln, r in found],
                "errors": [e.get("message", "") for e in errors],
            }
            if exp["rule"] == "none-covers":
                row["status"] = "uncovered"
                row["reason"] = exp["note"]
                uncovered.append(row)
                rows.append(row)
                continue
            hit = any(r == exp["rule"] and abs(ln - exp["line"]) <= TOLERANCE for ln, r in found)
            row["status"] = "recalled" if hit else "MISS"
            per_rule[exp["rule"]]["expected"] += 1
            per_scope[case["scope"]]["expected"] += 1
            if hit:
                per_rule[exp["rule"]]["recalled"] += 1
                per_scope[case["scope"]]["recalled"] += 1
            else:
                misses.append(row)
            rows.append(row)
    total_e = sum(v["expected"] for v in per_rule.values())
    total_r = sum(v["recalled"] for v in per_rule.values())
    return {
        "cases": len(cases),
        "expectations": total_e,
        "recalled": total_r,
        "recall": (total_r / total_e) if total_e else None,
        "per_rule": {k: dict(v, recall=v["recalled"] / v["expected"]) for k, v in sorted(per_rule.items())},
        "per_scope": {k: dict(v, recall=v["recalled"] / v["expected"]) for k, v in sorted(per_scope.items())},
        "rows": rows,
        "misses": misses,
        "uncovered": uncovered,
    }


def print_text(result: dict) -> None:
    print(f"{'case':<52} {'line':>4}  {'expected':<8} {'scope':<10} {'status':<9} found")
    for row in result["rows"]:
        print(
            f"{row['case']:<52} {row['line']:>4}  {row['expected']:<8} {row['scope']:<10} "
            f"{row['status']:<9} {', '.join(row['found']) or '-'}"
        )
        for err in row["errors"]:
            print(f"{'':<52}       error: {err}")
    print()
    print(f"{'rule':<8} {'recalled':>8} / {'expected':<8} recall")
    for rule, v in result["per_rule"].items():
        print(f"{rule:<8} {v['recalled']:>8} / {v['expected']:<8} {v['recall']:.0%}")
    print()
    for scope, v in result["per_scope"].items():
        print(f"scope {scope:<11} {v['recalled']:>3} / {v['expected']:<3} {v['recall']:.0%}")
    if result["recall"] is not None:
        print(
            f"overall: {result['recalled']} / {result['expectations']} = {result['recall']:.1%} "
            f"({result['cases']} cases)"
        )
    if result["uncovered"]:
        print(f"\nno rule covers ({len(result['uncovered'])}):")
        for row in result["uncovered"]:
            print(f"  {row['case']}:{row['line']}  {row['reason']}")
    if result["misses"]:
        print(f"\nmisses ({len(result['misses'])}):")
        for row in result["misses"]:
            print(f"  {row['case']}:{row['line']}  expected {row['expected']} ({row['scope']}); found {', '.join(row['found']) or 'nothing'}")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--json", action="store_true", help="print the result as JSON")
    ap.add_argument("-k", dest="select", default="", help="only cases whose file name contains this")
    args = ap.parse_args(argv)
    paths = [p for p in sorted(CASES.iterdir()) if p.suffix == ".py" or (p.is_dir() and any(p.glob("*.py")))]
    cases = [parse_case(p) for p in paths if args.select in p.name]
    result = score(cases)
    if args.json:
        json.dump(result, sys.stdout, indent=2)
        print()
    else:
        print_text(result)
    return 0


if __name__ == "__main__":
    sys.exit(main())
