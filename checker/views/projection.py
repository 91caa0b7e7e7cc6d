"""The canonical projection of one workflow (spec 16 §the one projection, 03 §graph projection).

One producer, :func:`project`, over the compiled model; every surface serves what it returns:

* ``nika inspect FILE --format json`` prints :meth:`Projection.canonical` (and ``nika graph
  --format json`` the same bytes);
* the language server's ``nika/semanticDocument`` answers :func:`semantic_document` — the same
  graph verbatim, the task-id spans beside it, and the one-word ``reason`` when there is no graph;
* the MCP server's ``nika_inspect`` tool returns :meth:`Projection.canonical` as its text;
* ``nika:inspect`` ``view: dag_info`` answers with its nodes and edges, ``nika graph`` draws
  its nodes and edges, the VS Code graph view draws the semantic document.

The graph document (``graph_format: 2``)::

    {"graph_format": 2, "workflow": <id>,
     "nodes": [{"id", "verb", "permits": [...], "when": str|null, "fan_out": {...}|null,
                "cost_interval": [min_path, worst_case]|null,
                "tool"?, "model"?, "retry_max_attempts"?, "timeout_ms"?, "on_error"?, "outputs"?}, ...],
     "edges": [{"from", "to", "kind", "binding"? | "predicate"?}, ...]}

* **Nodes** in wave order over the precedence graph, declaration order inside a wave.
  ``permits`` is the task's share of the effect walk :func:`checker.rules.authority.inferred_block`
  folds into a ``permits:`` block, one ``family:target`` string each (``exec:`` ``fs.read:``
  ``fs.write:`` ``net.http:`` ``tool:``), sorted; ``exec:*`` stands for ``exec: true`` (a shell
  line or a computed program). ``when`` is the condition as written (``"true"``/``"false"`` for a
  boolean). ``fan_out`` is ``{"kind": "list", "count": n}`` for a literal list, ``{"kind":
  "expression"}`` otherwise. ``cost_interval`` is priced model tasks only (the price table is an
  argument, by default the model catalog's list prices; ``NIKA_PRICES`` is never read, so the
  bytes depend on the source and the shipped catalog alone): the worst case is the certificate's
  ceiling (every attempt of every item at the token cap), the minimum path one attempt per item;
  no price or no cap, no interval (never a fabricated 0).
  ``model`` is the effective model as written (the task's, else the workflow's); ``timeout_ms``
  the parsed ``timeout:``; ``outputs`` the ``output:`` binding names in source order.
* **Edges** are the derived edges of :mod:`checker.model.graph`: one per ``with:`` binding and
  producer and kind (``value``, ``terminal-observation``, ``failure-observation``, each with its
  ``binding``), one per ``after:`` entry (``control`` with its ``predicate``), one per
  ``on_error.recover`` producer (``recovery``), in source order.

The bytes are RFC 8785 (:mod:`checker.core.jcs`): sorted keys, no whitespace, ES6 numbers.

**No graph without a clean check** (03: "the document is defined only for a workflow whose
conformance report is clean"): with an error among the compiled findings (pass the findings as
configured, :func:`checker.project.admission.configured`, so the projection agrees with
``nika check``) ``graph`` is ``None`` and ``reason`` is ``findings``; with no model at all it is
``parse``. Warnings never block it. :attr:`Projection.draft` keeps the same projection built
despite findings (tasks caught on a cycle last) for drawings that show a broken workflow — it is
never served as the projection.

Pure: no I/O, no environment, no protocol; callers convert :attr:`Projection.spans` (code-point
spans of each task's id token) to their own positions.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from typing import Any

from checker.core import jcs
from checker.core.display import show_value
from checker.core.records import field, record
from checker.core.source import SourceText, Span
from checker.core.vocab import EdgeRole
from checker.model.graph import Edge as ModelEdge
from checker.model.graph import Graph as ModelGraph
from checker.model.workflow import Agent, CompiledWorkflow, Infer, Invoke, Task, Workflow
from checker.parse.values import ListValue, ScalarValue, Value
from checker.views.certificate.prices import PriceTable

#: spec 03's graph document version (the nested graph's own)
GRAPH_FORMAT = 2
#: spec 16's semantic-document version (the LSP surface's own)
SEMANTIC_DOCUMENT_FORMAT = 1
#: why there is no graph (spec 16 §reason, closed)
REASONS = ("parse", "findings")
#: edge kinds whose extra field is the ``with:`` binding that created them
DATA_KINDS = frozenset({EdgeRole.VALUE, EdgeRole.TERMINAL_OBSERVATION, EdgeRole.FAILURE_OBSERVATION})
#: the default prices: the model catalog's list prices alone (``checker/contracts/models.toml``)
CATALOG_PRICES = PriceTable(catalog=True, source="the model catalog")
#: permit families, the ``permits:`` plane each names
FAMILIES = {"exec": "exec", "fs.read": "fs.read", "fs.write": "fs.write", "net": "net.http", "tools": "tool"}

SpanJson = Callable[[SourceText, Span], Any]


@record(eq=False)
class Node:
    """One task as the projection shows it. ``task`` is the model it was projected from
    (presentation: a drawing's caption, a debugger's source link), never serialized."""

    id: str
    verb: str | None
    permits: tuple[str, ...]
    when: str | None
    fan_out: tuple[str, int | None] | None  # (kind, count)
    cost_interval: tuple[float, float] | None
    tool: str | None = None
    model: str | None = None
    retry_max_attempts: int | None = None
    timeout_ms: int | float | None = None
    on_error: str | None = None
    outputs: tuple[str, ...] = ()
    task: Task | None = field(default=None, repr=False)

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "id": self.id,
            "verb": self.verb,
            "permits": list(self.permits),
            "when": self.when,
            "fan_out": None,
            "cost_interval": list(self.cost_interval) if self.cost_interval is not None else None,
        }
        if self.fan_out is not None:
            kind, count = self.fan_out
            out["fan_out"] = {"kind": kind} if count is None else {"kind": kind, "count": count}
        for name in ("tool", "model", "retry_max_attempts", "timeout_ms", "on_error"):
            value = getattr(self, name)
            if value is not None:
                out[name] = value
        if self.outputs:
            out["outputs"] = list(self.outputs)
        return out


@record(eq=False)
class Edge:
    """One projected edge. ``reads`` are the model's edges it stands for — each reference, with
    the field it reads and its span — for drawings that label every read (never serialized)."""

    source: str
    target: str
    kind: str
    binding: str | None = None
    predicate: str | None = None
    reads: tuple[ModelEdge, ...] = field(default=(), repr=False)

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"from": self.source, "to": self.target, "kind": self.kind}
        if self.kind in DATA_KINDS and self.binding is not None:
            out["binding"] = self.binding
        elif self.kind == EdgeRole.CONTROL and self.predicate is not None:
            out["predicate"] = self.predicate
        return out


@record(eq=False)
class GraphDoc:
    """The graph document (03, ``graph_format: 2``) as typed records."""

    workflow: str | None
    nodes: tuple[Node, ...]
    edges: tuple[Edge, ...]

    def to_json(self) -> dict[str, Any]:
        """The document as plain JSON data (keys in insertion order; :func:`canonical` sorts them)."""
        return {
            "graph_format": GRAPH_FORMAT,
            "workflow": self.workflow,
            "nodes": [n.to_json() for n in self.nodes],
            "edges": [e.to_json() for e in self.edges],
        }

    def node(self, tid: str) -> Node | None:
        return next((n for n in self.nodes if n.id == tid), None)

    def reads(self) -> list[ModelEdge]:
        """Every reference behind the edges, in source order, once per (producer, consumer, kind,
        field): what a drawing labels with the field each reference reads."""
        seen: set[tuple[str, str, str, str | None]] = set()
        out: list[ModelEdge] = []
        for e in sorted((r for edge in self.edges for r in edge.reads), key=lambda e: (e.span.start, e.span.end)):
            key = (e.producer, e.consumer, e.kind, e.label)
            if key not in seen:
                seen.add(key)
                out.append(e)
        return out


@record(eq=False)
class Projection:
    """What :func:`project` returns: the projection (``graph``), or why there is none (``reason``),
    the span of each task's id token, and the ``draft`` drawings may show despite findings."""

    graph: GraphDoc | None
    reason: str | None
    spans: Mapping[str, Span]
    draft: GraphDoc | None = None

    def document(self) -> dict[str, Any] | None:
        """The graph document as plain JSON data, ``None`` without a graph."""
        return self.graph.to_json() if self.graph is not None else None

    def canonical(self) -> str | None:
        """The canonical bytes (as text) every surface serves, ``None`` without a graph."""
        doc = self.document()
        return canonical(doc) if doc is not None else None


