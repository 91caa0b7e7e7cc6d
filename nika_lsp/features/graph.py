"""The ``nika/graph`` request: the compiled plan of one document as plain JSON.

A client (a graph view, a test, a script) sends ``{textDocument: {uri}}`` and gets the document
:func:`checker.views.plan.plan_document` builds (``nika graph --format json`` prints the same), with
``spans`` as LSP ranges in the negotiated position encoding, or ``{"reason": "parse"}`` when the
document has no model (it is not a YAML mapping).

The outline features' helpers (a node's written extent, a task's effective model) live in
:mod:`checker.views.plan` and are re-exported here.
"""

from __future__ import annotations

from functools import partial
from typing import TYPE_CHECKING, Any

from checker.core.source import SourceText, Span
from checker.views.plan import GRAPH_VERSION, extent, node_text, plan_document, scalar_text, task_extent, task_model
from nika_lsp.convert import span_to_range

if TYPE_CHECKING:
    from nika_lsp.documents import Snapshot
    from nika_lsp.host import Host

__all__ = [
    "GRAPH_VERSION",
    "extent",
    "graph_document",
    "node_text",
    "register",
    "scalar_text",
    "task_extent",
    "task_model",
]

GRAPH_METHOD = "nika/graph"


def _range_json(src: SourceText, span: Span, encoding: str) -> dict[str, dict[str, int]]:
    r = span_to_range(src, span, encoding)
    return {
        "start": {"line": r.start.line, "character": r.start.character},
        "end": {"line": r.end.line, "character": r.end.character},
    }


def graph_document(snap: Snapshot, encoding: str) -> dict[str, Any]:
    """The plan of ``snap`` as the ``nika/graph`` JSON document."""
    return plan_document(snap.compiled, partial(_range_json, encoding=encoding))


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
    """Attach the ``nika/graph`` request handler."""

    @server.feature(GRAPH_METHOD)
    async def nika_graph(ls: Host, params: Any) -> dict[str, Any] | None:
        uri = _uri_of(params)
        if uri is None:
            from pygls.exceptions import JsonRpcInvalidParams

            raise JsonRpcInvalidParams("Invalid params for nika/graph: expected {textDocument: {uri: string}}")
        snap = await ls.snapshot_async(uri)
        if snap is None:
            return None
        return ls.safely("nika/graph", lambda: graph_document(snap, ls.encoding), None)
