"""``nika dap`` over stdio: a reader thread hands each framed message to the loop the session
and the run share; responses and events are written framed to the original standard output.
While the session lasts, Python's ``sys.stdout`` points at standard error, so nothing printed
by the run can corrupt the protocol stream."""

from __future__ import annotations

import asyncio
import sys
import threading
from pathlib import Path
from typing import Any, BinaryIO

from nika_dap.protocol import ProtocolError, encode, read_message
from nika_dap.session import Session


def serve(stdin: BinaryIO | None = None, stdout: BinaryIO | None = None, workdir: Path | None = None) -> int:
    reader = stdin or sys.stdin.buffer
    writer = stdout or sys.stdout.buffer
    saved = sys.stdout
    sys.stdout = sys.stderr
    try:
        return asyncio.run(_serve(reader, writer, workdir))
    finally:
        sys.stdout = saved


async def _serve(reader: BinaryIO, writer: BinaryIO, workdir: Path | None) -> int:
    loop = asyncio.get_running_loop()
    inbox: asyncio.Queue[dict[str, Any] | None] = asyncio.Queue()
    lock = threading.Lock()

    def send(message: dict[str, Any]) -> None:
        data = encode(message)
        with lock:
            writer.write(data)
            writer.flush()

    def pump() -> None:
        while True:
            try:
                msg = read_message(reader)
            except ProtocolError as exc:
                print(f"nika dap: {exc}", file=sys.stderr)
                msg = None
            except (OSError, ValueError):
                msg = None
            loop.call_soon_threadsafe(inbox.put_nowait, msg)
            if msg is None:
                return

    threading.Thread(target=pump, name="nika-dap-stdin", daemon=True).start()
    session = Session(send, workdir)
    handling: set[asyncio.Task[None]] = set()
    while not session.done.is_set():
        getter = asyncio.ensure_future(inbox.get())
        ended = asyncio.ensure_future(session.done.wait())
        await asyncio.wait({getter, ended}, return_when=asyncio.FIRST_COMPLETED)
        ended.cancel()
        if not getter.done():
            getter.cancel()
            break
        msg = getter.result()
        if msg is None:  # the client went away: a live run is cancelled, as on disconnect
            await session.do_disconnect({})
            break
        t = asyncio.ensure_future(session.handle(msg))  # requests run concurrently: a disconnect while held
        handling.add(t)
        t.add_done_callback(handling.discard)
    for t in list(handling):
        if not t.done():
            await asyncio.wait({t}, timeout=30)
    return 0
