"""End-to-end tests of `gradfix lsp`: a real LSP client (pytest-lsp) drives the server over stdio.

Push mode runs with VS Code 1.65's capabilities (no pull diagnostics, UTF-16, versioned
document edits); pull mode with Neovim 0.11's (pull diagnostics, UTF-8 positions).
"""

from __future__ import annotations

import asyncio
import os
import sys
import tempfile
import time
from pathlib import Path
from urllib.parse import unquote, urlparse

import pytest
import pytest_lsp
from lsprotocol import types as T
from pytest_lsp import ClientServerConfig, LanguageClient, client_capabilities

REPO = Path(__file__).resolve().parents[1]
SEED = (REPO / "golden" / "seeds" / "seed1_scenario.py").read_text(encoding="utf-8")
WORK = Path(tempfile.mkdtemp(prefix="gradfix-lsp-test-"))
ENV = dict(os.environ, XDG_CACHE_HOME=str(WORK / "cache"))
SERVER = [sys.executable, "-m", "gradfix", "lsp"]
TIMEOUT = 20.0


def _config() -> ClientServerConfig:
    return ClientServerConfig(server_command=SERVER, server_env=ENV)


async def _start(client: LanguageClient, spec: str, options: dict | None = None) -> T.InitializeResult:
    params = T.InitializeParams(capabilities=client_capabilities(spec), initialization_options=options,
                                root_uri=WORK.as_uri())
    return await client.initialize_session(params)


@pytest_lsp.fixture(config=_config())
async def push(lsp_client: LanguageClient):
    lsp_client.init_result = await _start(lsp_client, "visual-studio-code", {"gradfix": {"debounceMs": 50}})
    yield
    await lsp_client.shutdown_session()


@pytest_lsp.fixture(config=_config())
async def pull(lsp_client: LanguageClient):
    lsp_client.init_result = await _start(lsp_client, "neovim@v0.11")
    yield
    await lsp_client.shutdown_session()


@pytest_lsp.fixture(config=_config())
async def verifying(lsp_client: LanguageClient):
    lsp_client.init_result = await _start(lsp_client, "visual-studio-code", {"verify": True, "debounceMs": 50})
    yield
    await lsp_client.shutdown_session()


