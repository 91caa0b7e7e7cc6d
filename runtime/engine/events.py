"""Events: one sink that journals a frame (the hash-chained trace), keeps the event list of the
run's report and tells the caller's ``on_event`` (the CLI's progress lines).

Everything that happens in a run is said here, in one vocabulary: the permit judge's witnesses
(``permit_checked``), a builtin's own events (``tool_invoked``), the scheduler's task events.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from checker.model.workflow import Agent, Exec, Infer, Invoke, Task
from checker.parse.values import ScalarValue
from runtime.journal.write import Fields, Journal


class EventSink:
    """Where a run's events go. ``answered_by`` keeps what ``nika:prompt`` reported per gate
    task (``"human"`` | ``"default"``), which the ``human_gate_before`` policy reads."""

    def __init__(self, journal: Journal, on_event: Callable[[dict[str, Any]], None] | None) -> None:
        self.journal = journal
        self.clock = journal.clock  # the run's clock (runtime.determinism): what an effect's duration is read on
        self.events: list[dict[str, Any]] = []
        self.on_event = on_event
        self.answered_by: dict[str, str] = {}
        # adds what the run knows and the emitter does not (runtime.providers.cost prices each model-call frame)
        self.annotate: Callable[[str, Fields], Fields] | None = None

    def emit(self, kind: str, fields: Fields) -> None:
        if self.annotate is not None:
            fields = self.annotate(kind, fields)
        recorded, _uuid, at = self.journal.record(kind, fields)
        event: dict[str, Any] = {"type": kind.replace("_", ".", 1)}
        for k, v in recorded:
            event.setdefault(k, v)
        event.setdefault("task", None)
        event["at"] = at
        self.events.append(event)
        if self.on_event is not None:
            self.on_event(event)

    def witness(self, task: str, plane: str, gate: str, ok: bool, why: str) -> None:
        """The permit judge's decision on one effect (``runtime.guard.permits.Boundary`` calls this)."""
        decision = "allow" if ok else "deny"
        self.emit(
            "permit_checked",
            [("task", task), ("plane", plane), ("gate", gate), ("decision", decision), ("why", why)],
        )

    def tool_event(self, task: str, event: dict[str, Any]) -> None:
        """An event a builtin reported (``{"type": …, …}``) as a ``tool_invoked`` frame."""
        if event.get("type") == "prompt" and isinstance(event.get("answered_by"), str):
            self.answered_by[task] = event["answered_by"]
        fields: Fields = [("task", task), ("event", event.get("type", "event"))]
        fields += [(k, v) for k, v in event.items() if k not in ("type", "task")]
        self.emit("tool_invoked", fields)


def note(task: Task, model_override: str | None) -> str:
    """The one-line summary of a task the task events carry (``infer · openai/gpt-4o``)."""
    v = task.verb
    if isinstance(v, Infer):
        m = model_override or (v.effective_model.value if isinstance(v.effective_model, ScalarValue) else "")
        return f"infer · {m}"
    if isinstance(v, Exec):
        if v.command:
            first = v.command[0]
            return f"exec · {first.value if isinstance(first, ScalarValue) else '?'}"
        return "exec · shell"
    if isinstance(v, Invoke):
        return f"invoke · {v.tool or 'workflow'}"
    if isinstance(v, Agent):
        return "agent"
    return "task"
