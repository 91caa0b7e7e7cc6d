"""An agent's fs tool whose target the model picks at run time is judged at the effect.

Spec 01 §permits (enforcement, 2.): at run time any effect escaping the declared set fails the
task with NIKA-SEC-004, never fed back to the model; this is the case a static check cannot see.
The checker therefore accepts the workflow (tests/checker/test_precision.py) and the runtime
must refuse the first out-of-boundary read, before any later tool call.
"""

from __future__ import annotations

import json
from pathlib import Path

WF = """\
nika: v1
workflow: { id: dyn }
model: mock/scripted
permits:
  tools: ["nika:read"]
  fs: { read: [FS] }
tasks:
  look:
    agent:
      prompt: "Read the notes"
      tools: ["nika:read"]
"""


def _script(*paths: str) -> str:
    steps = [{"tool_calls": [{"name": "nika_read", "arguments": {"path": p}}]} for p in paths]
    return json.dumps([*steps, {"text": "done"}])


def test_out_of_boundary_read_fails_the_task_at_the_effect(run, tmp_path: Path) -> None:
    (tmp_path / "secret.txt").write_text("top secret")
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "a.md").write_text("notes")
    text = WF.replace("FS", '"./docs/**"')
    result = run(text, engine_env={"NIKA_MOCK_SCRIPT": _script("./secret.txt", "./docs/a.md")})
    rec = result.tasks["look"]
    assert rec.status == "failure"
    assert rec.error["code"] == "NIKA-SEC-004"
    assert "top secret" not in json.dumps(rec.agent, default=str)


def test_in_boundary_read_runs(run, tmp_path: Path) -> None:
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "a.md").write_text("notes")
    text = WF.replace("FS", '"./docs/**"')
    result = run(text, engine_env={"NIKA_MOCK_SCRIPT": _script("./docs/a.md")})
    assert result.tasks["look"].status == "success", result.tasks["look"].error


def test_no_fs_grant_at_all_refuses_the_first_read(run, tmp_path: Path) -> None:
    (tmp_path / "secret.txt").write_text("top secret")
    text = WF.replace("  fs: { read: [FS] }\n", "")
    result = run(text, engine_env={"NIKA_MOCK_SCRIPT": _script("./secret.txt")})
    rec = result.tasks["look"]
    assert rec.status == "failure"
    assert rec.error["code"] == "NIKA-SEC-004"
