"""What an agent loop has spent (:class:`Ledger`) and the envelope it must stay inside
(:class:`Envelope`: the wall clock and the cost ceiling, each with where it comes from)."""

from __future__ import annotations

import json
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from runtime.agent.stops import StopReason
from runtime.errors import TaskError
from runtime.guard import limits

if TYPE_CHECKING:
    from runtime.engine.context import VerbContext

CONFIG_CODE = "NIKA-PROVIDER-001"  # a malformed engine variable (the code NIKA_PRICES uses too)


@dataclass
class Ledger:
    """What the loop has spent; becomes the ``agent`` part of the task record."""

    max_turns: int
    max_tokens_total: int
    max_cost_usd: float | None = None
    turns: int = 0
    tokens_in: int = 0
    tokens_out: int = 0
    cost_usd: float = 0.0
    tool_calls: int = 0
    failed_tool_calls: int = 0
    duplicates_refused: int = 0
    failures_in_a_row: int = 0
    malformed_in_a_row: int = 0
    provider_attempts: int = 0
    estimated_turns: int = 0
    duplicates_in_a_row: dict[str, int] = field(default_factory=dict)
    last_text: str = ""
    empty_nudged: bool = False
    streak_tool: str = ""
    streak: int = 0
    same_observation: int = 0
    observations: list[str] = field(default_factory=list)
    last_observed: frozenset[str] | None = None  # the results the previous step observed
    stop_reason: StopReason | None = None
    executed: dict[str, str] = field(default_factory=dict)
    # the provider's own input count of the last call, and the estimator's bytes and messages of it
    reported_in: tuple[int, int, int] | None = None
    last_call_s: float | None = None  # how long the last answered model call took
    continued: bool = False  # a reply cut by the output limit was asked to continue
    cut_text: str = ""  # the text of a reply cut by the output limit, awaiting its continuation
    # what earlier task-`retry:` attempts spent: one ledger across the attempts (max_turns stays per attempt)
    carried_in: int = 0
    carried_out: int = 0
    carried_cost: float = 0.0

    @property
    def tokens(self) -> int:
        return self.tokens_in + self.tokens_out

    def record(self) -> dict[str, Any]:
        return {
            "stop_reason": str(self.stop_reason) if self.stop_reason else None,
            "turns": self.turns,
            "max_turns": self.max_turns,
            "tokens_in": self.tokens_in,
            "tokens_out": self.tokens_out,
            "max_tokens_total": self.max_tokens_total,
            "tool_calls": self.tool_calls,
            "failed_tool_calls": self.failed_tool_calls,
            "duplicates_refused": self.duplicates_refused,
            **({"cost_usd": round(self.cost_usd, 6)} if self.max_cost_usd is not None else {}),
        }

    def carry(self, spent: tuple[int, int, float]) -> None:
        """Start from what the task's earlier attempts spent (the budgets are the task's, not the attempt's)."""
        self.carried_in, self.carried_out, self.carried_cost = spent
        self.tokens_in, self.tokens_out, self.cost_usd = spent


@dataclass(frozen=True)
class Envelope:
    """The hard envelopes besides turns and tokens. ``own_clock``: the loop enforces the deadline
    itself (no task ``timeout:`` does); ``deadline`` is on the ``time.monotonic`` clock."""

    deadline: float
    deadline_source: str
    own_clock: bool
    max_cost_usd: float | None = None
    cost_source: str = ""

    def time_left(self) -> float:
        return self.deadline - time.monotonic()


def _by_task(raw: str, tid: str, var: str) -> Any:
    """A variable's value for task ``tid``: the value itself, or the entry of a JSON object by task id
    (``"*"`` for the rest); ``None`` when it names nothing for this task."""
    text = raw.strip()
    if not text.startswith("{"):
        return text or None
    try:
        table = json.loads(text)
    except ValueError:
        raise TaskError(CONFIG_CODE, f"{var} starts like a JSON object but is not JSON") from None
    if not isinstance(table, dict):
        raise TaskError(CONFIG_CODE, f"{var} must be a value or a JSON object by task id")
    return table.get(tid, table.get("*"))


def _seconds(value: Any, var: str) -> float:
    from checker.core.durations import parse_duration

    ms, why = parse_duration(str(value))
    if ms is None:
        raise TaskError(CONFIG_CODE, f"{var} is not a duration such as 90s or 10m: {value!r} ({why})")
    return ms / 1000


def _usd(value: Any, var: str) -> float:
    try:
        usd = float(value)
    except (TypeError, ValueError):
        raise TaskError(CONFIG_CODE, f"{var} is not a number: {value!r}") from None
    if usd < 0:
        raise TaskError(CONFIG_CODE, f"{var} must not be negative: {value!r}")
    return usd


def resolve_envelope(ctx: VerbContext, model: str, env: Mapping[str, str]) -> Envelope:
    """The wall clock (task ``timeout:`` > NIKA_AGENT_TIMEOUT > the default) and the cost ceiling
    (NIKA_AGENT_MAX_COST_USD > the default for a priced model > none), never more than what the
    run's ``--max-cost-usd`` has left, of this agent task."""
    tid = ctx.task_id
    started = ctx.started_monotonic if ctx.started_monotonic is not None else time.monotonic()
    if ctx.task is not None and ctx.task.timeout is not None:
        clock = (started + ctx.task.timeout.ms / 1000, "the task's `timeout:`", False)
    else:
        raw = _by_task(env.get(limits.AGENT_TIMEOUT_VAR, ""), tid, limits.AGENT_TIMEOUT_VAR)
        if raw is not None:
            clock = (started + _seconds(raw, limits.AGENT_TIMEOUT_VAR), limits.AGENT_TIMEOUT_VAR, True)
        else:
            default = limits.DEFAULT_AGENT_WALL_CLOCK_S
            clock = (started + default, f"the default {default:g} s (`timeout:` sets another)", True)
    own = _own_cost_cap(ctx, model, env)
    meter = getattr(ctx.services, "meter", None)
    left = meter.left() if meter is not None else None  # what the run's --max-cost-usd has left
    if left is not None and (own is None or left < own[0]):
        return Envelope(*clock, left, "what the run's `--max-cost-usd` has left")
    return Envelope(*clock, *own) if own is not None else Envelope(*clock)


def _own_cost_cap(ctx: VerbContext, model: str, env: Mapping[str, str]) -> tuple[float, str] | None:
    """The agent's own ceiling: NIKA_AGENT_MAX_COST_USD > the default for a priced model > none."""
    raw_cost = _by_task(env.get(limits.AGENT_COST_VAR, ""), ctx.task_id, limits.AGENT_COST_VAR)
    if raw_cost is not None:
        return _usd(raw_cost, limits.AGENT_COST_VAR), limits.AGENT_COST_VAR
    if ctx.services.is_priced(model):
        cap = limits.DEFAULT_AGENT_MAX_COST_USD
        return cap, f"the default ${cap:g} for a priced model; {limits.AGENT_COST_VAR} sets another"
    return None
