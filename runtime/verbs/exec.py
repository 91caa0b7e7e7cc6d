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
  group is killed too, so no process outlives the task and the final read always ends.
* Captured output is capped per stream (the cap is named in the error).
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
from runtime.permits import ENV_FLOOR, _is_dangerous

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
        if _is_dangerous(name):
            del out[name]
    return out


# -- the blocklist on parsed commands ------------------------------------------------------

_SHELLS = frozenset({"sh", "bash", "zsh", "dash", "ksh", "fish", "python", "python3", "perl", "ruby", "node"})
_FETCHERS = frozenset({"curl", "wget"})
_ROOTISH = frozenset({"/", "/*", "~", "~/", "$HOME", "${HOME}", "*", ".", "..", "/home", "/etc", "/usr", "/var"})
_ALWAYS = {
    "mkfs": "formats a file system",
    "shutdown": "stops the machine",
    "reboot": "restarts the machine",
    "halt": "stops the machine",
    "poweroff": "stops the machine",
    "sudo": "raises privileges",
    "su": "switches user",
    "doas": "raises privileges",
}


def _base(word: str) -> str:
    return os.path.basename(word)


def judge_words(words: list[str]) -> str | None:
    """Why one simple command (its words) is blocked, or ``None``."""
    if not words:
        return None
    prog = _base(words[0])
    args = words[1:]
    if prog in _ALWAYS or prog.startswith("mkfs."):
        return f"`{prog}` {_ALWAYS.get(prog, 'formats a file system')}"
    flags = "".join(a[1:] for a in args if a.startswith("-") and not a.startswith("--"))
    long_flags = {a for a in args if a.startswith("--")}
    targets = [a for a in args if not a.startswith("-")]
    if prog == "rm":
        recursive = "r" in flags or "R" in flags or "--recursive" in long_flags
        if recursive and any(t.rstrip("/") in {x.rstrip("/") for x in _ROOTISH} or t in _ROOTISH for t in targets):
            return "`rm -r` on the root, the home directory or everything in sight"
        if "--no-preserve-root" in long_flags:
            return "`rm --no-preserve-root`"
    if prog == "chmod" and any(t in ("777", "a+rwx", "ugo+rwx", "0777") for t in targets):
        return "`chmod 777` makes files writable by everyone"
    if prog in ("chmod", "chown") and ("R" in flags or "--recursive" in long_flags) and "/" in targets:
        return f"a recursive `{prog}` on `/`"
    if prog == "dd" and any(a.startswith("of=/dev/") for a in args):
        return "`dd` onto a device"
    if prog in _SHELLS and args[:1] == ["-c"] and len(args) > 1:
        return judge_shell(args[1])
    return None


def judge_shell(script: str) -> str | None:
    """Why a ``shell:`` line is blocked (``None`` when it passes). Unparseable lines are blocked."""
    try:
        import bashlex  # type: ignore[import-untyped]
    except ImportError:  # pragma: no cover - a declared dependency
        return "the shell parser (bashlex) is not installed, so the command cannot be judged"
    if ":(){" in script.replace(" ", ""):
        return "a fork bomb"
    try:
        parts = bashlex.parse(script)
    except Exception as exc:  # bashlex raises its own ParsingError and assorted internal errors
        return f"the command cannot be parsed, so it cannot be judged ({type(exc).__name__})"
    verdicts: list[str] = []

    class Visitor(bashlex.ast.nodevisitor):  # type: ignore[misc]
        def visitpipeline(self, node: Any, parts: list[Any]) -> None:
            cmds = [p for p in parts if p.kind == "command"]
            names = [_command_words(c)[:1] for c in cmds]
            seen_fetch = False
            for n in names:
                prog = _base(n[0]) if n else ""
                if seen_fetch and prog in _SHELLS:
                    verdicts.append(f"a download piped into `{prog}`")
                if prog in _FETCHERS:
                    seen_fetch = True

        def visitcommand(self, node: Any, parts: list[Any]) -> None:
            why = judge_words(_command_words(node))
            if why:
                verdicts.append(why)

        def visitredirect(self, node: Any, input: Any, type: Any, output: Any, heredoc: Any) -> None:
            target = getattr(output, "word", None)
            if isinstance(target, str) and target.startswith("/dev/") and target not in _SAFE_DEVICES:
                verdicts.append(f"a redirect onto the device `{target}`")

        def visitfunction(self, node: Any, name: Any, body: Any, parts: Any) -> None:
            verdicts.append("a shell function definition (fork bombs start this way)")

    for tree in parts:
        Visitor().visit(tree)
    return verdicts[0] if verdicts else None


_SAFE_DEVICES = frozenset({"/dev/null", "/dev/stdout", "/dev/stderr", "/dev/stdin", "/dev/tty"})


def _command_words(node: Any) -> list[str]:
    return [p.word for p in node.parts if p.kind == "word"]


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
        proc = await asyncio.create_subprocess_exec(
            *argv,
            stdin=asyncio.subprocess.PIPE if call.stdin is not None else asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.STDOUT if combined else asyncio.subprocess.PIPE,
            cwd=call.cwd,
            env=call.env,
            start_new_session=True,
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
            return json.loads(text)
        if how == "jsonl":
            return [json.loads(line) for line in text.splitlines() if line.strip()]
    except json.JSONDecodeError as exc:
        raise TaskError(
            EXIT_CODE,
            f"the output of `{program}` is not valid {how.upper()} (line {exc.lineno}, column {exc.colno}): {exc.msg}",
            details={"decode": how},
        ) from None
    except RecursionError:
        raise TaskError(
            EXIT_CODE, f"the output of `{program}` nests too deeply to decode as {how.upper()}", details={"decode": how}
        ) from None
    return text


async def run_exec_verb(run: Any, tid: str, verb: Any, scope: dict[str, Any]) -> Any:
    """Resolve an ``exec:`` block of the model against ``scope``, judge it, and run it."""
    from checker.expr import render_string
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
    return await run_process(call)
