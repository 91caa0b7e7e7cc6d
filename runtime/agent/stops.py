"""Why an agent loop ends: the named :class:`StopReason`, and the :class:`Stop` that ends it.

Each reason has one constructor here, so the code and the message a stop fails with are said once
(the README's stop_reason table lists them, with thresholds from :mod:`runtime.guard.limits`).
"""

from __future__ import annotations

from enum import StrEnum
from typing import Any

from runtime.errors import TaskError

SEC_CODE = "NIKA-SEC-002"
TIMEOUT_CODE = "NIKA-TIMEOUT-001"
SCHEMA_CODE = "NIKA-INFER-002"
STUCK_CODE = "NIKA-AGENT-001"
BUDGET_CODE = "NIKA-AGENT-002"
OUTPUT_CODE = "NIKA-AGENT-OUTPUT-001"


class StopReason(StrEnum):
    DONE = "done"  # the model called nika:done
    FINAL_MESSAGE = "final-message"  # the model answered without a tool call
    MAX_TURNS = "max-turns"  # NIKA-AGENT-001
    TOKEN_BUDGET = "token-budget"  # NIKA-AGENT-002
    COST_BUDGET = "cost-budget"  # NIKA-AGENT-002 (a budget_error; the reason tells it apart)
    DEADLINE = "deadline"  # NIKA-TIMEOUT-001: the wall clock left no room for another call
    FAILURE_BUDGET = "failure-budget"  # the last tool error's run code (else NIKA-AGENT-001)
    EXECUTED_DUPLICATE = "executed-duplicate"  # NIKA-AGENT-001: a stuck loop, stopped early
    NO_NOVELTY = "no-novelty"  # NIKA-AGENT-001: consecutive identical observations
    STREAK_EXHAUSTED = "streak-exhausted"  # NIKA-AGENT-001: the same tool succeeding over and over
    PROPOSAL_LOST = "proposal-lost"  # NIKA-INFER-002: two malformed replies in a row
    EMPTY_ANSWER = "empty-answer"  # NIKA-INFER-002: the final message stayed empty after one nudge
    PROVIDER_UNREACHABLE = "provider-unreachable"  # NIKA-PROVIDER-001 (transient)
    PROVIDER_ERROR = "provider-error"  # the provider refused the call (key, request): its code
    OUTPUT_LIMIT = "output-limit"  # NIKA-AGENT-OUTPUT-001: the answer was cut by the model's output limit, twice
    SECURITY = "security"  # NIKA-SEC-002, or the security error a tool raised
    CANCELLED = "cancelled"  # the run was cancelled mid-call


SUCCESS_REASONS = frozenset({StopReason.DONE, StopReason.FINAL_MESSAGE})


class Stop(Exception):
    """Raised inside the loop to end it for ``reason`` (with ``error`` on a failing stop)."""

    def __init__(self, reason: StopReason, error: TaskError | None = None, output: Any = None) -> None:
        super().__init__(str(reason))
        self.reason = reason
        self.error = error
        self.output = output


def max_turns(n: int) -> Stop:
    return Stop(
        StopReason.MAX_TURNS, TaskError(STUCK_CODE, f"the agent used all {n} turns of `max_turns` without finishing")
    )


def token_budget(spent: int, total: int, est_in: int | None = None) -> Stop:
    why = f"the agent spent {spent} tokens of its {total}-token budget without finishing"
    if est_in is not None:
        why += f"; the next call (about {est_in} tokens in) would overshoot it"
    return Stop(StopReason.TOKEN_BUDGET, TaskError(BUDGET_CODE, why))


def cost_budget(spent: float, cap: float, source: str, next_call: bool = False) -> Stop:
    why = f"the agent spent ${spent:.4f} of its ${cap:.4f} cost ceiling ({source})"
    why += "; the next call could overshoot it" if next_call else " without finishing"
    return Stop(StopReason.COST_BUDGET, TaskError(BUDGET_CODE, why))


