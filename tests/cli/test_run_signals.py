"""Exit 3 from the first instant a signal can arrive (issue 38, item 6): a SIGINT or SIGTERM that
lands before the run began (as the command starts, while the file compiles) ends `nika run` with
exit 3 and one line, no traceback, no death by signal, nothing run; one that lands during the run
cancels it (exit 3, a whole journal ending `workflow_cancelled`). The signal is sent by the process
itself at a chosen point (an event, never a sleep)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals")

WF = """\
nika: v1
workflow: { id: sig }
permits: { exec: ["sh"] }
tasks:
  a:
    exec: { command: ["sh", "-c", "echo a >> ran.log; echo a"] }
  b:
    with: { x: "${{ tasks.a.output }}" }
    exec: { command: ["sh", "-c", "echo b >> ran.log; echo b"] }
"""

AT_INSTALL = """
import os, signal, sys
SIG = getattr(signal, sys.argv.pop(1))
from nika.commands import run_stop
installed = run_stop.install
def install():
    stop = installed()
    os.kill(os.getpid(), SIG)  # the very first instant after the command starts
    return stop
run_stop.install = install
sys.argv = ["nika", *sys.argv[1:]]
from nika.cli import main
sys.exit(main())
"""

AT_COMPILE = """
import os, signal, sys
SIG = getattr(signal, sys.argv.pop(1))
import runtime.engine.inputs as admission
compiled = admission.compile_file
def compile_file(*a, **k):
    got = compiled(*a, **k)
    os.kill(os.getpid(), SIG)  # while the command loads and compiles
    return got
admission.compile_file = compile_file
sys.argv = ["nika", *sys.argv[1:]]
from nika.cli import main
sys.exit(main())
"""


def _run(tmp_path: Path, code: str, sig: str, *extra: str) -> subprocess.CompletedProcess[str]:
    (tmp_path / "wf.nika.yaml").write_text(WF)
    return subprocess.run(
        [sys.executable, "-c", code, sig, "run", "wf.nika.yaml", "--trace-dir", "traces", "--no-gc", *extra],
        cwd=tmp_path,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        capture_output=True,
        text=True,
        timeout=120,
    )


@pytest.mark.parametrize("sig", ["SIGINT", "SIGTERM"])
def test_a_signal_as_the_command_starts_exits_3_with_one_line(tmp_path: Path, sig: str) -> None:
    """Before: a SIGINT here was a KeyboardInterrupt traceback, a SIGTERM a death by signal (-15)."""
    proc = _run(tmp_path, AT_INSTALL, sig)
    assert proc.returncode == 3, (proc.returncode, proc.stderr[-1500:])
    assert proc.stderr == f"nika run: cancelled by {sig} before the run started: nothing ran\n"
    assert not (tmp_path / "ran.log").exists() and not (tmp_path / "traces").exists()


def test_a_signal_while_the_file_compiles_exits_3_in_json_too(tmp_path: Path) -> None:
    proc = _run(tmp_path, AT_COMPILE, "SIGTERM", "--output-format", "json")
    assert proc.returncode == 3, proc.stderr[-1500:]
    assert "Traceback" not in proc.stderr and json.loads(proc.stdout)["workflow_state"] == "cancelled"
    assert not (tmp_path / "ran.log").exists()


@pytest.mark.parametrize(("sig", "frame"), [("INT", 5), ("TERM", 5), ("INT", 6)])
def test_a_signal_during_the_run_cancels_it_with_a_whole_journal(tmp_path: Path, sig: str, frame: int) -> None:
    """Frame 6 is `a`'s completion: `b` is admitted in the same step and cancelled before its first
    line ran. Before, it never settled and the run waited for it forever."""
    from runtime.journal.scan import scan

    (tmp_path / "wf.nika.yaml").write_text(WF)
    env = {**os.environ, "PYTHONPATH": str(ROOT), "NIKA_FAULT": json.dumps({"frame": frame, "do": sig})}
    proc = subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "fault_engine.py"), "run", "wf.nika.yaml", "--trace-dir", "traces"],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 3, proc.stderr[-1500:]
    for noise in ("Traceback", "Exception ignored", "Event loop is closed"):
        assert noise not in proc.stderr, proc.stderr[-1500:]
    (journal,) = (tmp_path / "traces").glob("*.ndjson")
    s = scan(journal.read_bytes())
    assert s.damage == "whole" and s.terminal == "workflow_cancelled"
