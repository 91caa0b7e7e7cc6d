"""Read one keyed section of a large TOML data file without parsing the whole file.

The registry (``codes.toml``) and the tool contracts (``contracts/builtins.toml``) are hundreds
of entries of prose; parsing all of them costs tens of milliseconds, while a check usually
needs a handful. Each entry is a header ``[table."key"]`` followed by its sub-tables
``[table."key".…]`` / ``[[table."key".…]]``; we slice those lines and parse just them.
"""

from __future__ import annotations

import re
from functools import cache
from typing import Any


@cache
def _text(path: str) -> str:
    with open(path, encoding="utf-8") as fh:
        return fh.read()


@cache
def keys(path: str, table: str) -> tuple[str, ...]:
    """Every key that has its own ``[table."key"]`` header, in file order."""
    pat = re.compile(rf'^\[{re.escape(table)}\."([^"]+)"\]\s*$', re.M)
    return tuple(pat.findall(_text(path)))


@cache
def section(path: str, table: str, key: str) -> dict[str, Any] | None:
    """The parsed value of ``table.key`` (with its sub-tables), or ``None`` when absent."""
    import tomllib

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
    data = tomllib.loads(text[start:end])
    return data.get(table, {}).get(key)
