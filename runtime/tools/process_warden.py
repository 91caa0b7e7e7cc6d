"""Processes the engine starts never outlive it, however it ends.

Every ``exec:`` child leads a process group of its own (``start_new_session``); the verb kills
the whole group on timeout, cancellation and when the child exits (``runtime.verbs.exec``). That
covers every end the engine lives through. For the ends it does not live through (SIGKILL, the
OOM killer, a crash in native code) a *warden* stands by: a tiny process started with the first
child, holding the read end of a pipe whose write end only the engine holds (close-on-exec, so no
child inherits it). Each child announces ``+<pgid>`` itself, between fork and exec (so it is
guarded before its program runs a single instruction), and the engine says ``-<pgid>`` once the
group is gone; when the pipe reaches end-of-file — the engine has exited, whichever way — the
warden SIGKILLs every group still on its list, then exits. It ignores SIGINT and SIGTERM and
lives in its own session, so a Ctrl-C or a terminal hangup that kills the engine does not stop it
doing its job.

:func:`spawn` starts a child that way, and a cancellation that lands while the child is being
started no longer orphans it (asyncio would kill the child alone and then wait forever for pipes
a grandchild still holds): the start completes, the whole group is killed, then the cancellation
goes on.

Not covered: a descendant that deliberately leaves the group (``setsid``, a daemonising double
fork) is no longer reachable through the group; containing those needs an OS sandbox (a cgroup
or a PID namespace), which this engine does not set up.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import subprocess
import sys
import threading
from collections.abc import Callable
from typing import IO, Any

_WARDEN = """
import os, signal, sys
signal.signal(signal.SIGINT, signal.SIG_IGN)
signal.signal(signal.SIGTERM, signal.SIG_IGN)
groups = set()
for line in sys.stdin.buffer:
    line = line.strip()
    if line[:1] == b"+":
        groups.add(int(line[1:]))
    elif line[:1] == b"-":
        groups.discard(int(line[1:]))
for pgid in groups:
    try:
        os.killpg(pgid, signal.SIGKILL)
    except OSError:
        pass
"""

_lock = threading.Lock()
_pipe: IO[bytes] | None = None
_owner: int | None = None  # the engine process that started the warden (a fork must start its own)


def _warden() -> IO[bytes] | None:
    """The write end of the warden's pipe, starting the warden on first use (``None`` if it
    cannot be started: the in-process kills still apply)."""
    global _pipe, _owner
    if _pipe is not None and _owner == os.getpid():
        return _pipe
    try:
        proc = subprocess.Popen(
            [sys.executable, "-I", "-S", "-c", _WARDEN],
            stdin=subprocess.PIPE,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
            close_fds=True,
        )
    except OSError:
        return None
    _pipe, _owner = proc.stdin, os.getpid()
    return _pipe


def _tell(message: str) -> None:
    with _lock:
        pipe = _warden()
        if pipe is None:
            return
        with contextlib.suppress(OSError, ValueError):
            pipe.write(message.encode("ascii"))
            pipe.flush()


def stand_by() -> None:
    """Start the warden before the first child, so no child ever runs unguarded."""
    with _lock:
        _warden()


def guard(pgid: int) -> None:
    """A process group the engine just started: killed by the warden if the engine dies first."""
    _tell(f"+{pgid}\n")


def release(pgid: int) -> None:
    """The group is gone (killed or ended): the warden forgets it, so a reused id is never hit."""
    if _pipe is not None and _owner == os.getpid():
        _tell(f"-{pgid}\n")


def _announcer(fd: int) -> Callable[[], None]:
    """Runs in the child between fork and exec, after ``setsid``: the child registers its own
    group with the warden before the program starts, so there is no moment when the engine could
    die with an unguarded child (the pipe is close-on-exec, so the program never holds it)."""

    def announce() -> None:
        with contextlib.suppress(OSError):
            os.write(fd, b"+%d\n" % os.getpid())

    return announce


def _guarded(options: dict[str, Any]) -> dict[str, Any]:
    stand_by()
    pipe = _pipe if _owner == os.getpid() else None
    if pipe is not None:
        options["preexec_fn"] = _announcer(pipe.fileno())
    return {**options, "start_new_session": True}


def popen(argv: list[str], **options: Any) -> subprocess.Popen[bytes]:
    """``subprocess.Popen`` for the engine's own helpers (jq workers): a group of its own,
    registered with the warden before it runs."""
    return subprocess.Popen(argv, **_guarded(options))


async def spawn(*argv: str, **options: Any) -> asyncio.subprocess.Process:
    """``asyncio.create_subprocess_exec`` in a new session, guarded by the warden, and never left
    half-started by a cancellation."""
    starting = asyncio.ensure_future(asyncio.create_subprocess_exec(*argv, **_guarded(options)))
    try:
        proc = await asyncio.shield(starting)
    except asyncio.CancelledError:
        with contextlib.suppress(BaseException):
            started = await starting
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(started.pid, signal.SIGKILL)
        raise
    guard(proc.pid)
    return proc
