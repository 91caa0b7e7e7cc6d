"""The dispatch pipeline of one task the gate let through (03 §DAG execution model):

    with: bindings  ->  when:  ->  verb (retry:, timeout:)  ->  on_error:  ->  output: bindings

A failure in the boundary (``with:``/``when:``/the ``for_each`` collection) settles ``failure``
without consulting ``on_error:``. The verb stage (retry under timeout, ``on_error:``,
``output:``) is :mod:`runtime.engine.stage`; the verb itself is reached through
:func:`runtime.engine.verb_call.run_verb`, which hands it a
:class:`~runtime.engine.context.VerbContext` and nothing else of the run.
"""

from __future__ import annotations

from checker.core.vocab import Status
from checker.model.workflow import Task
from runtime.engine.for_each import FanningRun
from runtime.engine.records import Outcome
from runtime.engine.stage import verb_stage
from runtime.errors import TaskError
from runtime.values import condition, materialise, reads_locals


async def pipeline(run: FanningRun, task: Task) -> Outcome:
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
    if task.with_:  # the terminal frame carries them, masked by the journal (what `nika dap` replays show)
        run.records[task.id].resolved_with = with_now
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