# -- helpers ---------------------------------------------------------------------------------
class Doc:
    """The client's copy of one open document."""

    def __init__(self, client: LanguageClient, name: str, text: str):
        self.client = client
        self.path = WORK / name
        self.path.write_text(text, encoding="utf-8")
        self.uri = self.path.as_uri()
        self.text = text
        self.version = 1
        client.diagnostics.pop(self.uri, None)
        client.text_document_did_open(T.DidOpenTextDocumentParams(
            text_document=T.TextDocumentItem(uri=self.uri, language_id="python", version=1, text=text)))

    @property
    def encoding(self) -> str:
        return str(self.client.init_result.capabilities.position_encoding or "utf-16")

    def change(self, text: str) -> None:
        self.version += 1
        self.text = text
        self.client.text_document_did_change(T.DidChangeTextDocumentParams(
            text_document=T.VersionedTextDocumentIdentifier(uri=self.uri, version=self.version),
            content_changes=[T.TextDocumentContentChangeWholeDocument(text=text)]))

    def change_range(self, line: int, start: int, end: int, new: str, end_line: int | None = None) -> None:
        """An editor's incremental change (ASCII text: columns are characters)."""
        end_line = line if end_line is None else end_line
        lines = self.text.split("\n")
        a = sum(len(l) + 1 for l in lines[:line]) + start
        b = sum(len(l) + 1 for l in lines[:end_line]) + end
        self.text = self.text[:a] + new + self.text[b:]
        self.version += 1
        self.client.text_document_did_change(T.DidChangeTextDocumentParams(
            text_document=T.VersionedTextDocumentIdentifier(uri=self.uri, version=self.version),
            content_changes=[T.TextDocumentContentChangePartial(
                range=T.Range(start=T.Position(line=line, character=start), end=T.Position(line=end_line, character=end)),
                text=new)]))

    def apply(self, edit: T.WorkspaceEdit) -> str:
        """Apply a WorkspaceEdit the way an editor does; returns the new text (not sent)."""
        edits: list[T.TextEdit] = []
        if edit.document_changes:
            for dc in edit.document_changes:
                assert dc.text_document.uri == self.uri
                assert dc.text_document.version in (None, self.version)
                edits.extend(dc.edits)
        for uri, es in (edit.changes or {}).items():
            assert uri == self.uri
            edits.extend(es)
        assert edits, "empty edit"
        text = self.text
        for e in sorted(edits, key=lambda e: (e.range.start.line, e.range.start.character), reverse=True):
            s, t = self.offset(text, e.range.start), self.offset(text, e.range.end)
            assert s <= t
            text = text[:s] + e.new_text + text[t:]
        return text

    def offset(self, text: str, pos: T.Position) -> int:
        lines = text.split("\n")
        base = sum(len(l) + 1 for l in lines[: pos.line])
        if pos.line >= len(lines):
            return len(text)
        units = 0
        for i, ch in enumerate(lines[pos.line]):
            if units >= pos.character:
                return base + i
            units += len(ch.encode("utf-8")) if self.encoding == "utf-8" else (2 if ord(ch) > 0xFFFF else 1)
        return base + len(lines[pos.line])

    async def diagnostics(self, until=lambda ds: True) -> list[T.Diagnostic]:
        """Push mode: wait until the published diagnostics satisfy `until`."""
        deadline = time.monotonic() + TIMEOUT
        while time.monotonic() < deadline:
            ds = self.client.diagnostics.get(self.uri)
            if ds is not None and until(ds):
                return list(ds)
            await asyncio.sleep(0.02)
        raise AssertionError(f"diagnostics never satisfied the condition; last: {self.client.diagnostics.get(self.uri)}")

    async def pull(self) -> list[T.Diagnostic]:
        report = await self.client.text_document_diagnostic_async(
            T.DocumentDiagnosticParams(text_document=T.TextDocumentIdentifier(uri=self.uri)))
        return list(report.items)

    async def actions(self, diag: T.Diagnostic | None = None, only=None) -> list[T.CodeAction]:
        rng = diag.range if diag else T.Range(start=T.Position(line=0, character=0), end=T.Position(line=0, character=0))
        result = await self.client.text_document_code_action_async(T.CodeActionParams(
            text_document=T.TextDocumentIdentifier(uri=self.uri), range=rng,
            context=T.CodeActionContext(diagnostics=[diag] if diag else [], only=only)))
        return list(result or [])

    async def fix_all(self) -> str:
        actions = await self.actions(only=["source.fixAll"])
        assert [a.title for a in actions] == ["gradfix: fix all"]
        action = actions[0]
        if action.edit is None:
            action = await self.client.code_action_resolve_async(action)
        return self.apply(action.edit)


TESTED = {"GF101", "GF102", "GF103", "GF104", "GF201", "syntax"}


def codes(ds) -> set[str]:
    """The codes among `ds` that these tests are about: other rule families (say GF3xx, API
    migrations) fire on the seed too and come and go as rules are added."""
    return {d.code for d in ds} & TESTED


def by_code(ds, code) -> T.Diagnostic:
    (d,) = [d for d in ds if d.code == code]
    return d


