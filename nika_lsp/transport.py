"""How the server is reached and when it stops: ``--tcp HOST:PORT`` and ``--clientProcessId N``.

Nothing here imports the LSP stack, so ``nika lsp`` can refuse a bad argument in one line before
loading it.

``--clientProcessId N``: generic LSP client recipes pass the editor's process id, so that a server
whose editor crashed does not linger. A daemon thread checks once a second whether that process still exists
(``os.kill(pid, 0)``: no signal is sent) and ends this process when it does not.
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable

POLL_SECONDS = 1.0


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # it exists, owned by someone else
        return True
    except OSError:
        return False
    return True


def _exit() -> None:
    os._exit(1)  # LSP 3.17 §exit: 1 without a `shutdown`; the editor is not there to send one


def watch(pid: int, poll: float = POLL_SECONDS, on_gone: Callable[[], None] = _exit) -> threading.Thread:
    """Start the watchdog; ``on_gone`` (default: exit with status 1) runs once ``pid`` has ended."""

    def loop() -> None:
        while alive(pid):
            time.sleep(poll)
        on_gone()

    thread = threading.Thread(target=loop, name="nika-lsp-parent-watch", daemon=True)
    thread.start()
    return thread


def parse_tcp(text: str) -> tuple[str, int]:
    """``HOST:PORT`` (``:PORT`` or ``PORT`` alone: 127.0.0.1); ``ValueError`` with a plain message."""
    host, sep, port = text.rpartition(":")
    if not sep:
        host, port = "", text
    host = host.strip("[]") or "127.0.0.1"
    if not port.isdigit() or not 0 < int(port) < 65536:
        raise ValueError(f"`--tcp {text}`: give HOST:PORT with a port from 1 to 65535, e.g. --tcp 127.0.0.1:2087")
    return host, int(port)
