"""Data builtins that stamp rather than transform: ``nika:uuid``, ``nika:date``, ``nika:hash``.

Keys read from ``BuiltinContext.extra`` (see :mod:`runtime.builtins._support`):

``"clock"``
    ``now()`` for ``nika:uuid`` (the v7 timestamp) and ``nika:date`` (``op: now``, and ``add`` /
    ``subtract`` without a ``base:``). A virtual clock makes both reproducible.
``"rng"``
    ``getrandbits(k)`` for the random bits of ``nika:uuid``; a seeded generator makes the ids
    reproducible.
"""

from __future__ import annotations

import base64
import hashlib
import re
import uuid as uuidlib
from datetime import UTC, datetime, timedelta, tzinfo
from typing import Any
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from checker.core.durations import parse_duration
from runtime.builtins import BuiltinContext, builtin
from runtime.builtins._support import ARG_CODE, arg, clock, content_octets, describe, entropy, render
from runtime.errors import TaskError

UUID, DATE, HASH = "nika:uuid", "nika:date", "nika:hash"

# ── nika:uuid ─────────────────────────────────────────────────────────────────────────────────

_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


@builtin(UUID)
async def uuid(args: dict[str, Any], ctx: BuiltinContext) -> str:
    """A lower-case hyphenated UUID: v7 (RFC 9562, time-ordered by the millisecond) or v4."""
    rng = entropy(ctx)
    if arg(args, UUID, "version") == "v4":
        return str(uuidlib.UUID(int=rng.getrandbits(128), version=4))
    ms = (clock(ctx).now() - _EPOCH) // timedelta(milliseconds=1)
    value = (ms & (1 << 48) - 1) << 80 | 0x7 << 76 | rng.getrandbits(12) << 64 | 0b10 << 62 | rng.getrandbits(62)
    return str(uuidlib.UUID(int=value))


# ── nika:date ─────────────────────────────────────────────────────────────────────────────────

DATE_001 = "NIKA-BUILTIN-DATE-001"
_UNIT_US = {
    "us": 1,
    "ms": 1_000,
    "s": 1_000_000,
    "m": 60_000_000,
    "h": 3_600_000_000,
    "d": 86_400_000_000,
    "w": 604_800_000_000,
}
_UNIT_NAMES = {
    "microseconds": "us",
    "milliseconds": "ms",
    "seconds": "s",
    "minutes": "m",
    "hours": "h",
    "days": "d",
    "weeks": "w",
}


@builtin(DATE)
async def date(args: dict[str, Any], ctx: BuiltinContext) -> str | int:
    """ISO 8601 timestamps in, ISO 8601 out (``Z`` for UTC); ``diff`` returns an integer.

    ``now``: the clock's time in ``tz``. ``add`` / ``subtract``: ``base`` (default: now) shifted
    by a Go duration, in absolute time (a day across a DST change is still 24 hours).
    ``format``: ``input`` through a strftime ``format``. ``parse``: ``input`` read with a
    strftime ``format``. ``diff``: ``end - start`` in ``unit`` (``ms``, ``s``, ``m``, ``h``,
    ``d``, ``w`` or their long names), truncated toward zero. A timestamp without an offset is
    taken in ``tz``; results keep their own offset unless ``tz:`` is given, which converts them.
    """
    op = args.get("op")
    zone = _zone(arg(args, DATE, "tz"))
    convert = args.get("tz") is not None

    def out(when: datetime) -> str:
        return _iso(when.astimezone(zone) if convert else when)

    if op == "now":
        return _iso(clock(ctx).now().astimezone(zone))
    if op in ("add", "subtract"):
        base = _timestamp(args, "base", zone) if args.get("base") is not None else clock(ctx).now()
        text = _text(args, "duration", op)
        ms, why = parse_duration(text, positive=False, max_ms=None)
        if ms is None:
            raise TaskError(DATE_001, f"`duration:` {text!r} is not a Go duration: {why}")
        delta = timedelta(milliseconds=ms if op == "add" else -ms)
        return out((base.astimezone(UTC) + delta).astimezone(base.tzinfo))
    if op == "format":
        when = _timestamp(args, "input", zone)
        return (when.astimezone(zone) if convert else when).strftime(_text(args, "format", op))
    if op == "parse":
        text, fmt = _text(args, "input", op), _text(args, "format", op)
        try:
            when = _strptime(text, fmt)
        except ValueError as e:
            raise TaskError(DATE_001, f"{text!r} does not match the format {fmt!r}: {e}") from None
        return out(when if when.tzinfo is not None else when.replace(tzinfo=zone))
    if op == "diff":
        start, end = _timestamp(args, "start", zone), _timestamp(args, "end", zone)
        unit = _text(args, "unit", op)
        step = _UNIT_US.get(_UNIT_NAMES.get(unit, unit))
        if step is None:
            raise TaskError(DATE_001, f"`unit:` {unit!r} is not one of {', '.join(_UNIT_US)} (or their long names)")
        total = (end - start) // timedelta(microseconds=1)
        return total // step if total >= 0 else -(-total // step)
    raise TaskError(DATE_001, f"`op:` must be one of now, add, subtract, format, parse, diff, not {describe(op)}")


