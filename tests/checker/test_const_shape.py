"""`const/001`: a `const:` object with `type` and `default` but no `value` is a bare literal object
by spec 01's discriminator; the check says so as a hint, with the rename to `value:` as the fix."""

from __future__ import annotations

import pytest

from checker import compile_text
from checker.core.diagnostics import Severity
from checker.rules.support.fixes import apply_fixes

HEAD = 'nika: v1\nworkflow: { id: c }\npermits: { tools: ["nika:log"] }\nconst:\n'
TASK = 'tasks:\n  t:\n    invoke: { tool: "nika:log", args: { message: "${{ READ }}" } }\n'


def hints(entry: str, read: str = "const.window"):
    text = HEAD + f"  window: {entry}\n" + TASK.replace("READ", read)
    return text, [d for d in compile_text(text, "c.nika.yaml").diagnostics if d.rule == "const/001"]


def test_type_and_default_without_value_is_a_hint_on_default() -> None:
    text, (d,) = hints("{ type: integer, default: 30 }")
    assert d.severity is Severity.HINT
    assert text[d.span.start : d.span.end] == "default"
    (fix,) = d.fixes
    assert fix.applicability == "safe" and [e.new_text for e in fix.edits] == ["value"]


@pytest.mark.parametrize("read", ["const.window.type", "const.window.default"])
def test_the_fix_is_unsafe_when_an_expression_reads_the_members_it_renames(read: str) -> None:
    _, (d,) = hints("{ type: integer, default: 30 }", read)
    assert d.fixes[0].applicability == "unsafe"


@pytest.mark.parametrize(
    "entry",
    [
        "{ type: integer, value: 30 }",  # a typed constant
        '{ type: "custom", label: x }',  # a literal that legitimately has a `type` key (spec 01)
        "{ default: 30 }",
        "{ type: integer, default: 30, value: 30 }",  # typed: `default` is just an extra key
        "30",
    ],
)
def test_no_hint_on_other_shapes(entry: str) -> None:
    assert hints(entry)[1] == []


def test_the_fix_gives_a_typed_constant_and_the_comparison_warning_goes() -> None:
    text = HEAD + "  window: { type: integer, default: 30 }\n" + TASK.replace("READ", "const.window > 10")
    before = compile_text(text, "c.nika.yaml")
    assert {d.code or d.rule for d in before.diagnostics} == {"const/001", "NIKA-VAR-006"}
    fixed = apply_fixes(text, before.diagnostics).text
    assert "window: { type: integer, value: 30 }" in fixed
    assert [d for d in compile_text(fixed, "c.nika.yaml").diagnostics if d.severity.rank <= 1] == []