def canonical(doc: Any) -> str:
    """The RFC 8785 text of a projection (or any JSON value)."""
    return jcs.dumps(doc)


def project(compiled: CompiledWorkflow, prices: PriceTable | None = None) -> Projection:
    """The projection of ``compiled``; ``prices`` prices ``cost_interval`` (by default the model
    catalog's list prices, shipped data: never ``NIKA_PRICES``, so every surface and every
    environment serves the same bytes)."""
    wf, graph = compiled.workflow, compiled.graph
    if wf is None or graph is None:
        return Projection(None, "parse", {})
    spans = {tid: task.key.span for tid, task in wf.tasks.items()}
    draft = _graph(compiled, wf, graph, prices if prices is not None else CATALOG_PRICES)
    if not compiled.clean:
        return Projection(None, "findings", spans, draft)
    return Projection(draft, None, spans, draft)


def semantic_document(p: Projection, span_json: SpanJson, source: SourceText) -> dict[str, Any]:
    """The LSP surface (16 §semantic document): the projection verbatim under ``graph`` (``null``
    and a one-word ``reason`` without one) and ``spans`` as the caller's ranges."""
    doc = p.document()
    out: dict[str, Any] = {"semantic_document_format": SEMANTIC_DOCUMENT_FORMAT}
    # the graph member parsed back from its canonical text: its keys come out in canonical order
    out["graph"] = _canonical_order(doc) if doc is not None else None
    if doc is None:
        out["reason"] = p.reason
    out["spans"] = {tid: span_json(source, span) for tid, span in p.spans.items()}
    return out


