"""One redactor for everything that leaves the process.

Spec 01 §secrets: the engine masks resolved secret values in logs, traces and journal events;
§egress: sanctioning an egress clears the send, not the capture — the output stays tainted and
masked. `nika run --output-format json` (a CI artifact) is such an exit.
"""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest

from nika.commands.run import run_command
from runtime.guard.redact import MASK, Redactor

SECRET = "sk-test-0123456789abcdef"


def _run_json(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, fmt: str) -> tuple[str, str, str]:
    monkeypatch.setenv("NIKA_TEST_API_KEY", SECRET)
    monkeypatch.chdir(tmp_path)
    wf = tmp_path / "leak.nika.yaml"
    wf.write_text(
        """\
nika: v1
workflow: { id: leak }
permits: { exec: ["echo"] }
secrets:
  api:
    source: env
    key: NIKA_TEST_API_KEY
    egress: [{ to: "exec" }]
tasks:
  show:
    exec: { command: ["echo", "key=${{ secrets.api }}"] }
"""
    )
    out, err = io.StringIO(), io.StringIO()
    code = run_command(str(wf), output_format=fmt, trace_dir=str(tmp_path / "traces"), out=out, err=err)
    journal = "".join(p.read_text() for p in (tmp_path / "traces").rglob("*") if p.is_file())
    assert code == 0, (out.getvalue(), err.getvalue())
    return out.getvalue(), err.getvalue(), journal


@pytest.mark.parametrize("fmt", ["json", "text"])
def test_run_report_masks_a_secret_in_task_outputs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, fmt: str) -> None:
    """The JSON report (tasks.*.output, events, errors), the text view and the journal never carry the secret."""
    out, err, journal = _run_json(tmp_path, monkeypatch, fmt)
    for where in (out, err, journal):
        assert SECRET not in where
    if fmt == "json":
        report = json.loads(out)
        assert report["tasks"]["show"]["output"] == f"key={MASK}"


def test_short_secret_is_masked_only_as_a_whole_value() -> None:
    """A one-character secret must not shred every string (whole values only); long ones mask inside strings."""
    r = Redactor({"a", SECRET})
    assert r({"x": "a", "y": "banana", "z": f"k={SECRET}"}) == {"x": MASK, "y": "banana", "z": f"k={MASK}"}


def test_json_escaped_secret_is_masked() -> None:
    """A secret re-emitted JSON-escaped inside a larger string is still masked (01 §secrets)."""
    secret = 'pa"ss\\word-1234'
    r = Redactor({secret})
    assert secret not in r(json.dumps({"k": secret}))
    assert json.dumps(secret)[1:-1] not in r(json.dumps({"k": secret}))
