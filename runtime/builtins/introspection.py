"""Introspection builtins: ``nika:inspect``.

``nika:compose`` is served by the agent loop (it exists only inside an ``agent:`` whitelist), so
it stays unregistered here.

Keys read from ``BuiltinContext.extra``:

``"inspect"``
    ``(view: str) -> dict``, supplied by the run (:meth:`runtime.engine.run.Run.inspect`, the views
    of :mod:`runtime.engine.introspect`): ``cost`` → ``{total_usd, by_task, by_provider}``;
    ``records`` → ``{tasks: [...]}``; ``dag_info`` → ``{nodes, edges, waves}`` (the canonical
    projection's); ``threads`` → ``{active, queued, completed}`` (advisory). A host that hands no
    run state is a bug of the host (NIKA-IMPL-001), never an invented state.
"""

from __future__ import annotations

from typing import Any

from runtime.builtins import BuiltinContext, builtin
from runtime.builtins._support import describe
from runtime.errors import INTERNAL, TaskError

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
        raise TaskError(INTERNAL, f"`{INSPECT}` was called without its run's state (a bug of the host)")
    state = source(view)
    missing = [k for k in VIEW_KEYS[view] if not isinstance(state, dict) or k not in state]
    if missing:
        raise TaskError(INTERNAL, f"the run state for `view: {view}` lacks {', '.join(missing)}")
    return {k: state[k] for k in VIEW_KEYS[view]}
