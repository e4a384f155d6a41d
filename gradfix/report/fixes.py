"""What `apply` reports: each change with its verdict, what was not applied and why, a one-line
meaning of each verdict shown, and (with --show-fixes) the fixes per file and rule."""

from __future__ import annotations

import json
from collections import Counter

from gradfix.model import line_label
from gradfix.report import plural
from gradfix.report.jsonfmt import error_json, finding_json

VERDICT_MEANING = {
    "equivalent": "outputs and gradients of the rewrite equal the original's (float64 run of the changed code)",
    "fixes-crash": "the original crashes in backward(); the rewrite runs and equals what the original meant "
                   "to compute",
    "fixes-hazard": "running the original shows the hazard (no gradient reaches a trained parameter, an update "
                    "below float32 resolution, a learning rate off its declared schedule, ...) and the rewrite "
                    "does not",
    "changes-behaviour": "the rewrite computes something else and no hazard was shown: applied only with "
                         "--unsafe-fixes or when accepted in -i",
    "failed": "the rewrite computes something else: never applied",
    "untestable": "the verifier could not run the changed code (the reason says why): applied only with "
                  "--allow-untestable",
    "not-verified": "--no-verify: only fixes marked safe are applied (--unsafe-fixes for the rest)",
}


def changes_of(run) -> tuple[list, list]:
    applied = sorted(((r.path, c) for r in run.fixes for c in r.changes if c.applied),
                     key=lambda t: (t[0], t[1].line))
    skipped = sorted(((r.path, c) for r in run.fixes for c in r.changes if not c.applied),
                     key=lambda t: (t[0], t[1].line))
    return applied, skipped


def summary_lines(run, diff: bool, show_fixes: bool = False) -> list[str]:
    applied, skipped = changes_of(run)
    out = []
    for path, c in applied:
        out.append(f"{path}:{line_label(c.line, c.finding.cell)}: {c.rule} {c.fix.description} [{c.verdict.value}]"
                   + (f" — {c.detail}" if c.detail else ""))
    for path, c in skipped:
        out.append(f"{path}:{line_label(c.line, c.finding.cell)}: {c.rule} not applied [{c.verdict.value}]: {c.reason}")
    shown = list(dict.fromkeys(c.verdict.value for _, c in applied + skipped))
    if shown:
        out.append("Verdicts:")
        out.extend(f"  {v}: {VERDICT_MEANING[v]}" for v in shown if v in VERDICT_MEANING)
    if show_fixes and applied:
        out.append(("Would fix" if diff else "Fixed") + f" {plural(len(applied), 'finding')}:")
        for path in dict.fromkeys(p for p, _ in applied):
            out.append(f"  {path}:")
            counts = Counter((c.rule, c.finding.name) for p, c in applied if p == path)
            out.extend(f"    {n} × {rule} ({name})" for (rule, name), n in sorted(counts.items()))
    remaining = sum(len(r.findings) for r in run.fixes)
    files = len({p for p, _ in applied})
    verb = "Would apply" if diff else "Applied"
    remain = f"{remaining} finding{' remains' if remaining == 1 else 's remain'}"
    if not diff and run.errors:
        unwritten = sum(1 for e in run.errors if e.message.startswith("not written"))
        if unwritten:
            remain += f" ({plural(unwritten, 'file')} could not be written)"
    out.append(f"{verb} {plural(len(applied), 'change')} in {plural(files, 'file')}"
               f"; {len(skipped)} not applied; {remain}.")
    return out


def render_apply_json(run, diff: bool) -> str:
    out = {"changes": [], "findings": [], "errors": [error_json(e) for e in run.errors]}
    from gradfix.report import Entry

    for r in run.fixes:
        for c in r.changes:
            out["changes"].append({"path": r.path, "line": c.line, "rule": c.rule, "verdict": c.verdict.value,
                                   "detail": c.detail, "unit": c.unit, "applied": c.applied,
                                   "reason": c.reason if not c.applied else ""})
            if c.finding.cell is not None:
                out["changes"][-1]["cell"] = c.finding.cell
        for f in r.findings:
            out["findings"].append(finding_json(Entry(r.path, f)))
    if diff:
        from gradfix.notebook import file_diff

        out["diff"] = "".join(file_diff(r.original, r.fixed, r.path) for r in run.fixes if r.fixed != r.original)
    return json.dumps(out, indent=2) + "\n"
