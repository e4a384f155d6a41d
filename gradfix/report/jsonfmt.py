"""`json` (one object: findings and errors, stable keys) and `json-lines` (one finding per line)."""

from __future__ import annotations

import json

from gradfix.model import FileError
from gradfix.report import Entry, Report


def finding_json(e: Entry, verified: bool = False, report: Report | None = None) -> dict:
    f = e.finding
    item = {"path": e.path, "line": f.span.line, "column": f.span.column, "end_line": f.span.end_line,
            "end_column": f.span.end_column, "rule": f.rule, "name": f.name, "message": f.message,
            "fixable": f.fixable}
    if f.cell is not None:
        item["cell"] = f.cell  # a notebook: lines are in that cell
    if verified and f.fixable:
        item["verdict"], item["detail"] = e.verdict, e.detail
        item["applies"] = report.applies(e) if report is not None else None
    return item


def error_json(e: FileError) -> dict:
    out = {"path": e.path, "line": e.line, "message": e.message}
    if e.cell is not None:
        out["cell"] = e.cell
    return out


def render_json(report: Report) -> str:
    out = {"findings": [finding_json(e, report.verified, report) for e in report.entries],
           "errors": [error_json(e) for e in report.errors]}
    return json.dumps(out, indent=2) + "\n"


def render_json_lines(report: Report) -> str:
    return "".join(json.dumps(finding_json(e, report.verified, report)) + "\n" for e in report.entries)
