"""The worker side of the Dask executor: plain functions a Dask worker runs, plain data in and out.

:func:`perform` receives one effect as a plain record (the resolved call, the grant the task runs
under, the engine configuration it needs and no more) and answers a plain record (output or error,
the permit witnesses decided here, the events a builtin reported, timing, tokens, the worker).

On the worker, paths are canonicalised and programs resolved on the worker's own file system, and
the same checker judge (:class:`runtime.guard.permits.Boundary`) decides with the grant that was sent.
The effect runs on an event loop of its own under the task's remaining ``timeout:`` (a process
group is killed on expiry), and it stops when the driver cancels its Dask future.

An MCP effect is handed to the worker process's :class:`Hub`, whose event loop outlives the
effect and holds the run's MCP sessions (the driver's side: :mod:`runtime.engine.dask_mcp`).

This module imports ``distributed`` only inside functions (a worker has it; the driver's local
run never loads this module).
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import os
import pickle
import platform
import shutil
import threading
import time
from collections.abc import Callable, Coroutine
from pathlib import Path
from typing import TYPE_CHECKING, Any

from runtime.engine.records import ENGINE_VERSION, now_iso, timeout_error
from runtime.errors import TaskError
from runtime.guard import limits

if TYPE_CHECKING:
    from runtime.tools.mcp_client import Sessions

LOST_CODE = "NIKA-IMPL-003"
STARTED_TOPIC = "nika-effect-started"  # the worker's word to the driver that it began an effect
CANCEL_POLL_S = 0.05


# What a worker of a local cluster keeps of the environment it inherited from the driver.
KEEP_ENV_PREFIXES = ("DASK_", "PYTHON", "LC_")


def dask_setup(worker: Any = None) -> None:
    """Preloaded on each worker of a local cluster (``preload=``): the process inherited the
    driver's environment, and keeps only the runner floor and its own Python and Dask settings, so
    no secret waits in a worker for an effect that is not its own (an effect brings what it needs)."""
    from runtime.guard.permits import ENV_FLOOR

    for name in list(os.environ):
        if name not in ENV_FLOOR and not name.startswith(KEEP_ENV_PREFIXES):
            del os.environ[name]


def versions() -> dict[str, str]:
    """What a driver and its workers must agree on (refused on a mismatch)."""
    import distributed

    return {
        "python": ".".join(platform.python_version_tuple()[:2]),
        "nika": ENGINE_VERSION,
        "distributed": distributed.__version__,
    }


def allowed_failures(dask_scheduler: Any) -> int:
    """How often the scheduler re-runs a task whose worker died (run on the scheduler)."""
    return int(dask_scheduler.allowed_failures)


def lost_count(key: str, dask_scheduler: Any) -> int:
    """How many workers died while running ``key`` (run on the scheduler)."""
    ts = dask_scheduler.tasks.get(key)
    return int(ts.suspicious) if ts is not None else 0


def _ran_before(key: str) -> bool:
    """Whether the scheduler already lost a worker running this effect (it re-runs such a task
    when its ``allowed-failures`` is above 0; the driver then asks for this check)."""
    from distributed import get_client

    return get_client().run_on_scheduler(lost_count, key) > 0


def perform(payload: dict[str, Any]) -> dict[str, Any]:
    """Run one effect here and answer its plain record (never raises: a raise would print the
    arguments, and with them the effect's environment, into the worker's log)."""
    started, t0 = now_iso(), time.monotonic()
    witness: list[dict[str, Any]] = []
    events: list[dict[str, Any]] = []
    out: dict[str, Any] = {"output": None, "error": None, "tokens": (None, None, None, None)}
    try:
        if payload.get("engine") != ENGINE_VERSION:
            raise TaskError(
                LOST_CODE,
                f"the Dask worker runs {ENGINE_VERSION} and the driver {payload.get('engine')}; "
                "every worker must run the driver's version",
            )
        if payload.get("once") and _ran_before(str(payload.get("key"))):
            raise TaskError(
                LOST_CODE,
                "the Dask worker that started this effect was lost, and the scheduler sent it to another "
                "worker; it is not run twice (`retry:` decides whether it runs again)",
                transient=True,
                details={"dask": "rescheduled"},
            )
        _announce(str(payload.get("key") or ""))
        output, tokens = asyncio.run(_guarded(payload, witness, events))
        out.update(output=output, tokens=tokens)
    except TaskError as err:
        out["error"] = {"code": err.code, "message": err.message, "transient": err.transient, "details": err.details}
    except Exception as exc:  # an engine bug on the worker is a task failure, not a traceback
        why = f"internal error on the Dask worker: {type(exc).__name__}: {exc}"
        out["error"] = {"code": "NIKA-IMPL-001", "message": why, "transient": False, "details": {}}
    out.update(
        witness=witness,
        events=events,
        started_at=started,
        duration_ms=round((time.monotonic() - t0) * 1000, 3),
        worker=_worker_address(),
    )
    return _capped(out, int(payload["cap_bytes"]))


def _capped(out: dict[str, Any], cap: int) -> dict[str, Any]:
    """The record, or an error naming the cap when its output is too large to send back."""
    size = len(pickle.dumps(out.get("output"), protocol=pickle.HIGHEST_PROTOCOL))
    if size <= cap:
        return out
    why = (
        f"the effect's result is {size} bytes, more than the {cap} bytes a Dask worker sends back "
        "(NIKA_DASK_MAX_RESULT_BYTES); write large output to a file instead"
    )
    out["output"] = None
    out["error"] = {"code": LOST_CODE, "message": why, "transient": False, "details": {"cap_bytes": cap}}
    return out


async def _guarded(
    payload: dict[str, Any], witness: list[dict[str, Any]], events: list[dict[str, Any]]
) -> tuple[Any, tuple[int | None, int | None, str | None]]:
    """The effect under the task's remaining timeout, stopped when its future is cancelled."""
    effect = asyncio.ensure_future(_effect(payload, witness, events))
    watch = asyncio.ensure_future(_cancelled(payload.get("key")))
    timeout_s = payload.get("timeout_s")
    try:
        done, _ = await asyncio.wait({effect, watch}, timeout=timeout_s, return_when=asyncio.FIRST_COMPLETED)
    finally:
        watch.cancel()
    if effect in done:
        return effect.result()
    effect.cancel()  # the process runner kills the group on cancellation
    await asyncio.gather(effect, return_exceptions=True)
    if watch in done:
        raise TaskError("NIKA-CANCEL-001", "the driver cancelled the effect", details={})
    raise timeout_error(int(payload.get("timeout_ms") or 0))


