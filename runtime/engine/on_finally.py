"""``on_finally:`` — cleanup steps after a started task's outcome is known, before it is
published downstream (03 §on_finally). Each step sees the task's provisional record under
``tasks.<id>``; a step is best effort: its failure is journaled, never propagated."""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Any, Protocol

from checker.model.workflow import FinallyStep, Task, Verb
from runtime.engine.records import TIMEOUT_CODE, TaskRecord
from runtime.errors import INTERNAL, TaskError
from runtime.values import condition

if TYPE_CHECKING:
    from runtime.engine.events import EventSink


class FinallyRun(Protocol):
    """What the cleanup steps read of the run (:class:`runtime.engine.run.Run`)."""

    base: dict[str, Any]
    task_views: dict[str, dict[str, Any]]
    sink: EventSink

    async def run_verb(self, tid: str, verb: Verb, scope: dict[str, Any], task: Task | None) -> Any: ...


async def run_finally(run: FinallyRun, task: Task, provisional: TaskRecord) -> None:
    views = {**run.task_views, task.id: provisional.view()}
    scope = {**run.base, "tasks": views, "with": {}}
    for i, step in enumerate(task.on_finally):
        await finally_step(run, f"{task.id}.on_finally[{i}]", step, scope)


async def finally_step(run: FinallyRun, name: str, step: FinallyStep, scope: dict[str, Any]) -> None:
    status, code = "success", None
    try:
        if step.when is not None and not condition(step.when, scope):
            status = "skipped"
        elif step.verb is not None:
            await asyncio.wait_for(run.run_verb(name, step.verb, scope, None), step.timeout.ms / 1000)
    except TimeoutError:
        status, code = "failure", TIMEOUT_CODE
    except TaskError as err:
        status, code = "failure", err.code
    except Exception as exc:  # cleanup is best effort: logged, never propagated
        status, code = "failure", f"{INTERNAL} ({type(exc).__name__})"
    run.sink.emit("verb_invoked", [("task", name), ("phase", "on_finally"), ("status", status), ("error_code", code)])
