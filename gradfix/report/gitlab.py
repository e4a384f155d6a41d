"""`gitlab`: a GitLab Code Quality report (a JSON array of issues).

Each issue has `description`, `check_name`, `fingerprint`, `severity` and `location.path` with
`lines.begin`/`lines.end`. The fingerprint hashes the path, rule, message and the finding's
rank among identical ones, not its line, so an unrelated edit above it does not make it "new".
"""

from __future__ import annotations

import hashlib
import json

from gradfix.report import Report


def render_gitlab(report: Report) -> str:
    issues = []
    seen: dict[tuple, int] = {}
    for e in report.entries:
        f = e.finding
        key = (e.path, f.rule, f.message)
        rank = seen.get(key, 0)
        seen[key] = rank + 1
        digest = hashlib.sha256("\0".join([e.path, f.rule, f.message, str(rank)]).encode()).hexdigest()
        issues.append({
            "description": f"{f.rule} {f.message}",
            "check_name": f"{f.rule} ({f.name})",
            "fingerprint": digest,
            "severity": "major",
            "location": {"path": e.path, "lines": {"begin": f.span.line, "end": f.span.end_line}},
        })
    for err in report.errors:
        digest = hashlib.sha256("\0".join([err.path, "error", err.message]).encode()).hexdigest()
        issues.append({
            "description": f"gradfix could not analyse this file: {err.message}",
            "check_name": "gradfix-error",
            "fingerprint": digest,
            "severity": "critical",
            "location": {"path": err.path, "lines": {"begin": err.line or 1}},
        })
    return json.dumps(issues, indent=2) + "\n"
