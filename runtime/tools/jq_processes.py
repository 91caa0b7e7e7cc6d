"""jq evaluation with a deadline, in processes the engine can kill.

libjq (through the ``jq`` binding) evaluates a program in C while holding the interpreter lock:
a thread does not take it off the event loop (the loop does not run a single step until the
program ends), and nothing can interrupt it. ``last(range(1e12))`` would hang the engine, deaf to
``timeout:`` and Ctrl-C. So every evaluation runs in a small pool of worker processes (Python +
libjq, an empty environment, a capped address space), spoken to over a pipe one JSON line per
request: the engine waits for the answer with a deadline — in a thread, so the loop keeps
running — and a worker that overstays it, dies, or answers with more than the result cap is
killed and replaced. The cost is one pipe round trip per evaluation (well under a millisecond)
and one process start per concurrently busy worker, once per engine.

The worker compiles exactly the text the engine compiled (:func:`runtime.tools.jq.compile_program`'s
prelude included), so both see the same program; values cross as JSON text, which is also what
the binding itself feeds libjq, so results are identical.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import selectors
import subprocess
import sys
import threading
import time
from dataclasses import dataclass
from typing import Any

from runtime.guard import limits
from runtime.tools import process_warden as proc_life
from runtime.values import deeper_than

_CODE = """
import sys
sys.path.insert(0, {where!r})
import json, resource
try:
    resource.setrlimit(resource.RLIMIT_AS, ({mem}, {mem}))
except (ValueError, OSError):
    pass
import jq
DEEP = "the value nests too deeply (more levels than a value may have here)"
cache = {{}}
sys.stdout.write("ready\\n"); sys.stdout.flush()
for line in sys.stdin:
    try:
        req = json.loads(line)
        prog = cache.get(req["p"])
        if prog is None:
            if len(cache) > 256:
                cache.clear()
            prog = cache[req["p"]] = jq.compile(req["p"])
        reply = {{"ok": prog.input_text(req["i"]).all()}}
    except MemoryError:
        reply = {{"err": "the jq program ran out of memory"}}
    except RecursionError:
        reply = {{"err": DEEP}}
    except Exception as exc:
        reply = {{"err": str(exc)}}
    try:
        text = json.dumps(reply)
    except RecursionError:
        text = json.dumps({{"err": DEEP}})
    except (TypeError, ValueError, MemoryError) as exc:
        text = json.dumps({{"err": f"the jq result cannot be returned: {{exc}}"}})
    sys.stdout.write(text + "\\n"); sys.stdout.flush()
