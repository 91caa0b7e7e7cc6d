"""Streamed model replies: where the tokens go while they arrive, and the SSE reader.

The spec gives a workflow no streaming field; streaming is an engine behaviour. A model call streams
when the run has a live listener (its event stream or progress view: ``Options.on_event``) and the
call runs on the driver's own event loop: the local executor then sets :data:`SINK` around the
call, the wire adapters ask the provider for a Server-Sent-Events reply, and each piece of text or
reasoning that arrives becomes an ``infer_chunk`` frame (a kind of the journal's vocabulary, spec
17) the progress view shows. Without a listener (library runs, tests, an out-of-process executor
that could not deliver the pieces live) the call is the plain request-reply one. Either way the
adapters rebuild the provider's whole reply document from the stream and read it with the same
code as a non-streamed one, so the recorded Response (text, tool calls, usage, reasoning tokens,
finish reason) is the same.

Pieces are coalesced (:data:`FLUSH_CHARS`, :data:`FLUSH_S`) so a fast model writes a few frames a
second, not one per token. A secret the model echoes is masked in every frame even when the
provider splits it across pieces: the tail that could be the start of a secret is held back until
the next piece settles it (:meth:`runtime.guard.redact.Redactor.settle`).
"""

from __future__ import annotations

import time
from collections.abc import AsyncIterator, Callable
from contextvars import ContextVar
from typing import Any

FLUSH_CHARS = 64  # heuristic: a frame once this much text waits...
FLUSH_S = 0.25  # ...or once this long has passed since the last one (a slow model still shows progress)
TEXT = "text"
THINKING = "thinking"


class ChunkSink:
    """Where one streamed call's pieces go: ``emit(fields)`` writes one ``infer_chunk`` frame."""

    def __init__(
        self,
        emit: Callable[[list[tuple[str, Any]]], None],
        settle: Callable[[str], tuple[str, str]] | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._emit = emit
        self._settle = settle
        self._clock = clock
        self._pending: dict[str, str] = {}
        self._last = clock()
        self.seq = 0

    def piece(self, channel: str, text: str) -> None:
        """A piece of the reply (``text``) or of the model's reasoning (``thinking``) arrived."""
        if not text:
            return
        self._pending[channel] = self._pending.get(channel, "") + text
        if len(self._pending[channel]) >= FLUSH_CHARS or self._clock() - self._last >= FLUSH_S:
            self.flush(final=False)

    def flush(self, final: bool = True) -> None:
        """Write what is pending (``final``: all of it, the call is over)."""
        for channel in list(self._pending):
            raw = self._pending.pop(channel)
            shown, held = (raw, "") if final or self._settle is None else self._settle(raw)
            if held:
                self._pending[channel] = held
            if not shown:
                continue
            self.seq += 1
            self._emit([("channel", channel), ("delta", shown), ("seq", self.seq)])
        self._last = self._clock()


# The live call's sink, set by the executor around one model call; None: do not stream.
SINK: ContextVar[ChunkSink | None] = ContextVar("nika_stream_sink", default=None)


def sink() -> ChunkSink | None:
    return SINK.get()


def for_call(events: Any, task_id: str, model: str) -> ChunkSink:
    """The sink of one model call of ``task_id``: ``infer_chunk`` frames on the run's event sink
    (:class:`runtime.engine.events.EventSink`), held back where a secret may be split."""
    settle = getattr(events.journal.redact, "settle", None)
    return ChunkSink(lambda fields: events.emit("infer_chunk", [("task", task_id), ("model", model), *fields]), settle)


async def sse_events(lines: AsyncIterator[str]) -> AsyncIterator[tuple[str, str]]:
    """``(event, data)`` for each Server-Sent Event (the WHATWG event-stream format: ``data:``
    lines joined by newlines, a blank line ends an event, ``:`` lines are comments). The event
    name is ``message`` when the server names none."""
    event, data = "", []
    async for line in lines:
        if line == "":
            if data:
                yield event or "message", "\n".join(data)
            event, data = "", []
            continue
        if line.startswith(":"):
            continue
        name, _, value = line.partition(":")
        value = value[1:] if value.startswith(" ") else value
        if name == "data":
            data.append(value)
        elif name == "event":
            event = value
    # an event the stream ended inside (no blank line after it) is dropped, as the format says
