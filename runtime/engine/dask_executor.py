"""The Dask executor: effects performed on the workers of a Dask distributed cluster.

The driver keeps everything that decides (the model, the DAG, gates, ``when:``, budgets,
``retry:``, ``timeout:``, the trace). Each effect the driver judged becomes one Dask task whose
input is a plain record (:mod:`runtime.engine.dask_worker` runs it): the resolved call, the
grant its task runs under, the engine configuration it needs and no other; its result is a
plain record the driver turns into an :class:`~runtime.engine.executor.EffectResult` and whose
witnesses it journals. Task keys name only the effect kind, the task id and a random suffix
(never an argument, so never a secret). The effects of one loop turn are submitted together and
settled records gathered together (:mod:`runtime.engine.dask_batch`).

MCP calls run on the worker each (run, server) session is pinned to (:mod:`runtime.engine.dask_mcp`).
What stays in the driver: pure builtins
(nothing to distribute), the media builtins that reach a model provider through the run's
services, the scripted mock model and the mock's agent turns (their script cursor and turn
counter are state of the run).

A :class:`DaskSession` is one client per ``nika run``: a ``LocalCluster`` sized to the machine,
or an existing scheduler joined by address; ``Options(executor=session.executor)`` selects it
(child workflows inherit it). ``distributed`` is imported only here, only when ``--executor
dask`` asks for it.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import re
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from checker.core.records import replace
from runtime.engine import dask_worker
from runtime.engine.dask_batch import Collector, Submitter
from runtime.engine.dask_wire import (
    TLS_HOWTO,
    clear_text,
    disconnected,
    effect_result,
    lost_error,
    provider_env,
    shipped_secrets,
    tool_env,
    version_mismatch,
)
from runtime.engine.executor import (
    EffectCall,
    EffectResult,
    ExecEffect,
    ExecutorHost,
    LocalExecutor,
    McpEffect,
    ModelEffect,
    journal_witness,
)
from runtime.errors import TaskError
from runtime.guard.limits import EFFECT_DEADLINE

CONNECT_TIMEOUT_S = 5.0
CANCEL_ACK_S = 5.0
ADDRESS = re.compile(r"^(?:[a-z]+://)?(?:\[[0-9a-fA-F:.]+\]|[^/:\s\[\]]+):\d{1,5}$")  # [scheme://]host:port
RESULT_CAP_BYTES = 64 * 1024 * 1024
CAP_VAR = "NIKA_DASK_MAX_RESULT_BYTES"
INSTALL_HINT = "pip install 'nika-tools[dask]'"
# A local cluster sends every submitted effect to a worker at once (no queue on the scheduler):
# the driver's `max_parallel` is already the cap on what is in flight.
# worker-saturation: every task is sent to a worker at once. no-workers-timeout: a task no worker can
# run (its pinned worker is gone, or every worker died and none came back) errs after this long, a
# lost effect that `retry:` decides about, instead of waiting for a worker forever
SCHEDULER_TUNING = {
    "distributed.scheduler.worker-saturation": "inf",
    "distributed.scheduler.no-workers-timeout": "120s",
}


class DaskUnavailable(Exception):
    """The cluster cannot be used (not installed, unreachable, mismatched): a one-line message."""


@dataclass
class DaskSession:
    """One client to one cluster for one ``nika run`` (shared by its child workflows)."""

    client: Any
    cluster: Any = None
    address: str = ""
    dashboard: str | None = None
    allowed_failures: int | None = None
    cap_bytes: int = RESULT_CAP_BYTES
    workers: int = 0
    _closed: bool = field(default=False, repr=False)
    _turn: int = field(default=-1, repr=False)
    started: dict[str, Callable[[dict[str, Any]], None]] = field(default_factory=dict, repr=False)  # key -> hook
    collector: Collector = field(init=False, repr=False)  # the records of this client's futures, in batches
    quiet: QuietLogs | None = field(default=None, repr=False)
    lost_scheduler: bool = field(default=False, repr=False)

    def __post_init__(self) -> None:
        self.collector = Collector(self.client)

    @classmethod
    def start(
        cls,
        address: str | None = None,
        *,
        n_workers: int | None = None,
        timeout_s: float = CONNECT_TIMEOUT_S,
        dashboard: bool = True,
        env: dict[str, str] | None = None,
    ) -> DaskSession:
        """Join the scheduler at ``address``, or start a ``LocalCluster`` (processes, one thread
        each) sized to the machine; refuse a cluster whose workers cannot run this engine."""
        environ = env if env is not None else dict(os.environ)
        try:
            import dask
            import distributed
        except ImportError:
            raise DaskUnavailable(f"`--executor dask` needs the `distributed` package: {INSTALL_HINT}") from None
        cluster = None
        if address and not ADDRESS.match(address):
            raise DaskUnavailable(f"`{address}` is not a Dask scheduler address (tcp://HOST:PORT)")
        if address:
            try:
                client = distributed.Client(address, timeout=timeout_s, set_as_default=False)
            except (OSError, TimeoutError, ValueError) as exc:
                why = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
                raise DaskUnavailable(
                    f"cannot reach the Dask scheduler at {address} within {timeout_s:g}s ({why})"
                ) from None
        else:
            import logging

            # A lost worker fails its task at once: `retry:` decides whether the effect runs again.
            with dask.config.set({"distributed.scheduler.allowed-failures": 0, **SCHEDULER_TUNING}):
                cluster = distributed.LocalCluster(
                    n_workers=n_workers or os.cpu_count() or 1,
                    threads_per_worker=1,
                    processes=True,
                    dashboard_address=":0",  # a free port (its HTTP server runs with or without bokeh)
                    worker_dashboard_address=None,
                    preload=[dask_worker.__name__],  # each worker drops the driver's environment
                    silence_logs=logging.ERROR,
                )
            client = distributed.Client(cluster, set_as_default=False)
        session = cls(client, cluster, str(client.scheduler.address), cap_bytes=_cap(environ))
        session.quiet = QuietLogs.install()
        client.subscribe_topic(dask_worker.STARTED_TOPIC, session._on_started)
        try:
            session._vet_workers(timeout_s)
        except DaskUnavailable:
            session.close()
            raise
        if cluster is not None and dashboard and _has_bokeh():
            session.dashboard = str(cluster.dashboard_link)
        return session

    def _vet_workers(self, timeout_s: float) -> None:
        """At least one worker, every worker on this engine's versions, the failure policy known."""
        try:
            self.client.wait_for_workers(1, timeout=timeout_s)
        except (TimeoutError, OSError):
            why = f"the Dask scheduler at {self.address} has no workers (waited {timeout_s:g}s)"
            raise DaskUnavailable(why) from None
        try:
            theirs = self.client.run(dask_worker.versions)
        except (ImportError, AttributeError) as exc:
            raise DaskUnavailable(
                f"the Dask workers cannot load nika's runtime ({exc}): {INSTALL_HINT} on every worker"
            ) from None
        why = version_mismatch(dask_worker.versions(), theirs)
        if why is not None:
            raise DaskUnavailable(why)
        self.workers = len(theirs)
        self.allowed_failures = self.client.run_on_scheduler(dask_worker.allowed_failures)

    def _on_started(self, event: tuple[float, Any]) -> None:
        """A worker began an effect, or sent the witnesses of an MCP server's spawn at once (on the
        client's thread): tell the run that submitted it."""
        msg = event[1] if isinstance(event, tuple) and len(event) == 2 else {}
        hook = self.started.get(msg.get("key")) if isinstance(msg, dict) else None
        if hook is not None:
            hook(msg)

    def worker_addresses(self) -> list[str]:
        """The workers the scheduler knows now (a blocking call: run it off the event loop)."""
        # a fresh answer of the scheduler's own: ``Client.scheduler_info()`` returns an attribute the
        # client's periodic refresh also rewrites (with no per-worker part), so it can read empty
        info = self.client.sync(self.client.scheduler.identity, n_workers=-1)
        return sorted(info.get("workers", {}))

    def next_worker(self, alive: list[str]) -> str:
        """The worker the next MCP session is pinned to (in turn, across this session's runs)."""
        self._turn += 1
        return alive[self._turn % len(alive)]

    def executor(self, host: ExecutorHost) -> DaskExecutor:
        return DaskExecutor(self, host)

    def close(self) -> None:
        if self._closed:
            return
        lost = disconnected(self.client)
        self._closed, self.lost_scheduler = True, lost
        with contextlib.suppress(Exception):
            self.client.close(timeout=CONNECT_TIMEOUT_S if not lost else 1)
        if self.cluster is not None:
            with contextlib.suppress(Exception):
                self.cluster.close()
        if self.quiet is not None:
            self.quiet.remove()

    def notes(self) -> list[str]:
        """What ``distributed`` logged at warning level or above in this process (its tracebacks
        kept off the terminal), first lines only: said once after the run."""
        said = [line for line in (self.quiet.notes() if self.quiet is not None else []) if "Cancel" not in line]
        if self.lost_scheduler:
            said = [
                f"dask: the connection to the scheduler at {self.address} was lost during the run; the effects "
                "in flight failed as transient (NIKA-IMPL-003): `nika run --resume` runs them again"
            ]
        return said


