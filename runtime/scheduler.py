"""The scheduler: a ready-set over the precedence graph, on asyncio (03 §DAG execution model).

There are no level barriers: a task is considered the moment its last producer settles. Its
admission follows the gate algebra v2 of the graph the checker built (``Edge.passes``): every
incoming edge's producer must have settled inside that edge's pass-set, else the task settles
``cancelled`` and the dead path spreads by the same rule. An admitted task runs the dispatch
pipeline:

    with: bindings  ->  when:  ->  verb (retry:, timeout:)  ->  on_error:  ->  output: bindings

A failure in the boundary (``with:``/``when:``/the ``for_each`` collection) settles ``failure``
without consulting ``on_error:``. ``on_finally:`` runs after a started task's outcome is known and
before it is published downstream. A failed task never stops unrelated work (in-flight tasks
drain); only a user cancellation stops everything.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import random
import time
from collections import deque
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from checker.core.vocab import OnErrorAction, Status
from checker.model.workflow import Agent, CompiledWorkflow, Exec, FinallyStep, Infer, Invoke, Task, Verb, Workflow
from checker.parse.values import ScalarValue, TemplateValue
from runtime.errors import INTERNAL, NOT_BUILT, TaskError
from runtime.permits import Boundary
from runtime.policy import judge_human_gate
from runtime.trace import TRACE_FORMAT, Journal, source_digests
from runtime.values import condition, materialise, plain, reads_locals

CANCEL_CODE = "NIKA-CANCEL-001"
TIMEOUT_CODE = "NIKA-TIMEOUT-001"
ENGINE_VERSION = "nika-tools 0.1.0"
DEFAULT_MAX_PARALLEL = 64
MAX_DEPTH = 8
MAX_RETRY_AFTER_MS = 60_000  # runtime.limits.MAX_RETRY_AFTER_S, the cap on a provider's Retry-After


def now_iso() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


@dataclass
class Options:
    """How to run: concurrency, the model override, where traces go, nesting."""

    max_parallel: int = DEFAULT_MAX_PARALLEL
    model: str | None = None
    trace_dir: Path | None = Path(".nika/traces")
    interactive: bool = False
    depth: int = 0
    max_depth: int = MAX_DEPTH
    call_stack: tuple[str, ...] = ()
    on_event: Callable[[dict[str, Any]], None] | None = None
    engine_env: Mapping[str, str] | None = None
    mcp_config: Any = None  # the root run's MCP table (runtime.mcp_config.McpConfig), shared with child runs


@dataclass
class TaskRecord:
    """``tasks.X`` (03 §task record) plus the ``output:`` bindings."""

    id: str
    status: str = "pending"
    output: Any = None
    error: dict[str, Any] | None = None
    started_at: str | None = None
    ended_at: str | None = None
    duration_ms: float | None = None
    bindings: dict[str, Any] = field(default_factory=dict)
    attempts: int = 0
    agent: dict[str, Any] | None = None  # an agent task's stop reason and spend (runtime.agent)
    _t0: float = 0.0

    def view(self) -> dict[str, Any]:
        """What ``${{ tasks.X.… }}`` reads once X settled."""
        return {
            **self.bindings,
            "output": self.output,
            "status": self.status,
            "error": self.error,
            "started_at": self.started_at,
            "ended_at": self.ended_at,
            "duration_ms": self.duration_ms,
        }

    def report(self) -> dict[str, Any]:
        out = {
            "status": self.status,
            "output": plain(self.output),
            "error": self.error,
            "started_at": self.started_at,
            "ended_at": self.ended_at,
            "duration_ms": self.duration_ms,
        }
        if self.bindings:
            out["bindings"] = plain(self.bindings)
        if self.agent is not None:
            out["agent"] = self.agent
        return out


@dataclass
class Outcome:
    status: str
    output: Any = None
    bindings: dict[str, Any] = field(default_factory=dict)
    error: TaskError | None = None
    started: bool = False  # the verb stage began (on_finally runs only then)


@dataclass
class RunResult:
    workflow_state: str
    tasks: dict[str, TaskRecord]
    outputs: dict[str, Any]
    events: list[dict[str, Any]]
    error: dict[str, Any] | None
    trace: str | None
    trace_error: str | None
    head: str
    redact: Callable[[Any], Any] = field(default=lambda v: v, repr=False)

    def report(self) -> dict[str, Any]:
        """The run as it leaves the process: every secret masked (the one redactor, 01 §secrets)."""
        return self.redact(
            {
                "workflow_state": self.workflow_state,
                "tasks": {tid: rec.report() for tid, rec in self.tasks.items()},
                "outputs": plain(self.outputs),
                "error": self.error,
                "events": self.events,
                "trace": self.trace,
                "trace_head": self.head,
            }
        )


class Run:
    """One run of one compiled workflow."""

    def __init__(
        self,
        compiled: CompiledWorkflow,
        inputs: dict[str, Any],
        options: Options | None = None,
        *,
        workdir: Path | None = None,
        parent_boundary: Boundary | None = None,
    ) -> None:
        assert compiled.workflow is not None and compiled.graph is not None
        self.compiled = compiled
        self.wf: Workflow = compiled.workflow
        self.graph = compiled.graph
        self.options = options or Options()
        self.workdir = (workdir or Path.cwd()).resolve()
        self.inputs = inputs
        self.records = {tid: TaskRecord(tid) for tid in self.wf.tasks}
        self.events: list[dict[str, Any]] = []
        self.secret_values: set[str] = set()
        from runtime.redact import Redactor

        self.redactor = Redactor(self.secret_values)
        self.journal = Journal(self.options.trace_dir, run_id=None, redact=self._redact)
        self.boundary = Boundary(self.wf.permits, self.workdir, self._witness, parent_boundary)
        self.sem = asyncio.Semaphore(max(1, self.options.max_parallel))
        self.cancelled = False
        self._settled: dict[str, asyncio.Event] = {}
        self._inflight: dict[str, asyncio.Task[None]] = {}
        self._waiting: dict[str, set[str]] = {}
        self._ready: deque[str] = deque()
        self._left = len(self.wf.tasks)
        self._done = asyncio.Event()
        self._task_views: dict[str, dict[str, Any]] = {}
        self._base = self._base_scope()
        self._rng = random.Random(self.wf.run.seed if self.wf.run and self.wf.run.seed is not None else None)
        env = self.options.engine_env
        if env is None:
            import os

            env = os.environ
        self.engine_env = dict(env)
        from runtime.services import Services

        self.services = Services(self.engine_env, self.workdir, self.secret_values, self.options.mcp_config)
        self.agent_records: dict[str, dict[str, Any]] = {}
        self.answered_by: dict[str, str] = {}  # gate task → "human" | "default" (nika:prompt)

    # -- scope -------------------------------------------------------------------------------

    def _base_scope(self) -> dict[str, Any]:
        const: dict[str, Any] = {}
        for c in self.wf.const:
            v = c.literal if c.type is not None else c.value
            const[c.name] = v.to_python() if v is not None else None
        config: dict[str, Any] = {}
        for c in self.wf.config:
            if c.default is not None:
                config[c.name] = c.default.to_python()
        return {
            "inputs": self.inputs,
            "config": config,
            "const": const,
            "secrets": _Secrets(self),
            "tasks": self._task_views,
        }

    def _redact(self, value: Any) -> Any:
        return self.redactor(value)

    # -- events ------------------------------------------------------------------------------

    def emit(self, kind: str, fields: list[tuple[str, Any]]) -> None:
        frame = self.journal.append(kind, fields)
        event: dict[str, Any] = {"type": kind.replace("_", ".", 1)}
        for f in frame["fields"]:
            event.setdefault(f["key"], f["value"])
        event.setdefault("task", None)
        event["at"] = frame["timestamp"]
        self.events.append(event)
        if self.options.on_event is not None:
            self.options.on_event(event)

    def _witness(self, task: str, plane: str, gate: str, ok: bool, why: str) -> None:
        self.emit(
            "permit_checked",
            [("task", task), ("plane", plane), ("gate", gate), ("decision", "allow" if ok else "deny"), ("why", why)],
        )

    def _builtin_event(self, task: str, event: dict[str, Any]) -> None:
        if event.get("type") == "prompt" and isinstance(event.get("answered_by"), str):
            self.answered_by[task] = event["answered_by"]
        fields = [("task", task), ("event", event.get("type", "event"))]
        fields += [(k, v) for k, v in event.items() if k not in ("type", "task")]
        self.emit("tool_invoked", fields)

    # -- the run -----------------------------------------------------------------------------

    async def execute(self) -> RunResult:
        wf = self.wf
        permits_json = json.dumps(wf.permits.value.to_python(), separators=(",", ":")) if wf.permits else None
        import platform

        self.emit(
            "workflow_started",
            [
                ("workflow", wf.id),
                ("permits", "declared boundary · default-deny" if wf.permits else "no permits block · zero authority"),
                ("permits_json", permits_json or "{}"),
                *source_digests(self.compiled.source.text),
                ("sandbox", "noop"),
                ("trace_format", TRACE_FORMAT),
                ("engine_version", ENGINE_VERSION),
                ("platform", f"{platform.system().lower()}/{platform.machine()}"),
                ("depth", self.options.depth),
            ],
        )
        for tid in wf.tasks:
            self._settled[tid] = asyncio.Event()
            self._waiting[tid] = {e.producer for e in self.graph.incoming(tid) if e.producer in wf.tasks}
            self.emit("task_scheduled", [("task", tid)])
        for tid in wf.tasks:
            if not self._waiting[tid]:
                self._ready.append(tid)
        try:
            self._pump()
            if self._left:
                await self._done.wait()
        except asyncio.CancelledError:
            await self._cancel_all()
        if self.cancelled:
            await self._cancel_all()
        await self.services.aclose()
        outputs, error = self._outputs()
        failed = any(r.status == Status.FAILURE for r in self.records.values()) or error is not None
        state = "cancelled" if self.cancelled else ("failure" if failed else "success")
        kind = {"success": "workflow_completed", "failure": "workflow_failed", "cancelled": "workflow_cancelled"}[state]
        self.emit(kind, [("workflow", wf.id), ("state", state)])
        self.journal.close()
        return RunResult(
            state,
            self.records,
            outputs,
            self.events,
            error,
            str(self.journal.path) if self.journal.path else None,
            self.journal.error,
            self.journal.head,
            self.redactor,
        )

    def cancel(self) -> None:
        """A user cancellation: in-flight tasks are cancelled (their ``on_finally`` runs), the rest
        settle ``cancelled``."""
        if self.cancelled:
            return
        self.cancelled = True
        for t in list(self._inflight.values()):
            t.cancel()
        for tid, rec in self.records.items():
            if rec.status == "pending" and tid not in self._inflight:
                self._settle_now(tid, Outcome(Status.CANCELLED, error=_cancelled("the run was cancelled")))
        self._pump()

    async def _cancel_all(self) -> None:
        self.cancel()
        while self._inflight:
            await asyncio.gather(*self._inflight.values(), return_exceptions=True)
        if self._left:
            for tid, rec in self.records.items():
                if rec.status == "pending":
                    self._settle_now(tid, Outcome(Status.CANCELLED, error=_cancelled("the run was cancelled")))

    def _pump(self) -> None:
        """Admit every ready task: apply the gate, then start it or settle it cancelled."""
        while self._ready:
            tid = self._ready.popleft()
            if self.records[tid].status != "pending" or tid in self._inflight:
                continue
            if self.cancelled:
                self._settle_now(tid, Outcome(Status.CANCELLED, error=_cancelled("the run was cancelled")))
                continue
            blocked = self._gate(tid)
            if blocked is not None:
                self._settle_now(tid, Outcome(Status.CANCELLED, error=blocked))
                continue
            self._inflight[tid] = asyncio.get_running_loop().create_task(self._run_task(tid), name=f"nika:{tid}")

    def _gate(self, tid: str) -> TaskError | None:
        """GATE-v2: ``None`` when every incoming edge admits, else the cancellation error."""
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

    def _settle_now(self, tid: str, outcome: Outcome) -> None:
        rec = self.records[tid]
        if rec.status != "pending":
            return
        rec.status = str(outcome.status)
        rec.output = outcome.output
        rec.bindings = dict(outcome.bindings)
        rec.error = outcome.error.record(tid, rec.attempts or None) if outcome.error is not None else None
        rec.agent = self.agent_records.pop(tid, None)
        rec.ended_at = now_iso()
        if rec.started_at is None:
            rec.started_at = None
            rec.duration_ms = None
        else:
            rec.duration_ms = round((time.monotonic() - rec._t0) * 1000, 3)
        self._task_views[tid] = rec.view()
        kind = {
            Status.SUCCESS: "task_completed",
            Status.FAILURE: "task_failed",
            Status.SKIPPED: "task_skipped",
            Status.CANCELLED: "task_cancelled",
        }[Status(rec.status)]
        fields: list[tuple[str, Any]] = [("task", tid), ("note", self._note(self.wf.tasks[tid]))]
        if rec.duration_ms is not None:
            fields.append(("duration_ms", rec.duration_ms))
        if rec.status == Status.SUCCESS:
            fields.append(("output", _compact(rec.output)))
        if rec.error is not None:
            fields.append(("error_code", rec.error["code"]))
            fields.append(("message", rec.error["message"]))
        cls = {"success": "success", "failure": "failure", "skipped": "skipped", "cancelled": "cancelled"}[rec.status]
        fields.append(("outcome", _compact({"class": cls, "payload": {"attempts": rec.attempts}})))
        self.emit(kind, fields)
        self._settled[tid].set()
        self._left -= 1
        for e in self.graph.outgoing(tid):
            waiting = self._waiting.get(e.consumer)
            if waiting is not None and tid in waiting:
                waiting.discard(tid)
                if not waiting:
                    self._ready.append(e.consumer)
        if self._left == 0:
            self._done.set()

    def _note(self, task: Task) -> str:
        v = task.verb
        if isinstance(v, Infer):
            m = self.options.model or (v.effective_model.value if isinstance(v.effective_model, ScalarValue) else "")
            return f"infer · {m}"
        if isinstance(v, Exec):
            if v.command:
                first = v.command[0]
                return f"exec · {first.value if isinstance(first, ScalarValue) else '?'}"
            return "exec · shell"
        if isinstance(v, Invoke):
            return f"invoke · {v.tool or 'workflow'}"
        if isinstance(v, Agent):
            return "agent"
        return "task"

    # -- one task ----------------------------------------------------------------------------

    async def _run_task(self, tid: str) -> None:
        task = self.wf.tasks[tid]
        rec = self.records[tid]
        rec.started_at = now_iso()
        rec._t0 = time.monotonic()
        self.emit("task_started", [("task", tid), ("note", self._note(task))])
        outcome: Outcome
        try:
            outcome = await self._pipeline(task)
        except asyncio.CancelledError:
            outcome = Outcome(Status.CANCELLED, error=_cancelled("the run was cancelled"), started=True)
        except TaskError as err:  # pragma: no cover - the pipeline turns these into outcomes
            outcome = Outcome(Status.FAILURE, error=err, started=True)
        except Exception as exc:  # an engine bug must not take the run down with a traceback
            outcome = Outcome(
                Status.FAILURE,
                error=TaskError(INTERNAL, f"internal error in the runtime: {type(exc).__name__}: {exc}"),
                started=True,
            )
        if task.on_finally and outcome.started:
            provisional = TaskRecord(tid, str(outcome.status), outcome.output, None, rec.started_at)
            provisional.bindings = outcome.bindings
            provisional.error = outcome.error.record(tid, rec.attempts) if outcome.error else None
            with contextlib.suppress(asyncio.CancelledError):
                await asyncio.shield(self._finally(task, provisional))
        self._inflight.pop(tid, None)
        self._settle_now(tid, outcome)
        self._pump()

    async def _pipeline(self, task: Task) -> Outcome:
        scope = dict(self._base)
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
        if task.for_each is None:
            # 2. when: (boundary)
            if task.when is not None:
                try:
                    if not condition(task.when, scope):
                        return Outcome(Status.SKIPPED)
                except TaskError as err:
                    return Outcome(Status.FAILURE, error=err)
            outcome = await self._verb_stage(task, scope)
            outcome.started = True
            return outcome
        return await self._for_each(task, scope, with_now)

    async def _for_each(self, task: Task, scope: dict[str, Any], with_now: dict[str, Any]) -> Outcome:
        try:
            items = materialise(task.for_each, scope, "`for_each:`")
        except TaskError as err:
            return Outcome(Status.FAILURE, error=err)
        if not isinstance(items, list):
            kind = "null" if items is None else type(items).__name__
            return Outcome(
                Status.FAILURE,
                error=TaskError(
                    "NIKA-VAR-006", f"`for_each:` needs an array, got {kind}", details={"for_each_kind": kind}
                ),
            )
        if not items:
            return Outcome(Status.SKIPPED)
        when_each = task.when is not None and reads_locals(task.when)
        if task.when is not None and not when_each:
            try:
                if not condition(task.when, scope):
                    return Outcome(Status.SKIPPED)
            except TaskError as err:
                return Outcome(Status.FAILURE, error=err)
        late = [b for b in task.with_ if reads_locals(b.value)]
        n = len(items)
        outputs: list[Any] = [None] * n
        bindings: dict[str, list[Any]] = {b.name: [None] * n for b in task.output}
        failures: list[tuple[int, TaskError]] = []
        limit = asyncio.Semaphore(task.max_parallel) if task.max_parallel else None
        stop = asyncio.Event()

        async def one(i: int, item: Any) -> None:
            if limit is not None:
                await limit.acquire()
            try:
                if stop.is_set():
                    return
                s = {**scope, "item": item, "index": i}
                try:
                    w = dict(with_now)
                    for b in late:
                        w[b.name] = materialise(b.value, {**s, "with": w}, f"`with.{b.name}`")
                    s["with"] = w
                    if when_each and task.when is not None and not condition(task.when, s):
                        return
                except TaskError as err:
                    failures.append((i, err))
                    if task.fail_fast:
                        stop.set()
                    return
                out = await self._verb_stage(task, s, iteration=i)
                if out.status == Status.SUCCESS:
                    outputs[i] = out.output
                    for k, v in out.bindings.items():
                        bindings.setdefault(k, [None] * n)[i] = v
                elif out.status == Status.FAILURE and out.error is not None:
                    failures.append((i, out.error))
                    if task.fail_fast:
                        stop.set()
            finally:
                if limit is not None:
                    limit.release()

        jobs = [asyncio.ensure_future(one(i, item)) for i, item in enumerate(items)]
        stopper = asyncio.ensure_future(stop.wait())
        try:
            pending: set[asyncio.Future[Any]] = set(jobs)
            while pending:
                _done, pending = await asyncio.wait(pending | {stopper}, return_when=asyncio.FIRST_COMPLETED)
                pending.discard(stopper)
                if stop.is_set():
                    for j in pending:
                        j.cancel()
                    await asyncio.gather(*pending, return_exceptions=True)
                    break
        except asyncio.CancelledError:
            for j in jobs:
                j.cancel()
            await asyncio.gather(*jobs, return_exceptions=True)
            raise
        finally:
            stopper.cancel()
        if failures:
            failures.sort(key=lambda f: f[0])
            first_i, first = failures[0]
            details = dict(first.details)
            details["iterations"] = [{"index": i, "code": e.code, "message": e.message} for i, e in failures]
            details["failed_index"] = first_i
            err = TaskError(first.code, f"iteration {first_i}: {first.message}", first.transient, details)
            return Outcome(Status.FAILURE, error=err, started=True)
        return Outcome(Status.SUCCESS, outputs, bindings, started=True)

    async def _verb_stage(self, task: Task, scope: dict[str, Any], iteration: int | None = None) -> Outcome:
        """The verb with ``retry:`` under ``timeout:``, then ``on_error:``, then ``output:`` bindings."""
        try:
            if task.timeout is not None:
                try:
                    raw = await asyncio.wait_for(self._attempts(task, scope, iteration), task.timeout.ms / 1000)
                except TimeoutError:
                    raise TaskError(
                        TIMEOUT_CODE,
                        f"the task ran longer than its timeout ({_ms(task.timeout.ms)}) and was stopped",
                        details={"timeout_ms": task.timeout.ms},
                    ) from None
            else:
                raw = await self._attempts(task, scope, iteration)
            _refuse_deep(task.id, raw)
            self._check_returns(task, raw)
            return Outcome(Status.SUCCESS, raw, await self._bind(task, raw), started=True)
        except TaskError as err:
            return await self._on_error(task, scope, err)

    def _check_returns(self, task: Task, raw: Any) -> None:
        """``returns:`` on ``exec:``/``invoke:``: the value must fit its type (NIKA-TYPE-101).
        (On ``infer:``/``agent:`` the contract is the provider's structured-output lane.)"""
        if task.returns is None or not isinstance(task.verb, Exec | Invoke):
            return
        from checker.model.typesys import value_fits

        if value_fits(raw, task.returns, self.wf.types) is False:
            raise TaskError(
                "NIKA-TYPE-101",
                f"the output of `{task.id}` does not fit its `returns:` type {json.dumps(task.returns.to_python())}",
                details={"returns": task.returns.to_python()},
            )

    async def _on_error(self, task: Task, scope: dict[str, Any], err: TaskError) -> Outcome:
        oe = task.on_error
        if oe is None or (oe.on_codes and err.code not in oe.on_codes) or oe.action == OnErrorAction.FAIL_WORKFLOW:
            return Outcome(Status.FAILURE, error=err, started=True)
        if oe.action == OnErrorAction.SKIP:
            return Outcome(Status.SKIPPED, None, {b.name: None for b in task.output}, err, started=True)
        # recover: sources are read at recovery time, waiting for them to settle (never a scheduling edge)
        for e in self.graph.recovery_edges():
            if e.consumer == task.id and e.producer in self._settled:
                await self._settled[e.producer].wait()
        try:
            value = materialise(oe.recover, {**scope, "tasks": self._task_views}, "`on_error.recover`")
        except TaskError as rerr:
            details = {**err.details, "recovery_error": {"code": rerr.code, "message": rerr.message}}
            return Outcome(Status.FAILURE, error=TaskError(err.code, err.message, err.transient, details), started=True)
        self.emit("task_recovered", [("task", task.id), ("error_code", err.code)])
        try:
            bound = await self._bind(task, value)
        except TaskError as berr:
            return Outcome(Status.FAILURE, error=berr, started=True)
        return Outcome(Status.SUCCESS, value, bound, started=True)

    async def _attempts(self, task: Task, scope: dict[str, Any], iteration: int | None) -> Any:
        r = task.retry
        max_attempts = r.max_attempts if r is not None else 1
        judge_human_gate(self.wf, self.graph, task, self.answered_by)
        attempt = 0
        while True:
            attempt += 1
            self.records[task.id].attempts = max(self.records[task.id].attempts, attempt)
            try:
                async with self.sem:
                    assert task.verb is not None
                    return await self.run_verb(task.id, task.verb, scope, task)
            except TaskError as err:
                if r is None or attempt >= max_attempts or not _retryable(err, r.on_codes):
                    raise
                delay = _backoff_ms(r.backoff_strategy, r.backoff_ms, r.backoff_max_ms, attempt)
                if r.jitter:
                    delay = self._rng.uniform(0, delay)
                retry_after = err.details.get("retry_after_ms")  # a provider's Retry-After wins when longer
                if isinstance(retry_after, int | float) and retry_after > delay:
                    delay = float(min(retry_after, MAX_RETRY_AFTER_MS))
                fields: list[tuple[str, Any]] = [("task", task.id), ("attempt", attempt), ("error_code", err.code)]
                fields.append(("delay_ms", round(delay, 3)))
                if iteration is not None:
                    fields.append(("index", iteration))
                self.emit("task_retrying", fields)
                await asyncio.sleep(delay / 1000)

    async def _bind(self, task: Task, raw: Any) -> dict[str, Any]:
        if not task.output:
            return {}
        from runtime.jq import run_binding

        return {b.name: await run_binding(b.name, str(b.value.value), raw) for b in task.output}

    async def _finally(self, task: Task, parent: TaskRecord) -> None:
        views = {**self._task_views, task.id: parent.view()}
        scope = {**self._base, "tasks": views, "with": {}}
        for i, step in enumerate(task.on_finally):
            name = f"{task.id}.on_finally[{i}]"
            await self._finally_step(name, step, scope)

    async def _finally_step(self, name: str, step: FinallyStep, scope: dict[str, Any]) -> None:
        status, code = "success", None
        try:
            if step.when is not None and not condition(step.when, scope):
                status = "skipped"
            elif step.verb is not None:
                await asyncio.wait_for(self.run_verb(name, step.verb, scope, None), step.timeout.ms / 1000)
        except TimeoutError:
            status, code = "failure", TIMEOUT_CODE
        except TaskError as err:
            status, code = "failure", err.code
        except Exception as exc:  # cleanup is best effort: logged, never propagated
            status, code = "failure", f"{INTERNAL} ({type(exc).__name__})"
        self.emit("verb_invoked", [("task", name), ("phase", "on_finally"), ("status", status), ("error_code", code)])

    # -- verbs -------------------------------------------------------------------------------

    async def run_verb(self, tid: str, verb: Verb, scope: dict[str, Any], task: Task | None) -> Any:
        if isinstance(verb, Exec):
            from runtime.verbs.exec import run_exec_verb

            return await run_exec_verb(self, tid, verb, scope)
        if isinstance(verb, Infer):
            from runtime.verbs.infer import run_infer

            return await run_infer(self, tid, verb, scope)
        if isinstance(verb, Invoke):
            from runtime.verbs.invoke import run_invoke

            return await run_invoke(self, tid, verb, scope, task)
        if isinstance(verb, Agent):
            from runtime.agent import run_agent

            return await run_agent(self, tid, verb, scope, task)
        raise TaskError(INTERNAL, "the task has no runnable verb")

    # -- workflow outputs --------------------------------------------------------------------

    def _outputs(self) -> tuple[dict[str, Any], dict[str, Any] | None]:
        from checker.model.typesys import value_fits

        out: dict[str, Any] = {}
        scope = {**self._base, "tasks": self._task_views}
        for o in self.wf.outputs:
            try:
                value = materialise(o.value, scope, f"output `{o.name}`")
            except TaskError as err:
                if self.cancelled:
                    continue
                return out, err.record(None, None) | {"output": o.name}
            if o.type is not None and value_fits(value, o.type, self.wf.types) is False:
                err = TaskError(
                    "NIKA-VAR-009",
                    f"workflow output `{o.name}` does not fit its declared type",
                    details={"output": o.name, "type": o.type.to_python()},
                )
                return out, err.record(None, None)
            out[o.name] = value
        return out, None


# The secret sources this build resolves. Read as data by checker/contracts/built_features.py (which
# warns at check about the others): keep it a literal set of strings.
SECRET_SOURCES = frozenset({"env"})


class _Secrets(Mapping[str, Any]):
    """``secrets.X``: resolved when read (env source only in this build), remembered for redaction."""

    def __init__(self, run: Run) -> None:
        self._run = run
        self._decl = {s.name: s for s in run.wf.secrets}

    def __getitem__(self, key: str) -> Any:
        s = self._decl[key]
        if s.source not in SECRET_SOURCES:
            raise TaskError(NOT_BUILT, f"secret source `{s.source}` is not available in this build of nika")
        name = s.store_key or s.name
        value = self._run.engine_env.get(name)
        if value is None:
            raise TaskError("NIKA-VAR-001", f"secret `{key}` reads `{name}` from the environment, which is not set")
        self._run.secret_values.add(value)
        return value

    def __iter__(self) -> Any:
        return iter(self._decl)

    def __len__(self) -> int:
        return len(self._decl)


def _refuse_deep(tid: str, raw: Any) -> None:
    """The backstop for values nested past ``MAX_VALUE_DEPTH`` from any verb (the sources that
    parse JSON refuse them first with their own codes): a typed failure, never a stack overflow
    while the task settles."""
    from runtime.limits import MAX_VALUE_DEPTH
    from runtime.values import deeper_than

    if deeper_than(raw, MAX_VALUE_DEPTH):
        raise TaskError(
            INTERNAL,
            f"the output of `{tid}` nests deeper than {MAX_VALUE_DEPTH} levels, which this engine refuses to hold",
            details={"max_depth": MAX_VALUE_DEPTH},
        )


def _cancelled(message: str) -> TaskError:
    return TaskError(CANCEL_CODE, message)


def _retryable(err: TaskError, on_codes: tuple[str, ...]) -> bool:
    if err.code == TIMEOUT_CODE or err.category == "security_error":
        return False
    if on_codes:
        return err.code in on_codes
    return err.transient


def _backoff_ms(strategy: str, base: int, cap: int, attempt: int) -> float:
    if strategy == "fixed":
        delay = base
    elif strategy == "linear":
        delay = base * attempt
    else:
        delay = base * 2 ** (attempt - 1)
    return float(min(delay, cap))


def _ms(ms: float) -> str:
    return f"{ms / 1000:g}s" if ms >= 1000 else f"{ms:g}ms"


def _compact(value: Any) -> str:
    try:
        return json.dumps(plain(value), sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str)
    except (TypeError, ValueError):
        return json.dumps(str(value))


def is_template(v: object) -> bool:
    return isinstance(v, TemplateValue)


async def run_compiled(
    compiled: CompiledWorkflow,
    inputs: dict[str, Any],
    options: Options,
    workdir: Path,
    parent_boundary: Boundary | None = None,
) -> RunResult:
    run = Run(compiled, inputs, options, workdir=workdir, parent_boundary=parent_boundary)
    return await run.execute()
