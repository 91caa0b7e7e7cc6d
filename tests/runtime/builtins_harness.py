"""A test host for the builtins: a BuiltinContext over a temporary directory, a recorded event
list, a virtual clock and a seeded generator. Shared by tests/runtime/test_builtins_*.py."""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from runtime.builtins import BuiltinContext
from runtime.errors import TaskError


def resolver(root: Path):
    """Resolve against ``root`` (symlinks followed) and refuse anything that lands outside it."""
    root = root.resolve()

    def resolve(path: str) -> Path:
        p = Path(path)
        p = (p if p.is_absolute() else root / p).resolve()
        if p != root and root not in p.parents:
            raise TaskError("NIKA-SEC-004", f"{path} is outside the granted directory")
        return p

    return resolve


@dataclass
class VirtualClock:
    """Time moves only when someone sleeps on it."""

    at: datetime = field(default_factory=lambda: datetime(2026, 5, 23, 9, 0, tzinfo=UTC))
    slept: list[float] = field(default_factory=list)

    def now(self) -> datetime:
        return self.at

    async def sleep(self, seconds: float) -> None:
        self.slept.append(seconds)
        self.at += timedelta(seconds=seconds)


def make_ctx(root: Path, *, interactive: bool = False, **extra: Any) -> tuple[BuiltinContext, list[dict[str, Any]]]:
    events: list[dict[str, Any]] = []
    resolve = resolver(root)
    ctx = BuiltinContext(
        workdir=root.resolve(),
        resolve_read=resolve,
        resolve_write=resolve,
        emit=events.append,
        task_id="t1",
        interactive=interactive,
        extra=extra,
    )
    return ctx, events


def seeded(seed: int = 42) -> random.Random:
    return random.Random(seed)


async def fails(tool: str, args: dict[str, Any] | None, ctx: BuiltinContext) -> TaskError:
    """The TaskError ``call`` raises; its code must be in the registry (so ``category`` works)."""
    from runtime.builtins import call
    from runtime.errors import NOT_BUILT

    try:
        await call(tool, args, ctx)
    except TaskError as e:
        if e.code != NOT_BUILT:
            assert e.category, e.code
        return e
    raise AssertionError(f"{tool} did not fail")


def direct(tool: str):
    """The implementation itself, past the contract: for values a stricter contract of this build
    refuses but the runtime must still handle (a looser contract, or a value computed at run)."""
    from runtime.builtins import REGISTRY, _load

    _load()
    return REGISTRY[tool]
