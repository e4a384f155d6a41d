"""Notebook documents in `gradfix lsp` (LSP 3.17 `notebookDocument/*` sync).

pygls keeps each open notebook and its cells' text documents in the workspace; this
module turns the Python code cells into one `gradfix.notebook.Notebook` (magics masked,
cells in order), lints that module once per notebook text, and gives each cell an
`Analysis` of its own (a `CellAnalysis`: the cell's text, its findings in cell
coordinates), so the server's diagnostics, quick fixes, ignore comments and hover work
on cells unchanged. Diagnostics are pushed per cell (or, for clients that pull, the
client is asked to pull again) after any change to the notebook, because a change in one
cell can change the findings of another.

Limits: no verification and no fix-all in notebooks (a quick fix is offered when its
rewrite stays inside the cell it is about); non-Python cells and cell magics such as
`%%bash` are skipped.
"""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass, field

from lsprotocol import types as T
from pygls.uris import to_fs_path

from gradfix.cli.lsp import Analysis, _lint, guarded
from gradfix.model import FileError, Span
from gradfix.notebook import Notebook, NotebookError, locate_error, locate_finding

log = logging.getLogger("gradfix.lsp")

NOTEBOOK_SYNC = T.NotebookDocumentSyncOptions(
    notebook_selector=[T.NotebookDocumentFilterWithCells(cells=[T.NotebookCellLanguage(language="python")],
                                                         notebook="jupyter-notebook")],
    save=False)


@dataclass
class CellAnalysis(Analysis):
    """One cell of a notebook: `text` and `findings` are the cell's, `notebook` the whole."""

    notebook: Notebook | None = None
    cell: int = 0
    nb_uri: str = ""
    nb_text: str = ""


@dataclass
class _State:
    """Per server: the last lint of each open notebook's module, and the debounce timers."""

    lints: dict = field(default_factory=dict)     # notebook uri -> (module text, engine key, future)
    models: dict = field(default_factory=dict)    # notebook uri -> (cells, Notebook): built once per edit
    timers: dict = field(default_factory=dict)    # notebook uri -> asyncio.TimerHandle


def _state(ls) -> _State:
    state = getattr(ls, "_notebook_state", None)
    if state is None:
        state = ls._notebook_state = _State()
    return state


def notebook_of(ls, uri: str):
    """The open notebook holding the cell `uri`, or None."""
    try:
        return ls.workspace.get_notebook_document(cell_uri=uri)
    except RuntimeError:
        return None


def _code_cells(ls, nbdoc) -> list[tuple[int, str, str, int | None]]:
    """(number among all cells, uri, text, version) of the Python code cells."""
    out = []
    docs = ls.workspace.text_documents
    for number, cell in enumerate(nbdoc.cells, start=1):
        if cell.kind != T.NotebookCellKind.Code:
            continue
        doc = docs.get(cell.document)
        if doc is None or (doc.language_id or "python").lower() != "python":
            continue
        out.append((number, cell.document, doc.source, doc.version))
    return out


def _nb_path(ls, nbdoc) -> str:
    try:
        path = to_fs_path(nbdoc.uri)
    except Exception:
        path = None
    return path or ls.doc_path(nbdoc.uri)


async def cell_analysis(ls, uri: str):
    """The analysis of one cell (None when `uri` is not a Python code cell of an open notebook)."""
    nbdoc = notebook_of(ls, uri)
    if nbdoc is None:
        return None
    cells = _code_cells(ls, nbdoc)
    mine = [c for c in cells if c[1] == uri]
    if not mine:
        return None
    number, _, text, version = mine[0]
    path = _nb_path(ls, nbdoc)
    engine, config, key = ls.engine_for(path)
    cls = CellAnalysis
    sources = [(n, t) for n, _, t, _ in cells]
    try:
        hit = _state(ls).models.get(nbdoc.uri)
        if hit is not None and hit[0] == sources:
            nb = hit[1]
        else:
            nb = Notebook.from_cells(path, sources)
            _state(ls).models[nbdoc.uri] = (sources, nb)
    except NotebookError as exc:
        return cls(uri, version, key, text, path, engine, config, [], [FileError(path, 1, str(exc))],
                   text.split("\n"), notebook=None, cell=number, nb_uri=nbdoc.uri)
    findings, errors = await _lint_notebook(ls, nbdoc.uri, nb, engine, config, key, path)
    located = [locate_finding(nb, f) for f in findings]
    own_errors = [e for e in (locate_error(nb, e) for e in errors)
                  if e.cell == number or (e.cell is None and cells and number == cells[0][0])]
    own_errors += [e for e in nb.skipped_errors(path) if e.cell == number]
    return cls(uri, version, key, text, path, engine, config, [f for f in located if f.cell == number],
               own_errors, text.split("\n"), notebook=nb, cell=number, nb_uri=nbdoc.uri, nb_text=nb.text)