async def _cancelled(key: str | None) -> None:
    """Return once the driver cancelled this task's future (the worker forgets or cancels it)."""
    if not key:
        await asyncio.Event().wait()
    try:
        from distributed import get_worker

        worker = get_worker()
    except (ImportError, ValueError):
        await asyncio.Event().wait()
        return
    while True:
        ts = worker.state.tasks.get(key)
        if ts is None or ts.state in ("cancelled", "released", "forgotten"):
            return
        await asyncio.sleep(CANCEL_POLL_S)


async def _effect(
    payload: dict[str, Any], witness: list[dict[str, Any]], events: list[dict[str, Any]]
) -> tuple[Any, tuple[int | None, int | None, str | None]]:
    kind = payload["kind"]
    none: tuple[int | None, int | None, str | None] = (None, None, None)
    if payload.get("timeout_s") is not None:  # the task's `timeout:` governs its network reads, as in the driver
        import time

        from runtime.guard.limits import EFFECT_DEADLINE

        EFFECT_DEADLINE.set((time.monotonic() + float(payload["timeout_s"]), int(payload.get("timeout_ms") or 0)))
    if kind == "exec":
        from runtime.tools.process_runner import run_process

        return await run_process(_on_this_worker(payload["call"].call)), none
    if kind == "model":
        return await _model(payload)
    if kind == "mcp":  # on the worker's long-lived MCP loop, where the run's sessions live
        return await serve(payload, witness, events), none
    return await _builtin(payload, witness, events), none


