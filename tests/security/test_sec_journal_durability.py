"""The journal is a flight recorder: a SIGKILLed engine never loses the record of an effect it
was about to perform (issue 18 durability; NEP-0007 witnesses; runtime/journal/write.py's policy).

The workflow's one task kills the engine itself (`kill -9 $PPID`) — the harshest crash there is.
The journal must still hold the prologue, the task's start and the `permit_checked` allow frame
that preceded the process, each line intact and chained.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from runtime.journal.write import verify

ROOT = Path(__file__).resolve().parents[2]

WF = """nika: v1
workflow: { id: crash }
permits: { exec: true }
tasks:
  die:
    exec: { shell: "kill -9 $PPID; sleep 5" }
"""


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals")
def test_a_killed_engine_keeps_the_witness_of_the_effect(tmp_path: Path) -> None:
    (tmp_path / "wf.nika.yaml").write_text(WF)
    traces = tmp_path / "traces"
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    proc = subprocess.run(
        [sys.executable, "-m", "nika", "run", "wf.nika.yaml", "--trace-dir", str(traces)],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        timeout=60,
    )
    assert proc.returncode == -9, (proc.returncode, proc.stderr[-500:])
    [journal] = list(traces.glob("*.ndjson"))
    data = journal.read_bytes()
    kinds = [json.loads(line)["kind"] for line in data.splitlines()]
    assert kinds[0] == "workflow_started"
    assert "task_started" in kinds and "permit_checked" in kinds, kinds
    verdict = verify(data)
    assert verdict["verdict"] != "forged", verdict  # every line whole and chained: only the end is missing
