"""Scales, ticks, labels and decimation for the chart writer, all byte-stable.

Ticks are chosen in :class:`~decimal.Decimal` (a 1-2-5 step, no logarithm); positions are IEEE
doubles under +, -, *, / only, written with CPython's correctly rounded fixed-point formatting
(:func:`num`), so the same data gives the same characters on every platform. Labels follow the
field's semantic (``usd`` money, ``duration_ms`` humanised, ``tokens`` k/M, ``percent``, ``count``,
``delta`` signed, ``timestamp`` as UTC dates).
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from decimal import ROUND_CEILING, ROUND_FLOOR, Decimal

TIME_STEPS = (60, 300, 900, 3600, 6 * 3600, 12 * 3600, 86400, 2 * 86400, 7 * 86400, 30 * 86400, 91 * 86400, 365 * 86400)
EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


def num(x: float) -> str:
    """A coordinate: two decimals at most, no trailing zeros, never ``-0``."""
    s = f"{x:.2f}".rstrip("0").rstrip(".")
    return "0" if s in ("-0", "") else s


def _dec(x: float) -> Decimal:
    return Decimal(repr(x)) if isinstance(x, float) else Decimal(x)


def nice(lo: float, hi: float, count: int = 5, *, timestamp: bool = False) -> tuple[float, float, list[Decimal]]:
    """A domain widened to whole steps and the ticks inside it."""
    a, b = _dec(lo), _dec(hi)
    raw = (b - a) / count
    if timestamp:  # the data's own extent, with ticks on whole calendar-ish steps inside it
        step = Decimal(next((s for s in TIME_STEPS if s >= (b - a) / 8), TIME_STEPS[-1]))
        t = (a / step).to_integral_value(ROUND_CEILING) * step
        ticks = []
        while t <= b and len(ticks) < 64:
            ticks.append(t)
            t += step
        return lo, hi, ticks
    else:
        exp = raw.adjusted()
        base = raw.scaleb(-exp)
        step = next(Decimal(m) for m in (1, 2, 5, 10) if base <= m).scaleb(exp)
    first = (a / step).to_integral_value(ROUND_FLOOR) * step
    last = (b / step).to_integral_value(ROUND_CEILING) * step
    ticks, t = [], first
    while t <= last and len(ticks) < 64:
        ticks.append(t)
        t += step
    return float(first), float(last), ticks


class Linear:
    """Domain [d0, d1] onto range [r0, r1]."""

    def __init__(self, d0: float, d1: float, r0: float, r1: float) -> None:
        self.d0, self.d1, self.r0, self.r1 = d0, d1, r0, r1

    def __call__(self, v: float) -> float:
        return self.r0 + (v - self.d0) * (self.r1 - self.r0) / (self.d1 - self.d0)


def label(value: Decimal | float | str, semantic: str | None, step: Decimal | None = None) -> str:
    """The tick or legend text of ``value`` under ``semantic``."""
    if isinstance(value, str):
        return value
    d = value if isinstance(value, Decimal) else _dec(value)
    if semantic == "timestamp":
        when = EPOCH + timedelta(seconds=int(d))
        return when.strftime("%Y-%m-%d" if step is None or step >= 86400 else "%Y-%m-%d %H:%M")
    if semantic == "usd":
        return ("-" if d < 0 else "") + "$" + _short(abs(d), step, money=True)
    if semantic == "tokens":
        return ("-" if d < 0 else "") + _short(abs(d), step)
    if semantic == "duration_ms":
        return _duration(d)
    if semantic == "percent":
        return _plain(d, step) + "%"
    if semantic == "count":
        return f"{int(d):,}"
    if semantic == "delta":
        return ("+" if d > 0 else "") + _plain(d, step)
    return _plain(d, step)


def _plain(d: Decimal, step: Decimal | None) -> str:
    places = max(0, -step.normalize().as_tuple().exponent) if step is not None else None
    text = format(d.normalize() if places is None else d.quantize(Decimal(1).scaleb(-places)), "f")
    return "0" if text in ("-0", "-0.0") else text


def _short(d: Decimal, step: Decimal | None, *, money: bool = False) -> str:
    for size, suffix in ((Decimal(10**9), "B"), (Decimal(10**6), "M"), (Decimal(10**3), "k")):
        if d >= size:
            return format((d / size).quantize(Decimal("0.1")).normalize(), "f") + suffix
    if money and (step is None or step < 1) and d != d.to_integral_value():
        return format(d.quantize(Decimal("0.01")), ",f")
    return format(d.quantize(Decimal(1)), ",f")


def _duration(ms: Decimal) -> str:
    sign, ms = ("-" if ms < 0 else ""), abs(ms)
    if ms < 1000:
        return f"{sign}{_plain(ms, None)}ms"
    if ms < 60_000:
        return sign + format((ms / 1000).quantize(Decimal("0.1")).normalize(), "f") + "s"
    total = int(ms // 1000)
    if total < 3600:
        return f"{sign}{total // 60}m {total % 60}s" if total % 60 else f"{sign}{total // 60}m"
    return f"{sign}{total // 3600}h {total % 3600 // 60}m" if total % 3600 // 60 else f"{sign}{total // 3600}h"


def lttb(xs: list[float], ys: list[float], keep: int) -> list[int]:
    """Largest-Triangle-Three-Buckets: ``keep`` indices (first, last, each global extreme kept)."""
    n = len(xs)
    if n <= keep:
        return list(range(n))
    chosen, a = [0], 0
    every = (n - 2) / (keep - 2)
    for i in range(keep - 2):
        start, end = int(i * every) + 1, int((i + 1) * every) + 1
        nxt_start, nxt_end = end, min(int((i + 2) * every) + 1, n)
        cx = sum(xs[nxt_start:nxt_end]) / (nxt_end - nxt_start)
        cy = sum(ys[nxt_start:nxt_end]) / (nxt_end - nxt_start)
        best, best_area = start, -1.0
        for j in range(start, min(end, n - 1)):
            area = abs((xs[a] - cx) * (ys[j] - ys[a]) - (xs[a] - xs[j]) * (cy - ys[a]))
            if area > best_area:
                best, best_area = j, area
        chosen.append(best)
        a = best
    chosen.append(n - 1)
    extremes = {ys.index(min(ys)), ys.index(max(ys))}
    return sorted(set(chosen) | extremes)
