"""The ``nika/graph`` request: the compiled plan of one document as plain JSON.

A client (a graph view, a test, a script) sends ``{textDocument: {uri}}`` and gets::

    {"nika_graph_version": 1,
     "nodes": [{"id", "verb", "wave", "when", "for_each", "tool"?, "model"?}, …],
     "edges": [{"from", "to", "kind", "label"}, …],
     "waves": [[task ids of wave 0], [wave 1], …],
     "spans": {task id: LSP range of the task entry}}

or ``{"reason": "parse"}`` when the document has no model (it is not a YAML mapping). Nodes come
in wave order, then the tasks caught on a cycle (``wave: null``). ``wave`` is the 0-based index
into ``waves``. Edges are the derived ones of :mod:`checker.graph` (data, control and recovery),
in source order, without edges from undeclared tasks (those are findings, not plan).

The module also holds the small helpers the outline features share with the plan: the extent
of a node's written content and a task's effective model.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from checker.graph import Graph
from checker.model import Agent, Infer, Invoke, Task, Workflow
from checker.source import SourceText, Span
from checker.values import ListValue, MapValue, ScalarValue, Value
from nika_lsp.convert import span_to_range

if TYPE_CHECKING:
    from nika_lsp.documents import Snapshot
    from nika_lsp.server import NikaLanguageServer

GRAPH_METHOD = "nika/graph"
# Our own request's version. Deliberately not the spec's `graph_format` key: this payload is not
# the spec's semantic-document projection and must not be mistaken for one.
GRAPH_VERSION = 1


# -- helpers shared with the outline features ------------------------------------------------


def extent(src: SourceText, node: Value) -> Span:
    """The span of what is written for ``node``: trailing blank lines and whitespace excluded.

    A block collection ends where its last leaf ends, so comment lines that follow it are not
    part of it; a block scalar loses the line breaks it keeps after its last line.
    """
    end = _content_end(node)
    text = src.text
    start = node.span.start
    while end > start and text[end - 1] in " \t\r\n":
        end -= 1
    return Span(start, max(end, start))


def _content_end(node: Value) -> int:
    if isinstance(node, MapValue) and node.entries and not node.flow:
        last = node.entries[-1]
        return max(last.key.span.end, _content_end(last.value))
    if isinstance(node, ListValue) and node.items and not node.flow:
        return max(node.items[-1].span.start, _content_end(node.items[-1]))
    return node.span.end


def task_extent(src: SourceText, task: Task) -> Span:
    """From the task's key to the end of its body."""
    body = extent(src, task.value)
    return Span(task.key.span.start, max(body.end, task.key.span.end))


def scalar_text(node: Value | None) -> str | None:
    """A scalar as written by the author: strings as they are, other values in YAML spelling."""
    if not isinstance(node, ScalarValue):
        return None
    if isinstance(node.value, str):
        return node.value
    return json.dumps(node.value)


def node_text(node: Value | None) -> str | None:
    """Any node as one line of text: a scalar as written, a collection as compact JSON."""
    if node is None:
        return None
    if isinstance(node, ScalarValue):
        return scalar_text(node)
    return json.dumps(node.to_python(), ensure_ascii=False, separators=(",", ":"), default=str)


def task_model(wf: Workflow, task: Task) -> str | None:
    """The model an ``infer:``/``agent:`` task uses: its own ``model:``, else the envelope's."""
    verb = task.verb
    if not isinstance(verb, (Infer, Agent)):
        return None
    own = scalar_text(verb.model)
    return own if own else scalar_text(wf.model)


# -- the plan document -----------------------------------------------------------------------


def _range_json(src: SourceText, span: Span, encoding: str) -> dict[str, dict[str, int]]:
    r = span_to_range(src, span, encoding)
    return {
        "start": {"line": r.start.line, "character": r.start.character},
        "end": {"line": r.end.line, "character": r.end.character},
    }


def _node_json(wf: Workflow, task: Task, wave: int | None) -> dict[str, Any]:
    out: dict[str, Any] = {
        "id": task.id,
        "verb": task.verb_kind,
        "wave": wave,
        "when": node_text(task.when),
        "for_each": node_text(task.for_each),
    }
    verb = task.verb
    if isinstance(verb, Invoke) and verb.tool is not None:
        out["tool"] = verb.tool
    model = task_model(wf, task)
    if model is not None:
        out["model"] = model
    return out


def _edges_json(graph: Graph) -> list[dict[str, Any]]:
    known = set(graph.nodes)
    seen: set[tuple[str, str, str, str | None]] = set()
    out: list[dict[str, Any]] = []
    for e in sorted(graph.edges, key=lambda e: (e.span.start, e.span.end)):
        key = (e.producer, e.consumer, e.kind, e.label)
        if e.producer not in known or key in seen:
            continue
        seen.add(key)
        out.append({"from": e.producer, "to": e.consumer, "kind": e.kind, "label": e.label})
    return out


def graph_document(snap: Snapshot, encoding: str) -> dict[str, Any]:
    """The plan of ``snap`` as the ``nika/graph`` JSON document."""
    wf = snap.compiled.workflow
    graph = snap.compiled.graph
    if wf is None or graph is None:
        return {"reason": "parse"}
    src = snap.source
    waves = graph.waves
    wave_of = {t: i for i, wave in enumerate(waves) for t in wave}
    order = [t for wave in waves for t in wave] + [t for t in graph.nodes if t not in wave_of]
    return {
        "nika_graph_version": GRAPH_VERSION,
        "nodes": [_node_json(wf, wf.tasks[t], wave_of.get(t)) for t in order],
        "edges": _edges_json(graph),
        "waves": [list(w) for w in waves],
        "spans": {t: _range_json(src, task_extent(src, task), encoding) for t, task in wf.tasks.items()},
    }


def _uri_of(params: Any) -> str | None:
    """``params.textDocument.uri`` whether pygls hands the params over as a dict or an object."""
    if isinstance(params, dict):
        doc = params.get("textDocument")
        uri = doc.get("uri") if isinstance(doc, dict) else None
    else:
        doc = getattr(params, "textDocument", None) or getattr(params, "text_document", None)
        uri = doc.get("uri") if isinstance(doc, dict) else getattr(doc, "uri", None)
    return uri if isinstance(uri, str) else None


def register(server: NikaLanguageServer) -> None:
    """Attach the ``nika/graph`` request handler."""

    @server.feature(GRAPH_METHOD)
    async def nika_graph(ls: NikaLanguageServer, params: Any) -> dict[str, Any] | None:
        uri = _uri_of(params)
        if uri is None:
            return None
        snap = await ls.snapshot_async(uri)
        if snap is None:
            return None
        return ls.safely("nika/graph", lambda: graph_document(snap, ls.encoding), None)
