"""A run SIGKILLed at any point (hypothesis over the kill point, counted in journal frames): the
journal prefix verifies as truncated, never forged; `--resume` completes the run; an effect whose
task had completed before the kill never runs again, and one that was cut off runs at most once more."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from durable_helpers import kinds, run
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from runtime.journal.write import verify

pytestmark = pytest.mark.xdist_group("resume-kill")  # one worker records the full journal (module fixture)

ROOT = Path(__file__).resolve().parents[3]
CHAIN = """\
nika: v1
workflow: { id: chain }
permits: { exec: ["sh"] }
tasks:
  t1:
    exec: { command: ["sh", "-c", "echo t1 >> ran.log; sleep 0.03; echo one"] }
  t2:
    with: { p: "${{ tasks.t1.output }}" }
    exec: { command: ["sh", "-c", "echo t2 >> ran.log; sleep 0.03; echo $0-two", "${{ with.p }}"] }
  t3:
    with: { p: "${{ tasks.t2.output }}" }
    exec: { command: ["sh", "-c", "echo t3 >> ran.log; sleep 0.03; echo $0-three", "${{ with.p }}"] }
outputs:
  last: "${{ tasks.t3.output }}"
"""


def _kill_after(workdir: Path, frames: int) -> Path | None:
    """Start `nika run`, SIGKILL it once its journal holds ``frames`` lines; the journal it left."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    cmd = [sys.executable, "-m", "nika", "run", "wf.nika.yaml", "--trace-dir", "traces", "--no-gc"]
    proc = subprocess.Popen(cmd, cwd=workdir, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 20
    try:
        while proc.poll() is None and time.monotonic() < deadline:
            found = list((workdir / "traces").glob("*.ndjson"))
            if found and found[0].read_bytes().count(b"\n") >= frames:
                proc.send_signal(signal.SIGKILL)
                break
            time.sleep(0.002)
    finally:
        proc.wait(timeout=20)
    found = list((workdir / "traces").glob("*.ndjson"))
    return found[0] if found else None


def test_a_sigkilled_run_resumes_from_its_journal_prefix(tmp_path, monkeypatch):
    """One real SIGKILL of a real `nika run` process, mid-run (after t1 settled, while t2 runs)."""
    (tmp_path / "wf.nika.yaml").write_text(CHAIN)
    trace = _kill_after(tmp_path, 7)
    assert trace is not None
    data = trace.read_bytes()
    assert verify(data)["verdict"] == "finding"  # a whole-frame prefix: truncated, never forged
    done_before = {f["task"] for f in kinds(trace, "task_completed")}
    monkeypatch.chdir(tmp_path)
    code, rep, _ = run(tmp_path / "wf.nika.yaml", resume=str(trace))
    assert code == 0 and rep["outputs"] == {"last": "one-two-three"}
    log = (tmp_path / "ran.log").read_text().split()
    for t in ("t1", "t2", "t3"):  # a completed effect never again; a cut-off one at most once more
        assert log.count(t) == 1 if t in done_before else 1 <= log.count(t) <= 2, (t, log)
    assert {t for t, r in rep["tasks"].items() if r.get("cache_hit")} == done_before


@pytest.fixture(scope="module")
def full_journal(tmp_path_factory: pytest.TempPathFactory) -> bytes:
    work = tmp_path_factory.mktemp("full")
    (work / "wf.nika.yaml").write_text(CHAIN.replace("sleep 0.03; ", ""))
    cwd = Path.cwd()
    os.chdir(work)
    try:
        code, rep, _ = run(work / "wf.nika.yaml")
    finally:
        os.chdir(cwd)
    assert code == 0
    return Path(rep["trace"]).read_bytes()


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(cut=st.integers(min_value=1, max_value=10_000), torn=st.integers(min_value=0, max_value=60))
def test_any_kill_point_leaves_a_prefix_that_verifies_and_resumes(tmp_path_factory, full_journal, cut, torn):
    """What a kill can leave (whole frames, then perhaps the start of the next): every such prefix."""
    lines = full_journal.splitlines(keepends=True)
    k = 1 + cut % (len(lines) - 1)
    prefix = b"".join(lines[:k])
    assert verify(prefix)["verdict"] == "finding"
    work = tmp_path_factory.mktemp("cut")
    (work / "wf.nika.yaml").write_text(CHAIN.replace("sleep 0.03; ", ""))
    trace = work / "killed.ndjson"
    trace.write_bytes(prefix + lines[k][: torn % len(lines[k])])
    done_before = {f["task"] for f in kinds(work / "killed.ndjson", "task_completed")} if not torn else None
    cwd = Path.cwd()
    os.chdir(work)
    try:
        code, rep, _ = run(work / "wf.nika.yaml", resume=str(trace))
    finally:
        os.chdir(cwd)
    assert code == 0 and rep["outputs"] == {"last": "one-two-three"}
    hits = {t for t, r in rep["tasks"].items() if r.get("cache_hit")}
    if done_before is not None:
        assert hits == done_before
    log = (work / "ran.log").read_text().split() if (work / "ran.log").exists() else []
    assert sorted(log) == sorted({"t1", "t2", "t3"} - hits)  # each remaining effect exactly once
