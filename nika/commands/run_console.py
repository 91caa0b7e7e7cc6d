"""The console side of ``nika run``: everything it prints goes through :func:`write` (escaped for a
terminal), and the text format's progress view (:func:`progress_view`) turns events into the lines
:mod:`nika.output.run_text` renders, with one live line rewritten in place while models stream."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TextIO


def write(stream: TextIO, text: str, *, controls: str = "") -> None:
    """Everything the run command prints goes through here, escaped for a terminal (``controls``:
    the engine's own cursor controls, written first and unescaped: the live stream line)."""
    from checker.core.display import terminal_safe

    try:
        stream.write(controls + terminal_safe(text))
        stream.flush()
    except BrokenPipeError:
        pass


def columns(stream: Any) -> int:
    """The width of the terminal ``stream`` writes to (80 when it cannot be told)."""
    import os

    try:
        return os.get_terminal_size(stream.fileno()).columns or 80
    except (AttributeError, OSError, ValueError):
        return 80


def is_tty(stream: Any) -> bool:
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError):
        return False


def progress_view(fmt: str, err: TextIO) -> Callable[[dict[str, Any]], None] | None:
    """The progress view of the text format: one line per task transition on stderr, and while
    models stream, one live line rewritten in place on a terminal (``None`` for json)."""
    if fmt != "text":
        return None
    from nika.output.run_text import StreamLine, event_line

    live = StreamLine(columns(err)) if is_tty(err) else None

    def progress(event: dict[str, Any]) -> None:
        if event.get("type") == "infer.chunk":
            if live is not None:
                write(err, live.chunk(event), controls=live.erase())
            return
        line = event_line(event)
        if line is not None:
            write(err, line + "\n", controls=live.clear() if live is not None else "")
        elif live is not None and str(event.get("type")).startswith("workflow."):  # before the summary
            write(err, "", controls=live.clear())

    return progress
