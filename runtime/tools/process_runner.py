"""One process, performed (the local executor's process runner, 02 §exec).

The call arrives resolved and judged (:class:`ExecCall`, plain data). The child leads its own
process group. A timeout or a cancellation sends SIGTERM to the group, waits a grace period,
then SIGKILLs it; when the child exits, whatever it left behind in its group is killed too, so
no process outlives the task and the final read always ends (if the engine itself dies first,
:mod:`runtime.tools.process_warden`'s warden kills the group). Captured output is capped per
stream (the cap is named in the error) and decoded as declared (09 §decode).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import signal
from dataclasses import dataclass, field
from typing import Any

from runtime.errors import TaskError
from runtime.tools import process_warden as proc_life

EXIT_CODE = "NIKA-EXEC-001"
SPAWN_CODE = "NIKA-EXEC-002"

KILL_GRACE_S = 2.0
OUTPUT_CAP_BYTES = 16 * 1024 * 1024
_CHUNK = 65536


@dataclass
class ExecCall:
    """A fully resolved ``exec:`` (every template rendered)."""

    argv: list[str] | None
    shell: str | None
    cwd: str
    env: dict[str, str]
    stdin: str | None = None
    capture: str = "stdout"
    decode: str | None = "text"
    cap_bytes: int = OUTPUT_CAP_BYTES
    grace_s: float = KILL_GRACE_S
    extra: dict[str, Any] = field(default_factory=dict)
    executable: str | None = None  # the resolved file of argv[0] (engine PATH)

    @property
    def program(self) -> str:
        if self.argv:
            return self.argv[0]
        return "/bin/sh"


# -- running -------------------------------------------------------------------------------


async def _kill_group(proc: asyncio.subprocess.Process, grace_s: float) -> None:
    """SIGTERM the process group, wait ``grace_s``, then SIGKILL whatever is left of it."""
    pgid = proc.pid
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, signal.SIGTERM)
    await _exited(proc, grace_s)
    _sweep(pgid)
    await _exited(proc, None)
    # Nobody reads the pipes any more: close them, or a pipe paused on a full buffer never
    # reports its end and the transport (and `proc.wait()`) waits forever.
    transport = getattr(proc, "_transport", None)
    if transport is not None:
        transport.close()


async def _exited(proc: asyncio.subprocess.Process, within: float | None) -> None:
    """Wait until the child itself has exited (not its pipes), at most ``within`` seconds."""
    loop = asyncio.get_running_loop()
    deadline = None if within is None else loop.time() + within
    pause = 0.001
    while proc.returncode is None and (deadline is None or loop.time() < deadline):
        await asyncio.sleep(pause)
        pause = min(pause * 2, 0.02)


def _sweep(pgid: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, signal.SIGKILL)
    proc_life.release(pgid)


class _CapExceeded(Exception):
    def __init__(self, stream: str) -> None:
        self.stream = stream


async def _read_capped(stream: asyncio.StreamReader | None, name: str, cap: int) -> bytes:
    if stream is None:
        return b""
    buf = bytearray()
    while True:
        chunk = await stream.read(_CHUNK)
        if not chunk:
            return bytes(buf)
        buf += chunk
        if len(buf) > cap:
            raise _CapExceeded(name)


async def run_process(call: ExecCall) -> Any:
    """Run the process and return the task's raw output per ``capture``/``decode``."""
    proc = await _spawn(call)
    out, err, code = await _collect(proc, call)
    stdout = out.decode("utf-8", errors="replace")
    stderr = err.decode("utf-8", errors="replace")
    if call.capture == "structured":
        return {"stdout": stdout, "stderr": stderr, "exit_code": code}
    if code != 0:
        tail = (stderr or stdout).strip()[-500:]
        raise TaskError(
            EXIT_CODE,
            f"`{call.program}` exited with status {code}" + (f": {tail}" if tail else ""),
            details={"exit_code": code, "stderr": stderr[-2000:], "stdout": stdout[-2000:]},
        )
    raw = {"stdout": out, "stderr": err, "combined": out}[call.capture]
    return decode(raw, call.decode or "text", call.program)