def _on_this_worker(call: Any) -> Any:
    """The program resolved on this worker's file system (a bare name on its PATH)."""
    program = call.argv[0] if call.argv else None
    if program is None or (call.executable and os.path.exists(call.executable)):
        return call
    if "/" in program:
        return call  # the spawn reports the missing file (NIKA-EXEC-002)
    found = shutil.which(program, path=os.environ.get("PATH", os.defpath))
    if found is None:
        raise TaskError(
            "NIKA-EXEC-002",
            f"cannot start `{program}`: it was not found on the PATH of the Dask worker {_worker_address()}",
            details={"program": program, "worker": _worker_address()},
        )
    call.executable = found
    return call


async def _model(payload: dict[str, Any]) -> tuple[Any, tuple[int | None, int | None, str | None]]:
    from runtime.engine.services import Services

    call = payload["call"]
    from runtime.engine.executor import effect_sink
    from runtime.net import egress

    services = Services(payload["env"], Path(payload["workdir"]))
    egress.CURRENT.set(egress.Carrier(effect_sink(call), tuple(payload.get("held") or ())))
    try:
        provider, name = services.provider_for(call.model)
        response = await provider.complete(name, call.request)
    finally:
        await services.aclose()
    output = response.record() if call.turn else response.value  # plain data back across the wire
    return output, (response.tokens_in, response.tokens_out, response.finish_reason, response.thinking_tokens)


async def _builtin(payload: dict[str, Any], witness: list[dict[str, Any]], events: list[dict[str, Any]]) -> Any:
    from runtime import builtins

    call = payload["call"]
    tid = call.task_id
    workdir = Path(payload["workdir"])
    boundary = grant_boundary(payload["grant"], workdir, witness)
    from runtime.engine.executor import effect_sink
    from runtime.net import egress

    extra: dict[str, Any] = {}
    if call.net:  # a client of its own; the SSRF allowance and the URL judge for every redirect hop
        extra = {
            "env": payload["env"],
            "judge_url": lambda url: boundary.check_url(tid, url, inert=call.inert),
            "trusted": call.trusted,
        }
    held = tuple(payload.get("held") or ())  # the secrets the driver found in this effect, with their egress
    egress.CURRENT.set(egress.Carrier(effect_sink(call), held, lambda hop: boundary.check_egress(tid, hop)))
    ctx = builtins.BuiltinContext(
        workdir=workdir,
        resolve_read=lambda p: boundary.resolve(tid, p, "read"),
        resolve_write=lambda p: boundary.resolve(tid, p, "write"),
        emit=lambda event: events.append({**event, "task": tid}),
        task_id=tid,
        interactive=False,
        extra=extra,
    )
    return await builtins.call(call.tool, dict(call.args), ctx, computed=call.computed)


def grant_boundary(grant: list[Any], workdir: Path, witness: list[dict[str, Any]]) -> Any:
    """The judge adapter for the grant a task was sent (its workflow's permits, then each caller's)."""
    from runtime.guard.permits import Boundary

    def say(task: str, plane: str, gate: str, ok: bool, why: str) -> None:
        witness.append({"task": task, "plane": plane, "gate": gate, "ok": ok, "why": why})

    parent: Boundary | None = None
    for permits in reversed(grant[1:]):
        parent = Boundary(permits, workdir, None, parent)
    return Boundary(grant[0] if grant else None, workdir, say, parent)


def _announce(key: str) -> None:
    """Tell the driver which worker runs ``key`` (its live event stream shows it at once)."""
    try:
        from distributed import get_worker

        worker = get_worker()
    except (ImportError, ValueError):
        return
    worker.log_event(STARTED_TOPIC, {"key": key, "worker": str(worker.address)})


