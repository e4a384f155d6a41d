"""`gradfix lsp`, the documents' side: the analysis of each open document version (run on the
engine thread, with per-scope reuse between edits), its scheduling after changes, and the
verification of fixes in the background. The protocol handlers are in cli/lsp.py."""

from __future__ import annotations

import ast
import asyncio
import dataclasses
import functools
import io
import logging
import os
import threading
import time
import tokenize
import weakref
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field

from lsprotocol import types as T
from pygls.uris import to_fs_path

from gradfix import __version__
from gradfix.analysis.project import ProjectIndex
from gradfix.analysis.summary import summarise
from gradfix.cli.lsp_protocol import ENGINE_STACK_BYTES, VERIFY_IDLE_S, _same_range, span_range
from gradfix.cli.lsp_scopes import ScopeCache
from gradfix.cli.lsp_verify import VerifyManager, _VerifyJob
from gradfix.codemods import ALL_RULES, RULES_BY_ID
from gradfix.config import Config, ConfigError, find_pyproject, load_config
from gradfix.discovery import is_excluded
from gradfix.engine import Engine
from gradfix.incremental import IncrementalParser
from gradfix.model import FileError, Finding

log = logging.getLogger("gradfix.lsp")


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


# -- analysis and its scheduling (the server's document side) ------------------------------------------
class DocumentScheduler:
    """The GradfixServer methods that keep each open document's analysis current: which engine
    and configuration a path gets, the analysis per version, the per-URI debounce, publishing,
    and verification. Mixed into GradfixServer (cli/lsp.py), whose __init__ sets the state."""

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
                base = load_config(path, RULES_BY_ID, pyproject=pyproject)
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

    def verifier(self) -> VerifyManager | None:
        if not self.settings.verify:
            return None
        if self.verify_manager is None:
            self.verify_manager = VerifyManager(self.settings.verify_timeout_s, self.is_current, self._verdict_from_thread)
        return self.verify_manager

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
        return await self.proposals_of(a, a.text) or {}

    async def proposals_of(self, a: Analysis, text: str) -> dict[tuple, str | None] | None:
        """The fixes of `text` (the document, or a notebook's joined cells), computed once per version in the
        slow executor; None when the version went stale first (the next request computes them again)."""
        if a.proposals is None:
            loop = asyncio.get_running_loop()
            wanted = functools.partial(self.is_current, a.uri, a.version)
            a.proposals = loop.run_in_executor(self.slow, _proposals, a.engine, text, a.path, wanted)
        result = await asyncio.shield(a.proposals)
        if result is None:
            a.proposals = None
        return result

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
            "scope_modes": {uri: dict(s.modes) for uri, s in self.scopes.items()},
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
    modes: dict[str, int] = field(default_factory=dict)    # full / partial / reused: how many versions


def _lint_scopes(engine: Engine, text: str, path: str, parser: IncrementalParser | None,
                 scopes: DocumentScopes) -> tuple[list[Finding], list[FileError]]:
    units = scopes.cache.split(text)       # None: a syntax error (the engine reports it)
    key: tuple = (engine,)
    project = engine.project
    if project is not None:
        project.load_folder(os.path.dirname(os.path.abspath(path)))
        pending = _flush_pending(project, keep=os.path.abspath(path))
        if scopes.key is not None and scopes.key[0] is engine and \
                scopes.cache.summary_unchanged(units, functools.partial(_unit_signature, project.root,
                                                                        _import_lines(units)),
                                               lambda module: not project.names_module(module)):
            # what this file's own analysis reads of its summary is unchanged: summarising it
            # (a walk of the whole file) waits until another document is analysed
            pending[os.path.abspath(path)] = (text, None)
        else:
            pending.pop(os.path.abspath(path), None)
            project.update(path, text, scopes.cache.tree)
        # what the file's findings read from the other files
        key = (engine, project.fingerprint(path))
    if key != scopes.key:
        scopes.cache.forget()
        scopes.key = key
    scopes.parser.donor = parser      # the whole text's trees of units not analysed since it was parsed
    result = scopes.cache.lint(text, units, lambda: engine.lint_source(text, path, incremental=parser),
                               lambda reduced: engine.lint_source(reduced, path, incremental=scopes.parser))
    scopes.modes[scopes.cache.last] = scopes.modes.get(scopes.cache.last, 0) + 1
    return result


def _import_lines(units) -> str | None:
    """The document's import units, as text: the context a unit's names are qualified in
    (`nn.Softmax` is `torch.nn.Softmax` only with the file's `from torch import nn`). None when
    an import sits in a unit with other code (a `try:` block, a function): not collected."""
    if units is None or any(u.facts.has_import and not u.facts.only_imports for u in units):
        return None
    return "".join(u.text if u.text.endswith("\n") else u.text + "\n" for u in units if u.facts.only_imports)


def _unit_signature(root: str, imports: str | None, unit: str) -> object:
    """What the project index keeps of one top-level statement besides its calls (its classes'
    bases as written, their methods and whether they create state; its functions; what its
    functions and forward return, analysis/returns.py, read with the file's imports). Without
    the imports, a value equal to no other (never cached): the summary is not taken to be unchanged."""
    return object() if imports is None else _signature_with_imports(root, imports, unit)


@functools.lru_cache(maxsize=256)
def _signature_with_imports(root: str, imports: str, unit: str) -> object:
    s = summarise(os.path.join(root, "unit.py"), imports + unit, root)
    if s is None:
        return None
    return (sorted(s.classes.items()), sorted(s.functions), sorted(s.stateless), s.returned_facts())


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
