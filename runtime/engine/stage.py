"""The verb stage of a task (03 §DAG execution model): the verb with ``retry:`` under
``timeout:``, then ``on_error:``, then the ``output:`` bindings — for a task, and for each
iteration of a ``for_each`` (:mod:`runtime.engine.for_each`)."""

from __future__ import annotations

import asyncio
import json
import time
from typing import Any, Protocol

from checker.core.vocab import OnErrorAction, Status
from checker.model.workflow import Exec, Invoke, Task
from runtime.engine.options import Options
from runtime.engine.records import Outcome, timeout_error
from runtime.engine.retry import AttemptingRun, attempts
from runtime.errors import INTERNAL, TaskError
from runtime.guard.limits import EFFECT_DEADLINE, MAX_VALUE_DEPTH
from runtime.values import deeper_than, materialise


class StagedRun(AttemptingRun, Protocol):
    """What the verb stage reads of the run besides the attempts' (:class:`runtime.engine.run.Run`):
    the settled events a recovery waits on and the task views it reads."""

    settled: dict[str, asyncio.Event]
    task_views: dict[str, dict[str, Any]]
    options: Options


async def verb_stage(run: StagedRun, task: Task, scope: dict[str, Any], iteration: int | None = None) -> Outcome:
    """The verb with ``retry:`` under ``timeout:``, then ``on_error:``, then ``output:`` bindings."""
    if run.options.debugger is not None:  # `nika dap`: a breakpoint holds here, before the timeout starts
        from runtime.engine.debug import hold

        await hold(run, task, scope, iteration)
    try:
        if task.timeout is not None:
            token = EFFECT_DEADLINE.set((time.monotonic() + task.timeout.ms / 1000, task.timeout.ms))
            try:  # the deadline travels to an executor out of process, which enforces it there too
                raw = await asyncio.wait_for(attempts(run, task, scope, iteration), task.timeout.ms / 1000)
            except TimeoutError:
                raise timeout_error(task.timeout.ms) from None
            finally:
                EFFECT_DEADLINE.reset(token)
        else:
            raw = await attempts(run, task, scope, iteration)
        refuse_deep(task.id, raw)
        check_returns(run, task, raw)
        return Outcome(Status.SUCCESS, raw, await bind(task, raw) if task.output else {}, started=True)
    except TaskError as err:
        if run.options.debugger is not None:  # an exception breakpoint stops before on_error: decides
            from runtime.engine.debug import failed

            await failed(run, task, scope, iteration, err)
        return await on_error(run, task, scope, err)


def check_returns(run: StagedRun, task: Task, raw: Any) -> None:
    """``returns:`` on ``exec:``/``invoke:``: the value must fit its type (NIKA-TYPE-101).
    (On ``infer:``/``agent:`` the contract is the provider's structured-output lane.)"""
    if task.returns is None or not isinstance(task.verb, Exec | Invoke):
        return
    from checker.model.typesys import value_fits

    if value_fits(raw, task.returns, run.wf.types) is False:
        raise TaskError(
            "NIKA-TYPE-101",
            f"the output of `{task.id}` does not fit its `returns:` type {json.dumps(task.returns.to_python())}",
            details={"returns": task.returns.to_python()},
        )


async def on_error(run: StagedRun, task: Task, scope: dict[str, Any], err: TaskError) -> Outcome:
    oe = task.on_error
    if oe is None or (oe.on_codes and err.code not in oe.on_codes) or oe.action == OnErrorAction.FAIL_WORKFLOW:
        return Outcome(Status.FAILURE, error=err, started=True)
    if oe.action == OnErrorAction.SKIP:
        return Outcome(Status.SKIPPED, None, {b.name: None for b in task.output}, err, started=True)
    # recover: sources are read at recovery time, waiting for them to settle (never a scheduling edge)
    for e in run.graph.recovery_edges():
        if e.consumer == task.id and e.producer in run.settled:
            await run.settled[e.producer].wait()
    try:
        value = materialise(oe.recover, {**scope, "tasks": run.task_views}, "`on_error.recover`")
    except TaskError as rerr:
        details = {**err.details, "recovery_error": {"code": rerr.code, "message": rerr.message}}
        return Outcome(Status.FAILURE, error=TaskError(err.code, err.message, err.transient, details), started=True)
    run.sink.emit("task_recovered", [("task", task.id), ("error_code", err.code)])
    try:
        bound = await bind(task, value)
    except TaskError as berr:
        return Outcome(Status.FAILURE, error=berr, started=True)
    return Outcome(Status.SUCCESS, value, bound, started=True, recovered_from=err)


def refuse_deep(tid: str, raw: Any) -> None:
    """The admission of every verb's output (a tool's, a model's, a process's reply), where it
    enters the run: a value nested past ``MAX_VALUE_DEPTH`` (the sources that parse JSON refuse
    them first with their own codes) or text a journal cannot hold (a lone surrogate) is a typed
    failure, never a stack overflow or an encoding error while the task settles."""
    if deeper_than(raw, MAX_VALUE_DEPTH):
        raise TaskError(
            INTERNAL,
            f"the output of `{tid}` nests deeper than {MAX_VALUE_DEPTH} levels, which this engine refuses to hold",
            details={"max_depth": MAX_VALUE_DEPTH},
        )
    from runtime.engine.inputs import value_problem

    problem = value_problem(raw)
    if problem is not None:
        raise TaskError(INTERNAL, f"the output of `{tid}` cannot be admitted: {problem}", details={})


async def bind(task: Task, raw: Any) -> dict[str, Any]:
    """The ``output:`` bindings (jq over the raw output)."""
    if not task.output:
        return {}
    from runtime.tools.jq import run_binding

    return {b.name: await run_binding(b.name, str(b.value.value), raw) for b in task.output}