# -- push mode -----------------------------------------------------------------------------------
@pytest.mark.asyncio
async def test_push_diagnostics_fix_hover_ignore(push: LanguageClient):
    doc = Doc(push, "seed_push.py", SEED)
    ds = await doc.diagnostics(lambda ds: len(ds) > 0)
    assert codes(ds) == {"GF101", "GF102", "GF103"}
    for d in ds:
        assert d.severity == T.DiagnosticSeverity.Warning
        assert d.source == "gradfix"
        href = d.code_description.href
        assert href.startswith("file://") and href.endswith(f"/{d.code}.md")
        doc_text = Path(unquote(urlparse(href).path)).read_text(encoding="utf-8")
        assert f"({d.code})" in doc_text.splitlines()[0]
        assert d.data["rule"] == d.code
    gf101 = by_code(ds, "GF101")
    assert (gf101.range.start.line, gf101.range.start.character) == (17, 8)

    # hover on the diagnostic's range shows the rule's documentation
    hover = await push.text_document_hover_async(T.HoverParams(
        text_document=T.TextDocumentIdentifier(uri=doc.uri), position=T.Position(line=17, character=12)))
    assert hover.contents.kind == T.MarkupKind.Markdown
    assert "(GF101)" in hover.contents.value and "## Why is this bad?" in hover.contents.value

    # the quick fix comes first, then the ignore action; fix-all is offered too
    actions = await doc.actions(gf101)
    titles = [a.title for a in actions]
    assert titles[0] == "gradfix (GF101): rewrite as `f = f / (f.norm(dim=1, keepdim=True) + 1e-6)`"
    assert titles[1] == "gradfix: ignore GF101 on this line"
    assert titles[2] == "gradfix: fix all"
    fix = actions[0]
    assert fix.kind == T.CodeActionKind.QuickFix and fix.is_preferred is True
    (tde,) = fix.edit.document_changes
    assert len(tde.edits) == 1 and tde.edits[0].range.start.line == 17    # minimal, not the whole file
    new = doc.apply(fix.edit)
    assert "        f = f / (f.norm(dim=1, keepdim=True) + 1e-6)   # ❌" in new
    doc.change(new)
    ds = await doc.diagnostics(lambda ds: "GF101" not in codes(ds))
    assert codes(ds) == {"GF103"}     # GF102 went too: `f` is no longer mutated in place

    # ignore GF103 on its line: the comment goes at the end of the line, the diagnostic goes away
    gf103 = by_code(ds, "GF103")
    actions = await doc.actions(gf103)
    assert [a.title for a in actions][:2] == [
        "gradfix (GF103): clamp after the optimizer step: `net.fc.weight.clamp_(-1.0, 1.0)` (unsafe)",
        "gradfix: ignore GF103 on this line",
    ]
    assert actions[0].is_preferred is False       # unsafe and not verified
    new = doc.apply(actions[1].edit)
    line = new.split("\n")[gf103.range.start.line]
    assert line.endswith("# ❌ .data + 原地  # gradfix: ignore[GF103]")
    doc.change(new)
    await doc.diagnostics(lambda ds: not codes(ds))

    # hover on the code inside the suppression comment
    col = line.index("GF103") + 2
    hover = await push.text_document_hover_async(T.HoverParams(
        text_document=T.TextDocumentIdentifier(uri=doc.uri), position=T.Position(line=gf103.range.start.line, character=col)))
    assert hover is not None and "(GF103)" in hover.contents.value

    # a code is added inside an existing `# gradfix: ignore[...]` comment
    doc.change(SEED.replace("1e-6)   # ❌", "1e-6)  # gradfix: ignore[GF999]  # ❌"))
    ds = await doc.diagnostics(lambda ds: "GF101" in codes(ds))
    actions = await doc.actions(by_code(ds, "GF101"))
    new = doc.apply(actions[1].edit)
    assert "1e-6)  # gradfix: ignore[GF999, GF101]  # ❌" in new
    doc.change(new)
    await doc.diagnostics(lambda ds: "GF101" not in codes(ds))

    # `# noqa: GF101` suppresses too, and hovering its code shows the docs
    doc.change(SEED.replace("1e-6)   # ❌", "1e-6)  # noqa: E501, GF101  # ❌"))
    await doc.diagnostics(lambda ds: codes(ds) == {"GF102", "GF103"})
    line = doc.text.split("\n")[17]
    hover = await push.text_document_hover_async(T.HoverParams(
        text_document=T.TextDocumentIdentifier(uri=doc.uri), position=T.Position(line=17, character=line.index("GF101"))))
    assert hover is not None and hover.contents.value.startswith("# ") and "(GF101)" in hover.contents.value
    assert await push.text_document_hover_async(T.HoverParams(
        text_document=T.TextDocumentIdentifier(uri=doc.uri), position=T.Position(line=17, character=line.index("E501")))) is None


