"""jq has no view of the process environment, at every jq entry point.

Spec 01 §permits: `permits: {}` grants zero env passthrough; §environment: a task's environment is
composed, never inherited. jq's `$ENV` and `env` would otherwise hand the engine's whole
environment (provider keys, CI tokens) to a workflow with zero authority.
"""

from __future__ import annotations

import json

import pytest

from runtime.tools.jq import compile_program

HOSTILE = [
    "$ENV",
    "env",
    "$ENV.NIKA_TEST_CANARY_KEY",
    "env.NIKA_TEST_CANARY_KEY",
    "[env, $ENV] | tostring",
    "def env: $ENV; env",
    "$ENV as $e | $e | keys",
]


@pytest.mark.parametrize("program", HOSTILE)
def test_the_one_jq_compiler_sees_an_empty_environment(program: str, canary: str) -> None:
    """Every runtime jq program is compiled with `$ENV` and `env` rebound to `{}` (01 §permits)."""
    out = compile_program(program).input_value(None).all()
    assert canary not in json.dumps(out)
    assert out[0] in ({}, None, "[{},{}]", [])


def test_jq_module_directives_cannot_read_files() -> None:
    """`import`/`include` read jq's search path (files outside every grant): they do not compile (01 §permits)."""
    with pytest.raises(ValueError):
        compile_program('include "x"; .')


def test_nika_jq_and_output_bindings_cannot_read_the_environment(run, canary: str) -> None:
    """`nika:jq` under `permits: {}` and an `output:` jq binding both see no environment variable."""
    result = run(
        """\
        nika: v1
        workflow: { id: envleak }
        permits: { tools: ["nika:jq"] }
        tasks:
          grab:
            invoke:
              tool: "nika:jq"
              args: { input: null, expression: "[$ENV, env]" }
          bound:
            infer: { model: mock/echo, prompt: "hello" }
            output: { e: "env", E: "$ENV" }
        outputs:
          grabbed: ${{ tasks.grab.output }}
          bound: ${{ tasks.bound.output }}
        """
    )
    report = json.dumps(result.report())
    assert canary not in report
    assert "NIKA_TEST_CANARY_KEY" not in report
    assert result.outputs["grabbed"] == [{}, {}]
    assert result.workflow_state == "success", result.error
    assert result.tasks["bound"].bindings == {"e": {}, "E": {}}