class QuietLogs(logging.Filter):
    """``distributed``'s own log lines in the driver (a lost scheduler is a page of reconnect
    tracebacks) kept off the terminal while a session lives: the run reports the loss itself, as a
    typed transient error per effect, and :meth:`notes` gives the first lines once."""

    def __init__(self) -> None:
        super().__init__()
        self.seen: list[str] = []
        self.handlers: list[logging.Handler] = []
        self._lastresort: logging.Handler | None = None

    @classmethod
    def install(cls) -> QuietLogs:
        quiet = cls()
        for name in ("distributed", "tornado"):
            for h in logging.getLogger(name).handlers + logging.getLogger().handlers:
                if h not in quiet.handlers:
                    h.addFilter(quiet)
                    quiet.handlers.append(h)
        quiet._lastresort = logging.lastResort
        if logging.lastResort is not None:
            logging.lastResort.addFilter(quiet)
        return quiet

    def filter(self, record: logging.LogRecord) -> bool:
        if not record.name.startswith(("distributed", "tornado")):
            return True
        if record.levelno >= logging.WARNING:
            text = record.getMessage().strip()
            if not text and record.exc_info and record.exc_info[1] is not None:
                text = f"{type(record.exc_info[1]).__name__}: {record.exc_info[1]}"
            first = (text.splitlines() or [record.name])[0]
            if first and first not in self.seen and len(self.seen) < 20:
                self.seen.append(first)
        return False

    def notes(self) -> list[str]:
        return [f"dask: {line}" for line in self.seen[:3]]

    def remove(self) -> None:
        for h in self.handlers:
            h.removeFilter(self)
        if self._lastresort is not None:
            self._lastresort.removeFilter(self)


