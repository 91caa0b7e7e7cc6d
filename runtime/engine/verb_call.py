"""Calling a verb: the :class:`~runtime.engine.context.VerbContext` a verb receives (what it may
read and do, nothing else of the run) and the dispatch to the verb's own module through the run's
:class:`~runtime.engine.context.VerbTable`."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from checker.model.workflow import CompiledWorkflow, Task, Verb
from runtime.engine.context import RunSettings, VerbContext, VerbTable
from runtime.engine.options import Options
from runtime.engine.records import RunResult, TaskRecord
from runtime.errors import INTERNAL, TaskError

if TYPE_CHECKING:
    from collections.abc import Mapping

    from checker.model.workflow import Workflow
    from runtime.durable.gate import Gate
    from runtime.engine.events import EventSink
    from runtime.engine.executor import Executor
    from runtime.engine.services import Services
    from runtime.guard.permits import Boundary


class ChildRun(Protocol):
    async def execute(self) -> RunResult: ...


class CallingRun(Protocol):
    """What calling a verb reads of the run (:class:`runtime.engine.run.Run`): what the verb's
    context is built from, the run's verb table, and its two seams (a child run, a tool call)."""

    verbs: VerbTable
    records: dict[str, TaskRecord]
    agent_records: dict[str, dict[str, Any]]
    wf: Workflow
    compiled: CompiledWorkflow
    workdir: Path
    boundary: Boundary
    services: Services
    engine_env: Mapping[str, str]
    sink: EventSink
    executor: Executor
    settings: RunSettings
    gate: Gate

    def child(self, compiled: CompiledWorkflow, inputs: dict[str, Any], options: Options) -> ChildRun: ...
    async def call_tool(self, ctx: VerbContext, tool: str, args: dict[str, Any]) -> Any: ...


def verb_context(run: CallingRun, tid: str, scope: dict[str, Any], task: Task | None) -> VerbContext:
    """What the verb of ``tid`` may read and do (``task`` is ``None`` for an ``on_finally`` step)."""
    rec = run.records.get(tid) if task is not None else None

    spend = _AgentSpend(run.agent_records, tid)

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
        record_agent=spend.record,
        run_child=run_child,
        tool_call=tool_call,
        started_monotonic=rec.started_monotonic if rec is not None else None,
        gate=run.gate,
        agent_spent=spend.spent,
    )
    holder.append(ctx)
    return ctx


class _AgentSpend:
    """One agent task's spend across its ``retry:`` attempts (and ``for_each`` iterations): the
    attempts draw on one budget, so each sees what the earlier ones of its iteration spent."""

    def __init__(self, records: dict[str, dict[str, Any]], tid: str) -> None:
        self.records, self.tid = records, tid

    def _attempts(self, index: Any) -> list[dict[str, Any]]:
        earlier = self.records.get(self.tid)
        if earlier is None:
            return []
        return [a for a in earlier.get("attempts") or [{"attempt": 1, **earlier}] if a.get("index") == index]

    def spent(self, index: Any) -> tuple[int, int, float]:
        """What the earlier ``retry:`` attempts of this task (this iteration) spent: one ledger."""
        done = self._attempts(index)
        return (
            sum(int(a.get("tokens_in", 0)) for a in done),
            sum(int(a.get("tokens_out", 0)) for a in done),
            sum(float(a.get("cost_usd", 0.0)) for a in done),
        )

    def record(self, record: dict[str, Any]) -> None:
        """The agent's stop and spend. The record's headline totals every attempt of the task (its
        ``retry:`` attempts draw on one budget); each attempt (or ``for_each`` iteration) is kept
        under ``attempts`` with its own turns, tokens, cost and stop."""
        idx = record.get("index")
        before = self.spent(idx)
        own = {**record, "tokens_in": record.get("tokens_in", 0) - before[0]}
        own["tokens_out"] = record.get("tokens_out", 0) - before[1]
        if "cost_usd" in record:
            own["cost_usd"] = round(record["cost_usd"] - before[2], 6)
        earlier = self.records.get(self.tid)
        if earlier is None:
            self.records[self.tid] = record
            return
        attempts = earlier.get("attempts") or [{"attempt": 1, **earlier}]
        n = 1 + sum(1 for a in attempts if a.get("index") == idx)  # per iteration
        attempts = [*attempts, {"attempt": n, **own}]
        self.records[self.tid] = {**record, "attempts": attempts}


async def run_verb(run: CallingRun, tid: str, verb: Verb, scope: dict[str, Any], task: Task | None) -> Any:
    """The verb's own module, through the table the run was handed (the engine imports no verb)."""
    runner = run.verbs.runners.get(verb.kind)
    if runner is None:
        raise TaskError(INTERNAL, "the task has no runnable verb")
    return await runner(verb_context(run, tid, scope, task), verb)
