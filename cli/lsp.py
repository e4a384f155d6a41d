"""`gradfix lsp`: a language server on stdio (pygls 2 + lsprotocol).

The server is a front end like `check` and `apply`: it never matches, fixes or verifies
by itself, it calls the engine.

* Diagnostics come from `Engine.lint_source` on the unsaved buffer text: on open and
  save at once, on change after a per-URI debounce (0.3 s, `debounceMs`). They are
  pulled (`textDocument/diagnostic`) when the client supports it, pushed
  (`textDocument/publishDiagnostics`) otherwise.
* Quick fixes are minimal `TextEdit`s: `gradfix.textedits.text_edits` between the
  buffer and the text `Engine.proposals` returns for that finding alone; proposals are
  computed when an editor first asks for actions on a version (they cost a rewrite and
  a re-parse per finding, so they stay off the keystroke path).
* `source.fixAll.gradfix` is `Engine.fix_source` with `Policy()` (safe fixes only), or,
  with verification on, with the fixes whose verdict is known and accepted.
* Verification (off by default: it runs workspace code) uses one `gradfix.verify.Verifier`
  in a background thread; verdicts are cached by (uri, version, rule, line) and shown
  in the diagnostics and in the quick-fix titles as they arrive.

Every handler is wrapped: an exception is logged and answered with an empty result.
"""

from __future__ import annotations

import ast
import asyncio
import atexit
import dataclasses
import functools
import gc
import io
import logging
import os
import re
import sys
import tempfile
import threading
import time
import tokenize
import weakref
from collections import deque
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from lsprotocol import types as T
from pygls.lsp.server import LanguageServer
from pygls.uris import to_fs_path

from gradfix import __version__, suppression
from gradfix.codemods import ALL_RULES, RULES_BY_ID
from gradfix.discovery import is_excluded
from gradfix.config import Config, ConfigError, check_selector, find_pyproject, load_config
from gradfix.incremental import IncrementalParser
from gradfix.engine import APPLIED_VERDICTS, Decision, Engine, Policy, policy_decider
from gradfix.analysis.project import ProjectIndex, summarise
from gradfix.model import FileError, Finding, Safety, Verdict
from gradfix.textedits import text_edits
from gradfix.cli.lsp_scopes import ScopeCache

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


# -- analysis of one document version ---------------------------------------------------------------
@dataclass
class Analysis:
    uri: str
    version: int | None
    key: tuple                              # (engine key): settings generation + project config
    text: str
    path: str
    engine: Engine
    config: Config
    findings: list[Finding]
    errors: list[FileError]
    lines: list[str] = field(default_factory=list)
    proposals: asyncio.Future | None = None   # -> dict[(rule, span), after | None]
    _tokens: tuple | None = None

    def finding_at(self, rule: str, rng: T.Range, encoding: str) -> Finding | None:
        for f in self.findings:
            if f.rule == rule and _same_range(span_range(self.lines, f, encoding), rng):
                return f
        return None

    def tokens(self) -> tuple[dict[int, list[tuple[int, str]]], set[int]]:
        """(1-based line -> [(code-point column, comment text)], lines where a comment may be appended)."""
        if self._tokens is None:
            comments: dict[int, list[tuple[int, str]]] = {}
            ends: set[int] = set()
            try:
                for tok in tokenize.generate_tokens(io.StringIO(self.text).readline):
                    if tok.type == tokenize.COMMENT:
                        comments.setdefault(tok.start[0], []).append((tok.start[1], tok.string))
                        ends.add(tok.start[0])
                    elif tok.type in (tokenize.NEWLINE, tokenize.NL):
                        ends.add(tok.start[0])
            except (tokenize.TokenError, SyntaxError, ValueError):
                pass
            self._tokens = (comments, ends)
        return self._tokens


# -- verification in the background ------------------------------------------------------------
@dataclass
class _VerifyJob:
    uri: str
    version: int | None
    rule: str
    line: int
    request: Any