@pytest.mark.asyncio
async def test_push_fix_all_applies_safe_fixes(push: LanguageClient):
    doc = Doc(push, "seed_fixall.py", SEED)
    await doc.diagnostics(lambda ds: codes(ds) == {"GF101", "GF102", "GF103"})
    fixed = await doc.fix_all()
    assert "f_log = f.detach().clone()" in fixed and "f = f / (" in fixed
    assert "m.weight.data = torch.clamp" in fixed           # the unsafe GF103 fix is not applied
    doc.change(fixed)
    ds = await doc.diagnostics(lambda ds: "GF101" not in codes(ds))
    assert codes(ds) == {"GF103"}
    # nothing safe is left: fix-all is no longer offered
    assert await doc.actions(only=["source.fixAll"]) == []


@pytest.mark.asyncio
async def test_push_syntax_error_and_settings(push: LanguageClient):
    doc = Doc(push, "broken.py", "def f(:\n    pass\n")
    ds = await doc.diagnostics(lambda ds: len(ds) > 0)
    assert len(ds) == 1 and ds[0].code == "syntax" and ds[0].source == "gradfix"
    assert ds[0].range.start.line == 0 and ds[0].severity == T.DiagnosticSeverity.Error
    assert await doc.actions(ds[0]) == []
    # garbage of every kind: the server answers and keeps running
    for junk in ["(" * 3000, "\x00\x01", "'''", "if True:\n\tpass\n        pass\n", "é = 1\r\nx = \\\n", "", "λ" * 5000]:
        doc.change(junk)
        await doc.diagnostics(lambda ds: True)
        await doc.actions(T.Diagnostic(range=T.Range(start=T.Position(line=0, character=0),
                                                     end=T.Position(line=0, character=1)),
                                       message="x", code="GF101", source="gradfix"))
    doc.change(SEED)
    await doc.diagnostics(lambda ds: codes(ds) == {"GF101", "GF102", "GF103"})

    # settings: ignore GF10 (prefix) except... select GF103 only; then a bad selector is reported, not fatal
    push.workspace_did_change_configuration(T.DidChangeConfigurationParams(settings={"gradfix": {"select": ["GF103"]}}))
    ds = await doc.diagnostics(lambda ds: codes(ds) == {"GF103"})
    push.workspace_did_change_configuration(T.DidChangeConfigurationParams(
        settings={"gradfix": {"ignore": ["GF102", "GF9"], "debounceMs": 50}}))
    await doc.diagnostics(lambda ds: codes(ds) == {"GF101", "GF103"})
    assert any("GF9" in m.message for m in push.messages)
    # `settings: null` makes the server pull its section through workspace/configuration
    push.set_configuration({"select": ["GF102"]}, section="gradfix")
    push.workspace_did_change_configuration(T.DidChangeConfigurationParams(settings=None))
    await doc.diagnostics(lambda ds: codes(ds) == {"GF102"})
    # closing the document clears its diagnostics
    push.text_document_did_close(T.DidCloseTextDocumentParams(text_document=T.TextDocumentIdentifier(uri=doc.uri)))
    await doc.diagnostics(lambda ds: len(ds) == 0)


@pytest.mark.asyncio
async def test_push_debounce_restarts_on_each_change(push: LanguageClient):
    push.workspace_did_change_configuration(T.DidChangeConfigurationParams(settings={"gradfix": {"debounceMs": 300}}))
    doc = Doc(push, "debounce.py", SEED)
    await doc.diagnostics(lambda ds: codes(ds) == {"GF101", "GF102", "GF103"})
    await asyncio.sleep(0.4)

    async def lints() -> int:
        info = await push.workspace_execute_command_async(T.ExecuteCommandParams(command="gradfix.debugInfo"))
        return len(info["lint_s"])

    before = await lints()
    t0 = time.monotonic()
    for k in range(6):                       # a burst of typing, 50 ms apart: one lint at the end
        doc.change(SEED.replace("1e-6", f"1e-{k + 2}"))
        await asyncio.sleep(0.05)
    doc.change(SEED.replace("f /= (", "f = f / ("))
    await doc.diagnostics(lambda ds: "GF101" not in codes(ds))
    assert time.monotonic() - t0 >= 0.3 + 6 * 0.05
    await asyncio.sleep(0.5)
    assert await lints() == before + 1


