"""`gradfix lsp`, what the protocol carries: client settings, positions in the negotiated
encoding, edits, the rule documentation files, and the guard every handler runs under."""

from __future__ import annotations

import asyncio
import functools
import logging
import os
import re
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from lsprotocol import types as T

from gradfix import suppression
from gradfix.codemods import RULES_BY_ID
from gradfix.config import ConfigError, check_selector
from gradfix.engine import APPLIED_VERDICTS
from gradfix.model import Finding
from gradfix.textedits import text_edits

log = logging.getLogger("gradfix.lsp")

SOURCE = "gradfix"
FIX_ALL_KIND = "source.fixAll.gradfix"
SYNTAX_CODE = "syntax"
DEFAULT_DEBOUNCE_S = 0.3
VERIFY_IDLE_S = 0.5
ENGINE_STACK_BYTES = 256 << 20            # the buffer must rest this long before its fixes are verified
ACCEPTED = {v.value for v in APPLIED_VERDICTS}
# the suppression comment syntax is the engine's
GRADFIX_COMMENT = suppression.GRADFIX_COMMENT
NOQA_COMMENT = suppression.NOQA_COMMENT
VERDICT_WORDS = {
    "equivalent": "verified: equivalent",
    "fixes-crash": "verified: fixes crash",
    "fixes-hazard": "verified: fixes hazard",
    "changes-behaviour": "verified: changes behaviour (no hazard shown)",
    "failed": "verification failed",
    "untestable": "not verified: untestable",
}


# -- settings ---------------------------------------------------------------------------
@dataclass(frozen=True)
class Settings:
    select: tuple[str, ...] | None = None
    ignore: tuple[str, ...] = ()
    rule_options: tuple[tuple[str, tuple[tuple[str, Any], ...]], ...] = ()
    verify: bool = False
    debounce_s: float = DEFAULT_DEBOUNCE_S
    verify_timeout_s: float = 20.0
    disable_rule_comment: bool = True

    def options(self) -> dict[str, dict[str, Any]]:
        return {rid: dict(opts) for rid, opts in self.rule_options}


def _codes(value: Any) -> list[str]:
    if isinstance(value, str):
        value = re.split(r"[\s,]+", value)
    if not isinstance(value, (list, tuple)):
        raise ValueError("must be a list of rule codes")
    return [str(v).strip().upper() for v in value if str(v).strip()]


SETTING_KEYS = ("select", "ignore", "rules", "gf201Threshold", "verify", "debounceMs", "verifyTimeout",
                "disableRuleComment")


def unwrap_settings(raw: Any) -> dict | None:
    """`{"gradfix": {...}}` or the section itself -> the section; None when it holds no gradfix settings."""
    if not isinstance(raw, dict):
        return None
    if isinstance(raw.get("gradfix"), dict):
        return raw["gradfix"]
    if any(k in raw for k in SETTING_KEYS):
        return raw
    return None


def parse_settings(raw: Any) -> tuple[Settings, list[str]]:
    """Client settings -> Settings, plus warnings. Accepts `{"gradfix": {...}}` or `{...}`."""
    warnings: list[str] = []
    raw = unwrap_settings(raw)
    if raw is None:
        return Settings(), warnings
    known = set(RULES_BY_ID)
    kw: dict[str, Any] = {}
    for key in ("select", "ignore"):
        if raw.get(key) is None:
            continue
        try:
            codes = _codes(raw[key])
        except ValueError as exc:
            warnings.append(f"setting {key!r} {exc}")
            continue
        good = []
        for code in codes:
            try:
                check_selector(code, known, f"setting {key!r}")
                good.append(code)
            except ConfigError as exc:
                warnings.append(str(exc))
        kw[key] = tuple(good)
    options: dict[str, dict[str, Any]] = {}
    rules = raw.get("rules")
    if isinstance(rules, dict):
        for rid, opts in rules.items():
            rid = str(rid).upper()
            if rid not in RULES_BY_ID:
                warnings.append(f"setting 'rules': unknown rule {rid!r}")
            elif not isinstance(opts, dict):
                warnings.append(f"setting 'rules.{rid}' must be an object")
            else:
                options.setdefault(rid, {}).update(opts)
    elif rules is not None:
        warnings.append("setting 'rules' must be an object")
    threshold = raw.get("gf201Threshold")
    if threshold is not None:
        if isinstance(threshold, (int, float)) and not isinstance(threshold, bool) and threshold > 0:
            options.setdefault("GF201", {})["threshold"] = float(threshold)
        else:
            warnings.append("setting 'gf201Threshold' must be a positive number")
    for rid, opts in options.items():
        allowed = set(RULES_BY_ID[rid].default_options)
        for name in list(opts):
            if name not in allowed:
                warnings.append(f"setting 'rules.{rid}': unknown option {name!r} (known: {sorted(allowed)})")
                del opts[name]
    kw["rule_options"] = tuple(sorted((rid, tuple(sorted(o.items()))) for rid, o in options.items() if o))
    for key, attr in (("verify", "verify"), ("disableRuleComment", "disable_rule_comment")):
        if key in raw:
            if isinstance(raw[key], bool):
                kw[attr] = raw[key]
            else:
                warnings.append(f"setting {key!r} must be true or false")
    for key, attr, scale in (("debounceMs", "debounce_s", 1000.0), ("verifyTimeout", "verify_timeout_s", 1.0)):
        if key in raw:
            v = raw[key]
            if isinstance(v, (int, float)) and not isinstance(v, bool) and v >= 0:
                kw[attr] = float(v) / scale
            else:
                warnings.append(f"setting {key!r} must be a number >= 0")
    return Settings(**kw), warnings