def _canonical_order(doc: dict[str, Any]) -> dict[str, Any]:
    loaded: dict[str, Any] = json.loads(canonical(doc))
    return loaded


def waves_of(doc: Mapping[str, Any]) -> list[list[str]]:
    """The waves (Kahn levels over the scheduling edges: every kind but ``recovery``) of a graph
    document, read from the document alone; tasks caught on a cycle are in none. Inside a wave,
    tasks keep the document's node order."""
    order = {n["id"]: i for i, n in enumerate(doc["nodes"])}
    preds: dict[str, set[str]] = {t: set() for t in order}
    succs: dict[str, set[str]] = {t: set() for t in order}
    for e in doc["edges"]:
        if e["kind"] == EdgeRole.RECOVERY or e["from"] not in order or e["to"] not in order:
            continue
        preds[e["to"]].add(e["from"])
        succs[e["from"]].add(e["to"])
    left = {t: len(p) for t, p in preds.items()}
    level = [t for t in order if left[t] == 0]
    out: list[list[str]] = []
    while level:
        out.append(level)
        nxt: set[str] = set()
        for t in level:
            for s in succs[t]:
                left[s] -= 1
                if left[s] == 0:
                    nxt.add(s)
        level = sorted(nxt, key=order.__getitem__)
    return out


# -- the producer ------------------------------------------------------------------------------


def _graph(compiled: CompiledWorkflow, wf: Workflow, graph: ModelGraph, prices: PriceTable) -> GraphDoc:
    waves = graph.waves
    placed = {t for wave in waves for t in wave}
    order = [t for wave in waves for t in wave] + [t for t in graph.nodes if t not in placed]
    permits = _permits(wf)
    costs = _cost_intervals(wf, prices)
    nodes = tuple(_node(wf, wf.tasks[t], permits.get(t, ()), costs.get(t)) for t in order)
    return GraphDoc(wf.id, nodes, _edges(graph))


