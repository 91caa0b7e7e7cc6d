"""The optional ``compile_to: vega_lite`` sibling: the same chart as a Vega-Lite v5 spec, its rows
inlined, written as canonical-ordered JSON so its bytes are as stable as the SVG's."""

from __future__ import annotations

import json
from typing import Any

SCHEMA = "https://vega.github.io/schema/vega-lite/v5.json"
MARKS = {"bar": "bar", "line": "line", "scatter": "point", "heatmap": "rect"}


def _kind(field: str, semantics: dict[str, str], rows: list[dict[str, Any]]) -> str:
    sem = semantics.get(field)
    if sem == "timestamp":
        return "temporal"
    if sem == "category" or isinstance(rows[0].get(field), str):
        return "nominal"
    return "quantitative"


def compile_vega(rows: list[dict[str, Any]], chart: dict[str, Any], semantics: dict[str, str]) -> bytes:
    kind = chart["type"]

    def enc(field: str) -> dict[str, Any]:
        return {"field": field, "type": _kind(field, semantics, rows)}

    spec: dict[str, Any] = {"$schema": SCHEMA, "data": {"values": rows}, "width": 800, "height": 450}
    if chart.get("title"):
        spec["title"] = chart["title"]
    if kind == "area_band":
        layers: list[dict[str, Any]] = [
            {
                "mark": {"type": "area", "opacity": 0.18, "strokeDash": [4, 3]},
                "encoding": {"x": enc(chart["x"]), "y": enc(chart["y_lo"]), "y2": {"field": chart["y_hi"]}},
            }
        ]
        if chart.get("y"):
            layers.append(
                {
                    "mark": {"type": "line", "strokeDash": [6, 4]},
                    "encoding": {"x": enc(chart["x"]), "y": enc(chart["y"])},
                }
            )
        if chart.get("y2"):
            layers.append({"mark": "line", "encoding": {"x": enc(chart["x"]), "y": enc(chart["y2"])}})
        spec["layer"] = layers
    else:
        spec["mark"] = MARKS[kind]
        encoding: dict[str, Any] = {"x": enc(chart["x"]), "y": enc(chart["y"])}
        if chart.get("color"):
            encoding["color"] = enc(chart["color"])
        if kind == "bar":
            encoding["y"]["scale"] = {"zero": True}
        spec["encoding"] = encoding
    return (json.dumps(spec, ensure_ascii=False, sort_keys=True, separators=(",", ":")) + "\n").encode("utf-8")
