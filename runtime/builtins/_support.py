"""What the builtin families share: argument access with the contract's defaults, the clock and
entropy seams, and the JSON-value checks and rendering every data builtin needs.

Seams read from ``BuiltinContext.extra`` (NEP-0010: a run declares its clock and entropy, so a
virtual clock or a seeded generator must reach every builtin that reads time or randomness):

``"clock"``
    An object with ``now() -> datetime`` (timezone-aware) and ``async sleep(seconds: float)``.
    Absent: the system clock and ``asyncio.sleep``.
``"rng"``
    An object with ``getrandbits(k: int) -> int`` (a ``random.Random`` seeded by the run).
    Absent: the operating system's entropy (``random.SystemRandom``).
"""

from __future__ import annotations

import asyncio
import functools
import json
import math
import random
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from checker.contracts import tables as contracts
from runtime.errors import TaskError

if TYPE_CHECKING:
    from runtime.builtins import BuiltinContext

ARG_CODE = contracts.ARG_CODE


class Clock(Protocol):
    def now(self) -> datetime: ...

    async def sleep(self, seconds: float) -> None: ...


class Entropy(Protocol):
    def getrandbits(self, k: int, /) -> int: ...


class SystemClock:
    """Wall time in UTC; sleeping yields to the event loop."""

    def now(self) -> datetime:
        return datetime.now(UTC)

    async def sleep(self, seconds: float) -> None:
        await asyncio.sleep(seconds)


_SYSTEM_CLOCK = SystemClock()
_SYSTEM_ENTROPY = random.SystemRandom()


def clock(ctx: BuiltinContext) -> Clock:
    found = ctx.extra.get("clock")
    return found if found is not None else _SYSTEM_CLOCK


def entropy(ctx: BuiltinContext) -> Entropy:
    found = ctx.extra.get("rng")
    return found if found is not None else _SYSTEM_ENTROPY


# ── arguments ─────────────────────────────────────────────────────────────────────────────────


@functools.cache
def _spec(tool: str, name: str) -> contracts.ArgSpec | None:
    c = contracts.contract(tool)
    return c.arg(name) if c is not None else None


def default(tool: str, name: str) -> Any:
    """The contract's default for ``tool``'s argument ``name`` (``None`` when it declares none)."""
    spec = _spec(tool, name)
    return spec.default if spec is not None and spec.has_default else None


def arg(args: dict[str, Any], tool: str, name: str) -> Any:
    """``args[name]``, or the contract's default when the argument is absent or null."""
    value = args.get(name)
    return default(tool, name) if value is None else value


def values(tool: str, name: str) -> tuple[Any, ...]:
    """The closed set of values the contract allows for the argument (empty when open)."""
    spec = _spec(tool, name)
    return spec.values if spec is not None else ()


def pattern(tool: str, name: str) -> str | None:
    spec = _spec(tool, name)
    return spec.pattern if spec is not None else None


def need(args: dict[str, Any], tool: str, name: str, kind: type | tuple[type, ...], code: str = ARG_CODE) -> Any:
    """A present argument of the given Python type(s), else a typed failure naming it.

    The contract catches most of this before the builtin runs; this covers what it leaves open
    (arguments it does not mark required, union types), so no builtin trips over a ``None``.
    """
    value = args.get(name)
    if value is None:
        raise TaskError(code, f"`{tool}` needs `{name}:`")
    if not isinstance(value, kind) or (isinstance(value, bool) and bool not in _as_tuple(kind)):
        raise TaskError(code, f"`{name}:` of `{tool}` must be {_noun(kind)}, but it is {describe(value)}")
    return value


def _as_tuple(kind: type | tuple[type, ...]) -> tuple[type, ...]:
    return kind if isinstance(kind, tuple) else (kind,)


_NOUNS = {str: "a string", int: "an integer", float: "a number", bool: "a boolean", dict: "an object", list: "an array"}


def _noun(kind: type | tuple[type, ...]) -> str:
    return " or ".join(_NOUNS.get(k, k.__name__) for k in _as_tuple(kind))