_HAS_YEAR = re.compile(r"(?<!%)(?:%%)*%[YyGcxD]")


def _strptime(text: str, fmt: str) -> datetime:
    """``strptime`` with the year it defaults to (1900) made explicit when the format names none:
    Python 3.13 deprecates a day of month parsed without a year (it cannot tell a leap day)."""
    if _HAS_YEAR.search(fmt):
        return datetime.strptime(text, fmt)
    return datetime.strptime(f"1900 {text}", f"%Y {fmt}")


def _zone(name: Any) -> tzinfo:
    if not isinstance(name, str):
        raise TaskError(DATE_001, f"`tz:` must be an IANA zone name such as `Europe/Paris`, not {describe(name)}")
    if name in ("UTC", "Z"):
        return UTC
    try:
        return ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError):
        raise TaskError(DATE_001, f"`tz:` {name!r} is not an IANA time zone (write e.g. `America/New_York`)") from None


def _text(args: dict[str, Any], name: str, op: str) -> str:
    value = args.get(name)
    if not isinstance(value, str) or not value:
        raise TaskError(DATE_001, f"`op: {op}` needs `{name}:` as a string, but it is {describe(value)}")
    return value


def _timestamp(args: dict[str, Any], name: str, zone: tzinfo) -> datetime:
    text = _text(args, name, str(args.get("op")))
    try:
        when = datetime.fromisoformat(text)
    except ValueError:
        raise TaskError(DATE_001, f"`{name}:` {text!r} is not an ISO 8601 timestamp") from None
    return when if when.tzinfo is not None else when.replace(tzinfo=zone)


def _iso(when: datetime) -> str:
    text = when.isoformat()
    return text[:-6] + "Z" if text.endswith("+00:00") else text


# ── nika:hash ─────────────────────────────────────────────────────────────────────────────────

HASH_001 = "NIKA-BUILTIN-HASH-001"


@builtin(HASH)
async def hash_(args: dict[str, Any], ctx: BuiltinContext) -> str:
    """The digest of ``content`` as hex or base64.

    Text is hashed as its UTF-8 bytes, bytes as they are, and any other JSON value as its
    canonical form (compact JSON, keys sorted, non-ASCII kept), so equal values hash equally.
    """
    data = content_octets(args["content"], HASH, render)  # JSON as canonical compact JSON
    algo = arg(args, HASH, "algo")
    if algo == "blake3":
        from blake3 import blake3

        digest = blake3(data).digest()
    elif algo in ("sha256", "sha512"):
        digest = hashlib.new(algo, data).digest()
    else:
        raise TaskError(HASH_001, f"`algo:` {algo!r} is not supported; use blake3, sha256 or sha512")
    encoding = arg(args, HASH, "encoding")
    if encoding == "hex":
        return digest.hex()
    if encoding == "base64":
        return base64.b64encode(digest).decode("ascii")
    raise TaskError(ARG_CODE, f"`encoding:` of `{HASH}` must be hex or base64, not {describe(encoding)}")
