"""Check-time values: what the certificate can know of a task before the run — a literal or a
``const.*`` chain, the ``for_each`` item count, the retry attempts, the parts that run."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from checker.model.workflow import Task, Verb, Workflow
from checker.parse.values import ListValue, MapValue, ScalarValue, TemplateValue, Value

#: a value only the run knows
UNKNOWN: Any = object()


def const_scope(wf: Workflow) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for c in wf.const:
        src = c.literal if c.literal is not None else (c.value if c.type is None else None)
        if src is not None and _literal_only(src):
            out[c.name] = src.to_python()
    return out


def _literal_only(v: Value) -> bool:
    if isinstance(v, TemplateValue):
        return False
    if isinstance(v, MapValue):
        return all(_literal_only(e.value) for e in v.entries)
    if isinstance(v, ListValue):
        return all(_literal_only(i) for i in v.items)
    return True


def static_value(consts: Mapping[str, Any], task: Task, v: Value | None, depth: int = 0) -> Any:
    """The run-independent value of ``v``: a literal, or one ``${{ }}`` island that is a plain
    ``const.*`` chain (or a ``with.*`` binding holding one). Inputs and config are supplied per
    run and never count; anything else is :data:`UNKNOWN`. A list value answers its items."""
    if v is None or depth > 8:
        return UNKNOWN
    if isinstance(v, ListValue):
        return list(v.items)
    if not isinstance(v, TemplateValue):
        return v.value if isinstance(v, ScalarValue) else UNKNOWN
    t = v.template
    if t is None or t.errors or not t.is_single_island:
        return UNKNOWN
    island = t.islands[0]
    if island.expr is None:
        return UNKNOWN
    from checker.expr.refs import as_ref

    ref = as_ref(island.expr)
    if ref is None or not ref.path:
        return UNKNOWN
    if ref.root == "with" and isinstance(ref.path[0], str) and len(ref.path) == 1:
        b = task.binding(ref.path[0])
        return static_value(consts, task, b.value if b is not None else None, depth + 1)
    if ref.root != "const":
        return UNKNOWN
    cur: Any = consts
    for step in ref.path:
        in_map = isinstance(cur, dict) and isinstance(step, str) and step in cur
        in_list = (
            isinstance(cur, list) and isinstance(step, int) and not isinstance(step, bool) and 0 <= step < len(cur)
        )
        if not (in_map or in_list):
            return UNKNOWN
        cur = cur[step]  # type: ignore[index]
    return cur


def static_int(consts: Mapping[str, Any], task: Task, v: Value | None) -> int | None:
    r = static_value(consts, task, v)
    return r if isinstance(r, int) and not isinstance(r, bool) and r > 0 else None


def item_count(consts: Mapping[str, Any], task: Task) -> int | None:
    """How many times ``for_each`` runs the task: 1 without it, ``None`` when only the run knows."""
    if task.for_each is None:
        return 1
    r = static_value(consts, task, task.for_each)
    return len(r) if isinstance(r, list) else None


def attempts_of(task: Task) -> int:
    r = task.retry
    n = r.max_attempts if r is not None else 1
    return n if isinstance(n, int) and not isinstance(n, bool) and n >= 1 else 1


def literal_text(v: Value | None) -> str | None:
    if isinstance(v, ScalarValue) and not isinstance(v, TemplateValue) and isinstance(v.value, str):
        return v.value
    return None


def parts_of(task: Task) -> Iterator[tuple[str | None, Verb, bool]]:
    """The task's verb, then its cleanup steps (``once``: a cleanup step runs once per task)."""
    if task.verb is not None:
        yield None, task.verb, False
    for i, step in enumerate(task.on_finally):
        if step.verb is not None:
            yield f"on_finally[{i}]", step.verb, True
