"""The ``nika:*`` builtins, one module per family, behind one calling convention.

A builtin is ``async def impl(args: dict[str, Any], ctx: BuiltinContext) -> Any``, registered
with :func:`builtin`. :func:`call` validates the arguments against the tool's contract (the
same :mod:`checker.contracts.tables` data ``nika check`` reads) before the implementation runs, and
turns contract violations into a :class:`~runtime.errors.TaskError`. Effects go through the
context: file paths through ``resolve_read``/``resolve_write`` (which enforce ``permits:`` at the
moment of the effect), events through ``emit``. A builtin that is not built yet is absent from
the registry and fails with a clear "not available in this build" error, never faked; one whose
optional library is not installed (checker/contracts/extras.toml) fails the same way, naming the
extra to install, before it touches anything.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from runtime.errors import TaskError, not_built

Builtin = Callable[[dict[str, Any], "BuiltinContext"], Awaitable[Any]]

REGISTRY: dict[str, Builtin] = {}


@dataclass
class BuiltinContext:
    """What a builtin may touch, supplied by the scheduler for one call.

    ``workdir`` is the directory relative paths resolve against (the working directory, 02).
    ``resolve_read``/``resolve_write`` canonicalise a path (symlinks resolved) and raise a
    :class:`TaskError` (NIKA-SEC-004) when it falls outside the granted ``permits.fs``.
    ``emit`` appends an event to the run's event list and trace (``{"type": …, …}``).
    ``task_id`` names the calling task; ``interactive`` says whether a human can answer prompts.
    """

    workdir: Path
    resolve_read: Callable[[str], Path]
    resolve_write: Callable[[str], Path]
    emit: Callable[[dict[str, Any]], None]
    task_id: str
    interactive: bool = False
    extra: dict[str, Any] = field(default_factory=dict)


def builtin(tool_id: str) -> Callable[[Builtin], Builtin]:
    """Register ``impl`` as the implementation of ``tool_id`` (e.g. ``"nika:read"``)."""

    def register(impl: Builtin) -> Builtin:
        REGISTRY[tool_id] = impl
        return impl

    return register


_LOADED: list[bool] = []  # set once every family module is imported


def _load() -> None:
    """Import every family module so its builtins register (once per process). The registry may
    hold some builtins already (a module that imported one family, e.g. the gate's prompt), so
    whether it is empty never says whether all are loaded."""
    if _LOADED:
        return
    import importlib
    import pkgutil

    for mod in pkgutil.iter_modules(__path__):
        importlib.import_module(f"{__name__}.{mod.name}")
    _LOADED.append(True)


COMPUTED_CODE = "NIKA-VAR-006"


def arg_error(tool_id: str, args: dict[str, Any], task_id: str | None, *, computed: bool = False) -> TaskError | None:
    """The first way ``args`` misfits the contract of ``tool_id`` (the checker's judge), or ``None``."""
    from checker.contracts import tables as contracts
    from checker.parse.values import from_python

    found = [
        d for d in contracts.check_tool_args(tool_id, from_python(args), task=task_id, anchor=_NOWHERE) if d.is_error
    ]
    if not found:
        return None
    d = found[0]
    code = d.code or contracts.ARG_CODE
    if computed and code == contracts.ARG_CODE:
        return TaskError(COMPUTED_CODE, f"a value computed at run does not fit: {d.full_message()}")
    return TaskError(code, d.full_message())


async def call(tool_id: str, args: dict[str, Any] | None, ctx: BuiltinContext, *, computed: bool = False) -> Any:
    """Validate ``args`` against the contract of ``tool_id``, then run the builtin.

    ``computed``: the call comes from an ``invoke:`` the checker accepted, so what was written
    already fits the contract and a violation now is a value an expression gave. It fails as
    NIKA-VAR-006 (an expression's value of the wrong type, raised at run) instead of the
    contract's check-phase NIKA-BUILTIN-001; the message is the contract's.
    """
    _load()
    args = args or {}
    misfit = arg_error(tool_id, args, ctx.task_id, computed=computed)
    if misfit is not None:
        raise misfit
    impl = REGISTRY.get(tool_id)
    if impl is None:
        raise not_built("builtin", f"`{tool_id}` is not available in this build of nika yet", tool=tool_id)
    from checker.contracts.extras import refusal

    missing = refusal(tool_id, args)  # an optional library this call needs, asked before its effect
    if missing is not None:
        raise not_built("extra", missing[1], extra=missing[0])
    return await impl(args, ctx)


from checker.core.source import Span  # noqa: E402  (after the public API, to keep the import graph flat)

_NOWHERE = Span(0, 0)
