"""The run's records: ``tasks.X`` (:class:`TaskRecord`), one pipeline's result (:class:`Outcome`)
and the run as it leaves the process (:class:`RunResult`). How to run is :mod:`runtime.engine.options`."""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from typing import Any

from checker.core.records import field, record
from runtime.errors import TaskError
from runtime.values import plain

CANCEL_CODE = "NIKA-CANCEL-001"
TIMEOUT_CODE = "NIKA-TIMEOUT-001"
ENGINE_VERSION = "nika-tools 0.1.0"


def now_iso() -> str:
    """UTC now to the millisecond, ``2026-12-02T06:43:38.553Z`` (three per task: the second's
    text is kept while the clock stays in it)."""
    global _SECOND
    ns = time.time_ns()
    second, text = _SECOND  # one immutable pair: a thread never reads one second's text for another
    if second != ns // 1_000_000_000:
        second = ns // 1_000_000_000
        text = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(second))
        _SECOND = (second, text)
    return f"{text}.{ns // 1_000_000 % 1000:03d}Z"


_SECOND: tuple[int, str] = (-1, "")  # the last second now_iso wrote, and its text


@record(frozen=False, slots=False)
class TaskRecord:
    """``tasks.X`` (03 §task record) plus the ``output:`` bindings."""

    id: str
    status: str = "pending"
    output: Any = None
    error: dict[str, Any] | None = None
    started_at: str | None = None
    ended_at: str | None = None
    duration_ms: float | None = None
    bindings: dict[str, Any] = field(default_factory=dict)
    attempts: int = 0
    agent: dict[str, Any] | None = None  # an agent task's stop reason and spend (runtime.agent)
    recovered_from: dict[str, Any] | None = None  # the original error when on_error.recover settled it (13)
    started_monotonic: float = 0.0  # time.monotonic() at the start: what deadlines count from
    started_clock: float = 0.0  # the run clock's monotonic() at the start: what duration_ms counts from
    definition_hash: str | None = None  # ADR-099 §1: what a resume matches the task by
    input_hash: str | None = None
    cache_hit: bool = False  # rehydrated from the resumed trace (ADR-099 §2), never run
    cost_usd: float | None = None  # its model calls' spend; None while unknown (an unpriced model)
    cost_known: bool = True
    resolved_with: dict[str, Any] | None = None  # its `with:` values once resolved (journaled masked, for replay)

    def view(self) -> dict[str, Any]:
        """What ``${{ tasks.X.… }}`` reads once X settled."""
        return {
            **self.bindings,
            "output": self.output,
            "status": self.status,
            "error": self.error,
            "started_at": self.started_at,
            "ended_at": self.ended_at,
            "duration_ms": self.duration_ms,
        }

    def report(self) -> dict[str, Any]:
        out = {
            "status": self.status,
            "output": plain(self.output),
            "error": self.error,
            "started_at": self.started_at,
            "ended_at": self.ended_at,
            "duration_ms": self.duration_ms,
        }
        if self.bindings:
            out["bindings"] = plain(self.bindings)
        if self.agent is not None:
            out["agent"] = self.agent
        if self.cache_hit:
            out["cache_hit"] = True
        if self.cost_usd is not None or not self.cost_known:
            out["cost_usd"] = self.cost_usd if self.cost_known else None
        if self.recovered_from is not None:
            out["recovered_from"] = self.recovered_from
        return out


@record(frozen=False, slots=False)
class Outcome:
    status: str
    output: Any = None
    bindings: dict[str, Any] = field(default_factory=dict)
    error: TaskError | None = None
    started: bool = False  # the verb stage began (on_finally runs only then)
    recovered_from: TaskError | None = None  # success by on_error.recover: the error it replaced (13)


@record(frozen=False, slots=False)
class RunResult:
    """A finished run. Its ``repr`` names the state, the task count and the trace only: the
    generated one spelled out every task record and event, unredacted, and ``asyncio.run``
    formats its main task's result when it restores the SIGINT handler (tens of ms for 1,000 tasks)."""

    workflow_state: str
    tasks: dict[str, TaskRecord]
    outputs: dict[str, Any]
    events: list[dict[str, Any]]
    error: dict[str, Any] | None
    trace: str | None
    trace_error: str | None
    head: str
    redact: Callable[[Any], Any] = field(default=lambda v: v, repr=False)
    paused: list[dict[str, Any]] = field(default_factory=list)  # the prompts a paused run waits on
    cost_usd: float | None = None  # the run's spend (None when a call could not be priced)
    determinism: dict[str, Any] | None = None  # what `run:` declared (NEP-0010), when it is there

    def __repr__(self) -> str:
        return f"RunResult(workflow_state={self.workflow_state!r}, tasks={len(self.tasks)}, trace={self.trace!r})"

    def report(self) -> dict[str, Any]:
        """The run as it leaves the process: every secret masked (the one redactor, 01 §secrets)."""
        return self.redact(
            {
                "workflow_state": self.workflow_state,
                "tasks": {tid: rec.report() for tid, rec in self.tasks.items()},
                "outputs": plain(self.outputs),
                "error": self.error,
                "events": self.events,
                "trace": self.trace,
                "trace_head": self.head,
                "cost_usd": self.cost_usd,
                **({"paused": self.paused} if self.paused else {}),
                **({"determinism": self.determinism} if self.determinism is not None else {}),
            }
        )


def cancelled(message: str = "the run was cancelled") -> TaskError:
    return TaskError(CANCEL_CODE, message)


def human_ms(ms: float) -> str:
    return f"{ms / 1000:g}s" if ms >= 1000 else f"{ms:g}ms"


def timeout_error(ms: int) -> TaskError:
    """The failure of a task stopped by its ``timeout:`` (the driver's and a worker's, alike)."""
    return TaskError(
        TIMEOUT_CODE,
        f"the task ran longer than its timeout ({human_ms(ms)}) and was stopped",
        details={"timeout_ms": ms},
    )


# ``json.dumps`` with options builds an encoder per call; a settled task asks for two or three.
_COMPACT = json.JSONEncoder(sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str)


def compact(value: Any) -> str:
    """One value as compact, sorted JSON (the trace's ``output`` and ``outcome`` fields)."""
    if value.__class__ is str:  # what the encoder writes for one, without walking anything
        return json.encoder.encode_basestring(value)
    try:
        return _COMPACT.encode(plain(value))
    except (TypeError, ValueError):
        return json.dumps(str(value))
