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

    def _attempts(index: Any) -> list[dict[str, Any]]:
        earlier = run.agent_records.get(tid)
        if earlier is None:
            return []
        return [a for a in earlier.get("attempts") or [{"attempt": 1, **earlier}] if a.get("index") == index]

    def agent_spent(index: Any) -> tuple[int, int, float]:
        """What the earlier ``retry:`` attempts of this task (this iteration) spent: one ledger."""
        done = _attempts(index)
        return (
            sum(int(a.get("tokens_in", 0)) for a in done),
            sum(int(a.get("tokens_out", 0)) for a in done),
            sum(float(a.get("cost_usd", 0.0)) for a in done),
        )

    def record_agent(record: dict[str, Any]) -> None:
        """The agent's stop and spend. The record's headline totals every attempt of the task (its
        ``retry:`` attempts draw on one budget); each attempt (or ``for_each`` iteration) is kept
        under ``attempts`` with its own turns, tokens, cost and stop."""
        idx = record.get("index")
        before = agent_spent(idx)
        own = {**record, "tokens_in": record.get("tokens_in", 0) - before[0]}
        own["tokens_out"] = record.get("tokens_out", 0) - before[1]
        if "cost_usd" in record:
            own["cost_usd"] = round(record["cost_usd"] - before[2], 6)
        earlier = run.agent_records.get(tid)
        if earlier is None:
            run.agent_records[tid] = record
            return
        attempts = earlier.get("attempts") or [{"attempt": 1, **earlier}]
        n = 1 + sum(1 for a in attempts if a.get("index") == idx)  # per iteration
        attempts = [*attempts, {"attempt": n, **own}]
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
        agent_spent=agent_spent,
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