def deadline(source: str, err: TaskError | None = None, expected: tuple[float, float] | None = None) -> Stop:
    why = f"the agent's wall clock ({source}) ran out"
    if expected is not None:  # the next call could not finish in time: not sent
        took, left = expected
        why += f": the next model call is expected to take about {took:.2f} s and {max(0.0, left):.2f} s are left"
    if err is not None:  # the model call's own timeout, which is the time left
        return Stop(StopReason.DEADLINE, TaskError(TIMEOUT_CODE, f"{why} during a model call: {err.message}"))
    return Stop(StopReason.DEADLINE, TaskError(TIMEOUT_CODE, why))


def failure_budget(n: int, tool_id: str, err: TaskError) -> Stop:
    """The loop stops on its failure budget with the last tool error's code when that code is one
    only a run raises (what the world did: a network error, a missing file); a code the checker
    gives to a file (phase `check` or `both`: the model's arguments broke a static contract,
    NIKA-VAR-005, NIKA-BUILTIN-001) is no verdict of the run on an accepted workflow, so the agent
    then fails as a stuck loop (NIKA-AGENT-001), the tool's code in details."""
    why = f"{n} replies in a row had only failing tool calls; the last, `{tool_id}`: {err.message}"
    details = {"tool": tool_id, "tool_code": err.code}
    code = err.code if _phase(err.code) == "run" else STUCK_CODE
    return Stop(StopReason.FAILURE_BUDGET, TaskError(code, why, details=details))


def _phase(code: str) -> str | None:
    from checker.core.codes import lookup

    try:
        return lookup(code).phase
    except KeyError:
        return None


def executed_duplicate(tool_id: str, n: int = 2) -> Stop:
    why = (
        f"the model proposed a call that already succeeded (`{tool_id}` with the same arguments) in {n} replies "
        "in a row, after being told; the loop was making no progress"
    )
    return Stop(StopReason.EXECUTED_DUPLICATE, TaskError(STUCK_CODE, why, details={"tool": tool_id}))


def no_novelty(n: int, tool_id: str) -> Stop:
    why = f"{n} replies in a row observed nothing new (the last through `{tool_id}`); the loop was learning nothing"
    return Stop(StopReason.NO_NOVELTY, TaskError(STUCK_CODE, why, details={"tool": tool_id}))


def streak_exhausted(n: int, tool_id: str) -> Stop:
    why = f"`{tool_id}` was the only tool to succeed in {n} replies in a row without the agent finishing"
    return Stop(StopReason.STREAK_EXHAUSTED, TaskError(STUCK_CODE, why, details={"tool": tool_id}))


def proposal_lost(n: int, feedback: str) -> Stop:
    why = f"the model sent {n} malformed replies in a row: {feedback}"
    return Stop(StopReason.PROPOSAL_LOST, TaskError(SCHEMA_CODE, why))


def empty_answer() -> Stop:
    why = "the agent's final message was empty, also after being asked once to write its answer"
    return Stop(StopReason.EMPTY_ANSWER, TaskError(SCHEMA_CODE, why))


def not_granted(tool_id: str) -> Stop:
    why = f"the model called `{tool_id}`, which the agent's `tools:` whitelist does not grant"
    return Stop(StopReason.SECURITY, TaskError(SEC_CODE, why, details={"tool": tool_id}))


def unpriced_usage(model: str) -> Stop:
    why = f"`{model}` is priced but reported no token usage, so no budget can count this turn"
    return Stop(StopReason.PROVIDER_ERROR, TaskError("NIKA-AGENT-005", why))


def truncated(capped_by: str, cap: int, again: bool) -> Stop:
    """The final answer was cut by the output cap (and its one continuation too, or no budget was
    left for one). What set the cap decides the code: the run's budgets (NIKA-AGENT-002), or the
    model's own output limit (NIKA-AGENT-OUTPUT-001)."""
    when = "and cut again after one request to continue" if again else "and no budget is left to continue it"
    if capped_by == "model-limit":
        why = f"the agent's answer was cut by the model's output limit ({cap} tokens) {when}"
        return Stop(StopReason.OUTPUT_LIMIT, TaskError(OUTPUT_CODE, why))
    which = "token budget" if capped_by == "token-budget" else "cost ceiling"
    reason = StopReason.TOKEN_BUDGET if capped_by == "token-budget" else StopReason.COST_BUDGET
    why = f"the agent's answer was cut at {cap} output tokens, the most its {which} left, {when}"
    return Stop(reason, TaskError(BUDGET_CODE, why))