class VerifyManager:
    """One Verifier for the server's lifetime, driven by one daemon thread.

    Jobs for a document version that is no longer current are dropped before they run.
    A verifier that raises or does not answer in time is discarded and replaced; the
    job gets an `untestable` verdict that says so.
    """

    def __init__(self, timeout_s: float, is_current: Callable[[str, int | None], bool],
                 on_verdict: Callable[[str, int | None], None]):
        self.timeout_s = timeout_s
        self.is_current = is_current
        self.on_verdict = on_verdict
        self.verdicts: dict[tuple, tuple[str, str]] = {}
        self.pending: set[tuple] = set()
        self._jobs: deque[_VerifyJob] = deque()
        self._cv = threading.Condition()
        self._closed = False
        self._verifier = None
        self.unavailable: str | None = None
        # the verifier enforces its own per-check timeout; this only catches a verifier that hangs
        self.hang_guard_s = timeout_s * 3 + 240.0
        self._thread = threading.Thread(target=self._run, name="gradfix-verify", daemon=True)
        self._thread.start()

    @staticmethod
    def import_error() -> str | None:
        try:
            from gradfix.verify import Verifier, VerifyRequest  # noqa: F401
        except Exception as exc:  # a missing or broken package
            return f"{type(exc).__name__}: {exc}"
        return None

    def get(self, uri: str, version: int | None, rule: str, line: int) -> tuple[str, str] | None:
        return self.verdicts.get((uri, version, rule, line))

    def known(self, uri: str, version: int | None) -> dict[tuple[str, int], tuple[str, str]]:
        return {(k[2], k[3]): v for k, v in list(self.verdicts.items()) if k[0] == uri and k[1] == version}

    def submit(self, jobs: list[_VerifyJob]) -> None:
        with self._cv:
            for job in jobs:
                key = (job.uri, job.version, job.rule, job.line)
                if key in self.verdicts or key in self.pending:
                    continue
                self.pending.add(key)
                self._jobs.append(job)
            self._cv.notify()

    def forget(self, uri: str, keep_version: int | None = None) -> None:
        with self._cv:
            for key in [k for k in self.verdicts if k[0] == uri and k[1] != keep_version]:
                del self.verdicts[key]

    def close(self) -> None:
        with self._cv:
            self._closed = True
            self._jobs.clear()
            self._cv.notify()
        v, self._verifier = self._verifier, None
        if v is not None:
            _close_quietly(v)

    # -- the thread
    def _run(self) -> None:
        while True:
            with self._cv:
                while not self._jobs and not self._closed:
                    self._cv.wait()
                if self._closed:
                    return
                job = self._jobs.popleft()
            key = (job.uri, job.version, job.rule, job.line)
            try:
                if not self.is_current(job.uri, job.version):
                    continue
                verdict, detail = self._verify(job)
                self.verdicts[key] = (verdict, detail)
                self.on_verdict(job.uri, job.version)
            except Exception:  # never let the thread die
                log.exception("verification of %s:%s %s failed", job.uri, job.line, job.rule)
            finally:
                with self._cv:
                    self.pending.discard(key)

    def _verify(self, job: _VerifyJob) -> tuple[str, str]:
        if self.unavailable:
            return "untestable", f"verifier unavailable: {self.unavailable}"
        if self._verifier is None:
            try:
                from gradfix.verify import Verifier

                self._verifier = Verifier(jobs=1, timeout_s=self.timeout_s)
            except Exception as exc:
                self.unavailable = f"{type(exc).__name__}: {exc}"
                return "untestable", f"verifier unavailable: {self.unavailable}"
        verifier = self._verifier
        box: dict[str, Any] = {}

        def call() -> None:
            try:
                box["result"] = verifier.verify_many([job.request])
            except BaseException as exc:  # noqa: BLE001 - reported as a verdict
                box["error"] = exc

        worker = threading.Thread(target=call, name="gradfix-verify-call", daemon=True)
        worker.start()
        worker.join(self.hang_guard_s)
        if worker.is_alive() or "error" in box or not box.get("result"):
            self._verifier = None
            threading.Thread(target=_close_quietly, args=(verifier,), daemon=True).start()
            if worker.is_alive():
                return "untestable", "the verifier did not answer; it was restarted"
            err = box.get("error")
            return "untestable", f"the verifier crashed ({type(err).__name__}: {err}); it was restarted"
        res = box["result"][0]
        verdict = str(getattr(res, "verdict", "untestable"))
        if verdict not in VERDICT_WORDS:
            verdict = "untestable"
        return verdict, str(getattr(res, "detail", ""))


def _close_quietly(verifier) -> None:
    try:
        verifier.close()
    except Exception:
        pass


# -- the server -----------------------------------------------------------------------------------
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


