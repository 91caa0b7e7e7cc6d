"""The gate algebra v2: every producer state against every consumer edge form (03 §gate algebra)."""

from __future__ import annotations

import pytest
from rt_helpers import statuses

# How the producer `p` is made to settle in each state.
PRODUCER = {
    "success": ("true", 'exec: { command: ["echo", "the producer speaks"] }'),
    "failure": ("true", 'exec: { command: ["false"] }'),
    "skipped": ("true", 'when: false\n    exec: { command: ["echo", "x"] }'),
    "cancelled": ("false", 'exec: { command: ["echo", "x"] }'),
}

# consumer form -> the consumer's block
FORMS = {
    "with-value": 'with: { v: "${{ tasks.p.output }}" }\n    exec: { command: ["echo", "got ${{ with.v }}"] }',
    "with-status": 'with: { s: "${{ tasks.p.status }}" }\n    exec: { command: ["echo", "p was ${{ with.s }}"] }',
    "with-error": 'with: { e: "${{ tasks.p.error }}" }\n    exec: { command: ["echo", "seen"] }',
    "after-success": 'after: { p: success }\n    exec: { command: ["echo", "ran"] }',
    "after-failure": 'after: { p: failure }\n    exec: { command: ["echo", "ran"] }',
    "after-skipped": 'after: { p: skipped }\n    exec: { command: ["echo", "ran"] }',
    "after-terminal": 'after: { p: terminal }\n    exec: { command: ["echo", "ran"] }',
    "when-true": 'when: true\n    exec: { command: ["echo", "ran"] }',
    "when-false": 'when: false\n    exec: { command: ["echo", "ran"] }',
    "no-edge": 'exec: { command: ["echo", "ran"] }',
}

PASS = {
    "with-value": {"success", "skipped"},
    "with-status": {"success", "failure", "skipped", "cancelled"},
    "with-error": {"failure", "skipped"},
    "after-success": {"success"},
    "after-failure": {"failure"},
    "after-skipped": {"skipped"},
    "after-terminal": {"success", "failure", "skipped", "cancelled"},
}

# Cells the checker refuses as statically dead (NIKA-DAG-006): the runtime never sees them.
DEAD = {("success", "after-skipped"), ("failure", "after-skipped"), ("cancelled", "after-skipped")}
DEAD |= {("skipped", "after-success"), ("skipped", "after-failure")}


def workflow(producer: str, form: str) -> str:
    seed_cmd, p_body = PRODUCER[producer]
    return f"""\
nika: v1
workflow:
  id: gate-cell
permits: {{exec: ["true", "false", "echo"]}}
tasks:
  seed:
    exec: {{ command: ["{seed_cmd}"] }}
  p:
    after: {{ seed: success }}
    {p_body}
  c:
    {FORMS[form]}
"""


CELLS = [(p, f) for p in PRODUCER for f in FORMS if (p, f) not in DEAD]


@pytest.mark.parametrize(("producer", "form"), CELLS)
def test_gate_cell(run, producer, form):
    result = run(workflow(producer, form))
    got = statuses(result)
    assert got["p"] == producer
    if form in PASS:
        expected = "success" if producer in PASS[form] else "cancelled"
    elif form == "when-false":
        expected = "skipped"
    else:
        expected = "success"
    assert got["c"] == expected, (producer, form, got)
    failed = producer in ("failure", "cancelled")  # cancelled p comes from a failed seed
    assert result.workflow_state == ("failure" if failed else "success")
    if expected == "cancelled":
        assert result.tasks["c"].error["code"] == "NIKA-CANCEL-001"


def test_value_edge_from_skipped_producer_reads_null(run):
    result = run(workflow("skipped", "with-value"))
    assert result.tasks["c"].output == "got null"


def test_status_observation_reads_the_state(run):
    result = run(workflow("cancelled", "with-status"))
    assert result.tasks["c"].output == "p was cancelled"


def test_cancellation_propagates_along_a_chain(run):
    result = run(
        """\
        nika: v1
        workflow: { id: chain }
        permits: {exec: ["false", "echo"]}
        tasks:
          a:
            exec: { command: ["false"] }
          b:
            with: { x: "${{ tasks.a.output }}" }
            exec: { command: ["echo", "${{ with.x }}"] }
          c:
            with: { x: "${{ tasks.b.output }}" }
            exec: { command: ["echo", "${{ with.x }}"] }
          report:
            after: { c: terminal }
            with: { s: "${{ tasks.c.status }}" }
            exec: { command: ["echo", "c ${{ with.s }}"] }
        """
    )
    assert statuses(result) == {"a": "failure", "b": "cancelled", "c": "cancelled", "report": "success"}
    assert result.tasks["report"].output == "c cancelled"


def test_a_failure_does_not_stop_unrelated_work(run):
    result = run(
        """\
        nika: v1
        workflow: { id: drain }
        permits: {exec: true}
        tasks:
          bad:
            exec: { command: ["false"] }
          slow:
            exec: { command: ["sh", "-c", "sleep 0.2; echo done"] }
        """
    )
    assert statuses(result) == {"bad": "failure", "slow": "success"}
    assert result.tasks["slow"].output == "done"
