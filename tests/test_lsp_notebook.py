"""`gradfix lsp` on notebook documents (notebookDocument/didOpen, didChange, didClose).

A real client (pytest-lsp) opens a notebook whose cells hold magics, the way VS Code sends
one: a cell URI per cell, the Python cells analysed together as one module.
"""

from __future__ import annotations

import asyncio
import os
import sys
import tempfile
import time
from pathlib import Path

import pytest
import pytest_lsp
from lsprotocol import types as T
from pytest_lsp import ClientServerConfig, LanguageClient, client_capabilities

WORK = Path(tempfile.mkdtemp(prefix="gradfix-lsp-nb-"))
SERVER = [sys.executable, "-m", "gradfix", "lsp"]
ENV = dict(os.environ, XDG_CACHE_HOME=str(WORK / "cache"))
TIMEOUT = 20.0
NB = WORK / "train.ipynb"
NB_URI = NB.as_uri()
CELLS = [
    (T.NotebookCellKind.Markup, "markdown", "# Notes\nA model, then a loop."),
    (T.NotebookCellKind.Code, "python", "%matplotlib inline\n!pip install -q tqdm\nimport torch\nimport torch.nn as nn"),
    (T.NotebookCellKind.Code, "python", "class Norm(nn.Module):\n    def __init__(self):\n        super().__init__()\n"
                                        "        self.lin = nn.Linear(8, 4)\n\n    def forward(self, x):\n"
                                        "        out = self.lin(x)\n        out.div_(out.pow(2).sum(1, keepdim=True).sqrt())\n"
                                        "        return out"),
    (T.NotebookCellKind.Code, "python", "%%time\nmodel = Norm()\nopt = torch.optim.SGD(model.parameters(), lr=0.1)\n"
                                        "total = 0.0\nfor step in range(3):\n    loss = model(torch.randn(5, 8)).sum()\n"
                                        "    opt.zero_grad()\n    loss.backward()\n    opt.step()\n    total += loss"),
]
URIS = [f"vscode-notebook-cell:{NB}#cell{k}" for k in range(len(CELLS))]


def _config() -> ClientServerConfig:
    return ClientServerConfig(server_command=SERVER, server_env=ENV)


@pytest_lsp.fixture(config=_config())
async def push(lsp_client: LanguageClient):
    lsp_client.init_result = await lsp_client.initialize_session(T.InitializeParams(
        capabilities=client_capabilities("visual-studio-code"), root_uri=WORK.as_uri(),
        initialization_options={"gradfix": {"debounceMs": 50}}))
    yield
    await lsp_client.shutdown_session()


@pytest_lsp.fixture(config=_config())
async def pull(lsp_client: LanguageClient):
    lsp_client.init_result = await lsp_client.initialize_session(T.InitializeParams(
        capabilities=client_capabilities("neovim@v0.11"), root_uri=WORK.as_uri()))
    yield
    await lsp_client.shutdown_session()


def open_notebook(client: LanguageClient) -> None:
    NB.write_text("{}")
    client.notebook_document_did_open(T.DidOpenNotebookDocumentParams(
        notebook_document=T.NotebookDocument(
            uri=NB_URI, notebook_type="jupyter-notebook", version=1,
            cells=[T.NotebookCell(kind=kind, document=uri) for (kind, _, _), uri in zip(CELLS, URIS)]),
        cell_text_documents=[T.TextDocumentItem(uri=uri, language_id=lang, version=1, text=text)
                             for (_, lang, text), uri in zip(CELLS, URIS)]))


async def published(client: LanguageClient, uri: str, until) -> list[T.Diagnostic]:
    deadline = time.monotonic() + TIMEOUT
    while time.monotonic() < deadline:
        ds = client.diagnostics.get(uri)
        if ds is not None and until(ds):
            return list(ds)
        await asyncio.sleep(0.02)
    raise AssertionError(f"diagnostics of {uri} never came; last: {client.diagnostics.get(uri)}")


def rules(ds) -> set[str]:
    return {d.code for d in ds}


def start(d: T.Diagnostic) -> tuple[int, int]:
    return d.range.start.line, d.range.start.character


@pytest.mark.asyncio
async def test_notebook_push_diagnostics_per_cell_follow_changes_and_offer_cell_fixes(push: LanguageClient):
    open_notebook(push)
    ds3 = await published(push, URIS[2], lambda ds: "GF101" in rules(ds))
    ds4 = await published(push, URIS[3], lambda ds: "GF208" in rules(ds))
    (gf101,) = [d for d in ds3 if d.code == "GF101"]
    (gf208,) = [d for d in ds4 if d.code == "GF208"]
    assert start(gf101) == (7, 8) and start(gf208) == (9, 4)         # lines of the cell, 0-based
    assert not rules(await published(push, URIS[1], lambda ds: True)) & {"GF101", "GF208", "syntax"}
    assert URIS[0] not in push.diagnostics                            # markdown cell

    # the quick fix edits the cell it is about
    actions = await push.text_document_code_action_async(T.CodeActionParams(
        text_document=T.TextDocumentIdentifier(uri=URIS[3]), range=gf208.range,
        context=T.CodeActionContext(diagnostics=[gf208])))
    fix = [a for a in actions if a.title.startswith("gradfix (GF208)")][0]
    edits = [(dc.text_document.uri, e.new_text, e.range.start.line) for dc in fix.edit.document_changes for e in dc.edits]
    assert edits == [(URIS[3], ".item()", 9)]

    # an edit inside a cell (notebookDocument/didChange) is analysed with the whole notebook again
    push.notebook_document_did_change(T.DidChangeNotebookDocumentParams(
        notebook_document=T.VersionedNotebookDocumentIdentifier(uri=NB_URI, version=2),
        change=T.NotebookDocumentChangeEvent(cells=T.NotebookDocumentCellChanges(text_content=[
            T.NotebookDocumentCellContentChanges(
                document=T.VersionedTextDocumentIdentifier(uri=URIS[2], version=2),
                changes=[T.TextDocumentContentChangePartial(
                    range=T.Range(start=T.Position(line=7, character=8), end=T.Position(line=7, character=17)),
                    text="out = out.div(")])]))))
    await published(push, URIS[2], lambda ds: "GF101" not in rules(ds))
    assert "GF208" in rules(push.diagnostics[URIS[3]])
    push.notebook_document_did_close(T.DidCloseNotebookDocumentParams(
        notebook_document=T.NotebookDocumentIdentifier(uri=NB_URI),
        cell_text_documents=[T.TextDocumentIdentifier(uri=u) for u in URIS]))
    await published(push, URIS[3], lambda ds: len(ds) == 0)     # closing clears each cell


@pytest.mark.asyncio
async def test_notebook_cells_answer_pull_diagnostics(pull: LanguageClient):
    open_notebook(pull)
    report = await pull.text_document_diagnostic_async(
        T.DocumentDiagnosticParams(text_document=T.TextDocumentIdentifier(uri=URIS[2])))
    assert [(d.code, start(d)) for d in report.items if d.code == "GF101"] == [("GF101", (7, 8))]
    report = await pull.text_document_diagnostic_async(
        T.DocumentDiagnosticParams(text_document=T.TextDocumentIdentifier(uri=URIS[1])))
    assert not {d.code for d in report.items} & {"GF101", "GF208", "syntax"}
