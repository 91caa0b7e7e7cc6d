"""Required builtin arguments: one mark in checker/contracts/builtins.toml decides at check and
at run, so a call `nika check` accepts never fails at run for a missing argument (issue 29)."""

from __future__ import annotations

import asyncio

import pytest
from builtins_harness import fails, make_ctx

from checker.contracts import tables as contracts
from checker.parse.values import from_python
from runtime.builtins import call

# What each builtin cannot do without (stdlib/builtins-v0.1.md: the arguments the tool's
# sentence is about and that have no default), with a call that is otherwise complete.
COMPLETE: dict[str, dict[str, object]] = {
    "nika:read": {"path": "a.txt"},
    "nika:write": {"path": "a.txt", "content": "x"},
    "nika:edit": {"path": "a.txt", "find": "a", "replace": "b"},
    "nika:glob": {"pattern": "*.txt"},
    "nika:grep": {"pattern": "a", "path": "."},
    "nika:jq": {"expression": "."},
    "nika:json_diff": {"before": 1, "after": 2},
    "nika:validate": {"data": 1, "schema": True},
    "nika:json_merge_patch": {"target": {}, "patch": {}},
    "nika:convert": {"input": "a: 1", "from": "yaml", "to": "json"},
    "nika:date": {"op": "now"},
    "nika:hash": {"content": "x"},
    "nika:assert": {"condition": True},
}
CASES = [(tool, name) for tool, args in COMPLETE.items() for name in args]


def _static(tool: str, args: dict[str, object]) -> list:
    from checker.core.source import Span

    return [d for d in contracts.check_tool_args(tool, from_python(args), task="t", anchor=Span(0, 0)) if d.is_error]


@pytest.mark.parametrize(("tool", "name"), CASES)
def test_a_missing_argument_is_refused_at_check_and_run_alike(tool, name, tmp_path):
    """stdlib/builtins-v0.1.md: a builtin without the argument it acts on has no meaning; the
    checker refuses the call (NIKA-BUILTIN-001, a check-phase code) and the runtime, judging the
    concrete call with the same contract, refuses it with the same code and words."""
    (tmp_path / "a.txt").write_text("a")
    args = {k: v for k, v in COMPLETE[tool].items() if k != name}
    found = _static(tool, args)
    assert [d.code for d in found] == ["NIKA-BUILTIN-001"], [d.message for d in found]
    assert f"`{name}`" in found[0].message
    ctx, _ = make_ctx(tmp_path)
    err = asyncio.run(fails(tool, args, ctx))
    assert err.code == "NIKA-BUILTIN-001"
    assert found[0].message in str(err)


@pytest.mark.parametrize("tool", sorted(COMPLETE))
def test_the_complete_call_passes_both(tool, tmp_path):
    (tmp_path / "a.txt").write_text("a")
    assert _static(tool, COMPLETE[tool]) == []
    ctx, _ = make_ctx(tmp_path)
    asyncio.run(call(tool, dict(COMPLETE[tool]), ctx))


def test_jq_without_input_reads_null(tmp_path):
    """The stdlib gives `input:` of nika:jq no required mark: a program without it reads null."""
    ctx, _ = make_ctx(tmp_path)
    assert _static("nika:jq", {"expression": "[1, 2]"}) == []
    assert asyncio.run(call("nika:jq", {"expression": ". == null"}, ctx)) is True


def test_write_content_null_is_a_contract_error_at_run(tmp_path):
    """A write of nothing is refused: `content: null` at check, and a `content:` expression that
    resolved to null at run, both as NIKA-BUILTIN-001 before any file is touched."""
    ctx, _ = make_ctx(tmp_path)
    assert [d.code for d in _static("nika:write", {"path": "o.txt", "content": None})] == ["NIKA-BUILTIN-001"]
    err = asyncio.run(fails("nika:write", {"path": "o.txt", "content": None}, ctx))
    assert err.code == "NIKA-BUILTIN-001" and "null" in str(err)
    assert not (tmp_path / "o.txt").exists()


def test_emit_needs_a_name_under_either_spelling(tmp_path):
    ctx, _ = make_ctx(tmp_path)
    assert [d.code for d in _static("nika:emit", {"payload": 1})] == ["NIKA-BUILTIN-001"]
    assert _static("nika:emit", {"event": "task.done", "status": "ok"}) == []
    assert asyncio.run(fails("nika:emit", {"payload": 1}, ctx)).code == "NIKA-BUILTIN-001"


def test_a_computed_value_that_breaks_the_contract_is_a_run_time_type_error(tmp_path):
    """An accepted `invoke:` whose `${{ }}` value does not fit the contract at run fails with
    NIKA-VAR-006 (an expression's value of the wrong type; phase both), never with the
    check-phase NIKA-BUILTIN-001 the checker would have raised on a written value."""
    from rt_helpers import run_yaml

    result = run_yaml(
        """
        nika: v1
        workflow: { id: t }
        permits: { fs: { write: ["./**"] }, tools: ["nika:write", "nika:jq"] }
        tasks:
          j:
            invoke: { tool: nika:jq, args: { expression: "null" } }
          w:
            with: { c: "${{ tasks.j.output }}" }
            invoke: { tool: nika:write, args: { path: ./o.txt, content: "${{ with.c }}" } }
        """,
        tmp_path,
    )
    err = result.tasks["w"].error
    assert err is not None and err["code"] == "NIKA-VAR-006" and "null" in err["message"]
    assert not (tmp_path / "o.txt").exists()
