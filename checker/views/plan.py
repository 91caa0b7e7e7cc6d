"""Helpers over the compiled plan shared by the editor's outline features and the drawings.

A node's written extent, a task's effective model, values as one line of text, the tasks that are
cancelled on every run. The plan's machine-readable view is the canonical projection
(:mod:`checker.views.projection`); nothing here is a document of its own.
"""

from __future__ import annotations

import json

from checker.core.display import clip, show_value
from checker.core.source import SourceText, Span
from checker.core.vocab import ALL_STATES
from checker.model.graph import Graph
from checker.model.workflow import Agent, CompiledWorkflow, Infer, Task, Workflow
from checker.parse.values import ListValue, MapValue, ScalarValue, Value

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


# -- positions and dead tasks ------------------------------------------------------------------


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
