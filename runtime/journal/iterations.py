"""The iterations of a ``for_each`` task, as plain data over its events: one place for every reader.

A run journals each settled iteration of a ``for_each`` as one frame (``checkpoint_written``, or
``task_cache_hit`` when a resume rehydrated it; :func:`runtime.engine.resume_match.journal_iteration`
writes them) whose fields carry ``task``, ``index``, ``items`` (how many the fan-out has), ``item`` (a
short preview of the item: :func:`preview`), ``status``, ``duration_ms``, and on a failure
``error_code`` and ``message``; a retry of one iteration is a ``task_retrying`` frame with the same
``index``. Those frames are events of the same shape live (``--events``, ``Options.on_event``) and
read back (:func:`runtime.journal.read.event_of`), so this module serves both:

* :func:`iteration_rows` — every task's iterations from a run's events, in index order;
* :class:`IterationFold` — the same, one event at a time, for a view that follows a run live
  (``nika run``'s progress lines, ``trace show``, and the debugger and dashboard to come).

A row is a plain dict: ``{"index", "item", "status", "duration_ms", "cache_hit", "error_code",
"message", "retries"}`` (``retries``: the codes its failed attempts ended with, in order). A journal
older than these fields gives rows with what it has (``status`` ``success`` for a checkpoint without
one, ``None`` where a field is absent), never a guess.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any

PREVIEW_CHARS = 40
ITERATION_EVENTS = frozenset({"checkpoint.written", "task.cache_hit"})


def preview(item: Any, limit: int = PREVIEW_CHARS) -> str:
    """An item as a short line: its compact JSON (a string as it is), cut to ``limit`` characters."""
    if isinstance(item, str):
        text = item
    else:
        try:
            text = json.dumps(item, separators=(",", ":"), ensure_ascii=False, sort_keys=True, default=str)
        except (TypeError, ValueError, RecursionError):
            text = str(item)
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def is_iteration(event: dict[str, Any]) -> bool:
    """The event settles one ``for_each`` iteration (it carries an integer ``index``)."""
    index = event.get("index")
    return event.get("type") in ITERATION_EVENTS and isinstance(index, int) and not isinstance(index, bool)


class IterationFold:
    """Iterations folded one event at a time: ``rows[task][index]`` is the latest row of each."""

    def __init__(self) -> None:
        self.rows: dict[str, dict[int, dict[str, Any]]] = {}
        self.sizes: dict[str, int] = {}  # task -> `items`, once an iteration said it
        self._retries: dict[tuple[str, int], list[str]] = {}

    def add(self, event: dict[str, Any]) -> dict[str, Any] | None:
        """Fold ``event``; the row it settled, or ``None`` when it settles no iteration."""
        task = event.get("task")
        if not isinstance(task, str):
            return None
        index = event.get("index")
        if event.get("type") == "task.retrying" and isinstance(index, int):
            self._retries.setdefault((task, index), []).append(str(event.get("error_code")))
            return None
        if not is_iteration(event):
            return None
        assert isinstance(index, int)
        if isinstance(event.get("items"), int):
            self.sizes[task] = event["items"]
        cache_hit = event.get("type") == "task.cache_hit"
        status = event.get("status")
        row = {
            "index": index,
            "item": event.get("item") if isinstance(event.get("item"), str) else None,
            "status": status if isinstance(status, str) else "success",
            "duration_ms": _num(event.get("duration_ms")),
            "cache_hit": cache_hit,
            "error_code": event.get("error_code") if isinstance(event.get("error_code"), str) else None,
            "message": event.get("message") if isinstance(event.get("message"), str) else None,
            "retries": list(self._retries.get((task, index), [])),
        }
        self.rows.setdefault(task, {})[index] = row
        return row

    def of(self, task: str) -> list[dict[str, Any]]:
        """``task``'s iterations in index order."""
        return [self.rows[task][i] for i in sorted(self.rows.get(task, {}))]


def iteration_rows(events: Iterable[dict[str, Any]]) -> dict[str, list[dict[str, Any]]]:
    """Every ``for_each`` task's iterations in a run's events: ``{task: [row, …]}`` in index order."""
    fold = IterationFold()
    for e in events:
        fold.add(e)
    return {task: fold.of(task) for task in fold.rows}


def _num(v: Any) -> float | None:
    return float(v) if isinstance(v, int | float) and not isinstance(v, bool) else None
