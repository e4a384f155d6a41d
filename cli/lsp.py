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

This module holds the handlers and the server; `lsp_protocol` settings, positions and rule
docs; `lsp_documents` each document's analysis and its scheduling; `lsp_scopes` the reuse of
unchanged top-level statements' findings between edits; `lsp_verify` background verification;
`lsp_notebook` notebooks.
"""

from __future__ import annotations

import asyncio
import atexit
import gc
import logging
import os
import re
import sys
from collections import deque
from typing import Any

from lsprotocol import types as T
from pygls.lsp.server import LanguageServer

from gradfix import __version__
from gradfix.analysis.project import ProjectIndex
from gradfix.cli.lsp_documents import (  # noqa: F401 - re-exported for lsp_notebook and the tests
    Analysis, DocumentScheduler, DocumentScopes, Proposals, VerifyManager, _VerifyJob, _engine_thread, _fix_all, _lint,
    _lint_scopes, _proposals, _refresh_project)
from gradfix.cli.lsp_protocol import (  # noqa: F401 - re-exported
    ACCEPTED, DEFAULT_DEBOUNCE_S, FIX_ALL_KIND, GRADFIX_COMMENT, NOQA_COMMENT, SOURCE, SYNTAX_CODE, VERDICT_WORDS,
    Settings, _contains, _line, _units, from_position, guarded, lsp_edits, parse_settings, span_range, to_position,
    unwrap_settings, write_rule_docs)
from gradfix.codemods import RULES_BY_ID
from gradfix.config import Config
from gradfix.engine import Decision, Engine, Policy, policy_decider
from gradfix.incremental import IncrementalParser
from gradfix.model import Finding, Safety, Verdict

log = logging.getLogger("gradfix.lsp")


class GradfixServer(DocumentScheduler, LanguageServer):
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
