"""What one tool call's outcome does to the loop (mixed into :class:`runtime.agent.loop.AgentLoop`).

* a success resets the "in a row" counters, enters the duplicate gate (only successes do: a failed
  call stays retryable) and feeds the novelty and streak checks;
* a failure goes back to the model as the tool's result; ``FAILURE_BUDGET`` in a row stop the loop;
* a successful call proposed again is refused with its earlier result; ``DUPLICATE_REFUSALS`` of
  the same call in a row stop the loop;
* a security error a tool raises fails the task at once.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any

from runtime.agent import stops
from runtime.agent.answers import Answers, render
from runtime.agent.stops import Stop, StopReason
from runtime.errors import TaskError
from runtime.guard import limits
from runtime.providers.base import ToolCall
from runtime.values import plain

if TYPE_CHECKING:
    from runtime.engine.context import VerbContext


class Outcomes(Answers):
    ctx: VerbContext

    def succeeded(self, call: ToolCall, tool_id: str, fp: str, result: Any, t0: float) -> None:
        led = self.ledger
        led.failures_in_a_row = 0
        led.duplicates_in_a_row.clear()  # progress: a new successful call resets the "in a row" counts
        rendered = render(plain(result))
        led.executed[fp] = rendered
        repeat = bool(led.observations) and led.observations[-1] == rendered
        led.same_observation = led.same_observation + 1 if repeat else 1
        led.observations.append(rendered)
        led.streak = led.streak + 1 if led.streak_tool == tool_id else 1
        led.streak_tool = tool_id
        self.audit.tool(call, tool_id, "ok", None, t0, rendered)
        if led.same_observation >= limits.NO_NOVELTY_REPEATS:
            raise stops.no_novelty(led.same_observation, tool_id)
        if led.streak >= limits.STREAK_LIMIT:
            raise stops.streak_exhausted(led.streak, tool_id)
        self.answer(call, rendered)

    def failed(self, call: ToolCall, tool_id: str, err: TaskError, t0: float | None = None) -> None:
        if err.category == "security_error":
            self.audit.tool(call, tool_id, "refused", err.code, t0 or time.monotonic())
            raise Stop(StopReason.SECURITY, err)
        led = self.ledger
        led.failed_tool_calls += 1
        led.failures_in_a_row += 1
        self.audit.tool(call, tool_id, "error", err.code, t0 or time.monotonic())
        if led.failures_in_a_row >= limits.FAILURE_BUDGET:
            raise stops.failure_budget(led.failures_in_a_row, tool_id, err)
        self.answer(call, {"error": {"code": err.code, "message": err.message}})

    def duplicate(self, call: ToolCall, tool_id: str, fp: str) -> None:
        led = self.ledger
        led.duplicates_refused += 1
        in_a_row = led.duplicates_in_a_row[fp] = led.duplicates_in_a_row.get(fp, 0) + 1
        self.audit.tool(call, tool_id, "duplicate", None, 0.0)
        if in_a_row >= limits.DUPLICATE_REFUSALS:
            raise stops.executed_duplicate(tool_id)
        refusal = "this exact call already succeeded; use its result instead of repeating it"
        self.answer(call, {"refused": refusal, "result": led.executed[fp]})

    def not_run(self, call: ToolCall, tool_id: str, why: str) -> None:
        """A call of the reply that was vetted but not run (over the batch bound, a repeat)."""
        self.audit.tool(call, tool_id, "not-run", None, 0.0)
        self.answer(call, {"error": {"code": "NIKA-AGENT-001", "message": f"not run: {why}"}})

    def compose(self, args: dict[str, Any]) -> dict[str, Any]:
        """``nika:compose``: the draft's full ``nika check`` verdict (it never runs the draft)."""
        draft = args.get("workflow_yaml")
        if not isinstance(draft, str):
            raise TaskError("NIKA-BUILTIN-001", "`nika:compose` needs `workflow_yaml`: the complete draft as a string")
        from checker.engine.pipeline import compile_text

        compiled = compile_text(draft, "<draft>", str(self.ctx.workdir))
        findings = [
            {
                "code": d.code,
                "severity": str(d.severity.name.lower() if hasattr(d.severity, "name") else d.severity),
                "message": d.full_message(),
            }
            for d in compiled.diagnostics
        ]
        errors = sum(1 for d in compiled.diagnostics if d.is_error)
        self.ctx.emit("agent_compose_checked", [("task", self.ctx.task_id), ("valid", not errors), ("errors", errors)])
        return {"valid": not errors, "findings": findings}