@pytest.mark.asyncio
async def test_push_diagnostics_follow_incremental_edits(push: LanguageClient):
    """Typing in a document (the server re-parses only the statements that changed) gives,
    version after version, the diagnostics of a whole-file analysis of the same text."""
    from gradfix.codemods import ALL_RULES
    from gradfix.engine import Engine

    engine = Engine(ALL_RULES)
    push.workspace_did_change_configuration(T.DidChangeConfigurationParams(settings={"gradfix": {"debounceMs": 0}}))
    train = ("\n\ndef train(model, loader, opt):\n    for x, y in loader:\n        opt.zero_grad()\n"
             "        loss = model(x).sum() / 1000000000\n        loss.backward()\n        opt.step()\n")
    doc = Doc(push, "typing.py", SEED + train)
    lines = doc.text.split("\n")
    norm = next(i for i, l in enumerate(lines) if "f /= (" in l)
    steps = [
        lambda: doc.change_range(1, 0, 0, "# a comment\n\n"),                      # lines above everything
        lambda: doc.change_range(len(doc.text.split("\n")) - 1, 0, 0, train),        # a second, identical function
        lambda: doc.change_range(norm + 2, 0, len(doc.text.split("\n")[norm + 2]),
                                 doc.text.split("\n")[norm + 2].replace("f /= (", "f = f / (")),  # fix GF101 by hand
        lambda: doc.change_range(1, 0, 0, "", end_line=3),                           # take the comment back
        lambda: doc.change_range(2, 0, 0, "import math\n"),                         # the imports change
    ]
    for step in steps:
        step()
        want = sorted((f.rule, f.span.line - 1) for f in engine.lint_source(doc.text, str(doc.path))[0]
                      if f.rule in TESTED)
        await doc.diagnostics(lambda ds: sorted((d.code, d.range.start.line) for d in ds if d.code in TESTED) == want)
    assert sum(1 for d in push.diagnostics[doc.uri] if d.code == "GF201") == 2
    assert "GF101" not in codes(push.diagnostics[doc.uri])


@pytest.mark.asyncio
async def test_push_gf201_threshold_and_pyproject(push: LanguageClient):
    project = WORK / "proj"
    project.mkdir(exist_ok=True)
    (project / "pyproject.toml").write_text('[tool.gradfix]\nignore = ["GF102"]\n', encoding="utf-8")
    src = ("import torch\n\nfor x, y in loader:\n    opt.zero_grad()\n    loss = loss_fn(model(x), y) / 5000\n"
           "    loss.backward()\n    opt.step()\n")
    doc = Doc(push, "proj/train.py", src)
    ds = await doc.diagnostics(lambda ds: len(ds) > 0)
    assert codes(ds) == {"GF201"}
    push.workspace_did_change_configuration(T.DidChangeConfigurationParams(
        settings={"gradfix": {"gf201Threshold": 10000, "debounceMs": 50}}))
    await doc.diagnostics(lambda ds: len(ds) == 0)
    push.workspace_did_change_configuration(T.DidChangeConfigurationParams(
        settings={"gradfix": {"rules": {"GF201": {"threshold": 100}}, "debounceMs": 50}}))
    await doc.diagnostics(lambda ds: codes(ds) == {"GF201"})
    # the project's [tool.gradfix] ignore = ["GF102"] holds for the seed inside it
    seed = Doc(push, "proj/seed.py", SEED)
    ds = await seed.diagnostics(lambda ds: len(ds) > 0)
    assert codes(ds) == {"GF101", "GF103"}


