"""The compiled plan of one workflow as plain JSON: what ``nika graph`` prints and ``nika/graph`` answers.

The document::

    {"nika_graph_version": 1,
     "nodes": [{"id", "verb", "wave", "when", "for_each", "tool"?, "model"?, "dead"?}, …],
     "edges": [{"from", "to", "kind", "label"}, …],
     "waves": [[task ids of wave 0], [wave 1], …],
     "spans": {task id: <the task entry's span, in the caller's position format>}}

Nodes come in wave order, then the tasks caught on a cycle (``wave: null``). ``wave`` is the
0-based index into ``waves``. Edges are the derived ones of :mod:`checker.model.graph` (data, control
and recovery), in source order, without edges from undeclared tasks (those are findings, not
plan). ``dead: true`` marks a task that is cancelled on every run: one ``NIKA-DAG-006`` names,
and every task whose edges from a dead task do not pass ``cancelled``.

Pure and protocol-free: ``nika graph`` uses it without loading the language server; the server
passes its own span converter (the client's position encoding).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from checker.core.display import clip, show_value
from checker.core.source import SourceText, Span
from checker.core.vocab import ALL_STATES
from checker.model.graph import Graph
from checker.model.workflow import Agent, CompiledWorkflow, Infer, Invoke, Task, Workflow
from checker.parse.values import ListValue, MapValue, ScalarValue, Value

# Our own document's version. Deliberately not the spec's `graph_format` key: this payload is not
# the spec's semantic-document projection and must not be mistaken for one.
GRAPH_VERSION = 1

SpanJson = Callable[[SourceText, Span], Any]
# Values quoted in the plan (a `when:`, a `for_each:`, a model) are bounded like every shown value.
TEXT_LIMIT = 200


# -- helpers shared with the editor's outline features ---------------------------------------


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
        return clip(node.value, TEXT_LIMIT)
    return show_value(node.value, TEXT_LIMIT)


def node_text(node: Value | None) -> str | None:
    """Any node as one line of text: a scalar as written, a collection as compact JSON."""
    if node is None:
        return None
    if isinstance(node, ScalarValue):
        return scalar_text(node)
    try:
        text = json.dumps(node.to_python(), ensure_ascii=False, separators=(",", ":"), default=str)
    except ValueError:  # an integer past Python's int-to-string limit
        return show_value(node.to_python(), TEXT_LIMIT)
    return clip(text, TEXT_LIMIT)


def task_model(wf: Workflow, task: Task) -> str | None:
    """The model an ``infer:``/``agent:`` task uses: its own ``model:``, else the envelope's."""
    verb = task.verb
    if not isinstance(verb, (Infer, Agent)):
        return None
    return scalar_text(verb.effective_model)


# -- the plan document -----------------------------------------------------------------------


def line_col_span(src: SourceText, span: Span) -> dict[str, dict[str, int]]:
    """A span as 1-based lines and code-point columns (the positions ``nika check`` prints)."""
    start, end = src.line_col(span.start), src.line_col(span.end)
    return {
        "start": {"line": start.line, "column": start.column},
        "end": {"line": end.line, "column": end.column},
    }


def dead_tasks(compiled: CompiledWorkflow, graph: Graph) -> set[str]:
    """Tasks cancelled on every run: those NIKA-DAG-006 names, then what they starve downstream."""
    dead = {d.task for d in compiled.diagnostics if d.code == "NIKA-DAG-006" and d.task}
    stack = list(dead)
    while stack:
        producer = stack.pop()
        passes: dict[str, frozenset[str]] = {}
        for e in graph.outgoing(producer):
            passes[e.consumer] = passes.get(e.consumer, ALL_STATES) & e.passes
        for consumer, allowed in passes.items():
            if "cancelled" not in allowed and consumer not in dead:
                dead.add(consumer)
                stack.append(consumer)
    return dead


def _node_json(wf: Workflow, task: Task, wave: int | None, dead: bool) -> dict[str, Any]:
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
    if dead:
        out["dead"] = True
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


def plan_document(compiled: CompiledWorkflow, span_json: SpanJson = line_col_span) -> dict[str, Any]:
    """The plan of ``compiled``; ``{"reason": "parse"}`` when the text has no model."""
    wf = compiled.workflow
    graph = compiled.graph
    if wf is None or graph is None:
        return {"reason": "parse"}
    src = compiled.source
    waves = graph.waves
    wave_of = {t: i for i, wave in enumerate(waves) for t in wave}
    order = [t for wave in waves for t in wave] + [t for t in graph.nodes if t not in wave_of]
    dead = dead_tasks(compiled, graph)
    return {
        "nika_graph_version": GRAPH_VERSION,
        "nodes": [_node_json(wf, wf.tasks[t], wave_of.get(t), t in dead) for t in order],
        "edges": _edges_json(graph),
        "waves": [list(w) for w in waves],
        "spans": {t: span_json(src, task_extent(src, task)) for t, task in wf.tasks.items()},
    }
