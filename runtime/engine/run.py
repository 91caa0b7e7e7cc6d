"""One run of one compiled workflow: the ready set over the precedence graph, on asyncio.

There are no level barriers: a task is considered the moment its last producer settles. Its
start is decided by the gate algebra v2 of the graph the checker built (``Edge.passes``): every
incoming edge's producer must have settled inside that edge's pass-set, else the task settles
``cancelled`` and the dead path spreads by the same rule. A task the gate lets through runs the dispatch
pipeline (:mod:`runtime.engine.dispatch`); ``on_finally:`` (:mod:`runtime.engine.on_finally`)
runs after a started task's outcome is known and before it is published downstream. A failed
task never stops unrelated work (in-flight tasks drain); only a user cancellation stops
everything.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import time
from collections import deque
from pathlib import Path
from typing import Any

from checker.core.vocab import Status
from checker.model.workflow import CompiledWorkflow, Task, Verb, Workflow
from runtime.determinism import Determinism, elapsed_ms, iso, uuid7
from runtime.durable.gate import GatePause
from runtime.engine.context import RunSettings, VerbContext, VerbTable
from runtime.engine.dispatch import pipeline
from runtime.engine.events import EventSink, note
from runtime.engine.executor import Executor, ExecutorHost, make_executor
from runtime.engine.frames import announce, settled_fields
from runtime.engine.on_finally import run_finally
from runtime.engine.options import Options
from runtime.engine.records import (
    CANCEL_CODE,
    Outcome,
    RunResult,
    TaskRecord,
    cancelled,
    compact,
    now_iso,
)
from runtime.engine.resume_match import cache_hit, hash_task
from runtime.engine.scope import Secrets, base_scope, workflow_outputs
from runtime.engine.services import Services
from runtime.engine.stage import bind
from runtime.errors import INTERNAL, TaskError
from runtime.guard.permits import Boundary
from runtime.journal.write import Fields, Journal
from runtime.providers.cost import CURRENT_TASK

_SETTLED_KIND = {
    Status.SUCCESS: "task_completed",
    Status.FAILURE: "task_failed",
    Status.SKIPPED: "task_skipped",
    Status.CANCELLED: "task_cancelled",
}
_END_KIND = {
    "success": "workflow_completed",
    "failure": "workflow_failed",
    "cancelled": "workflow_cancelled",
    "paused": "workflow_paused",
}


class Run:
    """One run of one compiled workflow."""

    def __init__(
        self,
        compiled: CompiledWorkflow,
        inputs: dict[str, Any],
        options: Options | None = None,
        *,
        verbs: VerbTable,
        workdir: Path | None = None,
        parent_boundary: Boundary | None = None,
    ) -> None:
        assert compiled.workflow is not None and compiled.graph is not None
        from runtime.durable.gate import Gate
        from runtime.guard.redact import Redactor
        from runtime.net.allowance import with_project_allowance
        from runtime.providers.cost import CostMeter

        self.compiled = compiled
        self.verbs = verbs  # what each verb kind runs (runtime.verbs.VERBS): the engine imports no verb
        self.wf: Workflow = compiled.workflow
        self.graph = compiled.graph
        self.options = o = options or Options()
        self.workdir = (workdir or Path.cwd()).resolve()
        self.inputs = inputs
        self.records = {tid: TaskRecord(tid) for tid in self.wf.tasks}
        self.secret_values: set[str] = set()
        self.redactor = Redactor(self.secret_values)
        # NEP-0010: the declared clock and entropy (a deterministic caller's bind its children)
        self.det = det = Determinism.of(self.wf.run, o.determinism, o.seed)
        self.clock = det.clock
        self.serial = det.deterministic  # one task, one iteration, one tool call at a time: a fixed order
        self.run_nonce = uuid7()  # NEP-0013: the scope an approval ticket is minted for (random, always)
        self.sink = EventSink(self._journal(o, det), o.on_event)
        self.boundary = Boundary(self.wf.permits, self.workdir, self.sink.witness, parent_boundary)
        self.sem = asyncio.Semaphore(max(1, o.max_parallel))
        self.cancelled = False
        self.settled: dict[str, asyncio.Event] = {}
        self.task_views: dict[str, dict[str, Any]] = {}
        self.engine_env = dict(o.engine_env if o.engine_env is not None else os.environ)
        self.engine_env = with_project_allowance(self.engine_env, compiled.source.path, self.boundary)
        self.held: dict[str, Any] = {}  # the resolved secrets with their egress rules (runtime.net.egress)
        secrets = Secrets(self.wf, self.engine_env, self.secret_values, self.workdir, self.held)
        self.base = base_scope(self.wf, inputs, secrets, self.task_views)
        self.services = self.make_services()
        self.services.held = self.held
        self.meter = self.services.meter = CostMeter.for_run(self.engine_env, o.max_cost_usd, o.parent_meter)
        self.sink.annotate = self.meter.annotate
        self.gate = Gate.for_run(self, o)
        self.executor, self.settings = self._executor(o, det)
        self.agent_records: dict[str, dict[str, Any]] = {}
        self._inflight: dict[str, asyncio.Task[None]] = {}
        self._waiting: dict[str, set[str]] = {}
        self._ready: deque[str] = deque()
        self._left = len(self.wf.tasks)
        self._unselected: set[str] = set()
        self._done = asyncio.Event()
        self._dag_info: dict[str, Any] | None = None  # nika:inspect `view: dag_info`, computed once

    def _journal(self, o: Options, det: Determinism) -> Journal:
        """The run's journal, on the declared clock (frame ids from the seeded stream, when seeded)."""
        journal = Journal(o.trace_dir, run_id=None, redact=self.redactor, clock=det.clock, name_id=self.run_nonce)
        if det.entropy.seeded:
            journal.ids = det.entropy.stream("frame")
        return journal

    def _executor(self, o: Options, det: Determinism) -> tuple[Executor, RunSettings]:
        """Where effects are performed (``o.executor``) and what every verb may read of the run."""
        host = ExecutorHost(
            self.workdir,
            self.boundary,
            self.services,
            self.sink,
            self.engine_env,
            self.gate,
            inspect=self.inspect,
            determinism=det,
        )
        settings = RunSettings(
            o.model, o.interactive, o.max_parallel, o.trace_dir, o.depth, o.max_depth, o.call_stack, o.executor, det
        )
        return make_executor(o.executor, host), settings

    @property
    def in_flight(self) -> frozenset[str]:
        """The tasks running now."""
        return frozenset(self._inflight)

    def inspect(self, view: str) -> dict[str, Any]:
        """One view of this run's own state, for ``nika:inspect`` (:mod:`runtime.engine.introspect`)."""
        from runtime.engine.introspect import view as run_view

        return run_view(self, view)

    def now_iso(self) -> str:
        """Now on the run's clock, as a task record's ``started_at``/``ended_at`` carries it."""
        return iso(self.clock.now_ns()) if self.clock.virtual else now_iso()

    @property
    def journal(self) -> Journal:
        return self.sink.journal

    def emit(self, kind: str, fields: Fields) -> None:
        self.sink.emit(kind, fields)

    # -- the run -----------------------------------------------------------------------------

    async def execute(self) -> RunResult:
        self._announce()
        select = self.options.select
        for tid in self.wf.tasks:
            self.settled[tid] = asyncio.Event()
            self._waiting[tid] = {e.producer for e in self.graph.incoming(tid) if e.producer in self.wf.tasks}
            if select is not None and tid not in select:  # `--task`: outside the selection, never scheduled
                self._unselected.add(tid)
                self._left -= 1
                continue
            self.emit("task_scheduled", [("task", tid)])
        self._ready.extend(tid for tid in self.wf.tasks if not self._waiting[tid] and tid not in self._unselected)
        try:
            self._pump()
            if self._left:
                await self._done.wait()
        except asyncio.CancelledError:
            await self._cancel_all()
        if self.cancelled:
            await self._cancel_all()
        await self.services.aclose()
        failed = any(r.status == Status.FAILURE for r in self.records.values())
        if select is not None:  # a task run's outputs are its named tasks' (the workflow's may read others)
            outputs, error = {t: self.records[t].output for t in self.options.named}, None
        else:
            outputs, error = workflow_outputs(self.wf, {**self.base, "tasks": self.task_views}, self.cancelled, failed)
        failed = failed or error is not None
        state = "cancelled" if self.cancelled else ("failure" if failed else "success")
        end: Fields = [("workflow", self.wf.id), ("state", state), ("outputs", compact(outputs))]
        if self.gate.paused and not self.cancelled:  # ADR-099 rider: the run waits for an answer
            state, outputs, error = "paused", {}, None
            end = self.gate.paused_fields(self.wf.id)
        total = self.meter.total()
        self.emit(_END_KIND[state], [*end, ("cost_usd", total)])
        j = self.journal
        j.close()
        path = str(j.path) if j.path and not j.lost else None
        records = {t: r for t, r in self.records.items() if t not in self._unselected}  # a task run's own
        result = RunResult(state, records, outputs, self.sink.events, error, path, j.error, j.head, self.redactor)
        result.paused, result.cost_usd = list(self.gate.paused), total
        result.determinism = self._determinism_report()
        return result

    def _determinism_report(self) -> dict[str, Any] | None:
        """What the report says of ``run:`` (NEP-0010): the declaration, and in a deterministic run
        what could not be made deterministic (the prologue says the same)."""
        det = self.det
        if not det.declared:
            return None
        out: dict[str, Any] = {
            "entropy": det.entropy_mode,
            "seed": det.seed,
            "clock": det.clock_mode,
            "deterministic": det.deterministic,
        }
        if det.deterministic:
            from runtime.engine.reproducible import unreproducible

            out["not_deterministic"] = unreproducible(self.compiled, self.options.model)
        return out

    def _announce(self) -> None:
        announce(self)

    def cancel(self) -> None:
        """A user cancellation: in-flight tasks are cancelled (their ``on_finally`` runs), the rest
        settle ``cancelled``."""
        if self.cancelled:
            return
        self.cancelled = True
        if not self.settled:  # before the tasks are scheduled: `execute` settles each one cancelled
            return
        for t in list(self._inflight.values()):
            t.cancel()
        for tid, rec in self.records.items():
            idle = tid not in self._inflight and tid not in self.gate.parked and tid not in self._unselected
            if rec.status == "pending" and idle:
                self._settle_now(tid, Outcome(Status.CANCELLED, error=cancelled()))
        self._pump()

    async def _cancel_all(self) -> None:
        self.cancel()
        while self._inflight:
            await asyncio.gather(*self._inflight.values(), return_exceptions=True)
            for tid, t in list(self._inflight.items()):  # a task that ended without leaving the set
                if t.done():
                    self._inflight.pop(tid, None)
        if self._left:
            for tid, rec in self.records.items():
                if rec.status == "pending" and tid not in self.gate.parked and tid not in self._unselected:
                    self._settle_now(tid, Outcome(Status.CANCELLED, error=cancelled()))

    # -- the ready set -----------------------------------------------------------------------

    def _pump(self) -> None:
        """Every ready task through the gate: started, or settled cancelled."""
        while self._ready and not (self.serial and self._inflight):
            tid = self._ready.popleft()
            if self.records[tid].status != "pending" or tid in self._inflight or tid in self.gate.parked:
                continue
            if tid in self._unselected:
                continue
            if self.cancelled:
                self._settle_now(tid, Outcome(Status.CANCELLED, error=cancelled()))
                continue
            blocked = self._gate(tid)
            if blocked is not None:
                self._settle_now(tid, Outcome(Status.CANCELLED, error=blocked))
                continue
            task = asyncio.get_running_loop().create_task(self._run_task(tid), name=f"nika:{tid}")
            task.add_done_callback(lambda t, tid=tid: self._ended(tid, t))
            self._inflight[tid] = task

    def _gate(self, tid: str) -> TaskError | None:
        """GATE-v2: ``None`` when every incoming edge passes, else the cancellation error."""
        for e in self.graph.incoming(tid):
            rec = self.records.get(e.producer)
            if rec is None:
                continue
            if rec.status not in e.passes:
                what = f"`after: {{{e.producer}: {e.label}}}`" if e.kind == "control" else f"a {e.kind} edge"
                return TaskError(
                    CANCEL_CODE,
                    f"`{e.producer}` settled {rec.status}, which {what} does not accept, so `{tid}` cannot run",
                    details={"producer": e.producer, "producer_status": rec.status, "edge": str(e.kind)},
                )
        return None

    def _ended(self, tid: str, task: asyncio.Task[None]) -> None:
        """A task's coroutine ended: one cancelled before its first step never ran a line, so it
        settles here (``cancelled``), or the run would wait for it forever."""
        if self._inflight.get(tid) is task:
            self._inflight.pop(tid, None)
        if self.records[tid].status == "pending" and tid not in self.gate.parked and tid in self.settled:
            self._settle_now(tid, Outcome(Status.CANCELLED, error=cancelled()))
            self._pump()

    def _settle_now(self, tid: str, outcome: Outcome, kind: str | None = None, extra: Fields = ()) -> None:
        rec = self.records[tid]
        if rec.status != "pending":
            return
        rec.status = str(outcome.status)
        rec.output = outcome.output
        rec.bindings = dict(outcome.bindings)
        rec.error = outcome.error.record(tid, rec.attempts or None) if outcome.error is not None else None
        if outcome.recovered_from is not None:
            rec.recovered_from = outcome.recovered_from.record(tid, rec.attempts or None)
        rec.agent = self.agent_records.pop(tid, None)
        rec.ended_at = self.now_iso()
        if rec.started_at is not None:
            rec.duration_ms = elapsed_ms(self.clock, rec.started_clock)
        rec.cost_usd, rec.cost_known = self.meter.task_cost(tid)
        self.task_views[tid] = rec.view()
        if self.options.debugger is not None:
            self.options.debugger.ended(id(self), tid, rec.status, self.redactor(rec.output))
        self.emit(kind or _SETTLED_KIND[Status(rec.status)], [*self._settled_fields(rec), *extra])
        self.settled[tid].set()
        self._left -= 1
        for e in self.graph.outgoing(tid):
            waiting = self._waiting.get(e.consumer)
            if waiting is not None and tid in waiting:
                waiting.discard(tid)
                if not waiting:
                    self._ready.append(e.consumer)
        if self._left == 0:
            self._done.set()

    def _settled_fields(self, rec: TaskRecord) -> Fields:
        return settled_fields(self, rec)

    def _park(self, tid: str) -> None:
        """A paused gate: ``tid`` and its transitive dependents leave the ready set unsettled."""
        from runtime.durable.resume_index import descendants

        for t in sorted(descendants(self.compiled, tid)):
            idle = t not in self._inflight and t not in self.gate.parked and t not in self._unselected
            if self.records[t].status == "pending" and idle:
                self.gate.parked.add(t)
                self._waiting[t] = set()  # never woken by a producer settling
                self._left -= 1
        if self._left == 0:
            self._done.set()

    # -- seams (``nika test`` drives a run through them; the run is the same) ----------------

    def make_services(self) -> Services:
        """The providers, HTTP client and MCP servers this run's effects use."""
        return Services(self.engine_env, self.workdir, self.secret_values, self.options.mcp_config)

    def child(self, compiled: CompiledWorkflow, inputs: dict[str, Any], options: Options) -> Run:
        """The run of a child workflow: in this run's working directory, under its permits too, and
        on this run's clock with a seed of this run's when this run is deterministic (NEP-0010 §5)."""
        if self.options.debugger is not None:  # `nika dap`: the child's tasks break too, one frame deeper
            options.debugger, options.debug_parent = self.options.debugger, (id(self), CURRENT_TASK.get() or "")
        if self.det.deterministic:
            options.determinism, options.seed = self.det, self.det.entropy.child_seed(CURRENT_TASK.get() or "")
        return Run(compiled, inputs, options, verbs=self.verbs, workdir=self.workdir, parent_boundary=self.boundary)

    async def backoff_wait(self, seconds: float) -> None:
        """The pause between two attempts of a retried task: waited for really (whatever is retried
        may be a remote that asked for it), and on a virtual clock counted there too."""
        if self.clock.virtual:
            await self.clock.sleep(seconds)
        await asyncio.sleep(seconds)

    async def run_verb(self, tid: str, verb: Verb, scope: dict[str, Any], task: Task | None) -> Any:
        """One verb call (a task's, an iteration's or an ``on_finally`` step's)."""
        from runtime.engine.verb_call import run_verb

        return await run_verb(self, tid, verb, scope, task)

    async def call_tool(self, ctx: VerbContext, tool: str, args: dict[str, Any]) -> Any:
        """One tool call of an agent's turn."""
        return await self.verbs.tool_call(ctx, tool, args)

    # -- one task ----------------------------------------------------------------------------

    async def _run_task(self, tid: str) -> None:
        """One task, settled whatever happens inside it: a failure anywhere (hashing its
        inputs, journaling its start, the verb, ``on_finally``) settles the task ``failure`` and
        lets the run go on, so no input can leave a run waiting for a task that died."""
        try:
            await self._run_task_body(tid)
        except asyncio.CancelledError:
            self._inflight.pop(tid, None)
            self._settle_now(tid, Outcome(Status.CANCELLED, error=cancelled(), started=True))
            self._pump()
        except Exception as exc:  # an engine bug or an inadmissible value outside the verb stage
            self._inflight.pop(tid, None)
            why = TaskError(INTERNAL, f"internal error in the runtime: {type(exc).__name__}: {exc}")
            with contextlib.suppress(Exception):
                self._settle_now(tid, Outcome(Status.FAILURE, error=why, started=True))
            if self.records[tid].status == "pending":  # the settle itself failed: account for it anyway
                self.records[tid].status = str(Status.FAILURE)
                self.settled[tid].set()
                self._left -= 1
                if self._left == 0:
                    self._done.set()
            self._pump()

    async def _run_task_body(self, tid: str) -> None:
        task = self.wf.tasks[tid]
        rec = self.records[tid]
        CURRENT_TASK.set(tid)
        hash_task(self, task, rec)
        resume = self.options.resume
        if resume is not None and (hit := await cache_hit(self, task, rec, bind)) is not None:
            self._inflight.pop(tid, None)
            self._settle_now(tid, hit[0], "task_cache_hit", hit[1])
            self._pump()
            return
        refused = self.gate.before_action(tid) if self.gate.spent else None
        if refused is not None:  # a revocation settled the allow that gates it first (NEP-0013 §5)
            self._inflight.pop(tid, None)
            self._settle_now(tid, Outcome(Status.FAILURE, error=refused))
            self._pump()
            return
        debugger = self.options.debugger
        if debugger is not None:  # `nika dap`: while a breakpoint holds the run, no new task starts
            await debugger.before_start(id(self), tid)
            if self.cancelled:
                raise asyncio.CancelledError
        if resume is not None and resume.cascade:  # it runs again: so does everything downstream of it
            from runtime.durable.resume_index import descendants

            resume.forced = resume.forced | descendants(self.compiled, tid)
        rec.started_at = self.now_iso()
        rec.started_clock = self.clock.monotonic()
        rec.started_monotonic = time.monotonic()  # the real clock: what deadlines count from
        self.emit("task_started", [("task", tid), ("note", note(task, self.options.model))])
        outcome: Outcome
        try:
            outcome = await pipeline(self, task)
        except GatePause:  # the task waits for an answer: it and what depends on it stay pending
            self._inflight.pop(tid, None)
            self._park(tid)
            self._pump()
            return
        except asyncio.CancelledError:
            outcome = Outcome(Status.CANCELLED, error=cancelled(), started=True)
        except TaskError as err:  # pragma: no cover - the pipeline turns these into outcomes
            outcome = Outcome(Status.FAILURE, error=err, started=True)
        except Exception as exc:  # an engine bug must not take the run down with a traceback
            why = TaskError(INTERNAL, f"internal error in the runtime: {type(exc).__name__}: {exc}")
            outcome = Outcome(Status.FAILURE, error=why, started=True)
        if task.on_finally and outcome.started:
            provisional = TaskRecord(tid, str(outcome.status), outcome.output, None, rec.started_at)
            provisional.bindings = outcome.bindings
            provisional.error = outcome.error.record(tid, rec.attempts) if outcome.error else None
            with contextlib.suppress(asyncio.CancelledError):
                await asyncio.shield(run_finally(self, task, provisional))
        self._inflight.pop(tid, None)
        self._settle_now(tid, outcome)
        self._pump()
