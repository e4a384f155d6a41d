"""`github`: GitHub Actions workflow commands, one annotation per finding.

`::warning title=gradfix (GF101),file=src/train.py,line=12,col=9,endLine=12,endColumn=47::message`;
files that could not be analysed become `::error` annotations. Escaping follows the runner's
rules: `%`, CR and LF in the message; also `:` and `,` in property values.
"""

from __future__ import annotations

from gradfix.report import Report


def escape_data(text: str) -> str:
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def escape_property(text: str) -> str:
    return escape_data(text).replace(":", "%3A").replace(",", "%2C")


def _command(kind: str, props: dict, message: str) -> str:
    joined = ",".join(f"{k}={escape_property(str(v))}" for k, v in props.items() if v is not None)
    return f"::{kind} {joined}::{escape_data(message)}"


def render_github(report: Report) -> str:
    lines = []
    for e in report.entries:
        f, s = e.finding, e.finding.span
        props = {"title": f"gradfix ({f.rule})", "file": e.path, "line": s.line, "col": s.column,
                 "endLine": s.end_line, "endColumn": s.end_column}
        text = f"{e.path}:{s.line}:{s.column}: {f.rule} {f.message}"
        if e.verdict:
            text += f"\nverification: {e.verdict}" + (f": {e.detail}" if e.detail else "")
        lines.append(_command("warning", props, text))
    for err in report.errors:
        lines.append(_command("error", {"title": "gradfix", "file": err.path, "line": err.line}, err.message))
    return "".join(line + "\n" for line in lines)
