"""Chart rows, checked: flat objects of strings and numbers, every named field present, each column
of one kind, no NaN/Infinity, and the size limits (spec stdlib §nika:chart, CHART-001..007).

Pure and stdlib-only, so the same judgement serves ``nika check`` (literal rows: :func:`validate`)
and the runtime's renderer. Failures are :class:`ChartError` with the CHART code number. Numbers
stay Python ints/floats: only IEEE basic arithmetic and CPython's correctly rounded formatting
touch them later, which give the same results on every platform.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

MAX_ROWS = 200_000  # the hard limit (CHART-007); past DECIMATE_AT a series is thinned with LTTB
DECIMATE_AT = 2_000
MAX_EXACT = 2**53  # integers past this have no exact place on a double-precision axis
MAX_CATEGORIES = 400
MAX_CELLS = 20_000
SEMANTICS = ("usd", "duration_ms", "tokens", "delta", "percent", "timestamp", "count", "category")
ROLES = ("x", "y", "y_lo", "y_hi", "y2", "color")
# How each chart type reads each role: True numeric, False categorical, None whichever the data is.
ROLE_KINDS: dict[str, dict[str, bool | None]] = {
    "bar": {"x": False, "y": True, "color": False},
    "line": {"x": None, "y": True, "y2": True, "color": False},
    "scatter": {"x": None, "y": True, "y2": True, "color": False},
    "area_band": {"x": True, "y_lo": True, "y_hi": True, "y": True, "y2": True},
    "heatmap": {"x": False, "y": False, "color": True},
}
NEEDS = {
    "bar": ("x", "y"),
    "line": ("x", "y"),
    "scatter": ("x", "y"),
    "area_band": ("x", "y_lo", "y_hi"),
    "heatmap": ("x", "y", "color"),
}


class ChartError(ValueError):
    def __init__(self, number: int, message: str, **details: Any) -> None:
        super().__init__(message)
        self.code = f"NIKA-BUILTIN-CHART-{number:03d}"
        self.message = message
        self.details = details


@dataclass(frozen=True)
class Column:
    """A field's values as the chart reads them: numbers (timestamps as epoch seconds) or labels."""

    name: str
    semantic: str | None
    numeric: bool
    values: tuple[Any, ...]


def check_spec(chart: dict[str, Any], semantics: dict[str, str]) -> str:
    """The chart type, once its required roles are named (CHART-004)."""
    kind = chart.get("type")
    if kind not in NEEDS:
        raise ChartError(4, f"`chart.type` is one of {', '.join(NEEDS)}, not {kind!r}")
    for role in NEEDS[kind]:
        if not isinstance(chart.get(role), str) or not chart[role]:
            raise ChartError(4, f"a `{kind}` chart needs `chart.{role}:` (a field name)")
    for name, sem in semantics.items():
        if sem not in SEMANTICS:
            raise ChartError(4, f"the semantic of `{name}` is one of {', '.join(SEMANTICS)}, not {sem!r}")
    return kind


def check_rows(rows: Any) -> list[dict[str, Any]]:
    if not isinstance(rows, list):
        raise ChartError(6, "`data:` must be a list of row objects (or `{path: <json file of rows>}`)")
    if not rows:
        raise ChartError(1, "`data:` holds no rows to draw")
    if len(rows) > MAX_ROWS:
        raise ChartError(7, f"`data:` holds {len(rows)} rows; the chart draws at most {MAX_ROWS} (aggregate first)")
    for i, row in enumerate(rows):
        if not isinstance(row, dict):
            raise ChartError(6, f"row {i} is not an object; rows are flat objects of strings and numbers", row=i)
        for key, value in row.items():
            if (isinstance(value, float) and not math.isfinite(value)) or (
                type(value) is int and abs(value) > MAX_EXACT
            ):
                raise ChartError(3, f"row {i} has `{key}` = {value}, which no axis can place", row=i, field=key)
            if (value is not None and not isinstance(value, (str, int, float))) or isinstance(value, bool):
                raise ChartError(6, f"row {i} has `{key}` of a kind a chart cannot draw", row=i, field=key)
    return rows