def _node(wf: Workflow, task: Task, permits: tuple[str, ...], cost: tuple[float, float] | None) -> Node:
    verb = task.verb
    timeout = task.timeout.ms if task.timeout is not None and task.timeout.value is not None else None
    return Node(
        id=task.id,
        verb=task.verb_kind,
        permits=permits,
        when=_text(task.when),
        fan_out=_fan_out(task.for_each),
        cost_interval=cost,
        tool=verb.tool if isinstance(verb, Invoke) else None,
        model=_text(verb.effective_model) if isinstance(verb, (Infer, Agent)) else None,
        retry_max_attempts=task.retry.max_attempts if task.retry is not None else None,
        timeout_ms=(int(timeout) if float(timeout).is_integer() else timeout) if timeout is not None else None,
        on_error=str(task.on_error.action) if task.on_error is not None else None,
        outputs=tuple(b.name for b in task.output),
        task=task,
    )


def _text(v: Value | None) -> str | None:
    """A value as its source reads: a string as written, any other scalar in YAML spelling, a
    collection as compact JSON."""
    if v is None:
        return None
    if isinstance(v, ScalarValue):
        return v.value if isinstance(v.value, str) else show_value(v.value, 200)
    from checker.views.plan import node_text

    return node_text(v)


def _fan_out(v: Value | None) -> tuple[str, int | None] | None:
    if v is None:
        return None
    if isinstance(v, ListValue):
        return ("list", len(v.items))
    return ("expression", None)


def _permits(wf: Workflow) -> dict[str, tuple[str, ...]]:
    """Each task's grants, read off the one effect walk (:func:`checker.rules.authority.grant_of`)."""
    from checker.rules.authority import grant_of, needs_of

    out: dict[str, tuple[str, ...]] = {}
    for tid, task in wf.tasks.items():
        items: set[str] = set()
        for n in needs_of(task):
            family = FAMILIES.get(n.plane)
            if family is None:
                continue
            item, _note = grant_of(n)
            if item is True:
                items.add(f"{family}:*")
            elif isinstance(item, str):
                items.add(f"{family}:{item}")
        if items:
            out[tid] = tuple(sorted(items))
    return out


def _cost_intervals(wf: Workflow, prices: PriceTable) -> dict[str, tuple[float, float]]:
    """``[min_path, worst_case]`` of each priced, capped model task (the certificate's spends)."""
    from checker.views.certificate.cost import cost_of
    from checker.views.certificate.static_values import const_scope

    out: dict[str, tuple[float, float]] = {}
    for s in cost_of(wf, const_scope(wf), prices).spends:
        if s.part is None and s.kind in ("infer", "agent") and s.status == "ceiling" and s.usd is not None:
            out[s.task] = (round(s.usd / max(s.attempts, 1), 10), round(s.usd, 10))
    return out


def _edges(graph: ModelGraph) -> tuple[Edge, ...]:
    known = set(graph.nodes)
    grouped: dict[tuple[str, str, str, str | None], list[ModelEdge]] = {}
    for e in sorted(graph.edges, key=lambda e: (e.span.start, e.span.end)):
        if e.producer not in known or e.consumer not in known:
            continue  # a reference to an undeclared task is a finding, not an edge
        extra = e.binding if e.kind in DATA_KINDS else (e.label if e.kind == EdgeRole.CONTROL else None)
        grouped.setdefault((e.producer, e.consumer, str(e.kind), extra), []).append(e)
    out = []
    for (src, dst, kind, extra), reads in grouped.items():
        binding = extra if kind in DATA_KINDS else None
        predicate = extra if kind == EdgeRole.CONTROL else None
        out.append(Edge(src, dst, kind, binding, predicate, tuple(reads)))
    return tuple(out)
