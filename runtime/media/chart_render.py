"""``render(rows, chart, semantics)`` → (SVG bytes, warnings, width, height) for the five chart
types. Encoding honesty: bars start at zero, an ``area_band``'s band and predicted line are dashed
and the observed ``y2`` line solid, and a series longer than the decimation bound is thinned with
LTTB (extremes kept) with a warning. Same input, same bytes (see :mod:`runtime.media.chart_scale`).
"""

from __future__ import annotations

from decimal import Decimal
from typing import Any

from checker.media import chart_data as cd
from runtime.media.chart_scale import Linear, label, lttb, nice
from runtime.media.svg import Svg, points

W, H = 800, 450
LEFT, RIGHT, TOP, BOTTOM, LEGEND = 80, 24, 48, 56, 150
PALETTE = ("#0072B2", "#E69F00", "#009E73", "#D55E00", "#CC79A7", "#56B4E9", "#F0E442", "#000000")
NEG, MID, POS = (0xB2, 0x18, 0x2B), (0xF7, 0xF7, 0xF7), (0x21, 0x66, 0xAC)
LOW, HIGH = (0xF7, 0xFB, 0xFF), (0x08, 0x30, 0x6B)


class Frame:
    """The plot area and the axes' scales, drawn once the marks are known."""

    def __init__(self, svg: Svg, legend: bool) -> None:
        self.svg = svg
        self.x0, self.x1 = LEFT, W - RIGHT - (LEGEND if legend else 0)
        self.y0, self.y1 = H - BOTTOM, TOP

    def y_axis(self, lo: float, hi: float, col: cd.Column, *, zero: bool = False) -> Linear:
        lo, hi = cd.domain([lo, hi], col.name, zero=zero)
        d0, d1, ticks = nice(lo, hi)
        scale = Linear(d0, d1, self.y0, self.y1)
        step = ticks[1] - ticks[0] if len(ticks) > 1 else None
        for t in ticks:
            y = scale(float(t))
            self.svg.add("line", x1=self.x0, y1=y, x2=self.x1, y2=y, stroke="#e5e5e5")
            self.svg.add("text", label(t, col.semantic, step), x=self.x0 - 6, y=y + 4, text_anchor="end")
        self.svg.add("line", x1=self.x0, y1=self.y0, x2=self.x0, y2=self.y1, stroke="#333333")
        mid = (self.y0 + self.y1) / 2
        self.svg.add("text", col.name, x=16, y=mid, text_anchor="middle", transform=f"rotate(-90 16 {mid:.0f})")
        return scale

    def x_numeric(self, col: cd.Column) -> Linear:
        lo, hi = cd.domain(list(col.values), col.name)
        d0, d1, ticks = nice(lo, hi, timestamp=col.semantic == "timestamp")
        scale = Linear(d0, d1, self.x0, self.x1)
        step = ticks[1] - ticks[0] if len(ticks) > 1 else None
        for t in ticks:
            x = scale(float(t))
            self.svg.add("line", x1=x, y1=self.y0, x2=x, y2=self.y0 + 4, stroke="#333333")
            self.svg.add("text", label(t, col.semantic, step), x=x, y=self.y0 + 16, text_anchor="middle")
        self._x_title(col.name)
        return scale

    def x_bands(self, names: list[str], col: cd.Column) -> tuple[Any, float]:
        """Band centres for categories, and the band width."""
        width = (self.x1 - self.x0) / len(names)
        every = max(1, len(names) // 20)
        for i, name in enumerate(names):
            if i % every == 0:
                self.svg.add("text", name, x=self.x0 + width * (i + 0.5), y=self.y0 + 16, text_anchor="middle")
        self._x_title(col.name)
        index = {n: i for i, n in enumerate(names)}
        return (lambda n: self.x0 + width * (index[n] + 0.5)), width

    def _x_title(self, name: str) -> None:
        self.svg.add("line", x1=self.x0, y1=self.y0, x2=self.x1, y2=self.y0, stroke="#333333")
        self.svg.add("text", name, x=(self.x0 + self.x1) / 2, y=H - 12, text_anchor="middle")

    def legend(self, entries: list[tuple[str, str, str]]) -> None:
        """``(label, colour, dash)`` rows at the right of the plot."""
        for i, (text, colour, dash) in enumerate(entries):
            y = TOP + 14 + i * 18
            extra = {"stroke_dasharray": dash} if dash else {}
            self.svg.add(
                "line", x1=self.x1 + 12, y1=y - 4, x2=self.x1 + 32, y2=y - 4, stroke=colour, stroke_width=3, **extra
            )
            self.svg.add("text", text, x=self.x1 + 38, y=y)


def render(
    rows: list[dict[str, Any]], chart: dict[str, Any], semantics: dict[str, str]
) -> tuple[bytes, list[str], int, int]:
    kind = cd.check_spec(chart, semantics)
    for name in semantics:
        cd.column(rows, name, semantics[name], numeric=None)  # every mapped field exists (CHART-002)
    title = chart.get("title") or f"{chart.get('y') or chart.get('y_hi')} by {chart['x']}"
    svg = Svg(W, H, title)
    svg.add("text", title, x=W / 2, y=26, text_anchor="middle", font_size=15, font_weight="bold")
    warnings: list[str] = []
    {"bar": _bar, "line": _line, "scatter": _scatter, "area_band": _band, "heatmap": _heatmap}[kind](
        svg, rows, chart, semantics, warnings
    )
    return svg.bytes(), warnings, W, H


def _col(rows: list[dict[str, Any]], chart: dict[str, Any], sem: dict[str, str], role: str) -> cd.Column:
    return cd.role(rows, chart, sem, role)


def _series(
    rows: list[dict[str, Any]], chart: dict[str, Any], sem: dict[str, str], warnings: list[str]
) -> list[str | None]:
    if not chart.get("color"):
        return [None] * len(rows)
    names = list(_col(rows, chart, sem, "color").values)
    if len(set(names)) > len(PALETTE):
        warnings.append(f"palette_cycled: {len(set(names))} series share {len(PALETTE)} colours")
    if len(set(names)) > cd.MAX_CATEGORIES:
        raise cd.ChartError(
            7, f"`{chart['color']}` splits the data into {len(set(names))} series; at most {cd.MAX_CATEGORIES}"
        )
    return names


def _colour(i: int) -> str:
    return PALETTE[i % len(PALETTE)]


def _bar(svg: Svg, rows: list[dict[str, Any]], chart: dict[str, Any], sem: dict[str, str], warnings: list[str]) -> None:
    xs = _col(rows, chart, sem, "x")
    ys = _col(rows, chart, sem, "y")
    series = _series(rows, chart, sem, warnings)
    cats, names = cd.categories(xs.values), cd.categories(tuple(series))
    if len(cats) > cd.MAX_CATEGORIES:
        raise cd.ChartError(7, f"`{xs.name}` has {len(cats)} categories; a bar chart draws at most {cd.MAX_CATEGORIES}")
    sums: dict[tuple[str, Any], float] = {}
    for x, s, y in zip(xs.values, series, ys.values, strict=True):
        sums[(x, s)] = sums.get((x, s), 0) + y
    if len(sums) < len(rows):
        warnings.append(f"bars_summed: {len(rows) - len(sums)} rows shared a bar with another row and were added to it")
    frame = Frame(svg, legend=names != [None])
    y = frame.y_axis(min(sums.values()), max(sums.values()), ys, zero=True)
    centre, band = frame.x_bands(cats, xs)
    inner = band * 0.8 / len(names)
    diverging = ys.semantic == "delta" and names == [None]
    for (x, s), v in sums.items():
        left = centre(x) - band * 0.4 + names.index(s) * inner
        top, bottom = sorted((y(v), y(0)))
        fill = ("#2166ac" if v >= 0 else "#b2182b") if diverging else _colour(names.index(s))
        svg.add("rect", x=left, y=top, width=inner, height=bottom - top, fill=fill)
    svg.add("line", x1=frame.x0, y1=y(0), x2=frame.x1, y2=y(0), stroke="#333333")
    if names != [None]:
        frame.legend([(str(n), _colour(i), "") for i, n in enumerate(names)])


def _points(at: list[float], ys: tuple[Any, ...], series: list[Any]) -> dict[Any, list[tuple[float, float]]]:
    out: dict[Any, list[tuple[float, float]]] = {}
    for x, s, y in zip(at, series, ys, strict=True):
        out.setdefault(s, []).append((x, y))
    return out


def _thin(pts: list[tuple[float, float]], name: str, warnings: list[str]) -> list[tuple[float, float]]:
    pts = sorted(pts, key=lambda p: p[0])
    if len(pts) <= cd.DECIMATE_AT:
        return pts
    keep = lttb([p[0] for p in pts], [p[1] for p in pts], cd.DECIMATE_AT)
    warnings.append(f"decimated: `{name}` drawn with {len(keep)} of {len(pts)} points (LTTB, extremes kept)")
    return [pts[i] for i in keep]


def _x_place(frame: Frame, xs: cd.Column) -> Any:
    if xs.numeric:
        return frame.x_numeric(xs)
    cats = cd.categories(xs.values)
    if len(cats) > cd.MAX_CATEGORIES * 10:
        raise cd.ChartError(7, f"`{xs.name}` has {len(cats)} distinct labels; at most {cd.MAX_CATEGORIES * 10}")
    centre, _ = frame.x_bands(cats, xs)
    return centre


def _line(svg: Svg, rows, chart, sem, warnings, *, marks: str = "line") -> None:
    xs, ys = _col(rows, chart, sem, "x"), _col(rows, chart, sem, "y")
    y2 = _col(rows, chart, sem, "y2") if chart.get("y2") else None
    series = _series(rows, chart, sem, warnings)
    names = cd.categories(tuple(series))
    legend = names != [None] or y2 is not None
    frame = Frame(svg, legend=legend)
    values = list(ys.values) + (list(y2.values) if y2 else [])
    y = frame.y_axis(min(values), max(values), ys)
    place = _x_place(frame, xs)
    at = [place(v) for v in xs.values]  # pixel x of each row: numeric scale or category centre
    entries = []
    for i, (name, pts) in enumerate(_points(at, ys.values, series).items()):
        pts = _thin(pts, ys.name if name is None else f"{ys.name}/{name}", warnings)
        colour = _colour(i)
        if marks == "line":
            svg.add("polyline", points=points([(a, y(b)) for a, b in pts]), fill="none", stroke=colour, stroke_width=2)
        else:
            for a, b in pts:
                svg.add("circle", cx=a, cy=y(b), r=3, fill=colour, fill_opacity="0.8")
        entries.append((ys.name if name is None else str(name), colour, ""))
    if y2 is not None:
        pts = _thin(list(zip(at, y2.values, strict=True)), y2.name, warnings)
        svg.add("polyline", points=points([(a, y(b)) for a, b in pts]), fill="none", stroke="#000000", stroke_width=2)
        entries.append((y2.name, "#000000", ""))
    if legend:
        frame.legend(entries)


def _scatter(svg: Svg, rows, chart, sem, warnings) -> None:
    _line(svg, rows, chart, sem, warnings, marks="points")


def _band(svg: Svg, rows, chart, sem, warnings) -> None:
    if chart.get("color"):
        raise cd.ChartError(4, "an `area_band` draws one band; split series with one chart per series, not `color:`")
    xs = _col(rows, chart, sem, "x")
    lo, hi = _col(rows, chart, sem, "y_lo"), _col(rows, chart, sem, "y_hi")
    mid = _col(rows, chart, sem, "y") if chart.get("y") else None
    y2 = _col(rows, chart, sem, "y2") if chart.get("y2") else None
    for i, (a, b) in enumerate(zip(lo.values, hi.values, strict=True)):
        if a > b:
            raise cd.ChartError(6, f"row {i} has `{lo.name}` above `{hi.name}`: the band is inverted", row=i)
    frame = Frame(svg, legend=True)
    values = [*lo.values, *hi.values, *(mid.values if mid else ()), *(y2.values if y2 else ())]
    y = frame.y_axis(min(values), max(values), mid or hi)
    x = frame.x_numeric(xs)
    upper = _thin(list(zip(xs.values, hi.values, strict=True)), hi.name, warnings)
    lower = _thin(list(zip(xs.values, lo.values, strict=True)), lo.name, warnings)
    ring = [(x(a), y(b)) for a, b in upper] + [(x(a), y(b)) for a, b in reversed(lower)]
    svg.add(
        "polygon", points=points(ring), fill="#0072B2", fill_opacity="0.18", stroke="#0072B2", stroke_dasharray="4 3"
    )
    entries = [(f"{lo.name}..{hi.name} (predicted)", "#0072B2", "4 3")]
    if mid is not None:
        pts = _thin(list(zip(xs.values, mid.values, strict=True)), mid.name, warnings)
        svg.add(
            "polyline",
            points=points([(x(a), y(b)) for a, b in pts]),
            fill="none",
            stroke="#0072B2",
            stroke_width=2,
            stroke_dasharray="6 4",
        )
        entries.append((f"{mid.name} (predicted)", "#0072B2", "6 4"))
    if y2 is not None:
        pts = _thin(list(zip(xs.values, y2.values, strict=True)), y2.name, warnings)
        svg.add(
            "polyline", points=points([(x(a), y(b)) for a, b in pts]), fill="none", stroke="#000000", stroke_width=2
        )
        entries.append((f"{y2.name} (observed)", "#000000", ""))
    frame.legend(entries)


def _heatmap(svg: Svg, rows, chart, sem, warnings) -> None:
    xs, ys = _col(rows, chart, sem, "x"), _col(rows, chart, sem, "y")
    vs = _col(rows, chart, sem, "color")
    cols, lines = cd.categories(xs.values), cd.categories(ys.values)
    if len(cols) * len(lines) > cd.MAX_CELLS:
        raise cd.ChartError(7, f"a {len(cols)}x{len(lines)} heatmap exceeds {cd.MAX_CELLS} cells")
    cells: dict[tuple[str, str], float] = {}
    for a, b, v in zip(xs.values, ys.values, vs.values, strict=True):
        cells[(a, b)] = cells.get((a, b), 0) + v
    if len(cells) < len(rows):
        warnings.append(
            f"cells_summed: {len(rows) - len(cells)} rows shared a cell with another row and were added to it"
        )
    lo, hi = cd.domain(list(cells.values()), vs.name)
    frame = Frame(svg, legend=True)
    centre, band = frame.x_bands(cols, xs)
    height = (frame.y0 - frame.y1) / len(lines)
    for j, name in enumerate(lines):
        svg.add("text", name, x=frame.x0 - 6, y=frame.y1 + height * (j + 0.5) + 4, text_anchor="end")
    diverging = vs.semantic == "delta"
    for (a, b), v in cells.items():
        fill = _diverge(v, lo, hi) if diverging else _mix(LOW, HIGH, (v - lo) / (hi - lo))
        svg.add(
            "rect", x=centre(a) - band / 2, y=frame.y1 + height * lines.index(b), width=band, height=height, fill=fill
        )
    frame.legend(
        [
            (
                label(Decimal(repr(float(lo))), vs.semantic),
                _mix(LOW, HIGH, 0) if not diverging else _diverge(lo, lo, hi),
                "",
            ),
            (
                label(Decimal(repr(float(hi))), vs.semantic),
                _mix(LOW, HIGH, 1) if not diverging else _diverge(hi, lo, hi),
                "",
            ),
        ]
    )


def _mix(a: tuple[int, int, int], b: tuple[int, int, int], t: float) -> str:
    return "#" + "".join(f"{round(p + (q - p) * t):02x}" for p, q in zip(a, b, strict=True))


def _diverge(v: float, lo: float, hi: float) -> str:
    """Anchored at zero: negatives toward red, positives toward blue, zero neutral."""
    if v >= 0:
        return _mix(MID, POS, v / hi if hi > 0 else 0)
    return _mix(MID, NEG, v / lo if lo < 0 else 0)
