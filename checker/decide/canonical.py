"""Canonical JSON (RFC 8785 / JCS) for the decision kernel's data, and its blake3 digest.

The kernel admits only objects, arrays, strings, integers, booleans and null (no floats: spec 11
§Decision IR), so the JCS number serialisation reduces to the integer's decimal spelling. Keys are
sorted by their UTF-16 code units, as JCS requires; strings are written as raw UTF-8 with the JSON
escapes JCS prescribes (which are exactly :func:`json.dumps` with ``ensure_ascii=False``). No PyPI
JCS library is installed here and the subset is small enough to be exact by hand.
"""

from __future__ import annotations

import json
from typing import Any


class NotCanonical(ValueError):
    """The value holds something the integer-only subset has no spelling for (a float, a set…)."""


def canonical_json(value: Any) -> str:
    """The JCS text of ``value``; raises :class:`NotCanonical` on a float or a non-JSON value."""
    parts: list[str] = []
    try:
        _write(value, parts)
    except RecursionError:
        raise NotCanonical("the value nests too deeply") from None
    return "".join(parts)


def canonical_bytes(value: Any) -> bytes:
    return canonical_json(value).encode("utf-8")


def blake3_hex(value: Any) -> str:
    """The blake3 digest (hex) of ``value``'s canonical JSON."""
    import blake3

    return blake3.blake3(canonical_bytes(value)).hexdigest()


def _write(value: Any, out: list[str]) -> None:
    if value is None:
        out.append("null")
    elif value is True:
        out.append("true")
    elif value is False:
        out.append("false")
    elif type(value) is int:
        out.append(str(value))
    elif isinstance(value, str):
        out.append(json.dumps(value, ensure_ascii=False))
    elif isinstance(value, (list, tuple)):
        out.append("[")
        for i, item in enumerate(value):
            if i:
                out.append(",")
            _write(item, out)
        out.append("]")
    elif isinstance(value, dict):
        if not all(isinstance(k, str) for k in value):
            raise NotCanonical("an object key is not a string")
        out.append("{")
        for i, key in enumerate(sorted(value, key=lambda k: k.encode("utf-16-be"))):
            if i:
                out.append(",")
            out.append(json.dumps(key, ensure_ascii=False))
            out.append(":")
            _write(value[key], out)
        out.append("}")
    elif isinstance(value, float):
        raise NotCanonical(f"{value!r} is a binary float; the kernel takes integers (basis points)")
    else:
        raise NotCanonical(f"a {type(value).__name__} has no JSON spelling")
