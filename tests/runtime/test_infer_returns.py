"""`returns:` on infer:/agent: is the structured-output contract at run (09 §returns per verb):
the schema it lowers to reaches the model and the reply is validated (NIKA-INFER-002)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from runtime.errors import TaskError
from runtime.verbs.infer import validate_output
from tests.runtime.rt_helpers import run_yaml, statuses

WF = """
nika: v1
workflow:
  id: r
model: mock/echo
tasks:
  x:
    infer:
      prompt: "hi"
    returns:
      object: { version: string, count: integer }
outputs:
  v: ${{ tasks.x.output }}
"""


def test_returns_shapes_the_mock_reply(tmp_path: Path) -> None:
    result = run_yaml(WF, tmp_path)
    assert result.workflow_state == "success"
    assert result.outputs == {"v": {"version": "", "count": 0}}  # the type's zero value, not the prompt


def test_a_reply_that_does_not_fit_returns_fails(tmp_path: Path) -> None:
    script = json.dumps([{"text": json.dumps({"version": 2})}])
    result = run_yaml(WF, tmp_path, model="mock/scripted", engine_env={"NIKA_MOCK_SCRIPT": script})
    assert statuses(result) == {"x": "failure"}
    assert result.tasks["x"].error["code"] == "NIKA-INFER-002"


def test_an_agent_returns_is_its_done_contract(tmp_path: Path) -> None:
    wf = """
    nika: v1
    workflow:
      id: a
    model: mock/echo
    permits:
      tools: ["nika:done"]
    tasks:
      a:
        agent:
          prompt: "go"
          tools: ["nika:done"]
        returns:
          object: { ok: bool }
    """
    result = run_yaml(wf, tmp_path)
    assert result.workflow_state == "success", result.tasks["a"].error
    assert result.tasks["a"].output == {"ok": False}


def test_a_reply_that_misses_schema_names_where_and_a_broken_schema_says_so() -> None:
    """`infer.schema`'s verdict is the runtime's one JSON Schema problem reading
    (runtime.tools.schema_validator.problem)."""
    schema = {"type": "object", "properties": {"n": {"type": "integer"}}}
    validate_output({"n": 1}, schema)
    with pytest.raises(TaskError) as miss:
        validate_output({"n": "one"}, schema)
    assert miss.value.code == "NIKA-INFER-002" and miss.value.details == {"path": ["n"]}
    assert miss.value.message == "the model's reply does not match `schema:` at n: 'one' is not of type 'integer'"
    with pytest.raises(TaskError) as top:
        validate_output([], schema)
    assert top.value.message.startswith("the model's reply does not match `schema:` at the reply: ")
    with pytest.raises(TaskError) as broken:
        validate_output(1, {"type": 5})
    assert broken.value.message.startswith("`schema:` is not a valid JSON Schema: ") and not broken.value.details
