"""``nika:chart``: rows + the semantic map + a chart spec → one byte-deterministic SVG on disk.

The renderer is our own small SVG writer (:mod:`runtime.media.chart_render`), not a plotting
library: no library we could use promises byte-stable output across platforms and versions
(matplotlib's SVG embeds glyph paths from the installed fonts and its own float formatting),
while a writer that controls every character can. Measured: the goldens of tests/runtime/test_chart.py
render to the same bytes in a fresh process and under CPython 3.11.2 (Debian), 3.11.7, 3.12.1
and 3.13.0. ``out:`` is judged by
``permits.fs.write`` and a ``data: {path}`` source by ``permits.fs.read`` before any I/O; an
identical artifact already on disk is not rewritten (``wrote: false``). The artifact's sha256
joins the trace through an ``artifact`` event.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
from typing import Any

from checker.media.chart_data import ChartError, check_rows
from runtime.builtins import BuiltinContext, builtin
from runtime.builtins._artifacts import emit_artifact, judge_write, read_input, save, sha256_hex
from runtime.errors import TaskError

CHART = "nika:chart"
IO_CODE = "NIKA-BUILTIN-CHART-008"
MAX_DATA_FILE = 64 * 1024 * 1024


@builtin(CHART)
async def chart(args: dict[str, Any], ctx: BuiltinContext) -> dict[str, Any]:
    from runtime.media.chart_render import render
    from runtime.media.vega import compile_vega

    spec, semantics, out = args["chart"], args.get("semantics") or {}, args["out"]
    target = judge_write(ctx, out)
    sibling = out.removesuffix(".svg") + ".vl.json" if args.get("compile_to") == "vega_lite" else None
    sibling_target = judge_write(ctx, sibling) if sibling else None
    try:
        rows = check_rows(_rows(args["data"], ctx))
        svg, warnings, width, height = await asyncio.to_thread(render, rows, spec, semantics)
        vega = compile_vega(rows, spec, semantics) if sibling else None
    except ChartError as e:
        raise TaskError(e.code, e.message, details=e.details) from None
    wrote = save(target, svg, IO_CODE, out)
    emit_artifact(ctx, CHART, out, svg, wrote)
    result: dict[str, Any] = {
        "path": out,
        "sha256": sha256_hex(svg),
        "data_sha256": _data_sha256(rows),
        "width": width,
        "height": height,
        "bytes": len(svg),
        "wrote": wrote,
        "warnings": warnings,
    }
    if sibling and sibling_target and vega is not None:
        wrote_vl = save(sibling_target, vega, IO_CODE, sibling)
        emit_artifact(ctx, CHART, sibling, vega, wrote_vl)
        result["vega_lite"] = {"path": sibling, "sha256": sha256_hex(vega), "bytes": len(vega), "wrote": wrote_vl}
    return result


def _rows(data: Any, ctx: BuiltinContext) -> Any:
    if not isinstance(data, dict):
        return data
    path = data.get("path")
    if not isinstance(path, str):
        raise ChartError(4, "`data:` is a list of rows or `{path: <json file>}`")
    raw = read_input(ctx, path, IO_CODE, limit=MAX_DATA_FILE)

    def refuse(name: str) -> Any:
        raise ChartError(3, f"{path} holds `{name}`, which no axis can place")

    try:
        return json.loads(raw.decode("utf-8"), parse_constant=refuse)
    except (UnicodeDecodeError, json.JSONDecodeError) as e:
        raise TaskError(IO_CODE, f"{path} is not a JSON file of rows: {e}", details={"path": path}) from None


def _data_sha256(rows: list[dict[str, Any]]) -> str:
    """sha256 of every row (decimated or not) as sorted-key compact JSON."""
    text = json.dumps(rows, ensure_ascii=False, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode("utf-8")).hexdigest()