# -- pull mode ---------------------------------------------------------------------------------------
@pytest.mark.asyncio
async def test_pull_diagnostics_fix_and_ignore(pull: LanguageClient):
    caps = pull.init_result.capabilities
    assert caps.diagnostic_provider is not None and caps.position_encoding == "utf-8"
    doc = Doc(pull, "seed_pull.py", SEED)
    ds = await doc.pull()
    assert codes(ds) == {"GF101", "GF102", "GF103"}
    assert all(d.severity == T.DiagnosticSeverity.Warning and d.source == "gradfix" for d in ds)
    assert by_code(ds, "GF101").code_description.href.endswith("/GF101.md")
    assert pull.diagnostics.get(doc.uri) is None           # nothing is pushed to a pulling client

    # line 15 carries a 3-byte emoji and CJK comment: the end of line is in UTF-8 bytes here
    gf102 = by_code(ds, "GF102")
    assert (gf102.range.start.line, gf102.range.start.character) == (14, 16)
    actions = await doc.actions(gf102)
    assert [a.title for a in actions][:2] == ["gradfix (GF102): clone the detached copy: `f.detach().clone()`",
                                            "gradfix: ignore GF102 on this line"]
    new = doc.apply(actions[1].edit)
    line = new.split("\n")[14]
    assert line.endswith("# ❌ 为了可视化，提前 detach  # gradfix: ignore[GF102]")
    doc.change(new)
    assert codes(await doc.pull()) == {"GF101", "GF103"}

    hover = await pull.text_document_hover_async(T.HoverParams(
        text_document=T.TextDocumentIdentifier(uri=doc.uri),
        position=T.Position(line=14, character=len(line.encode()) - 3)))
    assert hover is not None and "(GF102)" in hover.contents.value

    ds = await doc.pull()
    actions = await doc.actions(by_code(ds, "GF101"))
    assert actions[0].title.startswith("gradfix (GF101): rewrite as") and actions[0].is_preferred
    assert actions[0].edit.changes and not actions[0].edit.document_changes   # Neovim: plain `changes`
    doc.change(doc.apply(actions[0].edit))
    assert codes(await doc.pull()) == {"GF103"}


@pytest.mark.asyncio
async def test_pull_fix_all_and_syntax_error(pull: LanguageClient):
    doc = Doc(pull, "seed_pull_fixall.py", SEED)
    fixed = await doc.fix_all()
    doc.change(fixed)
    assert codes(await doc.pull()) == {"GF103"}
    doc.change(SEED.replace("def forward(self, x):", "def forward(self, x:"))
    ds = await doc.pull()
    assert len(ds) == 1 and ds[0].code == "syntax"
    doc.change(SEED)
    assert codes(await doc.pull()) == {"GF101", "GF102", "GF103"}


# -- verification ----------------------------------------------------------------------------------
def _verifier_problem() -> str | None:
    try:
        import torch  # noqa: F401

        from gradfix.verify import Verifier, VerifyRequest  # noqa: F401
    except Exception as exc:
        return f"gradfix.verify is not usable here: {type(exc).__name__}: {exc}"
    return None


@pytest.mark.asyncio
@pytest.mark.skipif(_verifier_problem() is not None, reason=str(_verifier_problem()))
async def test_verified_fix_title(verifying: LanguageClient):
    doc = Doc(verifying, "seed_verify.py", SEED)
    ds = await doc.diagnostics(lambda ds: codes(ds) == {"GF101", "GF102", "GF103"})
    deadline = time.monotonic() + 45
    title = ""
    while time.monotonic() < deadline:
        ds = verifying.diagnostics[doc.uri]
        actions = await doc.actions(by_code(ds, "GF101"))
        title = actions[0].title if actions else ""
        if "verified" in title:
            break
        await asyncio.sleep(0.25)
    assert title == ("gradfix (GF101): rewrite as `f = f / (f.norm(dim=1, keepdim=True) + 1e-6)` "
                     "— verified: fixes crash"), title
    assert actions[0].is_preferred is True
    # the pushed diagnostic carries the verdict too
    ds = await doc.diagnostics(lambda ds: by_code(ds, "GF101").data["fix"]["verdict"] == "fixes-crash")
    assert "fix verified: fixes crash" in by_code(ds, "GF101").message
    # fix-all takes only fixes whose verdict is known and accepted: GF101 (fixes-crash) here; the
    # verifier cannot test GF102 and GF103 on this file (their originals crash), so they stay
    ds = await doc.diagnostics(lambda ds: all(d.data["fix"]["verdict"] for d in ds if d.code in TESTED))
    assert {d.code: d.data["fix"]["verdict"] for d in ds}["GF101"] == "fixes-crash"
    fixed = await doc.fix_all()
    accepted = {d.code for d in ds if d.data["fix"]["verdict"] in ("equivalent", "fixes-crash", "fixes-hazard")}
    assert ("f = f / (f.norm(dim=1, keepdim=True) + 1e-6)" in fixed) == ("GF101" in accepted)
    assert ("m.weight.data = torch.clamp" in fixed) == ("GF103" not in accepted)


