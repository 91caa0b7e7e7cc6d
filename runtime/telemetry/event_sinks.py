"""Where a run's events go besides the journal: the live NDJSON stream, OpenTelemetry, the console.

Every sink is a callable taking one event (the dict ``Options.on_event`` receives: ``type``,
``task``, ``at`` and the frame's fields, already through the run's redactor). :class:`Fanout`
calls each in turn and is an infallible rider like the journal (17 §the journal): a sink that
raises is switched off and its error is reported after the run, never changing the run's outcome.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any, TextIO

Sink = Callable[[dict[str, Any]], None]


class UsageError(ValueError):
    """A bad ``--events`` value (the message is the one line to print)."""


def parse_events(spec: str) -> str | None:
    """``ndjson`` / ``ndjson:-`` → ``None`` (standard output); ``ndjson:PATH`` → ``PATH``."""
    fmt, sep, where = spec.partition(":")
    if fmt != "ndjson":
        raise UsageError(f"--events `{spec}`: the one event format is ndjson (ndjson, ndjson:-, ndjson:PATH)")
    if sep and not where:
        raise UsageError(f"--events `{spec}`: give a path after `ndjson:` (or - for standard output)")
    return None if where in ("", "-") else where


class NdjsonSink:
    """One compact JSON object per event and line, flushed as it is written (docs/events.md)."""

    def __init__(self, stream: TextIO, *, owned: bool = False) -> None:
        self._stream = stream
        self._owned = owned

    @classmethod
    def open(cls, path: str | None) -> NdjsonSink:
        """The sink writing to ``path`` (``None``: standard output); a path that cannot be opened is
        a usage error, said before the run starts."""
        if path is None:
            return cls(sys.stdout)
        target = Path(path)
        try:
            return cls(target.open("w", encoding="utf-8", buffering=1), owned=True)
        except OSError as exc:
            raise UsageError(f"--events: cannot write {path}: {(exc.strerror or str(exc)).lower()}") from None

    def __call__(self, event: dict[str, Any]) -> None:
        from checker.core.display import terminal_safe

        line = json.dumps(event, ensure_ascii=False, separators=(",", ":"), default=str)
        self._stream.write(terminal_safe(line) + "\n")  # C1 controls only occur inside strings: still JSON
        self._stream.flush()

    def close(self) -> None:
        if self._owned:
            self._stream.close()


class Fanout:
    """Calls every sink with every event; a failing sink is dropped and remembered."""

    def __init__(self, sinks: list[tuple[str, Sink]]) -> None:
        self.sinks = list(sinks)
        self.errors: list[str] = []

    def __call__(self, event: dict[str, Any]) -> None:
        for entry in list(self.sinks):
            name, sink = entry
            try:
                sink(event)
            except Exception as exc:  # a sink never takes the run down
                self.sinks.remove(entry)
                self.errors.append(f"{name} stopped: {type(exc).__name__}: {exc}")

    def close(self) -> list[str]:
        """Close every sink that can be closed; the notes to print after the run."""
        for name, sink in self.sinks:
            close = getattr(sink, "close", None)
            if close is None:
                continue
            try:
                note = close()
            except Exception as exc:
                note = f"{name} could not be closed: {type(exc).__name__}: {exc}"
            if isinstance(note, str) and note:
                self.errors.append(note)
        return self.errors
