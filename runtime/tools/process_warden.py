"""Processes the engine starts never outlive it, however it ends.

Every ``exec:`` child leads a process group of its own (``start_new_session``); the verb kills
the whole group on timeout, cancellation and when the child exits (``runtime.verbs.exec``). That
covers every end the engine lives through. For the ends it does not live through (SIGKILL, the
OOM killer, a crash in native code) a *warden* stands by: a tiny process started with the first
child, holding one end of a socket pair whose other end only the engine holds (close-on-exec, so
no child's program inherits it). Each child announces ``+<pgid>`` itself, between fork and exec (so
it is guarded before its program runs a single instruction), the engine says it again once the
child started, and says ``-<pgid>`` once the group is gone; when the socket reaches end-of-file —
the engine has exited, whichever way — the warden SIGKILLs every group still on its list, then
exits. It ignores SIGINT and SIGTERM and lives in its own session, so a Ctrl-C or a terminal
hangup that kills the engine does not stop it doing its job.

A warden that dies (killed, OOM) never poisons its engine: the child's announcement is sent with
``MSG_NOSIGNAL`` (a write to a dead pipe was a SIGPIPE that killed every later child before its
program started, ``status -13``, on a long-lived Dask worker until it restarted), and the engine
sees the warden gone before its next child (or on a failed write), starts a new one and hands it
every group it still guards.

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
import socket
import subprocess
import sys
import threading
from collections.abc import Callable
from typing import Any

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
_sock: socket.socket | None = None  # the engine's end of the warden's socket
_proc: subprocess.Popen[bytes] | None = None
_owner: int | None = None  # the engine process that started the warden (a fork must start its own)
_groups: set[int] = set()  # the groups this process guards: told again to a warden started anew
_NOSIGNAL = getattr(socket, "MSG_NOSIGNAL", 0)


def _alive() -> bool:
    return _sock is not None and _owner == os.getpid() and _proc is not None and _proc.poll() is None


def _warden() -> socket.socket | None:
    """The engine's end of the warden's socket, starting the warden on first use and again when it
    is gone (``None`` if it cannot be started: the in-process kills still apply). Called with the lock."""
    global _sock, _proc, _owner
    if _alive():
        return _sock
    if _sock is not None and _owner == os.getpid():  # the warden died (killed, OOM): never write to a dead end
        with contextlib.suppress(OSError):
            _sock.close()
    elif _owner != os.getpid():  # a forked engine: the parent's warden and groups are not its own
        _groups.clear()
    _sock = _proc = None
    ours, theirs = socket.socketpair()
    try:
        if not _NOSIGNAL and hasattr(socket, "SO_NOSIGPIPE"):  # pragma: no cover - macOS
            ours.setsockopt(socket.SOL_SOCKET, socket.SO_NOSIGPIPE, 1)
        proc = subprocess.Popen(
            [sys.executable, "-I", "-S", "-c", _WARDEN],
            stdin=theirs.fileno(),
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
            close_fds=True,
        )
    except OSError:
        ours.close()
        return None
    finally:
        theirs.close()
    _sock, _proc, _owner = ours, proc, os.getpid()
    if _groups:  # a new warden guards what the old one did
        _send(ours, b"".join(b"+%d\n" % g for g in sorted(_groups)))
    return _sock


def _send(sock: socket.socket, data: bytes) -> bool:
    try:
        sock.sendall(data, _NOSIGNAL)
    except OSError:
        return False
    return True


def _tell(message: bytes) -> None:
    with _lock:
        for _ in range(2):  # once more with a new warden when the one it wrote to was gone
            sock = _warden()
            if sock is None or _send(sock, message):
                return
            if _proc is not None:
                with contextlib.suppress(OSError):
                    _proc.kill()
                _proc.wait()


def stand_by() -> None:
    """Start the warden before the first child, so no child ever runs unguarded."""
    with _lock:
        _warden()


def guard(pgid: int) -> None:
    """A process group the engine just started: killed by the warden if the engine dies first."""
    with _lock:
        _groups.add(pgid)
    _tell(b"+%d\n" % pgid)


def release(pgid: int) -> None:
    """The group is gone (killed or ended): the warden forgets it, so a reused id is never hit."""
    with _lock:
        _groups.discard(pgid)
        told = _sock is not None and _owner == os.getpid()
    if told:
        _tell(b"-%d\n" % pgid)


def _announcer(sock: socket.socket) -> Callable[[], None]:
    """Runs in the child between fork and exec, after ``setsid``: the child registers its own
    group with the warden before the program starts, so there is no moment when the engine could
    die with an unguarded child (the socket is close-on-exec, so the program never holds it). A
    warden that died meanwhile costs nothing here: the send is ``MSG_NOSIGNAL`` (no SIGPIPE kills
    the child before its program starts; the engine registers the group again with a new warden)."""

    def announce() -> None:
        with contextlib.suppress(OSError):
            sock.send(b"+%d\n" % os.getpid(), _NOSIGNAL)

    return announce


def _guarded(options: dict[str, Any]) -> dict[str, Any]:
    stand_by()
    sock = _sock if _owner == os.getpid() else None
    if sock is not None:
        options["preexec_fn"] = _announcer(sock)
    return {**options, "start_new_session": True}


def popen(argv: list[str], **options: Any) -> subprocess.Popen[bytes]:
    """``subprocess.Popen`` for the engine's own helpers (jq workers): a group of its own,
    registered with the warden before it runs."""
    proc = subprocess.Popen(argv, **_guarded(options))
    guard(proc.pid)
    return proc


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
            transport = getattr(started, "_transport", None)
            if transport is not None:  # closed on this loop: never collected after it closed ("Event loop is closed")
                transport.close()
        raise
    guard(proc.pid)
    return proc
