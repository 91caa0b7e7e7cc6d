"""Introspection builtins: ``nika:inspect``.

``nika:compose`` is served by the agent loop (it exists only inside an ``agent:`` whitelist), so
it stays unregistered here.

Keys read from ``BuiltinContext.extra``:

``"inspect"``
    ``(view: str) -> dict``, supplied by the scheduler: the run's own state for one view.
    ``cost`` → ``{total_usd, by_task, by_provider}``; ``records`` → ``{tasks: [...]}``;
    ``dag_info`` → ``{nodes, edges, waves}``; ``threads`` → ``{active, queued, completed}``
    (advisory). Without it the builtin fails with the "not available in this build" code
    rather than invent a state.
"""

from __future__ import annotations

from typing import Any

from runtime.builtins import BuiltinContext, builtin
from runtime.builtins._support import describe
from runtime.errors import TaskError, not_built, unbuilt_what

INSPECT = "nika:inspect"
INSPECT_001 = "NIKA-BUILTIN-INSPECT-001"
VIEW_KEYS = {
    "cost": ("total_usd", "by_task", "by_provider"),
    "records": ("tasks",),
    "dag_info": ("nodes", "edges", "waves"),
    "threads": ("active", "queued", "completed"),
}


@builtin(INSPECT)
async def inspect(args: dict[str, Any], ctx: BuiltinContext) -> dict[str, Any]:
    """One view of the running workflow, exactly the keys the view promises."""
    view = args.get("view")
    if view not in VIEW_KEYS:
        raise TaskError(INSPECT_001, f"`view:` must be one of {', '.join(VIEW_KEYS)}, not {describe(view)}")
    source = ctx.extra.get("inspect")
    if source is None:
        raise not_built("inspect", f"this build of nika does not implement {unbuilt_what('inspect')} yet")
    state = source(view)
    missing = [k for k in VIEW_KEYS[view] if not isinstance(state, dict) or k not in state]
    if missing:
        raise not_built("inspect", f"the run state for `view: {view}` lacks {', '.join(missing)}")
    return {k: state[k] for k in VIEW_KEYS[view]}
