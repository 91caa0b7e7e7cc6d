"""Navigation: go to definition, find references and rename, over the symbol index.

Every answer comes from :func:`checker.views.symbols.build_index` on the document's snapshot; this
module only turns cursor positions into offsets and spans into ranges (through
:mod:`nika_lsp.convert`), and resolves the file paths a workflow names (agent ``skills:`` and
``invoke: {workflow: …}``) against the directory of the workflow file.

A rename that would break the document (an invalid name, a clash, a reserved binding name, an
occurrence that cannot be located exactly) is refused with an error the client shows; every
other rename is one workspace edit that rewrites the declaration and all uses together.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from lsprotocol import types as lsp
from pygls.exceptions import JsonRpcException

from checker.core.paths import resolve_inside
from checker.core.source import Span
from checker.views.symbols import FileLink, Symbol, SymbolIndex, build_index, rename_blocker, rename_problem
from nika_lsp.convert import offset_of, span_to_range
from nika_lsp.documents import Snapshot, uri_to_path

if TYPE_CHECKING:
    from nika_lsp.host import Host


class RenameRefused(JsonRpcException):
    """The LSP ``RequestFailed`` error: the request was well formed but cannot be honoured."""

    CODE = int(lsp.LSPErrorCodes.RequestFailed)
    MESSAGE = "rename refused"


@dataclass(frozen=True, slots=True)
class Refusal:
    """Why a rename cannot go ahead (turned into a :class:`RenameRefused` by the handler)."""

    message: str


def index_for(snap: Snapshot) -> SymbolIndex:
    """The symbol index of a snapshot, built once and kept on the snapshot."""
    return snap.derived(SymbolIndex, lambda: build_index(snap.compiled))


# -- pure features -------------------------------------------------------------------------


def _span_under(symbol: Symbol, offset: int) -> Span:
    """The occurrence of ``symbol`` the cursor is on (strictly inside first, then touching)."""
    spans = symbol.all_spans()
    for span in spans:
        if span.start <= offset < span.end:
            return span
    for span in spans:
        if span.contains(offset):
            return span
    return symbol.definition


def resolve_link(snap: Snapshot, link: FileLink) -> str | None:
    """The absolute path of a named file, resolved as the check resolved it (from the workspace
    folder, :mod:`nika_lsp.workdir`); ``None`` when the document is not a local file, the target
    lies outside the workspace (never looked at) or does not exist."""
    if not os.path.isabs(link.path) and snap.work_dir is None:
        return None
    path = resolve_inside(link.path, snap.work_dir, uri_to_path(snap.uri), snap.roots)
    return path if path is not None and os.path.isfile(path) else None


def find_definition(snap: Snapshot, pos: lsp.Position, encoding: str) -> lsp.Location | None:
    src = snap.source
    offset = offset_of(src, pos, encoding)
    index = index_for(snap)
    link = index.link_at(offset)
    if link is not None:
        target = resolve_link(snap, link)
        if target is None:
            return None
        start = lsp.Position(line=0, character=0)
        return lsp.Location(uri=Path(target).as_uri(), range=lsp.Range(start=start, end=start))
    symbol = index.symbol_at(offset)
    if symbol is None:
        return None
    return lsp.Location(uri=snap.uri, range=span_to_range(src, symbol.definition, encoding))


def find_references(
    snap: Snapshot, pos: lsp.Position, encoding: str, include_declaration: bool
) -> list[lsp.Location] | None:
    src = snap.source
    symbol = index_for(snap).symbol_at(offset_of(src, pos, encoding))
    if symbol is None:
        return None
    spans = symbol.all_spans() if include_declaration else symbol.uses
    return [lsp.Location(uri=snap.uri, range=span_to_range(src, span, encoding)) for span in spans]


def prepare_rename(snap: Snapshot, pos: lsp.Position, encoding: str) -> lsp.PrepareRenamePlaceholder | Refusal | None:
    src = snap.source
    offset = offset_of(src, pos, encoding)
    index = index_for(snap)
    symbol = index.symbol_at(offset)
    if symbol is None:
        return None
    problem = rename_blocker(symbol)  # the current name may itself be invalid: renaming fixes it
    if problem is not None:
        return Refusal(problem)
    return lsp.PrepareRenamePlaceholder(
        range=span_to_range(src, _span_under(symbol, offset), encoding), placeholder=symbol.name
    )


def rename(
    snap: Snapshot, pos: lsp.Position, new_name: str, encoding: str, *, document_changes: bool
) -> lsp.WorkspaceEdit | Refusal | None:
    src = snap.source
    index = index_for(snap)
    symbol = index.symbol_at(offset_of(src, pos, encoding))
    if symbol is None:
        return None
    problem = rename_problem(index, symbol, new_name)
    if problem is not None:
        return Refusal(problem)
    edits = [lsp.TextEdit(range=span_to_range(src, span, encoding), new_text=new_name) for span in symbol.all_spans()]
    if document_changes:
        doc = lsp.OptionalVersionedTextDocumentIdentifier(uri=snap.uri, version=snap.version)
        return lsp.WorkspaceEdit(document_changes=[lsp.TextDocumentEdit(text_document=doc, edits=list(edits))])
    return lsp.WorkspaceEdit(changes={snap.uri: edits})


def _refuse(outcome: object) -> None:
    if isinstance(outcome, Refusal):
        raise RenameRefused(outcome.message)


# -- registration --------------------------------------------------------------------------


def register(server: Host) -> None:
    """Attach this module's handlers to server."""

    @server.feature(lsp.TEXT_DOCUMENT_DEFINITION)
    async def definition(ls: Host, params: lsp.DefinitionParams) -> lsp.Location | None:
        snap = await ls.snapshot_async(params.text_document.uri)
        if snap is None:
            return None
        return ls.safely("definition", lambda: find_definition(snap, params.position, ls.encoding), None)

    @server.feature(lsp.TEXT_DOCUMENT_REFERENCES)
    async def references(ls: Host, params: lsp.ReferenceParams) -> list[lsp.Location] | None:
        snap = await ls.snapshot_async(params.text_document.uri)
        if snap is None:
            return None
        include = bool(params.context and params.context.include_declaration)
        return ls.safely("references", lambda: find_references(snap, params.position, ls.encoding, include), None)

    @server.feature(lsp.TEXT_DOCUMENT_PREPARE_RENAME)
    async def prepare(ls: Host, params: lsp.PrepareRenameParams) -> lsp.PrepareRenamePlaceholder | None:
        snap = await ls.snapshot_async(params.text_document.uri)
        if snap is None:
            return None
        outcome = ls.safely("prepare rename", lambda: prepare_rename(snap, params.position, ls.encoding), None)
        _refuse(outcome)
        return outcome if isinstance(outcome, lsp.PrepareRenamePlaceholder) else None

    @server.feature(lsp.TEXT_DOCUMENT_RENAME, lsp.RenameOptions(prepare_provider=True))
    async def do_rename(ls: Host, params: lsp.RenameParams) -> lsp.WorkspaceEdit | None:
        snap = await ls.snapshot_async(params.text_document.uri)
        if snap is None:
            return None
        ws = ls.client_capabilities.workspace
        versioned = bool(ws and ws.workspace_edit and ws.workspace_edit.document_changes)
        outcome = ls.safely(
            "rename",
            lambda: rename(snap, params.position, params.new_name, ls.encoding, document_changes=versioned),
            None,
        )
        _refuse(outcome)
        return outcome if isinstance(outcome, lsp.WorkspaceEdit) else None
