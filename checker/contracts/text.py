"""How contract facts read in messages, hover cards and snippets: values, conditions, ranges and
expected types in plain words (pure string helpers, no contract loading).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from checker.contracts.model import ArgSpec


PIPE = "\\|"  # a pipe escaped for a Markdown table cell


_TYPE_NOUN = {
    "string": "a string",
    "enum": "a string",
    "duration": "a duration string",
    "integer": "an integer",
    "number": "a number",
    "boolean": "a boolean",
    "object": "a mapping",
    "array": "a list",
    "null": "empty",
    "any": "any value",
}


def fmt(v: Any) -> str:
    if v is True:
        return "true"
    if v is False:
        return "false"
    if v is None:
        return "null"
    return str(v)


def fmt_values(vals: Iterable[Any]) -> str:
    return " | ".join(fmt(v) for v in vals)


def when_text(when: tuple[tuple[str, tuple[Any, ...]], ...]) -> str:
    parts = []
    for k, vals in when:
        if len(vals) == 1:
            parts.append(f"`{k}: {fmt(vals[0])}`")
        else:
            parts.append(f"`{k}` in {{{', '.join(fmt(v) for v in vals)}}}")
    return " and ".join(parts)


def range_text(a: ArgSpec) -> str:
    bits = []
    if a.min is not None and a.max is not None:
        bits.append(f"{num(a.min)}..{num(a.max)}")
    elif a.min is not None:
        bits.append(f"≥ {num(a.min)}")
    elif a.max is not None:
        bits.append(f"≤ {num(a.max)}")
    if a.min_length is not None or a.max_length is not None:
        lo = a.min_length if a.min_length is not None else 0
        bits.append(f"{lo}..{a.max_length} chars" if a.max_length is not None else f"≥ {lo} chars")
    if a.min_items is not None or a.max_items is not None:
        lo = a.min_items if a.min_items is not None else 0
        bits.append(f"{lo}..{a.max_items} items" if a.max_items is not None else f"≥ {lo} items")
    return ", ".join(bits)


def num(x: float) -> str:
    """A number for a message. An integer too long to print whole (or to turn into a float)
    is named by its length: Python refuses ``float()`` past 1e308 and ``str()`` past 4300 digits."""
    if isinstance(x, int):
        if abs(x) < 10**30:
            return str(x)
        try:
            digits = len(str(abs(x)))
        except ValueError:  # beyond the interpreter's int-to-text limit
            digits = int(x.bit_length() * 0.30103) + 1
        return f"{'-' if x < 0 else ''}<a {digits}-digit integer>"
    return str(int(x)) if x.is_integer() else str(x)


def snippet_escape(text: str, *, choice: bool = False) -> str:
    text = text.replace("\\", "\\\\").replace("$", "\\$").replace("}", "\\}")
    if choice:
        text = text.replace(",", "\\,").replace("|", "\\|")
    return text


def expected(types: tuple[str, ...]) -> str:
    nouns = []
    for t in types:
        n = _TYPE_NOUN[t]
        if n not in nouns:
            nouns.append(n)
    return nouns[0] if len(nouns) == 1 else ", ".join(nouns[:-1]) + " or " + nouns[-1]