class DaskExecutor:
    """Effects as Dask tasks; what cannot leave the driver runs on the local executor."""

    name = "dask"

    def __init__(self, session: DaskSession, host: ExecutorHost) -> None:
        self.session = session
        self.host = host
        self.local = LocalExecutor(host)
        self.submitter = Submitter(session.client, dask_worker.perform, session.collector)
        from runtime.engine.dask_mcp import RemoteMcp

        self.mcp = RemoteMcp(self)
        host.services.mcp = self.mcp  # the run's MCP client: closed with the run's services

    async def perform(self, call: EffectCall) -> EffectResult:
        if isinstance(call, McpEffect):
            return await self.mcp.perform(call)
        payload = self._payload(call)
        if payload is None:
            return await self.local.perform(call)
        meter = getattr(self.host.services, "meter", None) if isinstance(call, ModelEffect) else None
        if meter is not None:
            try:  # the run's cost meter bounds each model call in the driver, before it is sent
                meter.ensure_fits(call.model, call.request)
            except TaskError as err:
                error = {"code": err.code, "message": err.message, "transient": err.transient, "details": err.details}
                return EffectResult(None, error)
        result = await self.remote(call, payload)
        if meter is not None and result.error is None:
            from runtime.providers.base import Response

            meter.record(call.model, Response(None, tokens_in=result.tokens_in or 0, tokens_out=result.tokens_out or 0))
        return result

    async def remote(self, call: EffectCall, payload: dict[str, Any], workers: list[str] | None = None) -> EffectResult:
        """Perform ``payload`` on a worker (one of ``workers`` only, when given) and read its record."""
        refused = await self._ship(call, payload)
        if refused is not None:
            return EffectResult(None, refused)
        kind = payload["kind"]
        key = payload["key"] = f"nika-{kind}-{call.task_id}-{uuid.uuid4().hex[:12]}"
        assigned: list[str] = []
        journaled = [0, 0]  # how many of the effect's witnesses and events the journal has already
        loop = asyncio.get_running_loop()

        def on_worker(worker: str) -> None:  # on this loop: the assignment, once, before the result
            if not assigned:
                assigned.append(worker)
                self._event(call.task_id, "dask_assigned", kind, worker)

        def on_message(msg: dict[str, Any]) -> None:
            # the worker's early word (an MCP server's spawn witnessed before the call returns) may
            # come before the record or after it, on another channel: each is journaled once
            on_worker(str(msg.get("worker") or ""))
            witness, events = tuple(msg.get("witness") or ()), tuple(msg.get("events") or ())
            new = EffectResult(witness=witness[journaled[0] :], events=events[journaled[1] :])
            if new.witness or new.events:
                journal_witness(self.host.events, new)
                journaled[:] = [max(journaled[0], len(witness)), max(journaled[1], len(events))]

        def from_client(msg: dict[str, Any]) -> None:
            with contextlib.suppress(RuntimeError):  # the run's loop has closed
                loop.call_soon_threadsafe(on_message, msg)

        self.session.started[key] = from_client
        client = getattr(self.session, "client", None)
        if disconnected(client):  # the scheduler is gone: said at once, typed, never a hang
            self.session.started.pop(key, None)
            return EffectResult(error=lost_error("lost", None, scheduler_lost=True))
        try:
            record = await asyncio.wrap_future(await self.submitter.send(payload, workers))
        except asyncio.CancelledError:  # the worker sees it and kills what the effect started
            future = self.submitter.done(key)
            if future is not None:
                with contextlib.suppress(Exception):  # bounded: a lost scheduler never holds up the run's end
                    await asyncio.wait_for(asyncio.to_thread(future.cancel), CANCEL_ACK_S)
            raise
        except Exception as exc:  # the client closed under the submission: a lost scheduler, typed
            record = ("error", exc)
        finally:
            self.submitter.done(key)
            self.session.started.pop(key, None)
        result = effect_result(record, client)
        if any(journaled):  # journaled on arrival: the record's first ones are those
            result = replace(result, witness=result.witness[journaled[0] :], events=result.events[journaled[1] :])
        journaled[:] = [journaled[0] + len(result.witness), journaled[1] + len(result.events)]  # a late word: none new
        if result.worker:
            on_worker(result.worker)
        self._event(call.task_id, "dask_effect", kind, result.worker or "", result.duration_ms)
        return result

    async def _ship(self, call: EffectCall, payload: dict[str, Any]) -> dict[str, Any] | None:
        """Ready ``payload`` for the wire: the secrets it carries travel with their egress rules
        (``held``: the worker's egress judge) and are remembered for the driver's redactor; refused
        (an error record, nothing sent) when they would cross the network in clear."""
        services = getattr(self.host, "services", None)
        found, keys = shipped_secrets(payload, getattr(services, "held", {}).values())
        payload["held"] = tuple(found)
        for name in keys if services is not None else ():
            services.remember_secret(payload["env"][name])
        if not (found or keys):
            return None
        workers = await asyncio.to_thread(self.session.worker_addresses)
        why = clear_text(self.session.address, workers)
        if why is None:
            return None
        what = f"secret `{found[0].name}`" if found else f"the engine's `{keys[0]}`"
        return {
            "code": "NIKA-SEC-004",
            "message": f"{what} would cross to the Dask cluster in clear ({why}): {TLS_HOWTO}",
            "transient": False,
            "details": {"plane": "dask", "gate": self.session.address, "task": call.task_id},
        }

    def _event(self, tid: str, phase: str, kind: str, worker: str, duration_ms: float | None = None) -> None:
        """Where an effect runs (``dask_assigned``, when a worker starts it) and ran (``dask_effect``)."""
        fields: list[tuple[str, Any]] = [("task", tid), ("phase", phase), ("effect", kind), ("worker", worker)]
        if duration_ms is not None:
            fields.append(("duration_ms", duration_ms))
        self.host.events.emit("verb_invoked", fields)

    def base_payload(self, call: EffectCall) -> dict[str, Any]:
        """What every effect's record carries: the call, where, the cap, the engine, the time left."""
        base: dict[str, Any] = {"call": call, "workdir": str(self.host.workdir), "env": {}, "grant": []}
        base["cap_bytes"], base["engine"] = self.session.cap_bytes, dask_worker.ENGINE_VERSION
        base["once"] = bool(self.session.allowed_failures)  # the scheduler may re-run it: the worker checks
        deadline = EFFECT_DEADLINE.get()
        if deadline is not None:
            import time

            base["timeout_s"] = max(0.0, deadline[0] - time.monotonic())
            base["timeout_ms"] = deadline[1]
        return base

    def _payload(self, call: EffectCall) -> dict[str, Any] | None:
        """The plain record a worker receives, or ``None`` for an effect that stays in the driver."""
        host = self.host
        base = self.base_payload(call)
        if isinstance(call, ExecEffect):
            return {**base, "kind": "exec"}
        if isinstance(call, ModelEffect):
            if call.model.startswith("mock/scripted") or (call.turn and call.model.startswith("mock/")):
                return None  # the mock's script cursor and turn counter are the run's state
            return {**base, "kind": "model", "env": provider_env(call.model, host.engine_env)}
        from checker.contracts import tables as contracts

        c = contracts.contract(call.tool)
        if c is None or not c.effects or c.transport == "provider":
            return None  # nothing to distribute, or a model provider reached through the run's services
        env = tool_env(c.engine_env, host.engine_env) if call.net else {}
        return {**base, "kind": "tool", "env": env, "grant": self.grant()}

    def grant(self) -> list[Any]:
        """The ``permits:`` a worker judges with: this workflow's, then each caller's."""
        return [b.permits for b in self.host.boundary._chain()]


def _cap(env: dict[str, str]) -> int:
    raw = env.get(CAP_VAR, "")
    try:
        return int(raw) if raw else RESULT_CAP_BYTES
    except ValueError:
        raise DaskUnavailable(f"{CAP_VAR} is not a number of bytes: {raw!r}") from None


def _has_bokeh() -> bool:
    import importlib.util

    return importlib.util.find_spec("bokeh") is not None