def _worker_address() -> str:
    try:
        from distributed import get_worker

        return str(get_worker().address)
    except (ImportError, ValueError):
        return "local"


# -- MCP sessions ---------------------------------------------------------------------------------
# A run's MCP sessions outlive its effects (the driver's side: runtime/engine/dask_mcp.py), so
# they live on one event loop per worker process, on a thread of its own, keyed by run id.

IDLE_S = 600.0  # a worker closes a run's sessions after this long without a call (the driver is gone)
EXPIRY_POLL_S = 30.0
CLOSE_WAIT_S = limits.MCP_SHUTDOWN_GRACE_S * 3 + 4.0  # the run's end waits this long for a worker


class Hub:
    """This worker process's MCP sessions, by run, on one event loop that outlives the effects."""

    def __init__(self, idle_s: float = IDLE_S, poll_s: float = EXPIRY_POLL_S) -> None:
        self.idle_s, self.poll_s = idle_s, poll_s
        self.runs: dict[str, Sessions] = {}
        self.used: dict[str, float] = {}
        self.touches = 0
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
            from runtime.tools.mcp_client import Sessions

            found = self.runs[run] = Sessions(workdir)
        return found

    def touch(self, run: str) -> None:
        if run in self.used:
            self.used[run] = time.monotonic()
            self.touches += 1

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
            import atexit

            _HUB = Hub()
            atexit.register(_HUB.stop, limits.MCP_SHUTDOWN_GRACE_S * 2)  # a worker that exits stops its servers
        return _HUB


async def serve(payload: dict[str, Any], witness: list[dict[str, Any]], events: list[dict[str, Any]]) -> Any:
    """One MCP effect on this worker (from :func:`perform`'s loop): its
    work runs on the hub's loop; cancelling this coroutine cancels it there."""
    h = hub()
    key = str(payload.get("key") or "")
    try:
        from distributed import get_worker

        worker: Any = get_worker()
    except (ImportError, ValueError):
        worker = None

    def stream() -> None:
        """Send the spawn's witnesses at once (a worker lost with the server running still leaves
        them in the journal); they are in the record too, and the driver journals each once."""
        if worker is None or not key:
            return
        msg = {"key": key, "worker": str(worker.address), "witness": list(witness), "events": list(events)}
        worker.log_event(STARTED_TOPIC, msg)

    return await asyncio.wrap_future(h.submit(_on_hub(h, payload, witness, events, stream)))


async def _on_hub(
    h: Hub,
    payload: dict[str, Any],
    witness: list[dict[str, Any]],
    events: list[dict[str, Any]],
    stream: Callable[[], None],
) -> Any:
    from runtime.tools.mcp_client import call_on, judge_spawn, listing_of

    call = payload["call"]
    tid, cfg, run = call.task_id, payload["server"], str(payload["run"])
    workdir = Path(payload["workdir"])
    sessions = h.sessions(run, workdir)
    boundary = grant_boundary(payload["grant"], workdir, witness)

    def report(event: dict[str, Any]) -> None:
        events.append({**event, "task": tid})

    def judge() -> None:
        try:
            judge_spawn(boundary, report, tid, cfg)
        finally:
            stream()

    try:
        conn = await sessions.open(cfg, judge, lambda: dict(payload["env"]), tid)
        if payload["op"] == "list":
            return await listing_of(conn)
        return await call_on(conn, call.tool, dict(call.args), call.timeout_s)
    finally:
        h.touch(run)


async def touch_run(run: str) -> None:
    """Run out of band on a pinned worker while the driver's run lasts: its sessions are in use,
    however long since their last call."""
    if _HUB is not None:
        _HUB.loop.call_soon_threadsafe(_HUB.touch, run)


async def close_run(run: str) -> bool:
    """Run out of band on a pinned worker's own event loop at the run's end (``client.run``, no
    task slot: a worker busy with another effect still stops the run's servers): whether it had any."""
    if _HUB is None:
        return False
    return bool(await asyncio.wrap_future(_HUB.submit(_HUB.close(run))))
