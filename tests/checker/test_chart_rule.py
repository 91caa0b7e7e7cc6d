"""`nika check` judges a `nika:chart` call whose rows and spec are literal with the runtime's own
chart judge: positioned CHART-00x findings, nothing for templated or file-sourced data."""

from __future__ import annotations

import pytest

from checker.engine.pipeline import compile_text
from tests.checker.run_failures import said

HEAD = (
    'nika: v1\nworkflow: { id: c }\npermits: { tools: ["nika:*"], fs: { read: ["**"], write: ["out/**"] } }\ntasks:\n'
)


def findings(args: str) -> list[tuple[str, str]]:
    text = HEAD + f'  t:\n    invoke:\n      tool: "nika:chart"\n      args: {{ {args}, out: out/c.svg }}\n'
    compiled = compile_text(text, "/tmp/c.nika.yaml", "/tmp")
    return [(d.code or "", text[d.span.start :]) for d in compiled.diagnostics if said(d)]


ROWS = "data: [{ day: mon, cost: 3 }, { day: tue, cost: 4 }]"


@pytest.mark.parametrize(
    "args, code, at",
    [
        ("data: [], chart: { type: bar, x: day, y: cost }", "001", "[]"),
        (f"{ROWS}, chart: {{ type: bar, x: Day, y: cost }}", "002", "Day"),
        (f"{ROWS}, semantics: {{ spend: usd }}, chart: {{ type: bar, x: day, y: cost }}", "002", "usd"),
        (f"{ROWS}, chart: {{ type: line, x: day }}", "004", "{ type: line"),
        ("data: [{ d: 1, c: 3 }, { d: 2, c: 3 }], chart: { type: line, x: d, y: c }", "005", "[{"),
        ('data: [{ d: a, c: "3" }, { d: b, c: 4 }], chart: { type: bar, x: d, y: c }', "006", "c }"),
    ],
)
def test_literal_chart_data_is_judged_at_check(args, code, at):
    found = findings(args)
    assert [c for c, _ in found] == [f"NIKA-BUILTIN-CHART-{code}"], found
    assert found[0][1].startswith(at), found


@pytest.mark.parametrize(
    "args",
    [
        f"{ROWS}, chart: {{ type: bar, x: day, y: cost }}",
        'data: "${{ inputs.rows }}", chart: { type: bar, x: day, y: cost }',
        "data: { path: rows.json }, chart: { type: bar, x: day, y: cost }",
        'data: [{ day: mon, cost: "${{ inputs.n }}" }], chart: { type: bar, x: day, y: cost }',
    ],
)
def test_good_templated_or_file_sourced_data_gets_no_chart_finding(args):
    assert not [c for c, _ in findings(args) if c.startswith("NIKA-BUILTIN-CHART")]


def test_an_unknown_type_is_said_once_by_the_contract():
    assert [c for c, _ in findings(f"{ROWS}, chart: {{ type: pie, x: day, y: cost }}")] == ["NIKA-BUILTIN-001"]
