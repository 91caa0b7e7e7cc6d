"""The language server's feature functions called in-process, for one client capability set.

Each server handler is a thin shell: take the document's snapshot, call a pure function of
:mod:`nika_lsp.features` with the negotiated encoding and the client's capabilities, return
the result. :class:`Editor` plays that shell without a subprocess or JSON-RPC, so the many
tests of *what* a feature answers take milliseconds; the end-to-end tests (``client``
fixture) keep the protocol path itself covered for both capability sets.

What the shell derives from the client's capabilities (encoding, snippets, versioned edits,
related information) is computed here from the capabilities themselves, not by asking the
server code, like :mod:`lsp_positions` does for positions.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from dataclasses import dataclass, field

from lsp_positions import negotiated_encoding
from lsprotocol import types as lsp
from pytest_lsp import client_capabilities

from nika_lsp.convert import offset_of
from nika_lsp.documents import Documents, Snapshot
from nika_lsp.features import (
    actions,
    completion,
    diagnostics,
    hover,
    lenses,
    navigation,
    outline,
    semantic_document,
    tokens,
)
from nika_lsp.features.model_view import view_of

_ids = itertools.count()


@dataclass
class Editor:
    """An editor with one capability set, its open documents, and the features answering it."""

    name: str
    capabilities: lsp.ClientCapabilities
    docs: Documents = field(default_factory=Documents)
    texts: dict[str, str] = field(default_factory=dict)
    """The text of each document as the client last sent it (the server's workspace copy)."""

    @classmethod
    def of(cls, name: str) -> Editor:
        return cls(name, client_capabilities(name))

    # -- what the handlers read from the capabilities ------------------------------------------
    @property
    def encoding(self) -> str:
        return negotiated_encoding(self)  # type: ignore[arg-type]  # only `.capabilities` is read

    @property
    def snippets(self) -> bool:
        td = self.capabilities.text_document
        item = td.completion.completion_item if td and td.completion else None
        return bool(item and item.snippet_support)

    @property
    def document_changes(self) -> bool:
        ws = self.capabilities.workspace
        return bool(ws and ws.workspace_edit and ws.workspace_edit.document_changes)

    @property
    def related_information(self) -> bool:
        td = self.capabilities.text_document
        pd = td.publish_diagnostics if td else None
        if pd is None or pd.related_information is None:
            return bool(td and td.diagnostic)
        return bool(pd.related_information)

    @property
    def hierarchical_symbols(self) -> bool:
        td = self.capabilities.text_document
        ds = td.document_symbol if td else None
        return bool(ds and ds.hierarchical_document_symbol_support)

    @property
    def folding_limit(self) -> int | None:
        td = self.capabilities.text_document
        return td.folding_range.range_limit if td and td.folding_range else None

    # -- documents ---------------------------------------------------------------------------
    def open(self, text: str, uri: str | None = None, version: int = 1) -> str:
        uri = uri or f"file:///tmp/nika-local/flow-{next(_ids)}.nika.yaml"
        self.change(uri, text, version)
        return uri

    def change(self, uri: str, text: str, version: int) -> None:
        self.texts[uri] = text
        self.docs.set(uri, text, version)

    def snapshot(self, uri: str) -> Snapshot | None:
        """What ``NikaLanguageServer.snapshot`` answers (completion reads it through ``ls``)."""
        return self.docs.snapshot(uri) if self.docs.known(uri) else None

    def snap(self, uri: str) -> Snapshot:
        snap = self.snapshot(uri)
        assert snap is not None, uri
        return snap

    # -- features ----------------------------------------------------------------------------
    def diagnostics(self, uri: str) -> list[lsp.Diagnostic]:
        return diagnostics.diagnostics_for(self.snap(uri), self.encoding, related_support=self.related_information)

    def hover(self, uri: str, at: lsp.Position) -> lsp.Hover | None:
        snap = self.snap(uri)
        good = snap if snap.compiled.workflow is not None else self.docs.last_good(uri)
        return hover.hover_at(snap, at, self.encoding, view_of(good) if good is not None else None)

    def complete(self, uri: str, at: lsp.Position) -> list[lsp.CompletionItem]:
        # `self` stands in for the server: completion reads `ls.docs` and `ls.snapshot` only
        doc = self.docs.text(uri)
        assert doc is not None, uri
        rep = completion.completion_at(self, doc, at, self.encoding, self.snippets)  # type: ignore[arg-type]
        return list(rep.items) if rep is not None else []

    def code_actions(self, uri: str, diags: Sequence[lsp.Diagnostic], only: list[str] | None) -> list[lsp.CodeAction]:
        out: list[lsp.CodeAction] = []
        if actions.wanted(actions.QUICK_FIX_KIND, only):
            out += actions.quick_fixes(uri, diags)
        if actions.wanted(actions.FIX_ALL_KIND, only):
            action = actions.fix_all(self.snap(uri), self.encoding, versioned=self.document_changes)
            if action is not None:
                out.append(action)
        return out

    def definition(self, uri: str, at: lsp.Position) -> lsp.Location | None:
        return navigation.find_definition(self.snap(uri), at, self.encoding)

    def references(self, uri: str, at: lsp.Position, *, include_declaration: bool) -> list[lsp.Location] | None:
        return navigation.find_references(self.snap(uri), at, self.encoding, include_declaration)

    def prepare_rename(self, uri: str, at: lsp.Position) -> lsp.PrepareRenamePlaceholder | navigation.Refusal | None:
        return navigation.prepare_rename(self.snap(uri), at, self.encoding)

    def rename(self, uri: str, at: lsp.Position, new_name: str) -> lsp.WorkspaceEdit | navigation.Refusal | None:
        return navigation.rename(self.snap(uri), at, new_name, self.encoding, document_changes=self.document_changes)

    def document_symbols(self, uri: str) -> list[lsp.DocumentSymbol]:
        return outline.document_symbols(self.snap(uri), self.encoding)

    def folding_ranges(self, uri: str) -> list[lsp.FoldingRange]:
        return outline.folding_ranges(self.snap(uri), self.folding_limit)

    def inlay_hints(self, uri: str, rng: lsp.Range) -> list[lsp.InlayHint]:
        snap = self.snap(uri)
        first = snap.source.line_index(offset_of(snap.source, rng.start, self.encoding))
        last = snap.source.line_index(offset_of(snap.source, rng.end, self.encoding))
        return outline.inlay_hints(snap, self.encoding, first, last)

    def semantic_tokens(self, uri: str) -> list[int]:
        """As the server answers: from the document's token cache (kept across its versions)."""
        cache = self.docs.state(uri, "semantic-tokens", tokens.TokenCache)
        return tokens.semantic_tokens(self.snap(uri), self.encoding, cache)

    def semantic_document(self, uri: str) -> dict[str, object]:
        return semantic_document.document_for(self.snap(uri), self.encoding)

    def code_lenses(self, uri: str, *, run: bool = False) -> list[lsp.CodeLens]:
        return lenses.code_lenses(self.snap(uri), self.encoding, run=run)