class GradfixServer(LanguageServer):
    def __init__(self) -> None:
        from gradfix.cli.lsp_notebook import NOTEBOOK_SYNC

        super().__init__("gradfix", __version__, notebook_document_sync=NOTEBOOK_SYNC)
        self.settings = Settings()
        self.initial_settings: dict[str, Any] = {}
        self.settings_gen = 0
        self.pull = False
        self.refresh_support = False
        self.resolve_support = False
        self.document_changes = False
        self.config_support = False
        self.docs: dict[str, str] = {}
        self.analyses: dict[str, Analysis] = {}
        # per open document: reuses the libcst trees of unchanged top-level statements
        # (touched only from the single engine thread `self.fast`)
        self.parsers: dict[str, IncrementalParser] = {}
        # per open document: the findings of unchanged top-level statements (cli/lsp_scopes.py)
        self.scopes: dict[str, DocumentScopes] = {}
        self.inflight: dict[tuple, asyncio.Future] = {}
        self.timers: dict[str, asyncio.TimerHandle] = {}
        self.verify_timers: dict[str, asyncio.TimerHandle] = {}
        self.engine_cache: dict[tuple, tuple[Engine, Config]] = {}
        # the workspace's files as one project (analysis/project.py), filled per folder as
        # documents are opened and refreshed per edit in the engine thread
        self.project: ProjectIndex | None = None
        self.config_cache: dict[tuple, Config] = {}
        self.warned: set[str] = set()
        self.fast = _engine_thread("gradfix-lint")   # diagnostics: never queued behind rewrites
        self.slow = _engine_thread("gradfix-fix")    # proposals and fix-all (a rewrite per finding)
        self.loop: asyncio.AbstractEventLoop | None = None
        self.verify_manager: VerifyManager | None = None
        self.timings: deque[tuple[str, float]] = deque(maxlen=200)   # (what, seconds), for the benchmark

    # -- plumbing
    @property
    def encoding(self) -> str:
        try:
            return str(self.workspace.position_encoding or T.PositionEncodingKind.Utf16)
        except RuntimeError:
            return T.PositionEncodingKind.Utf16

    def warn(self, message: str, once: bool = True) -> None:
        if once:
            if message in self.warned:
                return
            self.warned.add(message)
        log.warning("%s", message)
        try:
            self.window_show_message(T.ShowMessageParams(type=T.MessageType.Warning, message=f"gradfix: {message}"))
        except Exception:
            pass

    def open_document(self, uri: str):
        try:
            docs = self.workspace.text_documents
        except RuntimeError:
            return None
        return docs.get(uri)

    def is_python(self, doc) -> bool:
        lang = (getattr(doc, "language_id", None) or "").lower()
        if lang == "python":
            return True
        return doc.uri.endswith((".py", ".pyi")) and lang in ("", "plaintext")

    def is_current(self, uri: str, version: int | None) -> bool:
        doc = self.open_document(uri)
        return doc is not None and doc.version == version

    def doc_path(self, uri: str) -> str:
        try:
            path = to_fs_path(uri)
        except Exception:
            path = None
        if path:
            return path
        root = None
        try:
            root = self.workspace.root_path
        except RuntimeError:
            pass
        return os.path.join(root or os.getcwd(), os.path.basename(uri) or "untitled.py")

    # -- configuration
    def engine_for(self, path: str) -> tuple[Engine, Config, tuple]:
        pyproject = find_pyproject(path)
        try:
            mtime = os.stat(pyproject).st_mtime_ns if pyproject else None
        except OSError:
            mtime = None
        key = (self.settings_gen, pyproject, mtime)
        hit = self.engine_cache.get(key)
        if hit is not None:
            return hit[0], hit[1], key
        base = self.config_cache.get((pyproject, mtime))
        if base is None:
            try:
                base = load_config(path, RULES_BY_ID)
            except ConfigError as exc:
                self.warn(f"{exc} (using the defaults)")
                base = Config(path=pyproject, root=os.path.dirname(pyproject) if pyproject else None)
            self.config_cache[(pyproject, mtime)] = base
        s = self.settings
        config = dataclasses.replace(
            base,
            select=list(s.select) if s.select is not None else (list(base.select) if base.select is not None else None),
            ignore=list(base.ignore) + list(s.ignore),
            exclude=list(base.exclude),
            rule_options={k: dict(v) for k, v in base.rule_options.items()},
        )
        for rid, opts in s.options().items():
            config.rule_options.setdefault(rid, {}).update(opts)
        try:
            engine = Engine(ALL_RULES, config)
        except (ValueError, TypeError) as exc:
            self.warn(f"{exc} (rule options ignored)")
            config.rule_options = {}
            engine = Engine(ALL_RULES, config)
        if self.project is None:
            self.project = ProjectIndex(self._workspace_root() or os.path.dirname(path) or os.getcwd())
        engine.project = self.project
        if len(self.engine_cache) > 32:
            self.engine_cache.clear()
        self.engine_cache[key] = (engine, config)
        return engine, config, key

    def excluded(self, path: str, config: Config) -> bool:
        if not config.exclude or not config.root:
            return False
        try:
            return is_excluded(path, config.exclude, config.root)
        except Exception:
            return False

    def apply_settings(self, raw: Any, initial: bool = False) -> bool:
        """Settings from initializationOptions (`initial`), didChangeConfiguration or
        workspace/configuration; later ones override the initial ones key by key."""
        section = unwrap_settings(raw)
        if section is None:
            return False
        if initial:
            self.initial_settings = dict(section)
        settings, warnings = parse_settings({**self.initial_settings, **section})
        for w in warnings:
            self.warn(w)
        if settings == self.settings:
            return False
        old = self.settings
        self.settings = settings
        self.settings_gen += 1
        self.engine_cache.clear()
        self.analyses.clear()
        if settings.verify and not old.verify:
            problem = VerifyManager.import_error()
            if problem is not None:
                self.warn(f"verification is on but gradfix.verify cannot be loaded ({problem}); fixes stay unverified")
        if self.verify_manager is not None and (not settings.verify or settings.verify_timeout_s != old.verify_timeout_s):
            self.verify_manager.close()
            self.verify_manager = None
        return True

    def verifier(self) -> VerifyManager | None:
        if not self.settings.verify:
            return None
        if self.verify_manager is None:
            self.verify_manager = VerifyManager(self.settings.verify_timeout_s, self.is_current, self._verdict_from_thread)
        return self.verify_manager

    # -- analysis
    async def analysis(self, uri: str) -> Analysis | None:
        """The analysis of the open document's current text (cached per version and settings)."""
        from gradfix.cli import lsp_notebook

        if lsp_notebook.notebook_of(self, uri) is not None:   # a notebook cell: the notebook is analysed
            return await lsp_notebook.cell_analysis(self, uri)
        doc = self.open_document(uri)
        if doc is None or not self.is_python(doc):
            return None
        text, version = doc.source, doc.version
        path = self.doc_path(uri)
        engine, config, key = self.engine_for(path)
        cached = self.analyses.get(uri)
        if cached is not None and cached.version == version and cached.key == key and cached.text == text:
            return cached
        flight = (uri, version, key)
        fut = self.inflight.get(flight)
        if fut is None:
            excluded = self.excluded(path, config)
            loop = asyncio.get_running_loop()
            parser = self.parsers.setdefault(uri, IncrementalParser())
            scopes = self.scopes.setdefault(uri, DocumentScopes())
            fut = loop.run_in_executor(self.fast, _lint, engine, text, path, excluded, self.timings, parser, scopes)
            self.inflight[flight] = fut
            fut.add_done_callback(lambda _f: self.inflight.pop(flight, None))
        findings, errors = await asyncio.shield(fut)
        result = Analysis(uri, version, key, text, path, engine, config, findings, errors, text.split("\n"))
        if self.is_current(uri, version):
            old = self.analyses.get(uri)
            if old is None or old.version != version or old.key != key:
                self.analyses[uri] = result
            else:
                result = old
        return result

    async def proposals(self, a: Analysis) -> dict[tuple, str | None]:
        """(rule, span) -> the text after that fix alone; {} when the version went stale first."""
        from gradfix.cli import lsp_notebook

        if isinstance(a, lsp_notebook.CellAnalysis):
            return await lsp_notebook.cell_proposals(self, a)
        if a.proposals is None:
            loop = asyncio.get_running_loop()
            wanted = functools.partial(self.is_current, a.uri, a.version)
            a.proposals = loop.run_in_executor(self.slow, _proposals, a.engine, a.text, a.path, wanted)
        result = await asyncio.shield(a.proposals)
        if result is None:
            a.proposals = None
            return {}
        return result

    # -- diagnostics
    def diagnostics(self, a: Analysis) -> list[T.Diagnostic]:
        enc = self.encoding
        out: list[T.Diagnostic] = []
        if a.errors:
            e = a.errors[0]     # one syntax diagnostic: the first error is the one to fix
            line0 = max((e.line or 1) - 1, 0)
            text = _line(a.lines, line0)
            out.append(T.Diagnostic(
                range=T.Range(start=T.Position(line=line0, character=0),
                              end=T.Position(line=line0, character=_units(text, enc))),
                message=e.message, severity=T.DiagnosticSeverity.Error, code=SYNTAX_CODE, source=SOURCE))
            return out
        vm = self.verify_manager if self.settings.verify else None
        for f in a.findings:
            fix_data = None
            message = f.message
            if f.fix is not None:
                verdict = vm.get(a.uri, a.version, f.rule, f.span.line) if vm else None
                fix_data = {"title": self.fix_title(f, verdict), "safety": f.fix.safety.value,
                            "isPreferred": self.preferred(f, verdict),
                            "verdict": verdict[0] if verdict else None}
                if verdict:
                    message += f"\n\nfix {VERDICT_WORDS.get(verdict[0], verdict[0])}" + (f": {verdict[1]}" if verdict[1] else "")
            href = self.docs.get(f.rule)
            out.append(T.Diagnostic(
                range=span_range(a.lines, f, enc), message=message, severity=T.DiagnosticSeverity.Warning,
                code=f.rule, code_description=T.CodeDescription(href=href) if href else None, source=SOURCE,
                data={"rule": f.rule, "name": f.name, "line": f.span.line, "version": a.version, "fix": fix_data}))
        return out

    def fix_title(self, f: Finding, verdict: tuple[str, str] | None) -> str:
        title = f"gradfix ({f.rule}): {f.fix.description}"
        if verdict is not None:
            return f"{title} — {VERDICT_WORDS.get(verdict[0], verdict[0])}"
        if not self.settings.verify and f.fix.safety is not Safety.SAFE:
            return f"{title} (unsafe)"
        return title

    def preferred(self, f: Finding, verdict: tuple[str, str] | None) -> bool:
        if self.settings.verify:
            return verdict is not None and verdict[0] in ACCEPTED
        return f.fix is not None and f.fix.safety is Safety.SAFE

    def result_id(self, a: Analysis) -> str:
        vm = self.verify_manager if self.settings.verify else None
        n = len(vm.known(a.uri, a.version)) if vm else 0
        return f"{a.version}:{self.settings_gen}:{hash(a.key) & 0xffffff:x}:{n}"

    def schedule(self, uri: str, delay: float) -> None:
        """(Re)start the per-URI timer; when it fires, lint and (push mode) publish."""
        old = self.timers.pop(uri, None)
        if old is not None:
            old.cancel()
        loop = self.loop or asyncio.get_running_loop()
        if self.pull:
            # the client pulls; only verification needs a nudge
            self.timers[uri] = loop.call_later(delay, lambda: self._spawn(self._after_change(uri)))
            return
        self.timers[uri] = loop.call_later(delay, lambda: self._spawn(self.publish(uri)))

    def _spawn(self, coro) -> None:
        task = asyncio.ensure_future(coro)
        task.add_done_callback(_log_task_error)

    async def publish(self, uri: str) -> None:
        self.timers.pop(uri, None)
        a = await self.analysis(uri)
        if a is None or not self.is_current(uri, a.version):
            return
        self.text_document_publish_diagnostics(
            T.PublishDiagnosticsParams(uri=uri, diagnostics=self.diagnostics(a), version=a.version))
        self.schedule_verification(uri)

    async def _after_change(self, uri: str) -> None:
        self.timers.pop(uri, None)
        self.schedule_verification(uri)

    # -- verification
    def schedule_verification(self, uri: str) -> None:
        if not self.settings.verify:
            return
        old = self.verify_timers.pop(uri, None)
        if old is not None:
            old.cancel()
        loop = self.loop or asyncio.get_running_loop()
        self.verify_timers[uri] = loop.call_later(VERIFY_IDLE_S, lambda: self._spawn(self._verify_document(uri)))

    async def _verify_document(self, uri: str) -> None:
        self.verify_timers.pop(uri, None)
        vm = self.verifier()
        if vm is None:
            return
        a = await self.analysis(uri)
        if a is None or a.errors or not any(f.fixable for f in a.findings) or not self.is_current(uri, a.version):
            return
        from gradfix.cli import lsp_notebook

        if isinstance(a, lsp_notebook.CellAnalysis):
            return      # cells are not verified in the editor (the cell text alone is not the module)
        after = await self.proposals(a)
        if not self.is_current(uri, a.version):
            return
        from gradfix.verify import VerifyRequest

        root = a.config.root or self._workspace_root() or os.path.dirname(a.path)
        jobs = []
        for f in a.findings:
            new = after.get((f.rule, f.span))
            contract = getattr(after, "contracts", {}).get((f.rule, f.span))
            if f.fix is None or new is None or contract is None:
                continue
            req = VerifyRequest(path=a.path, original=a.text, rewritten=new, rule=f.rule, line=f.span.line,
                                contract=contract, project_root=root)
            jobs.append(_VerifyJob(uri, a.version, f.rule, f.span.line, req))
        vm.forget(uri, keep_version=a.version)
        vm.submit(jobs)

    def _workspace_root(self) -> str | None:
        try:
            return self.workspace.root_path
        except RuntimeError:
            return None

    def _verdict_from_thread(self, uri: str, version: int | None) -> None:
        loop = self.loop
        if loop is None or loop.is_closed():
            return
        try:
            loop.call_soon_threadsafe(lambda: self._spawn(self._on_verdict(uri, version)))
        except RuntimeError:
            pass

    async def _on_verdict(self, uri: str, version: int | None) -> None:
        if not self.is_current(uri, version):
            return
        if not self.pull:
            await self.publish_now(uri)
        elif self.refresh_support:
            self.workspace_diagnostic_refresh(None)

    async def publish_now(self, uri: str) -> None:
        a = await self.analysis(uri)
        if a is not None and self.is_current(uri, a.version):
            self.text_document_publish_diagnostics(
                T.PublishDiagnosticsParams(uri=uri, diagnostics=self.diagnostics(a), version=a.version))

    # -- code actions
    async def code_actions(self, params: T.CodeActionParams) -> list[T.CodeAction]:
        uri = params.text_document.uri
        a = await self.analysis(uri)
        if a is None:
            return []
        only = [str(getattr(o, "value", o)) for o in params.context.only] if params.context.only else None

        def wanted(kind: Any) -> bool:
            kind = str(getattr(kind, "value", kind))
            return only is None or any(kind == o or kind.startswith(o + ".") for o in only)

        enc = self.encoding
        vm = self.verify_manager if self.settings.verify else None
        fixes: list[T.CodeAction] = []
        ignores: list[T.CodeAction] = []
        seen_ignores: set[tuple[str, int]] = set()
        after: dict | None = None
        for diag in params.context.diagnostics or []:
            if diag.source != SOURCE or not isinstance(diag.code, str) or diag.code == SYNTAX_CODE:
                continue
            f = a.finding_at(diag.code, diag.range, enc)
            if f is None:
                continue
            if f.fix is not None and wanted(T.CodeActionKind.QuickFix):
                if after is None:
                    after = await self.proposals(a)
                    if not self.is_current(uri, a.version):
                        return []
                new = after.get((f.rule, f.span))
                if new is not None:
                    verdict = vm.get(uri, a.version, f.rule, f.span.line) if vm else None
                    edits = lsp_edits(a.text, new, enc)
                    if edits:
                        fixes.append(T.CodeAction(
                            title=self.fix_title(f, verdict), kind=T.CodeActionKind.QuickFix, diagnostics=[diag],
                            is_preferred=self.preferred(f, verdict), edit=self.workspace_edit(uri, a.version, edits)))
            if self.settings.disable_rule_comment and wanted(T.CodeActionKind.QuickFix) \
                    and (f.rule, f.span.line) not in seen_ignores:
                edit = self.ignore_edit(a, f)
                if edit is not None:
                    seen_ignores.add((f.rule, f.span.line))
                    ignores.append(T.CodeAction(
                        title=f"gradfix: ignore {f.rule} on this line", kind=T.CodeActionKind.QuickFix,
                        diagnostics=[diag], edit=self.workspace_edit(uri, a.version, [edit])))
        actions = fixes + ignores
        if wanted(FIX_ALL_KIND) and self.fix_all_possible(a):
            action = T.CodeAction(title="gradfix: fix all", kind=FIX_ALL_KIND,
                                  data={"uri": uri, "version": a.version, "kind": "fixAll"})
            if not self.resolve_support:
                action = await self.resolve_fix_all(action)
            if action is not None:
                actions.append(action)
        return actions

    def workspace_edit(self, uri: str, version: int | None, edits: list[T.TextEdit]) -> T.WorkspaceEdit:
        if self.document_changes:
            return T.WorkspaceEdit(document_changes=[T.TextDocumentEdit(
                text_document=T.OptionalVersionedTextDocumentIdentifier(uri=uri, version=version), edits=edits)])
        return T.WorkspaceEdit(changes={uri: edits})

    def ignore_edit(self, a: Analysis, f: Finding) -> T.TextEdit | None:
        """`  # gradfix: ignore[CODE]` at the end of the finding's line (or its last line), or CODE
        added to an existing `# gradfix: ignore[...]` there."""
        comments, ends = a.tokens()
        enc = self.encoding
        for line in dict.fromkeys((f.span.line, f.span.end_line)):
            if line not in ends:
                continue   # the line ends inside a string or with a backslash
            for col, comment in comments.get(line, []):
                m = GRADFIX_COMMENT.search(comment)
                if m and m.group("codes") is not None:
                    codes = m.group("codes")
                    insert = col + m.start("codes") + len(codes.rstrip())
                    pos = to_position(a.lines, line - 1, insert, enc)
                    return T.TextEdit(range=T.Range(start=pos, end=pos),
                                      new_text=(", " if codes.strip() else "") + f.rule)
            raw = _line(a.lines, line - 1)
            stripped = raw.rstrip(" \t")
            pos = to_position(a.lines, line - 1, len(stripped), enc)
            end = to_position(a.lines, line - 1, len(raw), enc)
            return T.TextEdit(range=T.Range(start=pos, end=end), new_text=f"  # gradfix: ignore[{f.rule}]")
        return None

    def fix_all_possible(self, a: Analysis) -> bool:
        from gradfix.cli import lsp_notebook

        if a.errors or isinstance(a, lsp_notebook.CellAnalysis):   # no fix-all in notebooks (yet)
            return False
        if self.settings.verify:
            vm = self.verify_manager
            if vm is None:
                return False
            known = vm.known(a.uri, a.version)
            return any(f.fix is not None and known.get((f.rule, f.span.line), ("",))[0] in ACCEPTED for f in a.findings)
        return any(f.fix is not None and f.fix.safety is Safety.SAFE for f in a.findings)

    async def resolve_fix_all(self, action: T.CodeAction) -> T.CodeAction | None:
        data = action.data if isinstance(action.data, dict) else {}
        uri = data.get("uri")
        if not isinstance(uri, str):
            return action
        a = await self.analysis(uri)
        if a is None:
            return action
        decide = self.fix_all_decider(a)
        loop = asyncio.get_running_loop()
        fixed = await loop.run_in_executor(self.slow, _fix_all, a.engine, a.text, a.path, decide)
        if fixed is None or fixed == a.text:
            if not self.resolve_support:
                return None
            action.edit = T.WorkspaceEdit(changes={})
            return action
        action.edit = self.workspace_edit(uri, a.version, lsp_edits(a.text, fixed, self.encoding))
        return action

    def fix_all_decider(self, a: Analysis):
        if not self.settings.verify:
            return policy_decider(Policy())
        vm = self.verify_manager
        known = vm.known(a.uri, a.version) if vm is not None else {}
        policy = Policy()

        def decide(changes):
            flags = []
            for c in changes:
                v = known.get((c.rule, c.line))
                if v is None:
                    c.reason = "not verified yet"
                    flags.append(False)
                    continue
                c.verdict, c.detail = Verdict(v[0]), v[1]
                ok, reason = policy.accepts(c)
                c.reason = reason
                flags.append(ok)
            return Decision(flags)

        return decide

    # -- hover
    async def hover(self, params: T.HoverParams) -> T.Hover | None:
        uri = params.text_document.uri
        a = await self.analysis(uri)
        if a is None:
            return None
        enc = self.encoding
        pos = params.position
        # a code inside a suppression comment
        line0, col = from_position(a.lines, pos, enc)
        comments, _ = a.tokens()
        for ccol, comment in comments.get(line0 + 1, []):
            for pattern in (GRADFIX_COMMENT, NOQA_COMMENT):
                for m in pattern.finditer(comment):
                    if m.group("codes") is None:
                        continue
                    base = ccol + m.start("codes")
                    for c in re.finditer(r"[A-Za-z]+[0-9]+", m.group("codes")):
                        start, end = base + c.start(), base + c.end()
                        rule = RULES_BY_ID.get(c.group().upper())
                        if rule is not None and start <= col <= end:
                            return T.Hover(
                                contents=T.MarkupContent(kind=T.MarkupKind.Markdown, value=rule.documentation()),
                                range=T.Range(start=to_position(a.lines, line0, start, enc),
                                              end=to_position(a.lines, line0, end, enc)))
        # a diagnostic's range
        hits = [f for f in a.findings if _contains(span_range(a.lines, f, enc), pos)]
        if not hits:
            return None
        rules = list(dict.fromkeys(f.rule for f in hits))
        text = "\n\n---\n\n".join(RULES_BY_ID[r].documentation() for r in rules if r in RULES_BY_ID)
        return T.Hover(contents=T.MarkupContent(kind=T.MarkupKind.Markdown, value=text),
                       range=span_range(a.lines, hits[0], enc))

    async def pull_configuration(self, relint: bool = True) -> bool:
        """Ask the client for the `gradfix` section (workspace/configuration)."""
        try:
            result = await asyncio.wait_for(
                self.workspace_configuration_async(T.ConfigurationParams(items=[T.ConfigurationItem(section="gradfix")])),
                timeout=10.0)
        except Exception:
            return False
        if not result or not isinstance(result[0], dict) or not result[0]:
            return False
        changed = self.apply_settings(result[0])
        if changed and relint:
            self.relint_all()
        return changed

    def relint_all(self) -> None:
        try:
            uris = list(self.workspace.text_documents)
        except RuntimeError:
            return
        if self.pull:
            if self.refresh_support:
                self.workspace_diagnostic_refresh(None)
            for uri in uris:
                self.schedule_verification(uri)
            return
        for uri in uris:
            self.schedule(uri, 0.0)

    def debug_info(self) -> dict:
        lint = [t for what, t in self.timings if what == "lint"]      # oldest first, the last 200
        ordered = sorted(lint)
        return {
            "version": __version__, "mode": "pull" if self.pull else "push", "encoding": self.encoding,
            "settings": dataclasses.asdict(self.settings), "documents": sorted(self.analyses),
            "lint_s": lint, "lint_median_s": ordered[len(ordered) // 2] if ordered else None,
            **_memory(),
        }

    def stop(self) -> None:
        for handle in list(self.timers.values()) + list(self.verify_timers.values()):
            handle.cancel()
        if self.verify_manager is not None:
            self.verify_manager.close()
            self.verify_manager = None
        for pool in (self.fast, self.slow):
            pool.shutdown(wait=False, cancel_futures=True)


def _memory() -> dict:
    """The server's resident memory now and at its peak, in MiB (Linux; None elsewhere)."""
    rss = peak = None
    try:
        with open("/proc/self/statm", encoding="ascii") as f:
            rss = int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20
    except (OSError, ValueError, IndexError, AttributeError):
        pass
    try:
        import resource

        peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # KiB on Linux
    except (ImportError, OSError):
        pass
    return {"rss_mib": rss, "max_rss_mib": peak}


def _engine_thread(name: str) -> ThreadPoolExecutor:
    """The one thread that runs the engine, with a large stack (virtual memory: pages are
    only used when touched) so deep libcst recursion raises instead of overflowing."""
    pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix=name)
    previous = threading.stack_size()
    try:
        threading.stack_size(ENGINE_STACK_BYTES)
        pool.submit(lambda: None).result()      # the thread is created now, with this stack size
    except (ValueError, RuntimeError):
        pass
    finally:
        try:
            threading.stack_size(previous)
        except (ValueError, RuntimeError):
            pass
    return pool


