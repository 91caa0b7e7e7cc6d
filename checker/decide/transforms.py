"""The three integer-only feature transforms (spec 11 §The Decision Bundle): clamp, linear, bucket.

Each is total on its declared ``[min, max]`` input range. ``clamp`` is defined to pull any integer
into that range; ``linear`` and ``bucket`` refuse an input outside it. Arithmetic is integer only;
basis-point products are divided with floor division (``//``), the same rounding everywhere.
"""

from __future__ import annotations

from typing import Any

BP = 10000


def apply(spec: dict[str, Any], value: int) -> int | None:
    """The transform's output for ``value``, or None when ``value`` is outside its range."""
    kind, lo, hi = spec["kind"], spec["min"], spec["max"]
    if kind == "clamp":
        return min(max(value, lo), hi)
    if value < lo or value > hi:
        return None
    if kind == "linear":
        return value * spec["scale_bp"] // BP + spec["offset"]
    return spec["values"][sum(1 for edge in spec["edges"] if edge <= value)]


def output_range(spec: dict[str, Any]) -> tuple[int, int]:
    """The least and greatest output over the whole declared input range (an Unknown's interval)."""
    kind, lo, hi = spec["kind"], spec["min"], spec["max"]
    if kind == "clamp":
        return lo, hi
    if kind == "linear":
        a, b = apply(spec, lo), apply(spec, hi)
        assert a is not None and b is not None
        return min(a, b), max(a, b)
    reachable = [apply(spec, lo)] + [apply(spec, e) for e in spec["edges"]]
    outs = [v for v in reachable if v is not None]
    return min(outs), max(outs)


def weighted(out: int, weight_bp: int) -> int:
    return out * weight_bp // BP
