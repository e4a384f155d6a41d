"""The human formats: `text` (one line per finding, plus the verdict with --verify) and `concise`
(Ruff's `path:line:col: CODE [*] message`), each closed by a summary that counts what it says."""

from __future__ import annotations

from gradfix.report import Report, plural


def render_text(report: Report, concise: bool = False) -> str:
    lines = []
    for e in report.entries:
        f = e.finding
        if concise:
            lines.append(f"{e.path}:{f.position()}: {f.rule}{' [*]' if f.fixable else ''} {f.message}")
            continue
        line = f"{e.path}:{f.position()}: {f.rule} {f.message}{' [*]' if f.fixable else ''}"
        if e.verdict:
            line += f"\n    verification: {e.verdict}" + (f": {e.detail}" if e.detail else "")
            if e.verdict == "changes-behaviour" and not report.unsafe_fixes:
                line += "\n    (applied only with --unsafe-fixes: no hazard was shown)"
        lines.append(line)
    lines.append(summary_line(report, concise))
    return "\n".join(line for line in lines if line is not None) + "\n"


def summary_line(report: Report, concise: bool = False) -> str | None:
    total = len(report.entries)
    checked = len(report.files)
    if not total:
        return None if report.errors else f"All checks passed ({plural(checked, 'file')})."
    where = plural(report.files_with_findings, "file")
    if concise:
        return f"Found {plural(total, 'finding')} in {where}."
    fixable = sum(e.finding.fixable for e in report.entries)
    return (f"Found {plural(total, 'finding')} in {where} of {checked} checked "
            f"({fixable} with a fix: `gradfix apply --diff` to review).")


def render_statistics(report: Report) -> str:
    """`--statistics`: one line per rule, most frequent first, `[*]` when every finding has a fix."""
    rows = statistics(report)
    if not rows:
        return "" if report.errors else "All checks passed.\n"
    width = max(len(str(r["count"])) for r in rows)
    out = []
    for r in rows:
        mark = "[*]" if r["fixable"] == r["count"] else "[-]" if r["fixable"] else "[ ]"
        out.append(f"{r['count']:>{width}}\t{r['code']}\t{mark} {r['name']}")
    return "\n".join(out) + "\n"


def statistics(report: Report) -> list[dict]:
    by_rule: dict[str, dict] = {}
    for e in report.entries:
        f = e.finding
        row = by_rule.setdefault(f.rule, {"code": f.rule, "name": f.name, "count": 0, "fixable": 0})
        row["count"] += 1
        row["fixable"] += f.fixable
    return sorted(by_rule.values(), key=lambda r: (-r["count"], r["code"]))
