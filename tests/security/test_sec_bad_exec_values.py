"""Bad values at the exec boundary end as typed task failures, never NIKA-IMPL-001 or lossy text.

Spec 09 §decode: `text` is strict UTF-8 — invalid UTF-8 settles the task `failure`, `bytes` is
the author's way to octets; a `json`/`jsonl` stream that does not decode settles `failure` in the
NIKA-EXEC lane (a stream nested too deeply included). A NUL byte cannot be passed to a process:
an argument, environment value or cwd that holds one is a typed spawn failure.
"""

from __future__ import annotations

import pytest


def _exec_wf(command: str, decode: str = "text", extra: str = "") -> str:
    return f"""\
    nika: v1
    workflow: {{ id: bad }}
    permits: {{ exec: ["printf", "echo"] }}
    inputs:
      v: {{ type: string, default: "" }}
    tasks:
      t:
        exec: {{ command: {command}, decode: {decode}{extra} }}
    """


def test_invalid_utf8_is_a_failure_not_replacement_characters(run) -> None:
    result = run(_exec_wf('["printf", "ok\\\\377\\\\376"]'))
    rec = result.tasks["t"]
    assert rec.status == "failure" and rec.error["code"] == "NIKA-EXEC-001", rec.error
    assert "UTF-8" in rec.error["message"]


def test_invalid_utf8_passes_as_bytes_when_declared(run) -> None:
    result = run(_exec_wf('["printf", "ok\\\\377"]', decode="bytes"))
    assert result.tasks["t"].status == "success", result.tasks["t"].error


def test_deeply_nested_json_is_a_decode_failure(run) -> None:
    deep = "[" * 5000 + "]" * 5000
    result = run(_exec_wf(f'["printf", "%s", "{deep}"]', decode="json"))
    rec = result.tasks["t"]
    assert rec.status == "failure" and rec.error["code"] == "NIKA-EXEC-001", rec.error


@pytest.mark.parametrize(
    "where",
    [
        '["echo", "${{ inputs.v }}"]',
        '["echo", "x"], env: { K: "${{ inputs.v }}" }',
        '["echo", "x"], cwd: "${{ inputs.v }}"',
    ],
)
def test_nul_bytes_are_a_typed_failure(run, where: str) -> None:
    result = run(_exec_wf(where), {"v": "a\x00b"})
    rec = result.tasks["t"]
    assert rec.status == "failure", rec
    assert rec.error["code"] != "NIKA-IMPL-001", rec.error
