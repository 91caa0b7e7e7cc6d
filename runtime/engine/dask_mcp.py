"""MCP calls under the Dask executor, the driver's side: each (run, server) session on one worker.

A run holds each MCP server open for its whole length (a stdio server keeps its state between
calls), so an MCP call cannot be a one-shot effect the way an ``exec:`` is. On a worker, a
:class:`~runtime.engine.dask_worker.Hub` (one per worker process, started by the first MCP
effect) runs one long-lived event loop on a thread of its own and holds the sessions, keyed by
run id and server name (:class:`runtime.tools.mcp_client.Sessions`, the local executor's own). Each
effect (a tool call, or the tool listing that argument checks and an agent's tool definitions
read) is one Dask task that hands its work to that loop and waits for it, so it is still stopped
by the task's ``timeout:`` and by the driver cancelling its future (the request to the server is
cancelled with it).

Here, :class:`RemoteMcp` is the run's MCP client (``services.mcp``): it keeps what decides (the
server table and whether the workflow could write it, the server's composed environment), pins
each server of the run to one worker (strict Dask worker restrictions, so the session and the
server's environment and headers reach that worker only, in the task's arguments, never in its
key) and, at the run's end, closes the run's sessions on the workers it used (out of band, on the
worker's own loop). A stdio server's spawn is judged on the worker by the same judge, rebuilt
from the grant it was sent (:func:`runtime.engine.dask_worker.grant_boundary`), and witnessed
back. A pinned worker that is lost fails the call with the executor's transient error
(``retry:`` decides) and the next call pins a new worker, where the server starts again.
While the run lasts it tells those workers so every :data:`KEEPALIVE_S`; sessions a driver never
closes (it vanished) are closed by their worker after :data:`~runtime.engine.dask_worker.IDLE_S`
without a word from it.
"""

from __future__ import annotations

import asyncio
import contextlib
import uuid
from collections.abc import Coroutine
from typing import Any, Protocol

from runtime.engine.dask_worker import CLOSE_WAIT_S, IDLE_S, LOST_CODE, close_run, touch_run
from runtime.engine.executor import EffectCall, EffectResult, ExecutorHost, McpEffect, journal_witness
from runtime.errors import TaskError
from runtime.tools.mcp_client import Listing, MCPPool, split_tool


class Cluster(Protocol):
    """What the MCP half reads of the executor's cluster session (``DaskSession``)."""

    client: Any

    def worker_addresses(self) -> list[str]: ...
    def next_worker(self, alive: list[str]) -> str: ...


class Driver(Protocol):
    """What the MCP half reads of the Dask executor (:class:`runtime.engine.dask_executor.DaskExecutor`)."""

    host: ExecutorHost
    session: Cluster

    def base_payload(self, call: EffectCall) -> dict[str, Any]: ...
    def grant(self) -> list[Any]: ...
    async def remote(
        self, call: EffectCall, payload: dict[str, Any], workers: list[str] | None = None
    ) -> EffectResult: ...


WATCH_S = 0.5  # how often the driver checks that the worker holding a call's session is still there
KEEPALIVE_S = IDLE_S / 4  # how often a live run tells its workers that its sessions are still wanted

# -- in the driver ---------------------------------------------------------------------------------


