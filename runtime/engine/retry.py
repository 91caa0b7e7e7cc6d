"""``retry:`` — attempts, which failures may be retried, and the backoff between them (03 §retry).

Never retried: a timeout, a security refusal. With ``on_codes`` only the listed codes are;
without, only errors marked transient. The delay follows ``backoff`` (fixed, linear or
exponential, capped at ``max_ms``), drawn uniformly below it under ``jitter`` (from the run's
seeded generator), and a provider's ``Retry-After`` wins when it is longer (capped).
"""

from __future__ import annotations

import asyncio
import random
from typing import TYPE_CHECKING, Any, Protocol

from checker.model.workflow import Retry, Task, Verb, Workflow
from runtime.engine.records import TIMEOUT_CODE
from runtime.errors import TaskError
from runtime.guard.policy import judge_human_gate

if TYPE_CHECKING:
    from checker.model.graph import Graph
    from runtime.engine.events import EventSink
    from runtime.engine.records import TaskRecord

MAX_RETRY_AFTER_MS = 60_000  # runtime.guard.limits.MAX_RETRY_AFTER_S, the cap on a provider's Retry-After


class AttemptingRun(Protocol):
    """What the attempts of a task read of the run (:class:`runtime.engine.run.Run`)."""

    wf: Workflow
    graph: Graph
    sink: EventSink
    records: dict[str, TaskRecord]
    sem: asyncio.Semaphore
    rng: random.Random

    async def run_verb(self, tid: str, verb: Verb, scope: dict[str, Any], task: Task | None) -> Any: ...
    async def backoff_wait(self, seconds: float) -> None: ...


def retryable(err: TaskError, on_codes: tuple[str, ...]) -> bool:
    if err.code == TIMEOUT_CODE or err.category == "security_error":
        return False
    if on_codes:
        return err.code in on_codes
    return err.transient


def backoff_ms(strategy: str, base: int, cap: int, attempt: int) -> float:
    if strategy == "fixed":
        delay = base
    elif strategy == "linear":
        delay = base * attempt
    else:
        delay = base * 2 ** (attempt - 1)
    return float(min(delay, cap))


def retry_delay_ms(r: Retry, attempt: int, err: TaskError, rng: random.Random | random.SystemRandom) -> float:
    """How long to wait after failed attempt number ``attempt``."""
    delay = backoff_ms(r.backoff_strategy, r.backoff_ms, r.backoff_max_ms, attempt)
    if r.jitter:
        delay = rng.uniform(0, delay)
    retry_after = err.details.get("retry_after_ms")  # a provider's Retry-After wins when longer
    if isinstance(retry_after, int | float) and retry_after > delay:
        delay = float(min(retry_after, MAX_RETRY_AFTER_MS))
    return delay


async def attempts(run: AttemptingRun, task: Task, scope: dict[str, Any], iteration: int | None) -> Any:
    """The verb, attempted until it succeeds or ``retry:`` gives up (the last error is raised)."""
    r = task.retry
    max_attempts = r.max_attempts if r is not None else 1
    judge_human_gate(run.wf, run.graph, task, run.sink.answered_by)
    attempt = 0
    while True:
        attempt += 1
        run.records[task.id].attempts = max(run.records[task.id].attempts, attempt)
        try:
            async with run.sem:
                assert task.verb is not None
                return await run.run_verb(task.id, task.verb, scope, task)
        except TaskError as err:
            if r is None or attempt >= max_attempts or not retryable(err, r.on_codes):
                raise
            delay = retry_delay_ms(r, attempt, err, run.det.entropy.stream("retry", task.id))
            fields: list[tuple[str, Any]] = [("task", task.id), ("attempt", attempt), ("error_code", err.code)]
            fields.append(("delay_ms", round(delay, 3)))
            if iteration is not None:
                fields.append(("index", iteration))
            run.sink.emit("task_retrying", fields)
            await run.backoff_wait(delay / 1000)