def _log_task_error(task: asyncio.Future) -> None:
    if task.cancelled():
        return
    exc = task.exception()
    if exc is not None:
        log.error("gradfix lsp: background task failed", exc_info=exc)


# -- engine calls (run in the engine thread) ---------------------------------------------------
def _lint(engine: Engine, text: str, path: str, excluded: bool, timings,
          parser: IncrementalParser | None = None, scopes: DocumentScopes | None = None) -> tuple[list[Finding], list[FileError]]:
    """The document's findings. With `scopes` (a Python document's), only the components of
    top-level statements an edit touched are analysed again (cli/lsp_scopes.py)."""
    if excluded:
        return [], []
    t0 = time.perf_counter()
    try:
        if scopes is not None:
            findings, errors = _lint_scopes(engine, text, path, parser, scopes)
        else:
            if engine.project is not None:
                _refresh_project(engine.project, path, text)
            # the engine parses with CPython's parser first (libcst's native one crashes on deep nesting)
            findings, errors = engine.lint_source(text, path, incremental=parser)
    except RecursionError:
        return [], [FileError(path, None, "file too deeply nested to analyse")]
    except Exception as exc:
        log.exception("gradfix lsp: analysing %s failed", path)
        return [], [FileError(path, None, f"gradfix internal error: {type(exc).__name__}: {exc}")]
    timings.append(("lint", time.perf_counter() - t0))
    return findings, errors


