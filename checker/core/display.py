"""Bounded text for values quoted in messages, hovers and terminal output.

Workflow data can be arbitrarily large: a 4,000-digit integer, a 60 KiB string, a list of
thousands of items. Quoting such a value verbatim makes a finding unreadable, and ``str()`` of an
integer beyond Python's int-to-string limit (4,300 digits by default) even raises ``ValueError``.
Every place that shows a user's value goes through :func:`show_value` (or :func:`clip` for text
that is already a string): the result is never longer than about ``limit`` characters, and
computing it never converts a huge integer to decimal in full.
"""

from __future__ import annotations

import math
import re
from typing import Any

__all__ = ["DEFAULT_LIMIT", "char_width", "clip", "int_digits", "show_int", "show_value", "terminal_safe"]

DEFAULT_LIMIT = 80

_ELLIPSIS = "…"


def clip(text: str, limit: int = DEFAULT_LIMIT) -> str:
    """``text`` itself when it has at most ``limit`` characters, else its head, ``…`` and its length."""
    if len(text) <= limit:
        return text
    head = max(limit - 24, 8)
    return f"{text[:head]}{_ELLIPSIS} ({len(text)} characters)"


def int_digits(n: int) -> int:
    """Number of decimal digits of ``abs(n)``, without converting ``n`` to a string."""
    n = abs(n)
    if n < 10:
        return 1
    guess = int(n.bit_length() * math.log10(2))  # exact or one short
    return guess + 1 if n >= 10**guess else guess


def show_int(n: int, limit: int = DEFAULT_LIMIT) -> str:
    """An integer in decimal, or, past ``limit`` digits, its leading digits and its digit count."""
    if -(10**18) < n < 10**18:
        return str(n)
    digits = int_digits(n)
    if digits <= limit:
        return str(n)
    keep = max(limit - 24, 8)
    lead = abs(n) // 10 ** (digits - keep)
    sign = "-" if n < 0 else ""
    return f"{sign}{lead}{_ELLIPSIS} ({digits} digits)"


def show_value(value: Any, limit: int = DEFAULT_LIMIT) -> str:
    """A short, total rendering of any YAML/JSON-like value (never raises, never unbounded)."""
    if isinstance(value, bool) or value is None:
        return "true" if value is True else "false" if value is False else "null"
    if isinstance(value, int):
        return show_int(value, limit)
    if isinstance(value, str):
        return clip(value, limit)
    if isinstance(value, float):
        return repr(value)
    if isinstance(value, (list, tuple)):
        return clip("[" + ", ".join(show_value(v, limit) for v in value[:limit]) + "]", limit)
    if isinstance(value, dict):
        items = list(value.items())[:limit]
        return clip("{" + ", ".join(f"{show_value(k, limit)}: {show_value(v, limit)}" for k, v in items) + "}", limit)
    try:
        return clip(repr(value), limit)
    except Exception:  # a repr that fails (a huge int inside a foreign object) still gets a name
        return f"<{type(value).__name__}>"


def kind_of(value: Any) -> str:
    """What kind of plain (JSON-like) value this is, with its article: ``a string``, ``null``."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int | float):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list | tuple):
        return "a list"
    if isinstance(value, dict):
        return "an object"
    return type(value).__name__


def char_width(ch: str) -> int:
    """The terminal columns one character takes: two for a wide one, none for a combining mark
    or a format character (the source view and the run's live line measure with this)."""
    import unicodedata

    if unicodedata.category(ch) in ("Mn", "Me", "Cf"):
        return 0
    return 2 if unicodedata.east_asian_width(ch) in ("W", "F") else 1


_CONTROLS = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def terminal_safe(text: str) -> str:
    """``text`` with every C0/C1 control (and DEL) but newline and tab spelled ``\\uXXXX``: untrusted
    text (a model output inside an error message) cannot move the cursor, erase a line, fake a
    status or write the clipboard (OSC 52). The spelling is a JSON escape, so JSON stays JSON."""
    return _CONTROLS.sub(lambda m: f"\\u{ord(m.group()):04x}", text)
