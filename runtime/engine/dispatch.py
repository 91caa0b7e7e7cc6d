"""The dispatch pipeline of one admitted task (03 §DAG execution model):

    with: bindings  ->  when:  ->  verb (retry:, timeout:)  ->  on_error:  ->  output: bindings

A failure in the boundary (``with:``/``when:``/the ``for_each`` collection) settles ``failure``
without consulting ``on_error:``. The verb itself is reached through :func:`run_verb`, which
hands it a :class:`~runtime.engine.context.VerbContext` and nothing else of the run.
"""

from __future__ import annotations

import asyncio
import json
import time
from typing import TYPE_CHECKING, Any

from checker.core.vocab import OnErrorAction, Status
from checker.model.workflow import Agent, Exec, Infer, Invoke, Task, Verb
from runtime.engine.context import VerbContext
from runtime.engine.executor import EFFECT_DEADLINE
from runtime.engine.records import Outcome, timeout_error
from runtime.engine.retry import attempts
from runtime.errors import INTERNAL, TaskError
from runtime.values import condition, materialise, reads_locals

if TYPE_CHECKING:
    from runtime.engine.run import Run


async def pipeline(run: Run, task: Task) -> Outcome:
    scope = dict(run.base)
    # 1. with: (boundary) — bindings that read item/index wait for their iteration
    try:
        with_now = {
            b.name: materialise(b.value, scope, f"`with.{b.name}`")
            for b in task.with_
            if task.for_each is None or not reads_locals(b.value)
        }
    except TaskError as err:
        return Outcome(Status.FAILURE, error=err)
    scope["with"] = with_now
    if task.for_each is not None:
        from runtime.engine.for_each import for_each

        return await for_each(run, task, scope, with_now)
    # 2. when: (boundary)
    if task.when is not None:
        try:
            if not condition(task.when, scope):
                return Outcome(Status.SKIPPED)
        except TaskError as err:
            return Outcome(Status.FAILURE, error=err)
    outcome = await verb_stage(run, task, scope)
    outcome.started = True
    return outcome


async def verb_stage(run: Run, task: Task, scope: dict[str, Any], iteration: int | None = None) -> Outcome:
    """The verb with ``retry:`` under ``timeout:``, then ``on_error:``, then ``output:`` bindings."""
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
        check_returns(run, task, raw)
        return Outcome(Status.SUCCESS, raw, bind(task, raw), started=True)
    except TaskError as err:
        return await on_error(run, task, scope, err)


def check_returns(run: Run, task: Task, raw: Any) -> None:
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


async def on_error(run: Run, task: Task, scope: dict[str, Any], err: TaskError) -> Outcome:
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
        bound = bind(task, value)
    except TaskError as berr:
        return Outcome(Status.FAILURE, error=berr, started=True)
    return Outcome(Status.SUCCESS, value, bound, started=True)


def bind(task: Task, raw: Any) -> dict[str, Any]:
    """The ``output:`` bindings (jq over the raw output)."""
    if not task.output:
        return {}
    from runtime.jq import run_binding

    return {b.name: run_binding(b.name, str(b.value.value), raw) for b in task.output}


# -- the verb ------------------------------------------------------------------------------------


def verb_context(run: Run, tid: str, scope: dict[str, Any], task: Task | None) -> VerbContext:
    """What the verb of ``tid`` may read and do (``task`` is ``None`` for an ``on_finally`` step)."""
    rec = run.records.get(tid) if task is not None else None

    def record_agent(record: dict[str, Any]) -> None:
        run.agent_records[tid] = record

    return VerbContext(
        task_id=tid,
        task=task,
        scope=scope,
        workflow=run.wf,
        source_path=run.compiled.source.path,
        workdir=run.workdir,
        boundary=run.boundary,
        services=run.services,
        engine_env=run.engine_env,
        events=run.sink,
        executor=run.executor,
        settings=run.settings,
        record_agent=record_agent,
        started_monotonic=rec.started_monotonic if rec is not None else None,
    )


async def run_verb(run: Run, tid: str, verb: Verb, scope: dict[str, Any], task: Task | None) -> Any:
    ctx = verb_context(run, tid, scope, task)
    if isinstance(verb, Exec):
        from runtime.verbs.exec import run_exec_verb

        return await run_exec_verb(ctx, verb)
    if isinstance(verb, Infer):
        from runtime.verbs.infer import run_infer

        return await run_infer(ctx, verb)
    if isinstance(verb, Invoke):
        from runtime.verbs.invoke import run_invoke

        return await run_invoke(ctx, verb)
    if isinstance(verb, Agent):
        from runtime.agent import run_agent

        return await run_agent(ctx, verb)
    raise TaskError(INTERNAL, "the task has no runnable verb")