async def _lint_notebook(ls, nb_uri: str, nb: Notebook, engine, config, key, path: str):
    cache = _state(ls).lints
    hit = cache.get(nb_uri)
    if hit is not None and hit[0] == nb.text and hit[1] == key:
        return await asyncio.shield(hit[2])
    loop = asyncio.get_running_loop()
    fut = loop.run_in_executor(ls.fast, _lint, engine, nb.text, path, ls.excluded(path, config), ls.timings, None)
    cache[nb_uri] = (nb.text, key, fut)
    return await asyncio.shield(fut)


async def cell_proposals(ls, a) -> dict[tuple, str | None]:
    """(rule, span in the cell) -> the cell's text after that fix alone, for the fixes whose
    rewrite maps back to the notebook and changes this cell only."""
    if a.notebook is None:
        return {}
    result = await ls.proposals_of(a, a.nb_text)
    if result is None:
        return {}
    nb: Notebook = a.notebook
    out: dict[tuple, str | None] = {}
    for (rule, span), after in result.items():
        cell, line = nb.locate(span.line)
        if cell != a.cell:
            continue
        shift = line - span.line
        key = (rule, Span(span.line + shift, span.column, span.end_line + shift, span.end_column))
        sources = nb.split(after) if after is not None else None
        if sources is None:
            out[key] = None
            continue
        changed = [c.number for c in nb.cells if sources[c.number] != c.source]
        out[key] = sources[a.cell] if changed == [a.cell] else None
    return out


def schedule(ls, nb_uri: str, delay: float) -> None:
    timers = _state(ls).timers
    old = timers.pop(nb_uri, None)
    if old is not None:
        old.cancel()
    loop = ls.loop or asyncio.get_running_loop()
    timers[nb_uri] = loop.call_later(delay, lambda: ls._spawn(publish(ls, nb_uri)))


async def publish(ls, nb_uri: str) -> None:
    _state(ls).timers.pop(nb_uri, None)
    try:
        nbdoc = ls.workspace.get_notebook_document(notebook_uri=nb_uri)
    except RuntimeError:
        return
    if nbdoc is None:
        return
    if ls.pull:
        if ls.refresh_support:
            ls.workspace_diagnostic_refresh(None)
        return
    for _number, uri, _text, _version in _code_cells(ls, nbdoc):
        a = await cell_analysis(ls, uri)
        if a is not None and ls.is_current(uri, a.version):
            ls.text_document_publish_diagnostics(
                T.PublishDiagnosticsParams(uri=uri, diagnostics=ls.diagnostics(a), version=a.version))


def _clear(ls, uris) -> None:
    for uri in uris:
        ls.analyses.pop(uri, None)
        if not ls.pull:
            ls.text_document_publish_diagnostics(T.PublishDiagnosticsParams(uri=uri, diagnostics=[]))


def register(server) -> None:
    """The notebookDocument/* handlers (pygls has already updated its workspace when they run)."""
    @server.feature(T.NOTEBOOK_DOCUMENT_DID_OPEN)
    @guarded()
    def did_open(ls, params: T.DidOpenNotebookDocumentParams):
        schedule(ls, params.notebook_document.uri, 0.0)

    @server.feature(T.NOTEBOOK_DOCUMENT_DID_CHANGE)
    @guarded()
    def did_change(ls, params: T.DidChangeNotebookDocumentParams):
        cells = params.change.cells
        if cells is not None and cells.structure is not None:
            _clear(ls, [d.uri for d in cells.structure.did_close or []])
        schedule(ls, params.notebook_document.uri, ls.settings.debounce_s)

    @server.feature(T.NOTEBOOK_DOCUMENT_DID_CLOSE)
    @guarded()
    def did_close(ls, params: T.DidCloseNotebookDocumentParams):
        uri = params.notebook_document.uri
        handle = _state(ls).timers.pop(uri, None)
        if handle is not None:
            handle.cancel()
        _state(ls).lints.pop(uri, None)
        _state(ls).models.pop(uri, None)
        _clear(ls, [d.uri for d in params.cell_text_documents])
