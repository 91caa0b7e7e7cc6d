"""The deadline a tool call must end by: the task's time left.

An agent loop sets :data:`TOOL_DEADLINE` (its wall clock: the task's ``timeout:``, else its own)
for the calls of its turns; an ``invoke:`` task's deadline is its ``timeout:``. An MCP call is
bounded by what is left of it (:func:`tool_timeout_s`), never only by the fixed
``limits.MCP_CALL_TIMEOUT_S``, so the call ends, and is journaled as cut, before the task clock
fires."""

from __future__ import annotations

import time
from contextvars import ContextVar

from runtime.guard import limits

# a ``time.monotonic`` deadline (None: none set in this context)
TOOL_DEADLINE: ContextVar[float | None] = ContextVar("nika_tool_deadline", default=None)


def tool_timeout_s(task_deadline: float | None = None) -> float | None:
    """Seconds a tool call may take now: the nearer of the loop's and the task's deadline, less a
    margin (``None``: no deadline, the tool's own default applies)."""
    ends = [d for d in (TOOL_DEADLINE.get(), task_deadline) if d is not None]
    if not ends:
        return None
    return max(limits.MIN_CALL_WINDOW_S, min(ends) - time.monotonic() - limits.DEADLINE_MARGIN_S)