# -- in-process pieces: settings and the verifier guard ---------------------------------------------
def test_settings_parsing():
    from gradfix.cli.lsp import parse_settings

    s, warnings = parse_settings({"gradfix": {"select": "GF1, gf201", "ignore": ["GF104"], "gf201Threshold": 5000,
                                              "rules": {"GF201": {"bogus": 1}}, "verify": "yes", "debounceMs": 100}})
    assert s.select == ("GF1", "GF201") and s.ignore == ("GF104",)
    assert s.options() == {"GF201": {"threshold": 5000.0}} and s.debounce_s == 0.1 and s.verify is False
    assert any("bogus" in w for w in warnings) and any("verify" in w for w in warnings)
    s, warnings = parse_settings({"verify": True, "rules": {"GF201": {"threshold": 10}}, "select": ["XX1"]})
    assert s.verify and s.options() == {"GF201": {"threshold": 10}} and s.select == ()
    assert any("XX1" in w for w in warnings)


def test_verify_manager_survives_crash_and_hang(monkeypatch):
    import threading

    from gradfix.cli.lsp import VerifyManager, _VerifyJob

    import gradfix.verify as gv

    release = threading.Event()
    made = []

    class Fake:
        mode = "crash"

        def __init__(self, jobs=1, timeout_s=20.0):
            made.append(Fake.mode)

        def verify_many(self, requests):
            if Fake.mode == "crash":
                raise RuntimeError("boom")
            if Fake.mode == "hang":
                release.wait(30)
            return [gv.VerifyResult("equivalent", "same gradients", "Net")]

        def close(self):
            pass

    monkeypatch.setattr(gv, "Verifier", Fake)
    arrived = []
    vm = VerifyManager(1.0, lambda uri, version: True, lambda uri, version: arrived.append((uri, version)))
    vm.hang_guard_s = 0.5
    try:
        def run(line):
            vm.submit([_VerifyJob("file:///x.py", 1, "GF101", line, object())])
            deadline = time.monotonic() + 10
            while vm.get("file:///x.py", 1, "GF101", line) is None and time.monotonic() < deadline:
                time.sleep(0.01)
            return vm.get("file:///x.py", 1, "GF101", line)

        verdict, detail = run(1)
        assert verdict == "untestable" and "crashed (RuntimeError: boom)" in detail
        Fake.mode = "hang"
        verdict, detail = run(2)
        assert verdict == "untestable" and "did not answer" in detail
        Fake.mode = "ok"
        assert run(3) == ("equivalent", "same gradients")
        assert made == ["crash", "hang", "ok"]      # a fresh verifier after each failure
        assert len(arrived) == 3
    finally:
        release.set()
        vm.close()


def test_edits_and_positions_in_every_encoding():
    from gradfix.cli.lsp import from_position, lsp_edits, to_position

    old = "s = '😀é'; f /= g  # 原地\nt = 1\n"
    new = "s = '😀é'; f = f / g  # 原地\nt = 1\n"
    unit = {"utf-8": lambda ch: len(ch.encode("utf-8")), "utf-16": lambda ch: 2 if ord(ch) > 0xFFFF else 1,
            "utf-32": lambda ch: 1}
    for enc, size in unit.items():
        (edit,) = lsp_edits(old, new, enc)
        lines = old.split("\n")
        start = from_position(lines, edit.range.start, enc)
        end = from_position(lines, edit.range.end, enc)
        assert start[0] == end[0] == 0 and start[1] > lines[0].index("é")      # after the emoji and é
        assert edit.range.start.character == sum(size(ch) for ch in lines[0][: start[1]])
        assert to_position(lines, 0, start[1], enc) == edit.range.start
        assert lines[0][: start[1]] + edit.new_text + lines[0][end[1]:] == new.split("\n")[0]
