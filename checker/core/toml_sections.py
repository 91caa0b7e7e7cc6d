"""Read one keyed section of a large TOML data file without parsing the whole file.

The registry (``codes.toml``) and the tool contracts (``contracts/builtins.toml``) are hundreds
of entries of prose; parsing all of them costs tens of milliseconds, while a check usually
needs a handful. Each entry is a header ``[table."key"]`` followed by its sub-tables
``[table."key".…]`` / ``[[table."key".…]]``; we slice those lines and parse just them.

What was parsed is kept in :mod:`checker.core.static_cache` (per data file, keyed by its stamp
and this module's: size, modification time, checksum), so a later process parses nothing it parsed before, and a
warm ``nika check`` does not even import :mod:`tomllib`.
"""

from __future__ import annotations

import os
import re
from functools import cache
from typing import Any

from checker.core import static_cache


@cache
def _text(path: str) -> str:
    with open(path, encoding="utf-8") as fh:
        return fh.read()


@cache
def keys(path: str, table: str) -> tuple[str, ...]:
    """Every key that has its own ``[table."key"]`` header, in file order."""
    kept = _parsed(path)
    got = kept.get(("keys", table))
    if type(got) is tuple:
        return got
    pat = re.compile(rf'^\[{re.escape(table)}\."([^"]+)"\]\s*$', re.M)
    found = tuple(pat.findall(_text(path)))
    kept.put(("keys", table), found)
    return found


@cache
def _parsed(path: str) -> static_cache.Table:
    """What was parsed from ``path`` before, by what was asked: a section, the keys, the whole file."""
    name = static_cache.named("toml-" + os.path.basename(path), path)
    return static_cache.Table(name, static_cache.stamp([path, __file__]))


@cache
def whole(path: str) -> dict[str, Any]:
    """The whole parsed file (for the small data files a check reads entirely)."""
    kept = _parsed(path)
    got = kept.get(("whole",))
    if type(got) is dict:
        return got
    import tomllib

    with open(path, "rb") as fh:
        data = tomllib.load(fh)
    kept.put(("whole",), data)
    return data


@cache
def section(path: str, table: str, key: str) -> dict[str, Any] | None:
    """The parsed value of ``table.key`` (with its sub-tables), or ``None`` when absent."""
    kept = _parsed(path)
    got = kept.get(("section", table, key))
    if type(got) is tuple and len(got) == 1:
        return got[0]  # type: ignore[no-any-return]
    value = _section(path, table, key)
    kept.put(("section", table, key), (value,))
    return value


def _section(path: str, table: str, key: str) -> dict[str, Any] | None:
    text = _text(path)
    head = f'[{table}."{key}"]'
    start = text.find("\n" + head)
    if start == -1:
        if not text.startswith(head):
            return None
        start = 0
    else:
        start += 1
    own = (f'[{table}."{key}"', f'[[{table}."{key}"')
    end = start + len(head)
    while True:
        nxt = text.find("\n[", end)
        if nxt == -1:
            end = len(text)
            break
        if not text.startswith(own, nxt + 1):
            end = nxt + 1
            break
        end = nxt + 1
    import tomllib

    data = tomllib.loads(text[start:end])
    return data.get(table, {}).get(key)