async def _spawn(call: ExecCall) -> asyncio.subprocess.Process:
    """Start the child in its own process group (a spawn failure is NIKA-EXEC-002)."""
    combined = call.capture == "combined"
    if call.argv is not None:
        argv = call.argv
    else:
        assert call.shell is not None
        argv = ["/bin/sh", "-c", call.shell]
    try:
        return await proc_life.spawn(
            *argv,
            executable=call.executable,
            stdin=asyncio.subprocess.PIPE if call.stdin is not None else asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.STDOUT if combined else asyncio.subprocess.PIPE,
            cwd=call.cwd,
            env=call.env,
        )
    except FileNotFoundError as exc:
        what = call.cwd if exc.filename == call.cwd else call.program
        raise TaskError(
            SPAWN_CODE,
            f"cannot start `{call.program}`: `{what}` was not found",
            details={"program": call.program, "cwd": call.cwd},
        ) from None
    except PermissionError:
        raise TaskError(SPAWN_CODE, f"cannot start `{call.program}`: permission denied", details={}) from None
    except OSError as exc:
        raise TaskError(SPAWN_CODE, f"cannot start `{call.program}`: {exc.strerror or exc}", details={}) from None
    except ValueError as exc:  # a NUL byte in an argument, an environment value or the cwd
        raise TaskError(
            SPAWN_CODE,
            f"cannot start `{_printable(call.program)}`: {exc} (a NUL byte cannot be passed to a process)",
            details={},
        ) from None


async def _collect(proc: asyncio.subprocess.Process, call: ExecCall) -> tuple[bytes, bytes, int]:
    """Feed stdin, read both streams (capped) and wait for the child; kill its group when the
    cap is exceeded or the task is stopped."""

    async def feed() -> None:
        if call.stdin is None or proc.stdin is None:
            return
        with contextlib.suppress(BrokenPipeError, ConnectionResetError):
            proc.stdin.write(call.stdin.encode("utf-8"))
            await proc.stdin.drain()
        with contextlib.suppress(BrokenPipeError, ConnectionResetError):
            proc.stdin.close()

    async def waiter() -> int:
        # `proc.wait()` only returns once every pipe is closed, which a background grandchild can
        # delay forever; the return code is known as soon as the child itself exits.
        pause = 0.001
        while proc.returncode is None:
            await asyncio.sleep(pause)
            pause = min(pause * 2, 0.02)
        _sweep(proc.pid)  # whatever the child left in its group dies with it; the pipes then close
        return proc.returncode

    gathered = asyncio.gather(
        _read_capped(proc.stdout, "stdout", call.cap_bytes),
        _read_capped(proc.stderr, "stderr", call.cap_bytes),
        feed(),
        waiter(),
    )
    try:
        out, err, _, code = await gathered
    except _CapExceeded as exc:
        gathered.cancel()
        await _kill_group(proc, 0)
        raise TaskError(
            EXIT_CODE,
            f"`{call.program}` printed more than {call.cap_bytes} bytes on {exc.stream} (the capture cap); "
            "the process was stopped — write large output to a file instead",
            details={"cap_bytes": call.cap_bytes, "stream": exc.stream},
        ) from None
    except BaseException:
        gathered.cancel()
        await asyncio.shield(_kill_group(proc, call.grace_s))
        raise
    return out, err, code


def _printable(program: str) -> str:
    return program.replace("\x00", "\\0")


def _shallow(value: Any) -> Any:
    """``value``, unless it nests past :data:`runtime.guard.limits.MAX_VALUE_DEPTH` (a RecursionError,
    reported like the decoder's own)."""
    from runtime.guard.limits import MAX_VALUE_DEPTH
    from runtime.values import deeper_than

    if deeper_than(value, MAX_VALUE_DEPTH):
        raise RecursionError
    return value


def decode(raw: bytes, how: str, program: str) -> Any:
    """``raw`` decoded as declared (09 §decode): strict UTF-8 for text, json and jsonl — invalid
    bytes settle the task ``failure`` (an author who wants octets says ``decode: bytes``)."""
    if how == "bytes":
        return raw
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise TaskError(
            EXIT_CODE,
            f"the output of `{program}` is not valid UTF-8 (byte {exc.start}); use `decode: bytes` for octets",
            details={"decode": how, "byte": exc.start},
        ) from None
    if how == "text":
        return text.rstrip("\r\n")
    try:
        if how == "json":
            return _shallow(json.loads(text))
        if how == "jsonl":
            return _shallow([json.loads(line) for line in text.splitlines() if line.strip()])
    except json.JSONDecodeError as exc:
        raise TaskError(
            EXIT_CODE,
            f"the output of `{program}` is not valid {how.upper()} (line {exc.lineno}, column {exc.colno}): {exc.msg}",
            details={"decode": how},
        ) from None
    except RecursionError:
        raise TaskError(
            EXIT_CODE,
            f"the output of `{program}` nests too deeply to decode as {how.upper()} (the limit is "
            "`runtime.guard.limits.MAX_VALUE_DEPTH` levels)",
            details={"decode": how},
        ) from None
    return text