class RemoteMcp:
    """The run's MCP client under the Dask executor (``services.mcp``): decides here, calls on
    the worker each server of the run is pinned to."""

    def __init__(self, executor: Driver) -> None:
        self.executor = executor
        self.decide = MCPPool(executor.host)  # the table, the writable refusal, the composed environment
        self.servers = self.decide.servers
        self.run = uuid.uuid4().hex
        self.pins: dict[str, str] = {}  # server -> worker address
        # workers this run lost a session on: never pinned again by it (the scheduler may list a
        # dead worker for a while, and a retry pinned to it would be lost a second time)
        self.lost: set[str] = set()
        self.listings: dict[str, Listing] = {}
        self._lock = asyncio.Lock()
        self._gone: dict[str, asyncio.Event] = {}  # worker -> set once it has left the cluster
        self._waiting = 0
        self._poller: asyncio.Task[None] | None = None
        self._keepalive: asyncio.Task[None] | None = None

    async def perform(self, call: McpEffect) -> EffectResult:
        """One tool call as an effect record (never raises a task failure)."""
        server = split_tool(call.tool)[0]
        try:
            payload = self._payload(call, server, "call")
        except TaskError as err:
            return EffectResult(None, _error(err))
        return await self._send(call, server, payload)

    async def listing(self, tid: str, server: str) -> Listing:
        """The server's tools (read once per server per run), its spawn witnessed here."""
        found = self.listings.get(server)
        if found is not None:
            return found
        call = McpEffect(tid, f"mcp:{server}", {})
        result = await self._send(call, server, self._payload(call, server, "list"))
        journal_witness(self.executor.host.events, result)
        value: Listing = {n: (d, s) for n, (d, s) in result.value().items()}
        self.listings[server] = value
        return value

    async def call(self, tid: str, tool: str, args: dict[str, Any], timeout_s: float | None = None) -> Any:
        result = await self.perform(McpEffect(tid, tool, args, timeout_s))
        journal_witness(self.executor.host.events, result)
        return result.value()

    def _payload(self, call: McpEffect, server: str, op: str) -> dict[str, Any]:
        cfg = self.decide.declared(server)
        env = self.decide.env_for(call.task_id, cfg) if cfg.command is not None and not cfg.url else {}
        base = self.executor.base_payload(call)
        return {
            **base,
            "kind": "mcp",
            "op": op,
            "run": self.run,
            "server": cfg,
            "env": env,
            "grant": self.executor.grant(),
        }

    async def _send(self, call: McpEffect, server: str, payload: dict[str, Any]) -> EffectResult:
        try:
            worker = await self._pin(server)
        except TaskError as err:
            return EffectResult(None, _error(err))
        result = await self._watched(self.executor.remote(call, payload, workers=[worker]), server, worker)
        lost = result.error is not None and result.error.get("code") == LOST_CODE and result.error.get("transient")
        if lost:
            self.lost.add(worker)
        if lost and self.pins.get(server) == worker:  # the session died with its worker: the next call pins anew
            del self.pins[server]
            self.listings.pop(server, None)
        return result

    async def _watched(self, effect: Coroutine[Any, Any, EffectResult], server: str, worker: str) -> EffectResult:
        """The effect's record, or a lost-worker error once its pinned worker has left the cluster
        (a scheduler that re-runs the tasks of a lost worker would wait forever for that one)."""
        task = asyncio.ensure_future(effect)
        watch = asyncio.ensure_future(self._left(worker))
        try:
            await asyncio.wait({task, watch}, return_when=asyncio.FIRST_COMPLETED)
        finally:  # cancelled, or settled either way: the other one stops (a cancelled effect cancels its future)
            for f in (watch, task):
                if not f.done():
                    f.cancel()
            await asyncio.gather(watch, task, return_exceptions=True)
        if not task.cancelled():
            return task.result()
        return EffectResult(
            error={
                "code": LOST_CODE,
                "message": f"the Dask worker {worker} holding MCP server `{server}` was lost; "
                "`retry:` decides whether the call runs again",
                "transient": True,
                "details": {"dask": "worker-lost", "server": server},
            }
        )

    async def _left(self, worker: str) -> None:
        """Return once ``worker`` is no longer among the scheduler's workers (one poll for all of
        the run's calls in flight)."""
        gone = self._gone.setdefault(worker, asyncio.Event())
        self._waiting += 1
        if self._poller is None or self._poller.done():
            self._poller = asyncio.ensure_future(self._poll())
        try:
            await gone.wait()
        finally:
            self._waiting -= 1

    async def _poll(self) -> None:
        session = self.executor.session
        while self._waiting:
            await asyncio.sleep(WATCH_S)
            with contextlib.suppress(Exception):  # a scheduler that does not answer fails the effects itself
                alive = set(await asyncio.to_thread(session.worker_addresses))
                for worker, gone in self._gone.items():
                    if worker not in alive:
                        gone.set()

    async def _pin(self, server: str) -> str:
        async with self._lock:
            session = self.executor.session
            listed = await asyncio.to_thread(session.worker_addresses)
            alive = [w for w in listed if w not in self.lost] or listed  # a worker back at its old address
            worker = self.pins.get(server)
            if worker is not None and worker in alive:
                return worker
            if not alive:
                raise TaskError(
                    LOST_CODE, "the Dask cluster has no workers for an MCP server", True, {"server": server}
                )
            worker = self.pins[server] = session.next_worker(alive)
            self.listings.pop(server, None)
            if self._keepalive is None:
                self._keepalive = asyncio.ensure_future(self._keep())
            return worker

    async def _keep(self) -> None:
        """While the run lasts, its workers keep its sessions, however long between calls (a worker
        closes them only once no run has touched them for ``IDLE_S``: the driver is gone)."""
        client = self.executor.session.client
        while True:
            await asyncio.sleep(KEEPALIVE_S)
            workers = sorted(set(self.pins.values()))
            if workers:
                with contextlib.suppress(Exception):
                    await asyncio.to_thread(client.run, touch_run, self.run, workers=workers, on_error="return")

    async def aclose(self) -> None:
        """Stop the run's servers on the workers that hold them (bounded; idle expiry otherwise)."""
        for task in (self._poller, self._keepalive):
            if task is not None:
                task.cancel()
                await asyncio.gather(task, return_exceptions=True)
        workers, self.pins = sorted(set(self.pins.values())), {}
        if not workers:
            return
        session, run = self.executor.session, self.run

        def close_all() -> None:
            alive = set(session.worker_addresses())
            here = [w for w in workers if w in alive]
            if here:
                session.client.run(close_run, run, workers=here, on_error="return")

        with contextlib.suppress(Exception):
            await asyncio.wait_for(asyncio.to_thread(close_all), CLOSE_WAIT_S)


def _error(err: TaskError) -> dict[str, Any]:
    return {"code": err.code, "message": err.message, "transient": err.transient, "details": err.details}
