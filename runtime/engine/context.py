"""What a verb may read and do: :class:`VerbContext`, built by the dispatch for one verb call.

A verb (``runtime/verbs/*``, the agent loop) receives this frozen record and nothing else of the
run: never the run object, never its private state. It holds

* the call: ``task_id``, the model ``task`` (``None`` for an ``on_finally`` step), the evaluation
  ``scope`` and, in it, the evaluated ``with:`` values;
* the judge: ``boundary``, the permit adapter (:class:`runtime.guard.permits.Boundary`) every effect
  is judged by at the moment it happens;
* the resources: ``services`` (providers, the HTTP client, the MCP servers, prices), the
  ``engine_env``, the ``workdir`` relative paths resolve from;
* the seams: ``events`` (the event sink: trace, report, progress), ``record_agent`` (the journal
  hook an agent's stop reason and spend go through), ``executor``, where effects run, and
  ``run_child``, which runs a compiled child workflow (a verb never builds a run itself), and
  ``tool_call``, one tool call of an agent's turn (``nika test`` answers it from a case);
* ``settings``: the run options a verb may need (the model override, prompts, nesting).

The engine never imports a verb: what each verb kind runs is a :class:`VerbTable` the caller hands
the run (:data:`runtime.verbs.VERBS`), so the arrows point from the verbs down to the engine.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from checker.core.records import record
from checker.model.workflow import Task, Workflow
from runtime.engine.events import EventSink
from runtime.engine.services import Services
from runtime.guard.permits import Boundary
from runtime.journal.write import Fields

if TYPE_CHECKING:
    from checker.model.workflow import CompiledWorkflow
    from runtime.engine.executor import EffectCall, EffectResult, Executor, ExecutorFactory
    from runtime.engine.options import Options
    from runtime.engine.records import RunResult

    ChildRunner = Callable[[CompiledWorkflow, dict[str, Any], Options], Awaitable[RunResult]]


@record(slots=False)
class VerbTable:
    """What each verb kind runs (``runners``, by ``Verb.kind``: ``exec``, ``infer``, ``invoke``,
    ``agent``) and how one tool call of an agent's turn is made (``tool_call``). A run is handed
    one (:data:`runtime.verbs.VERBS`); its child runs get the same."""

    runners: Mapping[str, Callable[[VerbContext, Any], Awaitable[Any]]]
    tool_call: Callable[[VerbContext, str, dict[str, Any]], Awaitable[Any]]


@record(slots=False)
class RunSettings:
    """The options of the run a verb may read (a child workflow inherits them one level deeper)."""

    model: str | None
    interactive: bool
    max_parallel: int
    trace_dir: Path | None
    depth: int
    max_depth: int
    call_stack: tuple[str, ...]
    executor: str | ExecutorFactory
    determinism: Any = None  # the run's runtime.determinism.Determinism (a deterministic run is serial)

    @property
    def serial(self) -> bool:
        """One effect at a time, in a fixed order (a deterministic run, NEP-0010)."""
        return bool(self.determinism is not None and self.determinism.deterministic)


@record(slots=False)
class VerbContext:
    task_id: str
    task: Task | None
    scope: Mapping[str, Any]
    workflow: Workflow
    source_path: str | None
    workdir: Path
    boundary: Boundary
    services: Services
    engine_env: Mapping[str, str]
    events: EventSink
    executor: Executor
    settings: RunSettings
    record_agent: Callable[[dict[str, Any]], None]
    run_child: ChildRunner  # a child workflow, run in the caller's working directory under its permits too
    tool_call: Callable[[str, dict[str, Any]], Awaitable[Any]]  # one tool call of an agent's turn (the run's seam)
    started_monotonic: float | None = None  # when the task started (``time.monotonic``), for deadlines
    gate: Any = None  # the run's human gate (runtime.durable.gate.Gate): a child workflow's pause becomes the caller's
    # what the task's earlier `retry:` attempts of an agent spent (tokens in, out, cost), by iteration index
    agent_spent: Callable[[Any], tuple[int, int, float]] | None = None

    @property
    def with_(self) -> Mapping[str, Any]:
        """The task's evaluated ``with:`` values."""
        w = self.scope.get("with")
        return w if isinstance(w, Mapping) else {}

    def emit(self, kind: str, fields: Fields) -> None:
        self.events.emit(kind, fields)

    async def perform(self, call: EffectCall) -> EffectResult:
        """Have the executor perform ``call``; the witnesses it reports are journaled here, in the driver."""
        from runtime.engine.executor import journal_witness

        result = await self.executor.perform(call)
        journal_witness(self.events, result)
        return result
