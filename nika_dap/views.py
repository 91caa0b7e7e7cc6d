"""What a debugging session shows and where it stops, on plain data: task lines (a breakpoint on a
task's key line or any line of its body is that task's), ``${{ }}`` conditions (the checker's own
parser and evaluator), and the variable handles of DAP's Variables view. Values are masked before
they get here (the run's redactor, or the journal's masking on write)."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from checker.model.workflow import CompiledWorkflow


@dataclass(frozen=True)
class TaskLines:
    task: str
    key_line: int  # 1-based, the task's key
    last_line: int  # the last line of its body


def task_lines(compiled: CompiledWorkflow) -> list[TaskLines]:
    wf = compiled.workflow
    if wf is None:
        return []
    src = compiled.source
    out = []
    for tid, task in wf.tasks.items():
        span = task.span
        out.append(TaskLines(tid, src.line_col(task.key.span.start).line, src.line_col(max(span.end - 1, 0)).line))
    return out


def task_at(lines: list[TaskLines], line: int) -> TaskLines | None:
    """The task a breakpoint on ``line`` belongs to: its key line or a line of its body."""
    for t in lines:
        if t.key_line <= line <= t.last_line:
            return t
    return None


class Condition:
    """A conditional breakpoint: ``${{ expr }}`` (or the bare expression), evaluated by the
    project's expression evaluator against the held task's scope."""

    def __init__(self, text: str) -> None:
        from checker.expr import ExprError, parse_expression, parse_template

        self.text = text
        body = text.strip()
        try:
            if "${{" in body:
                t = parse_template(body)
                if t.errors:
                    raise ValueError(t.errors[0].message)
                if not t.is_single_island or t.islands[0].expr is None:
                    raise ValueError("a condition is one `${{ … }}` expression")
                self.expr = t.islands[0].expr
            else:
                self.expr = parse_expression(body)
        except ExprError as exc:
            raise ValueError(exc.message) from None

    def holds(self, scope: dict[str, Any]) -> bool:
        from checker.expr import EvalError, evaluate_bool

        try:
            return evaluate_bool(self.expr, scope)
        except EvalError as exc:
            raise ValueError(exc.message) from None


def show(value: Any, limit: int = 200) -> str:
    """One value as the Variables view's one line."""
    if isinstance(value, str):
        text = json.dumps(value, ensure_ascii=False)
    elif isinstance(value, dict):
        n = len(value)
        text = f"{{{n} key{'s' if n != 1 else ''}}}" if value else "{}"
    elif isinstance(value, list):
        n = len(value)
        text = f"[{n} item{'s' if n != 1 else ''}]" if value else "[]"
    else:
        text = json.dumps(value, default=str)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _kind(value: Any) -> str:
    if value is None:
        return "null"
    return {bool: "bool", int: "int", float: "double", str: "string", list: "list", dict: "map"}.get(
        type(value), type(value).__name__
    )


class Handles:
    """``variablesReference`` numbers for the containers shown since the last resume."""

    def __init__(self) -> None:
        self._values: dict[int, Any] = {}
        self._next = 1

    def reset(self) -> None:
        self._values.clear()

    def ref(self, value: Any) -> int:
        if not isinstance(value, dict | list) or not value:
            return 0
        n = self._next
        self._next += 1
        self._values[n] = value
        return n

    def get(self, ref: int) -> Any:
        return self._values.get(ref)

    def variables(self, ref: int) -> list[dict[str, Any]]:
        value = self._values.get(ref)
        if isinstance(value, dict):
            items = [(str(k), v) for k, v in value.items()]
        elif isinstance(value, list):
            items = [(f"[{i}]", v) for i, v in enumerate(value)]
        else:
            return []
        return [{"name": k, "value": show(v), "type": _kind(v), "variablesReference": self.ref(v)} for k, v in items]