def describe(value: Any) -> str:
    """A short, type-first description of a value for messages (never the whole value)."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return f"the boolean {'true' if value else 'false'}"
    if isinstance(value, (int, float)):
        return f"the number {value!r}"
    if isinstance(value, str):
        text = value if len(value) <= 40 else value[:37] + "..."
        return f"the string {json.dumps(text, ensure_ascii=False)}"
    if isinstance(value, (bytes, bytearray)):
        return f"{len(value)} bytes"
    if isinstance(value, dict):
        return "an object"
    if isinstance(value, (list, tuple)):
        return "an array"
    return f"a {type(value).__name__}"


# ── JSON values ───────────────────────────────────────────────────────────────────────────────


def non_json_at(value: Any, path: str = "") -> str | None:
    """The JSON Pointer of the first part of ``value`` that is not a JSON value, else ``None``.

    JSON values are dicts with string keys, lists, strings, finite numbers, booleans and null.
    """
    if value is None or isinstance(value, (str, bool, int)):
        return None
    if isinstance(value, float):
        return None if math.isfinite(value) else path
    if isinstance(value, (list, tuple)):
        for i, item in enumerate(value):
            found = non_json_at(item, f"{path}/{i}")
            if found is not None:
                return found
        return None
    if isinstance(value, dict):
        for k, item in value.items():
            if not isinstance(k, str):
                return path
            found = non_json_at(item, f"{path}/{pointer_escape(k)}")
            if found is not None:
                return found
        return None
    return path


def content_octets(content: Any, tool: str, as_json: Callable[[Any], str]) -> bytes:
    """A ``content:`` argument as octets: text as UTF-8, bytes as they are, any other JSON value
    as ``as_json`` writes it; anything else is an argument error of ``tool``."""
    if isinstance(content, str):
        return content.encode("utf-8")
    if isinstance(content, (bytes, bytearray)):
        return bytes(content)
    bad = non_json_at(content)
    if bad is not None:
        raise TaskError(ARG_CODE, f"`content:` of `{tool}` is not text, bytes or a JSON value (at `{bad or '/'}`)")
    return as_json(content).encode("utf-8")


def pointer_escape(key: str) -> str:
    """One JSON Pointer reference token (RFC 6901: ``~`` → ``~0``, ``/`` → ``~1``)."""
    return key.replace("~", "~0").replace("/", "~1")


def json_equal(a: Any, b: Any) -> bool:
    """Equality of JSON values: one number domain (``1 == 1.0``), but ``true`` is not ``1``."""
    if isinstance(a, bool) or isinstance(b, bool):
        return isinstance(a, bool) and isinstance(b, bool) and a == b
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        return a == b
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(json_equal(a[k], b[k]) for k in a)
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
        return len(a) == len(b) and all(json_equal(x, y) for x, y in zip(a, b, strict=True))
    return type(a) is type(b) and a == b


def render(value: Any) -> str:
    """A value in a string position: strings as they are, anything else as compact sorted JSON."""
    if isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False, sort_keys=True, separators=(",", ":"), default=_opaque)


def _opaque(value: Any) -> str:
    if isinstance(value, (bytes, bytearray)):
        return f"<{len(value)} bytes>"
    return f"<{type(value).__name__}>"


# Ours: the file builtins' own caps apply to what they return; this one only bounds the read itself.
READ_REGULAR_CAP = 1 << 30
READ_REGULAR_DEADLINE_S = 60.0


def read_regular(path: Path) -> bytes:
    """The bytes of ``path`` if it is a regular file; ``OSError`` otherwise.

    The one bounded reader (:func:`checker.core.reader.read_file`): opened non-blocking and
    judged on the opened descriptor (no stat/open race), so a FIFO, a device or a socket under a
    granted tree is refused instead of blocking the engine forever; capped; under a deadline.
    The one regular-file check of the runtime's file builtins.
    """
    from checker.core.reader import FileReadError, read_file

    try:
        return read_file(str(path), READ_REGULAR_CAP, deadline_s=READ_REGULAR_DEADLINE_S)
    except FileReadError as e:  # as the errno's own class (FileNotFoundError, IsADirectoryError…)
        raise OSError(e.errno, e.reason, str(path)) from None
