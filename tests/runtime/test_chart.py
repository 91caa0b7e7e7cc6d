"""nika:chart: byte-identical SVG per chart type (goldens, and a fresh process), the receipts, the
fs boundaries, idempotent re-runs, encoding honesty, and CHART-001..008."""

from __future__ import annotations

import hashlib
import json
import re
import subprocess
import sys
from pathlib import Path
from xml.etree import ElementTree

import pytest
from builtins_harness import direct, fails, make_ctx

from checker.media import chart_data
from runtime.builtins import call
from runtime.errors import TaskError
from runtime.media.chart_render import render

ROOT = Path(__file__).resolve().parents[2]
GOLDENS = Path(__file__).parent / "goldens" / "chart"
ROWS = [
    {
        "day": f"2026-07-{d:02d}",
        "cost": round(1.25 * d - (d % 3) * 0.4, 2),
        "lo": d,
        "hi": 2 * d + 1,
        "seen": d + 0.5,
        "prov": "ab"[d % 2],
        "team": "xyz"[d % 3],
        "change": d - 7,
    }
    for d in range(1, 15)
]
SEM = {"day": "timestamp", "cost": "usd", "change": "delta", "prov": "category"}
CASES = {
    "bar": {"type": "bar", "x": "team", "y": "change", "title": "Change by team"},
    "line": {"type": "line", "x": "day", "y": "cost", "color": "prov"},
    "scatter": {"type": "scatter", "x": "lo", "y": "cost", "color": "team"},
    "area_band": {"type": "area_band", "x": "day", "y_lo": "lo", "y_hi": "hi", "y": "cost", "y2": "seen"},
    "heatmap": {"type": "heatmap", "x": "team", "y": "prov", "color": "change"},
}


@pytest.mark.parametrize("kind", sorted(CASES))
def test_each_chart_type_matches_its_golden(kind):
    """The committed golden bytes: any drift in the writer fails here."""
    svg, _, w, h = render(ROWS, CASES[kind], SEM)
    golden = GOLDENS / f"{kind}.svg"
    if not golden.exists():
        pytest.fail(f"missing golden {golden.name}")
    assert svg == golden.read_bytes()
    assert (w, h) == (800, 450) and svg.startswith(b"<svg ")
    root = ElementTree.fromstring(svg)  # well-formed XML, and an SVG document
    assert root.tag == "{http://www.w3.org/2000/svg}svg" and root.get("viewBox") == "0 0 800 450"


