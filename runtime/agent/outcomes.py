"""What one reply's tool calls do to the loop (mixed into :class:`runtime.agent.loop.AgentLoop`).

A reply is one step: the model can adapt only between replies, so the calls of one batch are one
attempt. Each call's outcome is answered to the model as it settles and gathered in the reply's
:class:`Step`; the stop rules (seed "stop reasons") judge the step once the whole reply is settled
(:meth:`Outcomes.judge`), never in the middle of it:

* **failure-budget**: a step whose calls all failed is one failed step; ``limits.FAILURE_BUDGET``
  failed steps in a row stop the loop (a step with a success resets the count; a mixed reply is
  judged by its results: one success makes it a step that worked);
* **no-novelty**: a step whose successful results bring nothing the previous step had not
  observed repeats it; ``limits.NO_NOVELTY_REPEATS`` such observations in a row stop the loop;
* **streak-exhausted**: a step whose successes are all of one tool continues that tool's streak;
  ``limits.STREAK_LIMIT`` steps of one tool in a row stop the loop;
* **executed-duplicate**: a call that already succeeded in an earlier reply is refused with its
  earlier result; the refusal counts once per reply (what the model was told), and
  ``limits.DUPLICATE_REFUSALS`` replies in a row proposing it stop the loop. A copy of a call
  inside the same reply is answered the same way but does not count: the model was never told.

Steps without successes or failures (only refusals, only ``not run`` answers) leave the counts as
they are. A security error a tool raises fails the task at once, mid-reply.
"""

from __future__ import annotations

from dataclasses import dataclass, field
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


@dataclass
class Step:
    """One reply's outcomes, judged together."""

    successes: list[tuple[str, str]] = field(default_factory=list)  # (tool id, the result as the model read it)
    failures: list[tuple[str, TaskError]] = field(default_factory=list)
    told: dict[str, str] = field(default_factory=dict)  # fingerprint -> tool id: refused as run by an earlier reply


class Outcomes(Answers):
    ctx: VerbContext
    step: Step

    def begin_step(self) -> None:
        self.step = Step()

    def succeeded(self, call: ToolCall, tool_id: str, fp: str, result: Any, t0: float) -> None:
        rendered = render(plain(result))
        self.ledger.executed[fp] = rendered
        self.ledger.observations.append(rendered)
        self.step.successes.append((tool_id, rendered))
        self.audit.tool(call, tool_id, "ok", None, t0, rendered)
        self.answer(call, rendered)

    def failed(self, call: ToolCall, tool_id: str, err: TaskError, t0: float | None = None) -> None:
        if err.category == "security_error":
            self.audit.tool(call, tool_id, "refused", err.code, t0 or self.ctx.events.clock.monotonic())
            raise Stop(StopReason.SECURITY, err)
        self.ledger.failed_tool_calls += 1
        self.step.failures.append((tool_id, err))
        status = "cut" if err.code == stops.TIMEOUT_CODE else "error"  # cut by the task's deadline
        self.audit.tool(call, tool_id, status, err.code, t0 or self.ctx.events.clock.monotonic())
        self.answer(call, {"error": {"code": err.code, "message": err.message}})

    def duplicate(self, call: ToolCall, tool_id: str, fp: str, told: bool) -> None:
        led = self.ledger
        led.duplicates_refused += 1
        if told:
            self.step.told[fp] = tool_id
        self.audit.tool(call, tool_id, "duplicate", None, 0.0)
        refusal = "this exact call already succeeded; use its result instead of repeating it"
        self.answer(call, {"refused": refusal, "result": led.executed[fp]})

    def not_run(self, call: ToolCall, tool_id: str, why: str) -> None:
        """A call of the reply that was vetted but not run (over the batch bound, a repeat)."""
        self.audit.tool(call, tool_id, "not-run", None, 0.0)
        self.answer(call, {"error": {"code": "NIKA-AGENT-001", "message": f"not run: {why}"}})

    def judge(self) -> None:
        """The stop rules, on the reply just settled (one step)."""
        led, step = self.ledger, self.step
        refused = {fp: led.duplicates_in_a_row.get(fp, 0) + 1 for fp in step.told}
        if step.successes:  # progress: the "in a row" refusal counts start again (this reply's stay)
            led.duplicates_in_a_row = refused
        else:
            led.duplicates_in_a_row.update(refused)
        for fp, n in refused.items():
            if n >= limits.DUPLICATE_REFUSALS:
                raise stops.executed_duplicate(step.told[fp], n)
        if step.failures and not step.successes:
            led.failures_in_a_row += 1
            if led.failures_in_a_row >= limits.FAILURE_BUDGET:
                tool_id, err = step.failures[-1]
                raise stops.failure_budget(led.failures_in_a_row, tool_id, err)
        elif step.successes:
            led.failures_in_a_row = 0
        if not step.successes:
            return
        seen = frozenset(r for _, r in step.successes)
        nothing_new = led.last_observed is not None and seen <= led.last_observed
        led.same_observation = led.same_observation + 1 if nothing_new else 1
        led.last_observed = seen
        tools = {t for t, _ in step.successes}
        if len(tools) == 1:
            (tool,) = tools
            led.streak = led.streak + 1 if led.streak_tool == tool else 1
            led.streak_tool = tool
        else:
            led.streak, led.streak_tool = 0, ""
        if led.same_observation >= limits.NO_NOVELTY_REPEATS:
            raise stops.no_novelty(led.same_observation, step.successes[-1][0])
        if led.streak >= limits.STREAK_LIMIT:
            raise stops.streak_exhausted(led.streak, led.streak_tool)

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
