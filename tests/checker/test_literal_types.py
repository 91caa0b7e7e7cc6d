"""Expressions that read nothing are judged at check with the runtime's evaluator (spec 04,
cel-subset/0.1): every run would fail the same way, so the run's code is reported at check."""

from __future__ import annotations

import pytest

from checker.engine.pipeline import compile_text
from tests.checker.run_failures import is_run_failure

HEAD = 'nika: v1\nworkflow: { id: t }\npermits: { tools: ["nika:log"] }\n'
HEAD += "inputs:\n  flag: { type: bool, default: true }\ntasks:\n  a:\n    invoke:\n      tool: nika:log\n"


def findings(expr: str) -> list[tuple[str, str]]:
    text = HEAD + f"      args: {{ message: '${{{{ {expr} }}}}' }}\n"
    compiled = compile_text(text, "/tmp/w.nika.yaml", "/tmp")
    assert not any(d.is_error for d in compiled.diagnostics), compiled.diagnostics
    return [(d.code or "", text[d.span.start : d.span.end]) for d in compiled.diagnostics if is_run_failure(d)]


@pytest.mark.parametrize(
    ("expr", "code", "at"),
    [
        ("size(1)", "NIKA-VAR-006", "size(1)"),
        ('"a" in 1', "NIKA-VAR-006", '"a" in 1'),
        ("[1, 2][5]", "NIKA-VAR-001", "[1, 2][5]"),
        ('1 < "a"', "NIKA-VAR-006", '1 < "a"'),
        ('"abc".startsWith(1)', "NIKA-VAR-006", '"abc".startsWith(1)'),
        ('"a" in 1 || inputs.flag', "NIKA-VAR-006", '"a" in 1'),  # the left side always runs
    ],
)
def test_a_literal_failure_is_the_runs_code_at_check(expr: str, code: str, at: str) -> None:
    found = findings(expr)
    assert [c for c, _ in found] == [code], found
    assert found[0][1].endswith(at) or at in found[0][1]


@pytest.mark.parametrize(
    "expr",
    [
        'size("ab") == 2',
        "[1, 2][1] == 2",
        "inputs.flag || size(1) > 0",  # the right side may never run
        "inputs.flag ? 1 : size(1)",  # a branch may never run
        "has(inputs.flag)",
        '"a" in ["a"]',
        'inputs.flag && size(1) == 1 || "a" in 1',  # both failing parts sit where a run may not go
    ],
)
def test_what_may_not_run_or_succeeds_is_not_refused(expr: str) -> None:
    assert findings(expr) == []