def column(rows: list[dict[str, Any]], name: str, semantic: str | None, *, numeric: bool | None) -> Column:
    """Field ``name`` of every row; ``numeric`` True/False forces the kind, None takes the data's."""
    for i, row in enumerate(rows):
        if name not in row or row[name] is None:
            raise ChartError(2, f"row {i} has no field `{name}`", row=i, field=name)
    raw = [row[name] for row in rows]
    if semantic == "timestamp":
        return Column(name, semantic, True, tuple(_epoch(v, name, i) for i, v in enumerate(raw)))
    numbers = [isinstance(v, (int, float)) for v in raw]
    if all(numbers):
        is_num = True
    elif not any(numbers):
        is_num = False
    else:
        i = numbers.index(not numbers[0])
        raise ChartError(6, f"`{name}` mixes numbers and strings (row {i})", row=i, field=name)
    if numeric and not is_num:
        raise ChartError(6, f"`{name}` holds text ({raw[0]!r}); this axis needs numbers", field=name)
    if is_num and (numeric is False or semantic == "category"):
        return Column(name, semantic, False, tuple(_label(v) for v in raw))
    return Column(name, semantic, is_num, tuple(raw))


def _label(v: Any) -> str:
    return repr(v) if isinstance(v, float) else str(v)


def _epoch(value: Any, name: str, row: int) -> float:
    if isinstance(value, (int, float)):
        return value
    try:
        when = datetime.fromisoformat(value.replace("Z", "+00:00"))
    except (ValueError, AttributeError):
        raise ChartError(6, f"`{name}` = {value!r} (row {row}) is not an ISO 8601 timestamp", row=row) from None
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    delta = when - datetime(1970, 1, 1, tzinfo=UTC)
    return delta.days * 86400 + delta.seconds + delta.microseconds / 1_000_000


def domain(values: list[float], name: str, *, zero: bool = False) -> tuple[float, float]:
    """The numeric extent of an axis (with 0 for bars); CHART-005 when it collapses to a point."""
    lo, hi = min(values), max(values)
    if zero:
        lo, hi = min(lo, 0), max(hi, 0)
    if lo == hi:
        raise ChartError(5, f"every value of `{name}` is {lo}: the axis has no range to draw", field=name)
    return lo, hi


def categories(values: tuple[Any, ...]) -> list[str]:
    """Distinct labels in first-seen order."""
    return list(dict.fromkeys(values))


def role(rows: list[dict[str, Any]], chart: dict[str, Any], semantics: dict[str, str], name: str) -> Column:
    """The column a chart role names, read the way its chart type reads that role."""
    field = chart[name]
    return column(rows, field, semantics.get(field), numeric=ROLE_KINDS[chart["type"]][name])


def validate(rows: Any, chart: dict[str, Any], semantics: dict[str, str]) -> None:
    """Everything :mod:`runtime.media.chart_render` would refuse that the rows alone decide: the spec,
    the rows, every field and its kind, and an axis whose raw values are one point (bars: all zero).
    A subset of the run's refusals, never more (a heatmap's summed cells are left to the run)."""
    kind = check_spec(chart, semantics)
    rows = check_rows(rows)
    for name in semantics:
        column(rows, name, semantics[name], numeric=None)
    if kind == "area_band" and chart.get("color"):
        raise ChartError(4, "an `area_band` draws one band; split series with one chart per series, not `color:`")
    cols = {r: role(rows, chart, semantics, r) for r in ROLE_KINDS[kind] if chart.get(r)}
    if kind == "heatmap":
        return
    measures = [v for r in ("y", "y_lo", "y_hi", "y2") if r in cols for v in cols[r].values]
    name = chart.get("y") or chart.get("y_hi")
    if kind == "bar":
        if all(v == 0 for v in measures):
            raise ChartError(5, f"every value of `{name}` is 0: the axis has no range to draw", field=name)
    else:
        domain(measures, name)
    if cols["x"].numeric:
        domain(list(cols["x"].values), cols["x"].name)
