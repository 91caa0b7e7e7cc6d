"""Calling a verb: the :class:`~runtime.engine.context.VerbContext` a verb receives (what it may
read and do, nothing else of the run) and the dispatch to the verb's own module."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from checker.model.workflow import Agent, CompiledWorkflow, Exec, Infer, Invoke, Task, Verb
from runtime.engine.context import VerbContext
from runtime.engine.records import Options, RunResult
from runtime.errors import INTERNAL, TaskError

if TYPE_CHECKING:
    from runtime.engine.run import Run


def verb_context(run: Run, tid: str, scope: dict[str, Any], task: Task | None) -> VerbContext:
    """What the verb of ``tid`` may read and do (``task`` is ``None`` for an ``on_finally`` step)."""
    rec = run.records.get(tid) if task is not None else None

    def record_agent(record: dict[str, Any]) -> None:
        """The agent's stop and spend; a task ``retry:`` attempt (or a ``for_each`` iteration) is kept
        beside the earlier ones under ``attempts``, each with its own turns, tokens, cost and stop."""
        earlier = run.agent_records.get(tid)
        if earlier is None:
            run.agent_records[tid] = record
            return
        attempts = earlier.get("attempts") or [{"attempt": 1, **earlier}]
        n = 1 + sum(1 for a in attempts if a.get("index") == record.get("index"))  # per iteration
        attempts = [*attempts, {"attempt": n, **record}]
        run.agent_records[tid] = {**record, "attempts": attempts}

    async def run_child(compiled: CompiledWorkflow, inputs: dict[str, Any], options: Options) -> RunResult:
        return await run.child(compiled, inputs, options).execute()  # this module never imports the ready set

    holder: list[VerbContext] = []

    async def tool_call(tool: str, args: dict[str, Any]) -> Any:
        return await run.call_tool(holder[0], tool, args)

    ctx = VerbContext(
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
        run_child=run_child,
        tool_call=tool_call,
        started_monotonic=rec.started_monotonic if rec is not None else None,
        gate=run.gate,
    )
    holder.append(ctx)
    return ctx


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
