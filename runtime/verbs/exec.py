"""``exec:`` — one process (02 §exec).

* ``command:`` runs through ``execve`` with no shell; ``shell:`` through ``/bin/sh -c``, and only
  after the blocklist (NIKA-SEC-001) accepted the *parsed* command (bashlex; a command that
  cannot be parsed is refused, never guessed). The blocklist is a guard rail against obvious
  accidents, not a sandbox: ``permits.exec`` is the boundary, and the process itself runs with
  the engine user's rights.
* The child environment is composed, never inherited (NEP-0005): the runner floor, the names
  ``permits.env`` passes through, then ``exec.env``; dangerous names are stripped last.
* The child leads its own process group. A timeout or a cancellation sends SIGTERM to the group,
  waits a grace period, then SIGKILLs it; when the child exits, whatever it left behind in its
  group is killed too, so no process outlives the task and the final read always ends. If the
  engine itself dies first, :mod:`runtime.proc`'s warden kills the group.
* Captured output is capped per stream (the cap is named in the error).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import shutil
import signal
from dataclasses import dataclass, field
from typing import Any

from checker.contracts.blocklist import judge_shell, judge_words
from checker.contracts.effects import dangerous_env
from runtime import proc as proc_life
from runtime.errors import TaskError
from runtime.permits import ENV_FLOOR

EXIT_CODE = "NIKA-EXEC-001"
SPAWN_CODE = "NIKA-EXEC-002"
BLOCKED_CODE = "NIKA-SEC-001"

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


def compose_env(passthrough: tuple[str, ...], authored: dict[str, str], engine_env: dict[str, str]) -> dict[str, str]:
    """Floor ∪ passthrough (read from the engine's environment) ∪ ``exec.env``, minus dangerous names."""
    out: dict[str, str] = {}
    for name in (*ENV_FLOOR, *passthrough):
        if name in engine_env:
            out[name] = engine_env[name]
    out.update(authored)
    for name in list(out):
        if dangerous_env(name):
            del out[name]
    return out


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
    combined = call.capture == "combined"
    if call.argv is not None:
        argv = call.argv
    else:
        assert call.shell is not None
        argv = ["/bin/sh", "-c", call.shell]
    try:
        proc = await proc_life.spawn(
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


def _shallow(value: Any, program: str, how: str) -> Any:
    from runtime.limits import MAX_VALUE_DEPTH
    from runtime.values import deeper_than

    if deeper_than(value, MAX_VALUE_DEPTH):
        raise RecursionError
    return value


def _printable(program: str) -> str:
    return program.replace("\x00", "\\0")


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
            return _shallow(json.loads(text), program, how)
        if how == "jsonl":
            return _shallow([json.loads(line) for line in text.splitlines() if line.strip()], program, how)
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
            "`runtime.limits.MAX_VALUE_DEPTH` levels)",
            details={"decode": how},
        ) from None
    return text


async def run_exec_verb(run: Any, tid: str, verb: Any, scope: dict[str, Any]) -> Any:
    """Resolve an ``exec:`` block of the model against ``scope``, judge it, and run it."""
    from checker.expr import render_string
    from checker.parse.values import TemplateValue
    from runtime.values import materialise

    def text(v: Any, what: str) -> str:
        value = materialise(v, scope, what)
        return value if isinstance(value, str) else render_string(value)

    argv: list[str] | None = None
    shell: str | None = None
    if verb.command is not None:
        argv = [text(v, f"`command[{i}]`") for i, v in enumerate(verb.command)]
        if not argv or not argv[0]:
            raise TaskError(SPAWN_CODE, "`command:` is empty", details={})
        run.boundary.check_exec(tid, argv[0], shell=False)
        computed = {i for i, v in enumerate(verb.command) if isinstance(v, TemplateValue)}
        run.boundary.check_argv(tid, argv, computed)
        why = judge_words(argv)
    else:
        shell = text(verb.shell, "`shell:`")
        run.boundary.check_exec(tid, "/bin/sh", shell=True)
        why = judge_shell(shell)
    if why is not None:
        raise TaskError(
            BLOCKED_CODE,
            f"the command was refused by the exec blocklist: {why}",
            details={"reason": why},
        )
    cwd = str(run.workdir)
    if verb.cwd is not None:
        c = text(verb.cwd, "`cwd:`")
        cwd = c if os.path.isabs(c) else str(run.workdir / c)
    authored: dict[str, str] = {}
    if verb.env is not None:
        for name, entry in verb.env.items():
            authored[name] = text(entry.value, f"`env.{name}`")
    env = compose_env(run.boundary.env_passthrough(tid), authored, run.engine_env)
    stdin = text(verb.stdin, "`stdin:`") if verb.stdin is not None else None
    call = ExecCall(argv, shell, cwd, env, stdin, verb.capture, verb.decode)
    if argv is not None:
        call.executable = engine_program(argv[0], run.engine_env, cwd)
    return await run_process(call)


def engine_program(program: str, engine_env: dict[str, str], cwd: str) -> str:
    """The file ``program`` names: a bare name looked up on the *engine's* ``PATH`` (never the
    task's ``exec.env`` PATH, which would re-point an allowed name at any binary); a path with a
    separator relative to ``cwd``."""
    if "/" in program:
        return program if os.path.isabs(program) else os.path.join(cwd, program)
    found = shutil.which(program, path=engine_env.get("PATH", os.defpath))
    if found is None:
        raise TaskError(
            SPAWN_CODE,
            f"cannot start `{program}`: it was not found on the engine's PATH",
            details={"program": program},
        )
    return found