@dataclass
class DocumentScopes:
    """Per open document: the findings of its units between versions, and the parser of the
    texts with unchanged units blanked out (touched only from the engine thread)."""

    cache: ScopeCache = field(default_factory=ScopeCache)
    parser: IncrementalParser = field(default_factory=IncrementalParser)
    key: tuple | None = None


def _lint_scopes(engine: Engine, text: str, path: str, parser: IncrementalParser | None,
                 scopes: DocumentScopes) -> tuple[list[Finding], list[FileError]]:
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        tree = None
    key: tuple = (engine,)
    project = engine.project
    if project is not None:
        project.load_folder(os.path.dirname(os.path.abspath(path)))
        pending = _flush_pending(project, keep=os.path.abspath(path))
        if scopes.key is not None and scopes.key[0] is engine and \
                scopes.cache.summary_unchanged(text, tree, functools.partial(_unit_signature, project.root)):
            # what this file's own analysis reads of its summary is unchanged: summarising it
            # (a walk of the whole file) waits until another document is analysed
            pending[os.path.abspath(path)] = (text, tree)
        else:
            pending.pop(os.path.abspath(path), None)
            project.update(path, text, tree)
        # what the file's findings read from the other files
        key = (engine, project.fingerprint(path))
    if key != scopes.key:
        scopes.cache.forget()
        scopes.key = key
    return scopes.cache.lint(text, tree, lambda: engine.lint_source(text, path, incremental=parser),
                             lambda reduced: engine.lint_source(reduced, path, incremental=scopes.parser))