def test_a_fresh_process_renders_the_same_bytes():
    code = (
        "import json,sys,hashlib;from runtime.media.chart_render import render;"
        "a=json.loads(sys.stdin.read());"
        "h=lambda c:hashlib.sha256(render(a['rows'],c,a['sem'])[0]).hexdigest();"
        "print(json.dumps({k:h(c) for k,c in a['cases'].items()}))"
    )
    done = subprocess.run(
        [sys.executable, "-c", code],
        input=json.dumps({"rows": ROWS, "sem": SEM, "cases": CASES}),
        capture_output=True,
        text=True,
        cwd=ROOT,
        env={"PYTHONPATH": str(ROOT), "PYTHONHASHSEED": "123"},
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    theirs = json.loads(done.stdout)
    ours = {k: hashlib.sha256(render(ROWS, c, SEM)[0]).hexdigest() for k, c in CASES.items()}
    assert theirs == ours


async def test_receipts_trace_event_and_idempotent_rerun(tmp_path):
    ctx, events = make_ctx(tmp_path)
    args = {"data": ROWS, "semantics": SEM, "chart": CASES["line"], "out": "report/cost.svg", "compile_to": "vega_lite"}
    first = await call("nika:chart", args, ctx)
    data = (tmp_path / "report" / "cost.svg").read_bytes()
    assert first["sha256"] == hashlib.sha256(data).hexdigest() and first["bytes"] == len(data)
    assert first["wrote"] is True and first["warnings"] == [] and (first["width"], first["height"]) == (800, 450)
    assert len(first["data_sha256"]) == 64
    vl = json.loads((tmp_path / "report" / "cost.vl.json").read_text())
    assert vl["mark"] == "line" and vl["encoding"]["x"]["type"] == "temporal" and len(vl["data"]["values"]) == 14
    art = [e for e in events if e["type"] == "artifact" and e["path"] == "report/cost.svg"]
    assert art[0]["sha256"] == first["sha256"] and "svg" not in json.dumps(art[0]).replace("cost.svg", "")
    again = await call("nika:chart", args, ctx)
    assert again["wrote"] is False and again["sha256"] == first["sha256"]


async def test_out_outside_the_write_grant_is_refused_before_any_io(tmp_path):
    inside = tmp_path / "in"
    inside.mkdir()
    ctx, _ = make_ctx(inside)
    e = await fails("nika:chart", {"data": ROWS, "chart": CASES["bar"], "out": "../x.svg"}, ctx)
    assert e.code == "NIKA-SEC-004" and not (tmp_path / "x.svg").exists()


async def test_rows_from_a_path_and_a_missing_file(tmp_path):
    (tmp_path / "rows.json").write_text(json.dumps(ROWS))
    ctx, _ = make_ctx(tmp_path)
    r = await call("nika:chart", {"data": {"path": "rows.json"}, "chart": CASES["bar"], "out": "b.svg"}, ctx)
    assert r["wrote"] and r["sha256"] == hashlib.sha256(render(ROWS, CASES["bar"], {})[0]).hexdigest()
    e = await fails("nika:chart", {"data": {"path": "none.json"}, "chart": CASES["bar"], "out": "b.svg"}, ctx)
    assert e.code == "NIKA-BUILTIN-CHART-008"
    (tmp_path / "obj.json").write_text('{"rows": []}')
    e = await fails("nika:chart", {"data": {"path": "obj.json"}, "chart": CASES["bar"], "out": "b.svg"}, ctx)
    assert e.code == "NIKA-BUILTIN-CHART-006"
    (tmp_path / "nan.json").write_text('[{"a": 1, "b": NaN}]')
    e = await fails("nika:chart", {"data": {"path": "nan.json"}, "chart": CASES["bar"], "out": "b.svg"}, ctx)
    assert e.code == "NIKA-BUILTIN-CHART-003"


def test_bars_anchor_at_zero():
    svg, *_ = render([{"k": "a", "v": 50}, {"k": "b", "v": 60}], {"type": "bar", "x": "k", "y": "v"}, {})
    text = svg.decode()
    assert '<text x="74" y="398" text-anchor="end">0</text>' in text  # the axis starts at 0, not 50
    bottoms = {
        float(m[0]) + float(m[1])
        for m in re.findall(r'<rect x="[\d.]+" y="([\d.]+)" width="[\d.]+" height="([\d.]+)" fill="#0072B2"', text)
    }
    assert bottoms == {394.0}


def test_area_band_predictions_are_dashed_and_observations_solid():
    text = render(ROWS, CASES["area_band"], SEM)[0].decode()
    polygon = re.search(r"<polygon [^>]*>", text)[0]
    lines = re.findall(r"<polyline [^>]*>", text)
    assert "stroke-dasharray" in polygon
    assert "stroke-dasharray" in lines[0] and "stroke-dasharray" not in lines[1]


def test_long_series_are_decimated_with_lttb_keeping_extremes():
    rows = [{"i": i, "v": (i * 7919) % 1000} for i in range(5000)]
    rows[1234]["v"], rows[4321]["v"] = 99999, -99999
    svg, warnings, *_ = render(rows, {"type": "line", "x": "i", "y": "v"}, {})
    assert warnings and warnings[0].startswith("decimated:") and "of 5000 points" in warnings[0]
    pts = re.search(r'points="([^"]+)"', svg.decode())[1].split()
    assert len(pts) <= chart_data.DECIMATE_AT + 2
    ys = [float(p.split(",")[1]) for p in pts]
    assert min(ys) == 48 and max(ys) == 394  # the spike and the dip both survive


@pytest.mark.parametrize(
    "rows, chart, code",
    [
        ([], CASES["bar"], 1),
        (ROWS, {"type": "bar", "x": "Team", "y": "cost"}, 2),
        ([{"x": 1, "y": float("nan")}, {"x": 2, "y": 1}], {"type": "line", "x": "x", "y": "y"}, 3),
        (ROWS, {"type": "line", "x": "day"}, 4),
        (ROWS, {"type": "area_band", "x": "lo", "y_lo": "lo", "y_hi": "hi", "color": "prov"}, 4),
        ([{"x": 1, "y": 2**60}, {"x": 2, "y": 1}], {"type": "line", "x": "x", "y": "y"}, 3),
        ([{"x": 1, "y": 3}, {"x": 2, "y": 3}], {"type": "line", "x": "x", "y": "y"}, 5),
        ([{"x": 1, "y": 3}], {"type": "line", "x": "x", "y": "y"}, 5),
        ([{"x": 1, "y": 3}, {"x": 2, "y": "4"}], {"type": "line", "x": "x", "y": "y"}, 6),
        ([{"x": "a", "y": "3.2"}, {"x": "b", "y": "4"}], {"type": "bar", "x": "x", "y": "y"}, 6),
        ([{"x": {"deep": 1}, "y": 1}], {"type": "bar", "x": "x", "y": "y"}, 6),
    ],
)
async def test_bad_input_gets_its_chart_code_and_leaves_nothing(tmp_path, rows, chart, code):
    ctx, _ = make_ctx(tmp_path)
    e = await fails("nika:chart", {"data": rows, "chart": chart, "out": "c.svg"}, ctx)
    assert e.code == f"NIKA-BUILTIN-CHART-{code:03d}", e.message
    assert not (tmp_path / "c.svg").exists()


async def test_a_million_rows_is_refused_at_once(tmp_path):
    """Past the contract (whose generic walk over a million values is slow on its own), the
    builtin refuses by count before looking at a row."""
    ctx, _ = make_ctx(tmp_path)
    row = {"x": 1, "y": 2}
    with pytest.raises(TaskError) as e:
        await direct("nika:chart")({"data": [row] * 1_000_000, "chart": CASES["bar"], "out": "c.svg"}, ctx)
    assert e.value.code == "NIKA-BUILTIN-CHART-007" and not (tmp_path / "c.svg").exists()


async def test_a_write_the_disk_refuses_is_008_and_leaves_no_partial_file(tmp_path):
    (tmp_path / "report").write_text("a file where the directory should be")
    ctx, _ = make_ctx(tmp_path)
    e = await fails("nika:chart", {"data": ROWS, "chart": CASES["bar"], "out": "report/x.svg"}, ctx)
    assert e.code == "NIKA-BUILTIN-CHART-008"
    assert (tmp_path / "report").read_text().startswith("a file")
