"""Per-line suppression comments.

`# gradfix: ignore[GF101, GF102]`, a bare `# gradfix: ignore` (every rule), and
`# noqa: GF101` (flake8/Ruff style; a bare `# noqa` is left to other tools).
A comment counts on the first or the last line of the finding.
"""

from __future__ import annotations

import io
import re
import tokenize

GRADFIX_COMMENT = re.compile(r"#\s*gradfix:\s*ignore(?:\[(?P<codes>[^\]]*)\])?", re.IGNORECASE)
NOQA_COMMENT = re.compile(r"#\s*noqa:\s*(?P<codes>[A-Z]+[0-9]+(?:[\s,]+[A-Z]+[0-9]+)*)", re.IGNORECASE)
ALL = "*"


def _codes(text: str) -> set[str]:
    return {c.strip().upper() for c in re.split(r"[\s,]+", text) if c.strip()}


def may_suppress(source: str) -> bool:
    """Whether `source` holds text shaped like a suppression comment. Only then is it
    tokenized (tokenizing a 2,000-line file took longer than most rules)."""
    return bool(GRADFIX_COMMENT.search(source) or NOQA_COMMENT.search(source))


def suppressions(source: str) -> dict[int, set[str]]:
    """Map 1-based line -> suppressed codes ({"*"} for all)."""
    result: dict[int, set[str]] = {}
    if not may_suppress(source):
        return result  # most files have none: skip tokenizing
    try:
        tokens = list(tokenize.generate_tokens(io.StringIO(source).readline))
    except (tokenize.TokenError, SyntaxError, IndentationError):
        return result
    for tok in tokens:
        if tok.type != tokenize.COMMENT:
            continue
        line = tok.start[0]
        m = GRADFIX_COMMENT.search(tok.string)
        if m:
            codes = m.group("codes")
            result.setdefault(line, set()).update(_codes(codes) if codes and codes.strip() else {ALL})
        m = NOQA_COMMENT.search(tok.string)
        if m:
            result.setdefault(line, set()).update(c for c in _codes(m.group("codes")) if c.startswith("GF"))
    return result


def is_suppressed(table: dict[int, set[str]], rule: str, line: int, end_line: int) -> bool:
    for ln in {line, end_line}:
        codes = table.get(ln)
        if codes and (ALL in codes or rule in codes):
            return True
    return False