@functools.lru_cache(maxsize=256)
def _unit_signature(root: str, unit: str) -> tuple | None:
    """What the project index keeps of one top-level statement besides its calls (its classes'
    bases as written, their methods and whether they create state; its functions)."""
    s = summarise(os.path.join(root, "unit.py"), unit, root)
    if s is None:
        return None
    return (sorted(s.classes.items()), sorted(s.functions), sorted(s.stateless))


# per project index: the documents whose summary update was put off (path -> text, CPython tree)
_PENDING: "weakref.WeakKeyDictionary[ProjectIndex, dict[str, tuple[str, ast.Module | None]]]" = \
    weakref.WeakKeyDictionary()


def _flush_pending(project: ProjectIndex, keep: str | None = None) -> dict:
    """Bring the index up to date with every document but `keep` (engine thread only)."""
    pending = _PENDING.setdefault(project, {})
    for other in [p for p in pending if p != keep]:
        other_text, other_tree = pending.pop(other)
        project.update(other, other_text, other_tree)
    return pending


def _refresh_project(project: ProjectIndex, path: str, text: str) -> None:
    """The edited document's summary, and on the first document of a folder its sibling files
    (what a script imports as `from models import Net`)."""
    project.load_folder(os.path.dirname(os.path.abspath(path)))
    _flush_pending(project)
    project.update(path, text)


