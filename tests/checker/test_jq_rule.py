"""The jq rule: tool arguments are templated before jq compiles, `output:` bindings are pure jq."""

from __future__ import annotations

import pytest

from checker import compile_text
from checker.rules.jq import rendered_program

DRIFT = "NIKA-DRIFT-001"  # the unused-declaration hint: not what these cases judge

HEAD = """nika: v1
workflow:
  id: jqr
permits: { exec: ["echo"], net: { http: ["example.com"] }, tools: ["nika:fetch", "nika:jq"] }
inputs:
  field: { type: string, default: name }
  n: { type: integer, default: 1 }
tasks:
"""


def findings(body: str) -> list[tuple[str, str]]:
    c = compile_text(HEAD + body)
    return [
        (d.code or "", c.source.text[d.span.start : d.span.end])
        for d in c.diagnostics
        if d.rule != "build/unavailable" and d.code != "NIKA-DRIFT-001"
    ]


def jq_task(expression: str) -> str:
    head = "  t:\n    invoke:\n      tool: nika:jq\n      args:\n        input: { items: [] }\n"
    return head + f"        expression: '{expression}'\n"


TEMPLATED = [
    ".items[${{ inputs.n }}]",
    ".${{ inputs.field }}",
    '.items | map(select(.name == "${{ inputs.field }}"))',
    ".items | map(select(.id == ${{ inputs.n }}))",
    "[.items[] | .${{ inputs.field }}] | length",
    "${{ inputs.field }}",
]


@pytest.mark.parametrize("expression", TEMPLATED)
def test_islands_in_a_jq_expression_are_values(expression: str) -> None:
    assert findings(jq_task(expression)) == []


def test_islands_in_a_fetch_jq_are_values() -> None:
    body = (
        "  t:\n    invoke:\n      tool: nika:fetch\n      args:\n"
        '        url: "https://example.com/api"\n        mode: jq\n'
        "        jq: '.data[] | select(.id == ${{ inputs.n }}) | .title'\n"
    )
    assert findings(body) == []


def test_a_broken_templated_program_is_still_refused_at_the_fault() -> None:
    got = findings(jq_task(".items[${{ inputs.n }}] | (.a"))
    assert got == [("NIKA-VAR-005", "(")]


def test_a_fault_on_the_island_points_at_the_island() -> None:
    got = findings(jq_task(".a | ${{ inputs.n }} |"))
    assert [code for code, _ in got] == ["NIKA-VAR-005"]
    assert got[0][1] == "|"


def test_output_binding_islands_stay_refused_once() -> None:
    body = '  t:\n    exec: { command: [echo] }\n    output:\n      v: ".a | ${{ inputs.n }}"\n'
    assert [code for code, _ in findings(body)] == ["NIKA-VAR-005"]


def test_jq_in_a_finally_step_is_checked() -> None:
    body = (
        "  t:\n    exec: { command: [echo] }\n    on_finally:\n"
        "      - invoke: { tool: nika:jq, args: { input: 1, expression: '.a |' } }\n"
    )
    assert [code for code, _ in findings(body)] == ["NIKA-VAR-005"]


def test_rendering_maps_every_character_back() -> None:
    text = '.a[${{ inputs.n }}] | "x\\${{ y }}"'
    program, where = rendered_program(text, "0")
    assert program == '.a[0] | "x${{ y }}"'
    assert len(where) == len(program)
    assert where[3] == text.index("${{")
    assert where[program.index("|")] == text.index("|")
