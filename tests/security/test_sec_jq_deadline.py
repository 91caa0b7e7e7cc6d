"""A jq program that never ends is stopped with a typed failure, never a hang (spec 02/03:
`timeout:` is a hard bound; 05: Ctrl-C stops everything; issue 18: pure work off the event loop).

libjq holds the interpreter lock while it evaluates, so an in-process hang would take the test
runner with it: each run here is a real `nika run` process with a wall-clock bound, and the
engine's own jq time limit is lowered for the run (`runtime.guard.limits.JQ_TIME_LIMIT_S`).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
LAUNCH = (
    "import sys; import runtime.guard.limits as L; L.JQ_TIME_LIMIT_S = float(sys.argv.pop(1)); "
    "from nika.cli import main; sys.exit(main())"
)


def nika_run(tmp_path: Path, text: str, limit_s: float = 10.0) -> dict:
    (tmp_path / "wf.nika.yaml").write_text(text)
    argv = [sys.executable, "-c", LAUNCH, str(limit_s), "run", "wf.nika.yaml", "--output-format", "json"]
    proc = subprocess.run(  # a generous deadline: a hang fails the test with TimeoutExpired
        [*argv, "--trace-dir", "traces"],
        cwd=tmp_path,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        capture_output=True,
        timeout=60,
    )
    return json.loads(proc.stdout)


def test_a_jq_that_never_ends_is_stopped(tmp_path: Path) -> None:
    """One run, three ways to spin: `last(range(1e12))` under `timeout: 500ms` ends as
    NIKA-TIMEOUT-001; with no `timeout:` the engine's jq limit stops `nika:jq` (`[repeat(1)]`) and
    an `output:` binding; a sibling task runs meanwhile."""
    wf = """nika: v1
workflow: { id: spin }
permits: { tools: ["nika:jq"] }
tasks:
  spin:
    timeout: 500ms
    invoke: { tool: "nika:jq", args: { expression: "last(range(1e12))" } }
  forever:
    invoke: { tool: "nika:jq", args: { expression: "[repeat(1)] | length" } }
  bind:
    invoke: { tool: "nika:jq", args: { expression: "0" } }
    output:
      n: "last(range(1e12))"
  sibling:
    invoke: { tool: "nika:jq", args: { expression: "1 + 1" } }
"""
    report = nika_run(tmp_path, wf, limit_s=0.7)
    tasks = report["tasks"]
    assert tasks["spin"]["error"]["code"] == "NIKA-TIMEOUT-001", tasks["spin"]
    forever, bind = tasks["forever"]["error"], tasks["bind"]["error"]
    assert forever["code"] == "NIKA-BUILTIN-JQ-001" and "longer than" in forever["message"], forever
    assert bind["code"] == "NIKA-VAR-004" and "longer than" in bind["message"], bind
    assert tasks["sibling"]["output"] == 2
