"""The JSON Canonicalization Scheme (RFC 8785, "JCS"): the one byte encoding of a JSON value.

Objects with their keys sorted by UTF-16 code units, no whitespace, strings as raw UTF-8 with the
escapes JSON requires (exactly :func:`json.dumps` with ``ensure_ascii=False``), and numbers as
ECMAScript's ``Number.prototype.toString`` writes them: the shortest digits that read back as the
same double (what :func:`repr` finds for a Python float), placed by the ES6 rules (``1e-7``, not
``1e-07``; ``100`` for ``100.0``). Spec 15 names JCS the byte encoding of what Nika hashes;
spec 16's projection is written the same way, so "byte-identical" means these bytes.

:mod:`checker.decide.canonical` writes the decision kernel's data with it, integers only (the
kernel refuses floats by law: ``integers_only=True``).
"""

from __future__ import annotations

import json
import math
from typing import Any


class NotJson(ValueError):
    """The value holds something JSON has no spelling for (a set, NaN, a non-string key…)."""


class FloatRefused(NotJson):
    """A float where only integers are taken (``integers_only``)."""


def dumps(value: Any, *, integers_only: bool = False) -> str:
    """The JCS text of ``value`` (dicts, lists/tuples, strings, ints, floats, booleans, ``None``);
    with ``integers_only`` a float is refused (:class:`FloatRefused`)."""
    parts: list[str] = []
    try:
        _write(value, parts, integers_only)
    except RecursionError:
        raise NotJson("the value nests too deeply") from None
    return "".join(parts)


def number(x: float) -> str:
    """``x`` as ECMAScript writes it (RFC 8785 §3.2.2.3)."""
    if not math.isfinite(x):
        raise NotJson(f"{x!r} has no JSON spelling")
    if x == 0:
        return "0"  # -0 too
    sign = "-" if x < 0 else ""
    mantissa, _, exp = repr(abs(x)).partition("e")
    whole, _, frac = mantissa.partition(".")
    digits = (whole + frac).lstrip("0")
    # the decimal point sits `point` digits into `digits` (value = 0.DIGITS × 10^point)
    point = len(whole.lstrip("0")) + (int(exp) if exp else 0)
    if not whole.lstrip("0"):  # 0.000ddd: leading zeros of the fraction move the point left
        point -= len(frac) - len(frac.lstrip("0"))
    digits = digits.rstrip("0") or "0"
    k = len(digits)
    if k <= point <= 21:
        return sign + digits + "0" * (point - k)
    if 0 < point <= 21:
        return sign + digits[:point] + "." + digits[point:]
    if -6 < point <= 0:
        return sign + "0." + "0" * -point + digits
    e = point - 1
    head = digits[0] + ("." + digits[1:] if k > 1 else "")
    return f"{sign}{head}e{'+' if e > 0 else '-'}{abs(e)}"


def _write(value: Any, out: list[str], integers_only: bool) -> None:
    if value is None:
        out.append("null")
    elif value is True:
        out.append("true")
    elif value is False:
        out.append("false")
    elif isinstance(value, int):
        out.append(str(value))
    elif isinstance(value, float):
        if integers_only:
            raise FloatRefused(f"{value!r} is a binary float")
        out.append(number(value))
    elif isinstance(value, str):
        out.append(json.dumps(value, ensure_ascii=False))
    elif isinstance(value, (list, tuple)):
        out.append("[")
        for i, item in enumerate(value):
            if i:
                out.append(",")
            _write(item, out, integers_only)
        out.append("]")
    elif isinstance(value, dict):
        if not all(isinstance(k, str) for k in value):
            raise NotJson("an object key is not a string")
        out.append("{")
        for i, key in enumerate(sorted(value, key=lambda k: k.encode("utf-16-be"))):
            if i:
                out.append(",")
            out.append(json.dumps(key, ensure_ascii=False))
            out.append(":")
            _write(value[key], out, integers_only)
        out.append("}")
    else:
        raise NotJson(f"a {type(value).__name__} has no JSON spelling")
