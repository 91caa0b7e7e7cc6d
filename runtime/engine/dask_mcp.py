"""MCP calls under the Dask executor: each (run, server) session lives on one worker.

A run holds each MCP server open for its whole length (a stdio server keeps its state between
calls), so an MCP call cannot be a one-shot effect the way an ``exec:`` is. On a worker, a
:class:`Hub` (one per worker process, started on the first MCP effect) runs one long-lived event
loop on a thread of its own and holds the sessions, keyed by run id and server name
(:class:`runtime.mcp_client.Sessions`, the local executor's own). Each effect (a tool call, or the
tool listing that argument checks and an agent's tool definitions read) is one Dask task that
hands its work to that loop and waits for it, so it is still stopped by the task's ``timeout:``
and by the driver cancelling its future (the request to the server is cancelled with it).

In the driver, :class:`RemoteMcp` is the run's MCP client (``services.mcp``): it keeps what
decides (the server table and whether the workflow could write it, the server's composed
environment), pins each server of the run to one worker (strict Dask worker restrictions, so
the session and the server's environment and headers reach that worker only, in the task's
arguments, never in its key) and, at the run's end, closes the run's sessions on the workers it
used. A stdio server's spawn is judged on the worker by the same judge, rebuilt from the grant
it was sent (:func:`runtime.engine.dask_worker.grant_boundary`), and witnessed back. A pinned
worker that is lost fails the call with the executor's transient error (``retry:`` decides) and
the next call pins a new worker, where the server starts again. Sessions a driver never closes
(it vanished) are closed after :data:`IDLE_S` without a call.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import threading
import time
import uuid
from collections.abc import Coroutine
from pathlib import Path
from typing import TYPE_CHECKING, Any

from runtime import limits
from runtime.engine.dask_worker import LOST_CODE, grant_boundary
from runtime.engine.executor import EffectResult, McpEffect, journal_witness
from runtime.errors import TaskError
from runtime.mcp_client import Listing, MCPPool, Sessions, call_on, judge_spawn, listing_of, split_tool

if TYPE_CHECKING:
    from runtime.engine.dask_executor import DaskExecutor

IDLE_S = 600.0  # a worker closes a run's sessions after this long without a call (the driver is gone)
EXPIRY_POLL_S = 30.0
CLOSE_WAIT_S = limits.MCP_SHUTDOWN_GRACE_S * 3 + 4.0  # the run's end waits this long for a worker


# -- on the worker ---------------------------------------------------------------------------------


class Hub:
    """This worker process's MCP sessions, by run, on one event loop that outlives the effects."""

    def __init__(self, idle_s: float = IDLE_S, poll_s: float = EXPIRY_POLL_S) -> None:
        self.idle_s, self.poll_s = idle_s, poll_s
        self.runs: dict[str, Sessions] = {}
        self.used: dict[str, float] = {}
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self._main, name="nika-mcp-sessions", daemon=True)
        self.thread.start()

    def _main(self) -> None:
        asyncio.set_event_loop(self.loop)
        expiry = self.loop.create_task(self._expire_forever())
        try:
            self.loop.run_forever()
        finally:
            expiry.cancel()
            self.loop.run_until_complete(asyncio.gather(expiry, return_exceptions=True))
            self.loop.close()

    def stop(self, timeout_s: float = CLOSE_WAIT_S) -> None:
        """Close every run's sessions, then the loop and its thread."""

        async def close_all() -> None:
            await asyncio.gather(*(self.close(run) for run in list(self.runs)), return_exceptions=True)

        with contextlib.suppress(Exception):
            self.submit(close_all()).result(timeout=timeout_s)
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(timeout_s)

    def submit(self, coro: Coroutine[Any, Any, Any]) -> concurrent.futures.Future[Any]:
        return asyncio.run_coroutine_threadsafe(coro, self.loop)

    def sessions(self, run: str, workdir: Path) -> Sessions:
        """On the hub's loop: the run's sessions (opened on its first call here)."""
        self.used[run] = time.monotonic()
        found = self.runs.get(run)
        if found is None:
            found = self.runs[run] = Sessions(workdir)
        return found

    def touch(self, run: str) -> None:
        if run in self.used:
            self.used[run] = time.monotonic()

    async def close(self, run: str) -> bool:
        """On the hub's loop: stop the run's servers; whether it had any here."""
        found = self.runs.pop(run, None)
        self.used.pop(run, None)
        if found is None:
            return False
        await found.aclose()
        return True

    async def expire(self, now: float | None = None) -> list[str]:
        """Close the runs idle for longer than ``idle_s``; their ids."""
        now = time.monotonic() if now is None else now
        stale = [run for run, t in self.used.items() if now - t > self.idle_s]
        for run in stale:
            await self.close(run)
        return stale

    async def _expire_forever(self) -> None:
        while True:
            await asyncio.sleep(self.poll_s)
            with contextlib.suppress(Exception):
                await self.expire()


_HUB: Hub | None = None
_HUB_LOCK = threading.Lock()