"""


class JqTimeLimit(Exception):
    """The program ran past its deadline and was stopped."""


class _Gone(Exception):
    pass


class _Worker:
    def __init__(self) -> None:
        import jq  # only to find it: the worker imports the very same binding, without `site`

        code = _CODE.format(mem=limits.JQ_MEMORY_BYTES, where=os.path.dirname(os.path.abspath(jq.__file__)))
        self.proc = proc_life.popen(  # killed with the engine even mid-evaluation (runtime.tools.process_warden)
            [sys.executable, "-I", "-S", "-c", code],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            env={},
        )
        self.buf = b""
        self.started = False

    def _line(self, deadline: float, cap: int) -> bytes:
        assert self.proc.stdout is not None
        fd = self.proc.stdout.fileno()
        with selectors.DefaultSelector() as sel:
            sel.register(fd, selectors.EVENT_READ)
            while b"\n" not in self.buf:
                left = deadline - time.monotonic()
                if left <= 0:
                    raise JqTimeLimit
                if not sel.select(left):
                    continue
                chunk = os.read(fd, 1 << 20)
                if not chunk:
                    raise _Gone("the jq evaluation process died (out of memory?)")
                self.buf += chunk
                if len(self.buf) > cap:
                    raise _Gone(f"the jq result is larger than {cap} bytes")
        line, _, self.buf = self.buf.partition(b"\n")
        return line

    def ask(self, program: str, text: str, limit_s: float) -> dict[str, Any]:
        if not self.started:
            if self._line(time.monotonic() + limits.JQ_WORKER_START_S, 64) != b"ready":
                raise _Gone("the jq evaluation process did not start")
            self.started = True
        assert self.proc.stdin is not None
        try:
            self.proc.stdin.write(json.dumps({"p": program, "i": text}).encode("utf-8") + b"\n")
            self.proc.stdin.flush()
        except OSError:
            raise _Gone("the jq evaluation process is gone") from None
        try:
            reply = json.loads(self._line(time.monotonic() + limit_s, limits.JQ_MAX_RESULT_BYTES))
        except RecursionError:
            raise _Gone("the jq result nests too deeply to be read") from None
        if not isinstance(reply, dict):
            raise _Gone("the jq evaluation process answered nonsense")
        return reply

    def kill(self) -> None:
        with contextlib.suppress(OSError):
            self.proc.kill()
        with contextlib.suppress(OSError, subprocess.TimeoutExpired):
            self.proc.wait(5)
        proc_life.release(self.proc.pid)


_lock = threading.Lock()
_idle: list[_Worker] = []
_KEEP = 4  # workers at most, busy or idle: more evaluations at once wait for a free one
_slots = threading.BoundedSemaphore(_KEEP)


def _checkout() -> _Worker:
    with _lock:
        while _idle:
            w = _idle.pop()
            if w.proc.poll() is None:
                return w
    return _Worker()


def _checkin(w: _Worker) -> None:
    with _lock:
        if len(_idle) < _KEEP and w.proc.poll() is None:
            _idle.append(w)
            return
    w.kill()


@dataclass
class _Job:
    """One evaluation: the worker it got, and whether its caller gave up (cancelled)."""

    worker: _Worker | None = None
    cancelled: bool = False

    def cancel(self) -> None:
        self.cancelled = True
        if self.worker is not None:
            self.worker.kill()


def _run(job: _Job, program: str, text: str, limit_s: float) -> list[Any]:
    """In a thread: wait for a slot (the wait is not the program's time), evaluate, hand back."""
    with _slots:
        if job.cancelled:
            return []
        worker = job.worker = _checkout()
        try:
            reply = worker.ask(program, text, limit_s)
        except (JqTimeLimit, _Gone, ValueError):
            worker.kill()
            raise
        _checkin(worker)
    return _results(reply)


def _results(reply: dict[str, Any]) -> list[Any]:
    if "err" in reply:
        raise ValueError(str(reply["err"]))
    results = reply.get("ok")
    if not isinstance(results, list):
        return []
    if deeper_than(results, limits.MAX_VALUE_DEPTH + 1):  # the list of results is one level itself
        raise ValueError(f"the jq result nests deeper than {limits.MAX_VALUE_DEPTH} levels")
    return results


def _encode(value: Any) -> str:
    try:
        return json.dumps(value, allow_nan=True)
    except RecursionError:
        raise ValueError("the input nests too deeply") from None
    except (TypeError, ValueError) as exc:
        raise ValueError(f"the input is not a JSON value ({exc})") from None


async def evaluate(program: str, value: Any, limit_s: float | None = None) -> list[Any]:
    """Every value ``program`` (prelude included) yields over ``value``. ValueError on a jq error
    (``_Gone`` reasons included), :class:`JqTimeLimit` past the deadline; a cancellation kills
    the worker at once."""
    text = _encode(value)
    job = _Job()
    thread = asyncio.ensure_future(asyncio.to_thread(_run, job, program, text, limit_s or limits.JQ_TIME_LIMIT_S))
    try:
        return await asyncio.shield(thread)
    except _Gone as exc:
        raise ValueError(str(exc)) from None
    except asyncio.CancelledError:
        job.cancel()
        with contextlib.suppress(BaseException):
            await thread
        raise
