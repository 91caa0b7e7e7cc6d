"""The ``nika/semanticDocument`` request (spec 16 §the one projection): the canonical projection of
one open document, verbatim, with the spans an editor needs.

A client (the VS Code graph view, a canvas, a test) sends ``{textDocument: {uri}}`` and gets::

    {"semantic_document_format": 1,
     "graph": <the graph document nika inspect --format json prints> | null,
     "reason": "parse" | "findings",          # only when graph is null
     "spans": {task id: <LSP range of the task's id token>}}

``graph`` is :func:`checker.views.projection.project` of the snapshot (whose findings are the
ones ``nika check`` prints), parsed back from its canonical text so its keys arrive in canonical
order; ``spans`` are in the negotiated position encoding. A projection always answers: a document
that is not a workflow gets ``reason: parse`` and no spans, one with check errors ``reason:
findings`` and the spans of its tasks. An unknown document gets ``null``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from checker.core.source import SourceText, Span
from checker.views.projection import SEMANTIC_DOCUMENT_FORMAT, Projection, project, semantic_document
from nika_lsp.convert import span_to_range

if TYPE_CHECKING:
    from nika_lsp.documents import Snapshot
    from nika_lsp.host import Host

METHOD = "nika/semanticDocument"


def _range_json(src: SourceText, span: Span, encoding: str) -> dict[str, dict[str, int]]:
    r = span_to_range(src, span, encoding)
    return {
        "start": {"line": r.start.line, "character": r.start.character},
        "end": {"line": r.end.line, "character": r.end.character},
    }


def projection(snap: Snapshot) -> Projection:
    """The snapshot's projection, computed once per snapshot."""
    return snap.derived("projection", lambda: project(snap.compiled))


def document_for(snap: Snapshot, encoding: str) -> dict[str, Any]:
    """The semantic document of ``snap`` with ranges in ``encoding``."""
    return semantic_document(projection(snap), lambda src, span: _range_json(src, span, encoding), snap.source)


def _uri_of(params: Any) -> str | None:
    """``params.textDocument.uri`` whether pygls hands the params over as a dict or an object."""
    if isinstance(params, dict):
        doc = params.get("textDocument")
        uri = doc.get("uri") if isinstance(doc, dict) else None
    else:
        doc = getattr(params, "textDocument", None) or getattr(params, "text_document", None)
        uri = doc.get("uri") if isinstance(doc, dict) else getattr(doc, "uri", None)
    return uri if isinstance(uri, str) else None


def register(server: Host) -> None:
    """Attach the ``nika/semanticDocument`` request handler."""

    @server.feature(METHOD)
    async def nika_semantic_document(ls: Host, params: Any) -> dict[str, Any] | None:
        uri = _uri_of(params)
        if uri is None:
            from pygls.exceptions import JsonRpcInvalidParams

            raise JsonRpcInvalidParams(f"Invalid params for {METHOD}: expected {{textDocument: {{uri: string}}}}")
        snap = await ls.snapshot_async(uri)
        if snap is None:
            return None
        # a bug in the projection still answers (16: a projection always answers); the log says what broke
        unbuilt = {"semantic_document_format": SEMANTIC_DOCUMENT_FORMAT, "graph": None, "reason": "findings"}
        return ls.safely(METHOD, lambda: document_for(snap, ls.encoding), {**unbuilt, "spans": {}})
