"""Helpers for the durable-run tests: `nika run` in process, with --resume/--from/--answer/--max-cost-usd."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

from nika.commands.run import run_command
from nika.commands.run_durable import Durable


def run(
    path: Path,
    *,
    resume: str | None = None,
    from_task: str | None = None,
    answers: list[str] | None = None,
    max_cost: float | None = None,
    var_pairs: list[str] | None = None,
    fmt: str = "json",
) -> tuple[int, Any, str]:
    out, err = io.StringIO(), io.StringIO()
    durable = Durable(resume, from_task, answers or [], max_cost)
    code = run_command(
        str(path),
        output_format=fmt,
        var_pairs=var_pairs or [],
        trace_dir=str(path.parent / "traces"),
        durable=durable,
        out=out,
        err=err,
    )
    text = out.getvalue()
    return code, (json.loads(text) if fmt == "json" and text.strip() else text), err.getvalue()


def frames(trace: str | Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in Path(trace).read_bytes().splitlines() if line]


def fields(frame: dict[str, Any]) -> dict[str, Any]:
    return {f["key"]: f["value"] for f in frame["fields"]}


def kinds(trace: str | Path, kind: str) -> list[dict[str, Any]]:
    return [fields(f) for f in frames(trace) if f["kind"] == kind]


def cache_hits(report: dict[str, Any]) -> set[str]:
    return {t for t, r in report["tasks"].items() if r.get("cache_hit")}
