"""A graceful stop for ``nika run``, from its first statement: SIGINT and SIGTERM cancel the run, exit 3.

:func:`install` takes the two signals as the command starts (``nika.cli.main``, before anything is
imported or compiled). A signal that arrives before the run begins is remembered, and the command
ends at its next step with exit 3 (nothing ran, no journal was opened); during the run it cancels
the run on its event loop (in-flight tasks are cancelled and their ``on_finally`` runs; the journal
ends ``workflow_cancelled``); once the run has its verdict, a signal changes nothing (the command is
printing its result and ending anyway).

The handlers are plain :mod:`signal` handlers, never asyncio's: the loop puts the default
handlers back when it closes, and a signal in that gap was a ``KeyboardInterrupt`` traceback or a
death by SIGTERM instead of exit 3. A handler only records the signal and hands the cancellation
to the loop (``call_soon_threadsafe``): nothing of the run is touched from inside a signal handler.
"""

from __future__ import annotations

import contextlib
import signal
import socket
import threading
from collections.abc import Callable
from typing import Any

SIGNALS = (signal.SIGINT, signal.SIGTERM)


class Stop:
    """The signals of one ``nika run``: the first one received, and where it goes now."""

    def __init__(self) -> None:
        self.signum: int | None = None
        self._cancel: Callable[[], None] | None = None
        self._previous: dict[int, Any] = {}
        self._wake: tuple[Any, socket.socket, socket.socket, int] | None = None

    @property
    def requested(self) -> bool:
        return self.signum is not None

    @property
    def name(self) -> str:
        return signal.Signals(self.signum).name if self.signum is not None else ""

    def _handle(self, signum: int, _frame: Any) -> None:
        if self.signum is None:
            self.signum = signum
        cancel = self._cancel
        if cancel is not None:
            cancel()

    def attach(self, loop: Any, cancel: Callable[[], None]) -> None:
        """While the run runs on ``loop``: a signal calls ``cancel`` there (at once, if one came already).
        A signal delivered to another thread (a Dask client's, a worker thread's) still wakes the loop:
        the C handler writes to a wakeup socket the loop reads, so the Python handler runs at once."""

        def on_loop() -> None:
            with contextlib.suppress(RuntimeError):  # the loop has closed: the run is over
                loop.call_soon_threadsafe(cancel)

        self._cancel = on_loop
        with contextlib.suppress(ValueError, OSError):  # not the main thread: the loop's own wake-ups only
            r, w = socket.socketpair()
            r.setblocking(False)
            w.setblocking(False)
            loop.add_reader(r.fileno(), _drain, r)
            self._wake = (loop, r, w, signal.set_wakeup_fd(w.fileno(), warn_on_full_buffer=False))
        if self.requested:
            on_loop()

    def detach(self) -> None:
        """The run has its verdict: later signals are remembered only."""
        self._cancel = None
        if self._wake is not None:
            loop, r, w, previous = self._wake
            self._wake = None
            with contextlib.suppress(ValueError, OSError):
                signal.set_wakeup_fd(previous)
            with contextlib.suppress(RuntimeError, ValueError, OSError):
                loop.remove_reader(r.fileno())
            r.close()
            w.close()


def _drain(sock: socket.socket) -> None:
    with contextlib.suppress(OSError):
        sock.recv(4096)


_STOP: Stop | None = None


def install() -> Stop | None:
    """Take SIGINT and SIGTERM for this command (only the main thread can; ``None`` elsewhere)."""
    global _STOP
    if _STOP is not None:
        return _STOP
    if threading.current_thread() is not threading.main_thread():
        return None
    stop = Stop()
    for sig in SIGNALS:
        stop._previous[sig] = signal.signal(sig, stop._handle)
    _STOP = stop
    return stop


def current() -> Stop | None:
    return _STOP


def uninstall(stop: Stop | None) -> None:
    """Give the signals back (an in-process caller, a test, keeps its own handlers afterwards)."""
    global _STOP
    if stop is None or stop is not _STOP:
        return
    for sig, previous in stop._previous.items():
        with contextlib.suppress(ValueError, TypeError):
            signal.signal(sig, previous if previous is not None else signal.SIG_DFL)
    _STOP = None
