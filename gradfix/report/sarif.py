"""`sarif`: SARIF 2.1.0 for GitHub code scanning and other SARIF viewers.

One run; `tool.driver.rules` documents every rule (its Markdown is the `help`), each finding is a
`result` with a region in code points (`columnKind`), and files that could not be analysed are
tool execution notifications, so `executionSuccessful` is false. Tested against the OASIS schema.
"""

from __future__ import annotations

import json
import os
import pathlib
from urllib.parse import quote

from gradfix import __version__
from gradfix.report import Report

SCHEMA_URI = "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json"


def _location(path: str, line: int | None, span=None) -> dict:
    if os.path.isabs(path):
        artifact = {"uri": pathlib.Path(path).as_uri()}
    else:
        artifact = {"uri": quote(path.replace(os.sep, "/")), "uriBaseId": "%SRCROOT%"}
    physical: dict = {"artifactLocation": artifact}
    if span is not None:
        physical["region"] = {"startLine": span.line, "startColumn": span.column,
                              "endLine": span.end_line, "endColumn": span.end_column}
    elif line:
        physical["region"] = {"startLine": line}
    return {"physicalLocation": physical}


def _rules() -> list[dict]:
    from gradfix.codemods import ALL_RULES

    return [{
        "id": r.id,
        "name": r.name,
        "shortDescription": {"text": r.summary},
        "fullDescription": {"text": r.docs.what},
        "help": {"text": r.docs.why, "markdown": r.documentation()},
        "defaultConfiguration": {"level": "warning"},
    } for r in ALL_RULES]


def render_sarif(report: Report) -> str:
    rules = _rules()
    index = {r["id"]: i for i, r in enumerate(rules)}
    results = []
    for e in report.entries:
        f = e.finding
        result = {"ruleId": f.rule, "level": "warning", "message": {"text": f.message},
                  "locations": [_location(e.path, None, f.span)]}
        if f.rule in index:
            result["ruleIndex"] = index[f.rule]
        props = {"fixable": f.fixable}
        if e.verdict:
            props["verdict"], props["verdictDetail"] = e.verdict, e.detail
        result["properties"] = props
        results.append(result)
    notifications = [{"level": "error", "message": {"text": err.message},
                      "locations": [_location(err.path, err.line)]} for err in report.errors]
    run = {
        "tool": {"driver": {"name": "gradfix", "version": __version__, "semanticVersion": __version__,
                            "rules": rules}},
        "originalUriBaseIds": {"%SRCROOT%": {"uri": pathlib.Path(os.getcwd()).as_uri() + "/"}},
        "columnKind": "unicodeCodePoints",
        "invocations": [{"executionSuccessful": not report.errors, "toolExecutionNotifications": notifications}],
        "results": results,
    }
    return json.dumps({"$schema": SCHEMA_URI, "version": "2.1.0", "runs": [run]}, indent=2) + "\n"
