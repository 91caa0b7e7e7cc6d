"""A deep comparison of two analyses of the same text, positions read as text offsets."""

from __future__ import annotations

import math
from typing import Any

from checker.core.records import record_fields
from checker.core.source import Span
from checker.parse.values import ScalarValue


def differences(a: Any, b: Any, path: str = "", seen: set[tuple[int, int]] | None = None) -> list[str]:
    """Where ``a`` and ``b`` differ (empty when they are the same analysis)."""
    seen = set() if seen is None else seen
    out: list[str] = []
    _walk(a, b, path, seen, out)
    return out


def _walk(a: Any, b: Any, path: str, seen: set[tuple[int, int]], out: list[str]) -> None:
    if len(out) > 20:
        return
    if isinstance(a, Span) and isinstance(b, Span):
        if (a.start, a.end) != (b.start, b.end):
            out.append(f"{path}: span {tuple(a)} != {tuple(b)}")
        return
    if type(a) is not type(b):
        out.append(f"{path}: {type(a).__name__} != {type(b).__name__}")
        return
    if a is None or isinstance(a, (bool, int, str, bytes)):
        if a != b:
            out.append(f"{path}: {a!r} != {b!r}")
        return
    if isinstance(a, float):
        if not (a == b or (math.isnan(a) and math.isnan(b))):
            out.append(f"{path}: {a!r} != {b!r}")
        return
    key = (id(a), id(b))
    if key in seen:
        return
    seen.add(key)
    if isinstance(a, ScalarValue):
        for name in ("raw", "style", "value"):
            _walk(getattr(a, name), getattr(b, name), f"{path}.{name}", seen, out)
        _walk(a.span, b.span, f"{path}.span", seen, out)
        offs_a = None if a.offsets is None else [o + a.span.base for o in a.offsets]
        offs_b = None if b.offsets is None else [o + b.span.base for o in b.offsets]
        if offs_a != offs_b:
            out.append(f"{path}.offsets differ")
        if repr(getattr(a, "template", None)) != repr(getattr(b, "template", None)):
            out.append(f"{path}.template differs")
        return
    if isinstance(a, (tuple, list)):
        if len(a) != len(b):
            out.append(f"{path}: length {len(a)} != {len(b)}")
            return
        for i, (x, y) in enumerate(zip(a, b, strict=True)):
            _walk(x, y, f"{path}[{i}]", seen, out)
        return
    if isinstance(a, dict):
        if list(a) != list(b):
            out.append(f"{path}: keys {list(a)[:5]} != {list(b)[:5]}")
            return
        for k in a:
            _walk(a[k], b[k], f"{path}[{k!r}]", seen, out)
        return
    if isinstance(a, (set, frozenset)):
        if a != b:
            out.append(f"{path}: sets differ")
        return
    specs = getattr(type(a), "__record_fields__", None) and record_fields(type(a))
    if not specs:
        if a != b:
            out.append(f"{path}: {a!r} != {b!r}")
        return
    for n in (sp.name for sp in specs if not sp.name.startswith("_")):
        _walk(getattr(a, n), getattr(b, n), f"{path}.{n}", seen, out)