# -- positions ------------------------------------------------------------------------------
def _units(text: str, encoding: str) -> int:
    if encoding == T.PositionEncodingKind.Utf32:
        return len(text)
    if encoding == T.PositionEncodingKind.Utf8:
        return len(text.encode("utf-8", "surrogatepass"))
    return len(text.encode("utf-16-le", "surrogatepass")) // 2


def _line(lines: list[str], index: int) -> str:
    if 0 <= index < len(lines):
        return lines[index].rstrip("\r")
    return ""


def to_position(lines: list[str], line0: int, col_cp: int, encoding: str) -> T.Position:
    """0-based line and code-point column -> LSP position in the negotiated encoding."""
    if line0 >= len(lines):
        return T.Position(line=max(len(lines), 0), character=0)
    text = _line(lines, line0)
    return T.Position(line=max(line0, 0), character=_units(text[: max(col_cp, 0)], encoding))


def from_position(lines: list[str], pos: T.Position, encoding: str) -> tuple[int, int]:
    """LSP position -> (0-based line, code-point column)."""
    text = _line(lines, pos.line)
    if encoding == T.PositionEncodingKind.Utf32:
        return pos.line, min(pos.character, len(text))
    units = 0
    for i, ch in enumerate(text):
        if units >= pos.character:
            return pos.line, i
        units += _units(ch, encoding)
    return pos.line, len(text)


def span_range(lines: list[str], f: Finding, encoding: str) -> T.Range:
    s = f.span
    return T.Range(start=to_position(lines, s.line - 1, s.column - 1, encoding),
                   end=to_position(lines, s.end_line - 1, s.end_column - 1, encoding))


def lsp_edits(old: str, new: str, encoding: str) -> list[T.TextEdit]:
    """Minimal edits (gradfix.textedits) in the client's position encoding."""
    if encoding == T.PositionEncodingKind.Utf16:
        return [T.TextEdit(range=T.Range(start=T.Position(line=e.start_line, character=e.start_col),
                                         end=T.Position(line=e.end_line, character=e.end_col)),
                           new_text=e.new_text) for e in text_edits(old, new)]
    lines = old.split("\n")
    return [T.TextEdit(range=T.Range(start=to_position(lines, e.start_line, e.start_col, encoding),
                                     end=to_position(lines, e.end_line, e.end_col, encoding)),
                       new_text=e.new_text) for e in text_edits(old, new, utf16=False)]


def _contains(r: T.Range, p: T.Position) -> bool:
    return (r.start.line, r.start.character) <= (p.line, p.character) <= (r.end.line, r.end.character)


def _same_range(a: T.Range, b: T.Range) -> bool:
    return (a.start.line, a.start.character, a.end.line, a.end.character) == \
        (b.start.line, b.start.character, b.end.line, b.end.character)


# -- rule documentation files ---------------------------------------------------------------------
def write_rule_docs() -> dict[str, str]:
    """Write each rule's Markdown documentation under the user cache; rule id -> file:// URI."""
    candidates = []
    if os.environ.get("XDG_CACHE_HOME"):
        candidates.append(Path(os.environ["XDG_CACHE_HOME"]) / "gradfix" / "rules")
    candidates.append(Path.home() / ".cache" / "gradfix" / "rules")
    candidates.append(Path(tempfile.gettempdir()) / f"gradfix-{os.getuid() if hasattr(os, 'getuid') else 'user'}" / "rules")
    for folder in candidates:
        try:
            folder.mkdir(parents=True, exist_ok=True)
            uris = {}
            for rid, rule in RULES_BY_ID.items():
                target = folder / f"{rid}.md"
                text = rule.documentation()
                if not target.is_file() or target.read_text(encoding="utf-8") != text:
                    tmp = target.with_suffix(f".md.{os.getpid()}.tmp")
                    tmp.write_text(text, encoding="utf-8")
                    os.replace(tmp, target)
                uris[rid] = target.resolve().as_uri()
            return uris
        except OSError as exc:
            log.warning("cannot write rule docs under %s: %s", folder, exc)
    return {}


# -- handlers -------------------------------------------------------------------------------------
def guarded(default: Any = None):
    """Log and swallow any exception of a handler (sync or async); answer `default`."""

    def wrap(fn):
        if asyncio.iscoroutinefunction(fn):
            @functools.wraps(fn)
            async def run_async(*args, **kwargs):
                try:
                    return await fn(*args, **kwargs)
                except asyncio.CancelledError:
                    raise
                except Exception:
                    log.exception("gradfix lsp: %s failed", fn.__name__)
                    return default() if callable(default) else default
            return run_async

        @functools.wraps(fn)
        def run_sync(*args, **kwargs):
            try:
                return fn(*args, **kwargs)
            except Exception:
                log.exception("gradfix lsp: %s failed", fn.__name__)
                return default() if callable(default) else default
        return run_sync

    return wrap
