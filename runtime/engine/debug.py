"""The debugger seam of a run (``nika dap``, issue 46): where a debugger may hold a task.

A run with ``Options.debugger`` set calls its three hooks; a run without one calls none (one
``is None`` test per task). The hooks are awaited on the run's own loop:

* :meth:`Debugger.before_start` — a ready task, before its ``task_started`` frame. While the
  debugger is stopped it waits here, so no new task starts while a breakpoint holds the run
  (DAP's ``allThreadsStopped``); a task already past this point finishes its current effect.
* :meth:`Debugger.before_effect` — after the task's (or the ``for_each`` iteration's) ``with:``
  and ``when:`` are resolved and before the verb's first attempt: the breakpoint. The task's
  ``timeout:`` timer starts after this returns, and the held time is added to the task's start on
  the real clock (``TaskRecord.started_monotonic``), so the deadlines that count from it (a child
  workflow's, an agent's wall clock) do not count it either.
* :meth:`Debugger.on_failure` — the verb stage failed, before ``on_error:`` decides (DAP's
  exception breakpoints).

What a hook sees is a :class:`Halt`: plain data of the point, the scope the task's expressions
read, and the run's redactor (every value a debugger shows goes through it, as the journal's do).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol

from checker.model.workflow import Task

clock = time.monotonic  # the real clock a task's deadlines count from (``TaskRecord.started_monotonic``)


@dataclass
class Halt:
    """One point a debugger may hold: a task (an iteration of it) in one run of the call chain."""

    run_key: int  # id() of the run object: a child run's halts carry their own
    workflow: str
    source_path: str | None
    task: Task
    scope: dict[str, Any]
    iteration: int | None
    redact: Callable[[Any], Any]
    call_stack: tuple[str, ...]
    parent: tuple[int, str] | None  # the calling run's key and its invoking task (a child workflow)
    error: Any = None  # on_failure: the runtime.errors.TaskError

    @property
    def item(self) -> Any:
        return self.scope.get("item") if self.iteration is not None else None


class Debugger(Protocol):
    async def before_start(self, run_key: int, task_id: str) -> None: ...
    async def before_effect(self, halt: Halt) -> None: ...
    async def on_failure(self, halt: Halt) -> None: ...
    def ended(self, run_key: int, task_id: str, status: str, output: Any) -> None: ...


def halt_of(run: Any, task: Task, scope: dict[str, Any], iteration: int | None, error: Any = None) -> Halt:
    o = run.options
    return Halt(
        id(run),
        run.wf.id,
        run.compiled.source.path,
        task,
        scope,
        iteration,
        run.redactor,
        tuple(o.call_stack),
        o.debug_parent,
        error,
    )


async def hold(run: Any, task: Task, scope: dict[str, Any], iteration: int | None) -> None:
    """The breakpoint point of the verb stage; the held time is given back to the task's deadlines."""
    debugger: Debugger | None = run.options.debugger
    if debugger is None:
        return
    t0 = clock()
    await debugger.before_effect(halt_of(run, task, scope, iteration))
    rec = run.records.get(task.id)
    if rec is None or not rec.started_monotonic:
        return
    now = clock()  # held iterations overlap: only the part of this hold not given back yet
    released: dict[str, float] = run.__dict__.setdefault("_debug_released", {})
    rec.started_monotonic += max(0.0, now - max(t0, released.get(task.id, 0.0)))
    released[task.id] = now


async def failed(run: Any, task: Task, scope: dict[str, Any], iteration: int | None, error: Any) -> None:
    """The verb stage failed: an exception breakpoint may stop here, before ``on_error:`` decides."""
    debugger: Debugger | None = run.options.debugger
    if debugger is not None:
        await debugger.on_failure(halt_of(run, task, scope, iteration, error))