def hub() -> Hub:
    global _HUB
    with _HUB_LOCK:
        if _HUB is None:
            _HUB = Hub()
        return _HUB


async def serve(payload: dict[str, Any], witness: list[dict[str, Any]], events: list[dict[str, Any]]) -> Any:
    """One MCP effect on this worker (from :func:`runtime.engine.dask_worker.perform`'s loop): its
    work runs on the hub's loop; cancelling this coroutine cancels it there."""
    h = hub()
    return await asyncio.wrap_future(h.submit(_on_hub(h, payload, witness, events)))


async def _on_hub(h: Hub, payload: dict[str, Any], witness: list[dict[str, Any]], events: list[dict[str, Any]]) -> Any:
    call: McpEffect = payload["call"]
    tid, cfg, run = call.task_id, payload["server"], str(payload["run"])
    workdir = Path(payload["workdir"])
    sessions = h.sessions(run, workdir)
    boundary = grant_boundary(payload["grant"], workdir, witness)

    def report(event: dict[str, Any]) -> None:
        events.append({**event, "task": tid})

    try:
        conn = await sessions.open(cfg, lambda: judge_spawn(boundary, report, tid, cfg), lambda: dict(payload["env"]))
        if payload["op"] == "list":
            return await listing_of(conn)
        return await call_on(conn, call.tool, dict(call.args))
    finally:
        h.touch(run)


def close_run(run: str) -> bool:
    """A Dask task on a pinned worker at the run's end: stop the run's servers here."""
    if _HUB is None:
        return False
    return bool(_HUB.submit(_HUB.close(run)).result(timeout=CLOSE_WAIT_S))


# -- in the driver ---------------------------------------------------------------------------------


class RemoteMcp:
    """The run's MCP client under the Dask executor (``services.mcp``): decides here, calls on
    the worker each server of the run is pinned to."""

    def __init__(self, executor: DaskExecutor) -> None:
        self.executor = executor
        self.decide = MCPPool(executor.host)  # the table, the writable refusal, the composed environment
        self.servers = self.decide.servers
        self.run = uuid.uuid4().hex
        self.pins: dict[str, str] = {}  # server -> worker address
        self.listings: dict[str, Listing] = {}
        self._lock = asyncio.Lock()

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

    async def call(self, tid: str, tool: str, args: dict[str, Any]) -> Any:
        result = await self.perform(McpEffect(tid, tool, args))
        journal_witness(self.executor.host.events, result)
        return result.value()

    def _payload(self, call: McpEffect, server: str, op: str) -> dict[str, Any]:
        cfg = self.decide.declared(server)
        env = self.decide.env_for(call.task_id, cfg) if cfg.command is not None and not cfg.url else {}
        grant = [b.permits for b in self.executor.host.boundary._chain()]
        base = self.executor.base_payload(call)
        return {**base, "kind": "mcp", "op": op, "run": self.run, "server": cfg, "env": env, "grant": grant}

    async def _send(self, call: McpEffect, server: str, payload: dict[str, Any]) -> EffectResult:
        try:
            worker = await self._pin(server)
        except TaskError as err:
            return EffectResult(None, _error(err))
        result = await self.executor.remote(call, payload, workers=[worker])
        lost = result.error is not None and result.error.get("code") == LOST_CODE and result.error.get("transient")
        if lost and self.pins.get(server) == worker:  # the session died with its worker: the next call pins anew
            del self.pins[server]
            self.listings.pop(server, None)
        return result

    async def _pin(self, server: str) -> str:
        async with self._lock:
            session = self.executor.session
            alive = await asyncio.to_thread(session.worker_addresses)
            worker = self.pins.get(server)
            if worker is not None and worker in alive:
                return worker
            if not alive:
                raise TaskError(
                    LOST_CODE, "the Dask cluster has no workers for an MCP server", True, {"server": server}
                )
            worker = self.pins[server] = session.next_worker(alive)
            self.listings.pop(server, None)
            return worker

    async def aclose(self) -> None:
        """Stop the run's servers on the workers that hold them (bounded; idle expiry otherwise)."""
        workers, self.pins = sorted(set(self.pins.values())), {}
        if not workers:
            return
        session, run = self.executor.session, self.run

        def close_all() -> None:
            alive = set(session.worker_addresses())
            futures = [
                session.client.submit(
                    close_run,
                    run,
                    key=f"nika-mcp-close-{uuid.uuid4().hex[:12]}",
                    pure=False,
                    retries=0,
                    workers=[w],
                    allow_other_workers=False,
                )
                for w in workers
                if w in alive
            ]
            for f in futures:
                try:
                    f.result(timeout=CLOSE_WAIT_S)
                except Exception:
                    with contextlib.suppress(Exception):
                        f.cancel()

        with contextlib.suppress(Exception):
            await asyncio.to_thread(close_all)


def _error(err: TaskError) -> dict[str, Any]:
    return {"code": err.code, "message": err.message, "transient": err.transient, "details": err.details}