class Proposals(dict):
    """(rule, span) -> the text after that fix alone, with the fix contracts of that same
    whole-file analysis (a finding reused per scope may carry a contract made on a text with
    other statements blanked out: the verifier is always given the whole file's)."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.contracts: dict[tuple, dict] = {}


def _proposals(engine: Engine, text: str, path: str, wanted: Callable[[], bool]) -> Proposals | None:
    if not wanted():
        return None
    try:
        items, _errors = engine.proposals(text, path)
    except Exception:
        log.exception("gradfix lsp: proposals for %s failed", path)
        return Proposals()
    out = Proposals({(f.rule, f.span): after for f, after in items})
    out.contracts = {(f.rule, f.span): dict(f.fix.contract) for f, _after in items if f.fix is not None}
    return out


def _fix_all(engine: Engine, text: str, path: str, decide) -> str | None:
    try:
        return engine.fix_source(text, path, decide).fixed
    except Exception:
        log.exception("gradfix lsp: fix all for %s failed", path)
        return None


# -- wiring -----------------------------------------------------------------------------------
def build_server() -> GradfixServer:
    server = GradfixServer()
    from gradfix.cli import lsp_notebook

    lsp_notebook.register(server)

    @server.feature(T.INITIALIZE)
    @guarded()
    def initialize(ls: GradfixServer, params: T.InitializeParams):
        ls.loop = asyncio.get_running_loop()
        caps = params.capabilities
        td = caps.text_document
        ws = caps.workspace
        ls.pull = bool(td and td.diagnostic is not None)
        ls.refresh_support = bool(ws and ws.diagnostics and ws.diagnostics.refresh_support)
        ls.resolve_support = bool(td and td.code_action and td.code_action.resolve_support
                                  and "edit" in (td.code_action.resolve_support.properties or []))
        ls.document_changes = bool(ws and ws.workspace_edit and ws.workspace_edit.document_changes)
        ls.config_support = bool(ws and ws.configuration)
        ls.docs = write_rule_docs()
        if params.initialization_options is not None:
            ls.apply_settings(params.initialization_options, initial=True)
        if ls.pull:
            @ls.feature(T.TEXT_DOCUMENT_DIAGNOSTIC,
                        T.DiagnosticOptions(identifier="gradfix", inter_file_dependencies=False,
                                            workspace_diagnostics=False))
            @guarded(default=lambda: T.RelatedFullDocumentDiagnosticReport(items=[]))
            async def diagnostic(ls: GradfixServer, params: T.DocumentDiagnosticParams):
                a = await ls.analysis(params.text_document.uri)
                if a is None:
                    return T.RelatedFullDocumentDiagnosticReport(items=[])
                rid = ls.result_id(a)
                if params.previous_result_id == rid:
                    return T.RelatedUnchangedDocumentDiagnosticReport(result_id=rid)
                ls.schedule_verification(a.uri)
                return T.RelatedFullDocumentDiagnosticReport(items=ls.diagnostics(a), result_id=rid)

    @server.feature(T.INITIALIZED)
    @guarded()
    async def initialized(ls: GradfixServer, params: T.InitializedParams):
        if not ls.config_support:
            return
        await ls.pull_configuration()

    @server.feature(T.WORKSPACE_DID_CHANGE_CONFIGURATION)
    @guarded()
    async def did_change_configuration(ls: GradfixServer, params: T.DidChangeConfigurationParams):
        raw = params.settings
        if unwrap_settings(raw) is not None:
            changed = ls.apply_settings(raw)
        else:   # `null`, `{}` or other tools' sections: ask for ours
            changed = await ls.pull_configuration(relint=False)
        if changed:
            ls.relint_all()

    @server.feature(T.TEXT_DOCUMENT_DID_OPEN)
    @guarded()
    def did_open(ls: GradfixServer, params: T.DidOpenTextDocumentParams):
        ls.schedule(params.text_document.uri, 0.0)

    @server.feature(T.TEXT_DOCUMENT_DID_CHANGE)
    @guarded()
    def did_change(ls: GradfixServer, params: T.DidChangeTextDocumentParams):
        ls.schedule(params.text_document.uri, ls.settings.debounce_s)

    @server.feature(T.TEXT_DOCUMENT_DID_SAVE, T.SaveOptions(include_text=False))
    @guarded()
    def did_save(ls: GradfixServer, params: T.DidSaveTextDocumentParams):
        ls.config_cache.clear()     # a saved pyproject.toml is picked up through its mtime anyway
        ls.schedule(params.text_document.uri, 0.0)

    @server.feature(T.TEXT_DOCUMENT_DID_CLOSE)
    @guarded()
    def did_close(ls: GradfixServer, params: T.DidCloseTextDocumentParams):
        uri = params.text_document.uri
        for table in (ls.timers, ls.verify_timers):
            handle = table.pop(uri, None)
            if handle is not None:
                handle.cancel()
        ls.analyses.pop(uri, None)
        ls.parsers.pop(uri, None)
        ls.scopes.pop(uri, None)
        if ls.verify_manager is not None:
            ls.verify_manager.forget(uri)
        if not ls.pull:
            ls.text_document_publish_diagnostics(T.PublishDiagnosticsParams(uri=uri, diagnostics=[]))

    @server.feature(T.TEXT_DOCUMENT_CODE_ACTION,
                    T.CodeActionOptions(code_action_kinds=[T.CodeActionKind.QuickFix, T.CodeActionKind.SourceFixAll,
                                                           FIX_ALL_KIND], resolve_provider=True))
    @guarded(default=list)
    async def code_action(ls: GradfixServer, params: T.CodeActionParams):
        return await ls.code_actions(params)

    @server.feature(T.CODE_ACTION_RESOLVE)
    async def code_action_resolve(ls: GradfixServer, params: T.CodeAction):
        try:
            if isinstance(params.data, dict) and params.data.get("kind") == "fixAll":
                return await ls.resolve_fix_all(params) or params
        except Exception:
            log.exception("gradfix lsp: codeAction/resolve failed")
        return params

    @server.feature(T.TEXT_DOCUMENT_HOVER)
    @guarded()
    async def hover(ls: GradfixServer, params: T.HoverParams):
        return await ls.hover(params)

    @server.command("gradfix.debugInfo")
    @guarded()
    def debug_info(ls: GradfixServer, *args):
        return ls.debug_info()

    @server.feature(T.SHUTDOWN)
    @guarded()
    def shutdown(ls: GradfixServer, params: None):
        ls.stop()

    return server


def serve() -> None:
    logging.basicConfig(stream=sys.stderr, level=os.environ.get("GRADFIX_LSP_LOG", "WARNING").upper(),
                        format="gradfix-lsp %(levelname)s %(name)s: %(message)s")
    server = build_server()
    atexit.register(server.stop)
    # A long-lived process holding syntax trees: keep start-up objects out of every
    # collection and collect the young generation less often (full collections of a
    # 2,000-line document's trees were the slow tail of the edit latency).
    gc.collect()
    gc.freeze()
    gc.set_threshold(50000, 50, 1000)
    server.start_io()
