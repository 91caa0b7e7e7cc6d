"""Charts (stdlib §nika:chart): a ``nika:chart`` call whose rows, chart spec and semantic map are
all literal has them judged now by the runtime's own judge (:func:`checker.media.chart_data.validate`),
so an empty table, an unknown field, a text column on a numeric axis or a flat axis is a positioned
CHART-00x warning at check (the stdlib raises these at run: the workflow stays valid) instead of a
surprise at run. Values with templates, and ``data: {path}`` sources,
are left to the run. A chart spec the contract already refuses (an unknown ``type``) is not judged
twice.
"""

from __future__ import annotations

from collections.abc import Iterator

from checker.core.codes import run_failure
from checker.core.diagnostics import Diagnostic
from checker.model.workflow import Invoke
from checker.parse.values import ListValue, MapValue, Value, templates
from checker.rules.support.context import RuleContext, task_verbs

TOOL = "nika:chart"
ROW_CODES = {"NIKA-BUILTIN-CHART-001", "NIKA-BUILTIN-CHART-003", "NIKA-BUILTIN-CHART-005", "NIKA-BUILTIN-CHART-007"}


def _static(v: Value | None) -> bool:
    return v is not None and not any(True for _ in templates(v))


def check_charts(ctx: RuleContext) -> Iterator[Diagnostic]:
    for task in ctx.workflow.tasks.values():
        for verb in task_verbs(task):
            if not isinstance(verb, Invoke) or verb.tool != TOOL or verb.args is None:
                continue
            data, chart, sem = verb.args.get("data"), verb.args.get("chart"), verb.args.get("semantics")
            if not (isinstance(data, ListValue) and isinstance(chart, MapValue) and _static(data) and _static(chart)):
                continue
            if sem is not None and not (isinstance(sem, MapValue) and _static(sem)):
                continue
            from checker.media.chart_data import NEEDS, SEMANTICS, ChartError, validate  # a chart to judge

            spec, semantics = chart.to_python(), sem.to_python() if sem is not None else {}
            if spec.get("type") not in NEEDS or any(s not in SEMANTICS for s in semantics.values()):
                continue  # the contract has already said what is wrong
            try:
                validate(data.to_python(), spec, semantics)
            except ChartError as e:
                yield run_failure(e.code, _where(e, data, chart, sem).span, e.message, _help(e.code), task=task.id)


def _where(e: object, data: Value, chart: MapValue, sem: Value | None) -> Value:
    """The value to point at: the chart entry (or semantic) naming an unknown field, the chart
    spec for a spec error, else the rows."""
    code, field = getattr(e, "code", ""), getattr(e, "details", {}).get("field")
    if code.endswith("-002") or code.endswith("-006"):
        for role in ("x", "y", "y_lo", "y_hi", "y2", "color"):
            entry = chart.get(role)
            if entry is not None and entry.to_python() == field:
                return entry
        if isinstance(sem, MapValue) and field in sem:
            return sem.get(field) or sem
    if code.endswith("-004"):
        return chart
    return data if code in ROW_CODES or not code.endswith("-002") else chart


def _help(code: str) -> str:
    return {
        "NIKA-BUILTIN-CHART-001": "Give the chart at least one row, or gate the task on the data with `when:`.",
        "NIKA-BUILTIN-CHART-002": "Name a field the rows have (exact spelling), or reshape the rows with `nika:jq`.",
        "NIKA-BUILTIN-CHART-003": "Remove or repair the NaN/Infinity values upstream.",
        "NIKA-BUILTIN-CHART-004": "Name every field the chart type needs (`nika explain NIKA-BUILTIN-CHART-004`).",
        "NIKA-BUILTIN-CHART-005": "Chart data that covers a range, or present a single value another way.",
        "NIKA-BUILTIN-CHART-006": "Numbers on numeric axes, labels on category axes; convert upstream with `nika:jq`.",
        "NIKA-BUILTIN-CHART-007": "Aggregate first (per hour, per day, per category) with `nika:jq`.",
    }.get(code, "See `nika explain` for this code.")
