"""A lost Dask scheduler (issue 38, item 5): the effects in flight fail with the typed transient
error (`NIKA-IMPL-003`, which `retry:` may retry and `--resume` re-runs), later ones at once, never
`NIKA-IMPL-001 … NoneType`, and the terminal shows no traceback; a resume
finishes the run (here on the local executor: the journal is the same), each effect cut off in
flight at most once more.

The scheduler is a real `dask scheduler` process, killed by the engine's fault harness right after
a given journal frame (scripts/fault_engine.py: an event, never a sleep)."""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from runtime.engine.dask_wire import lost_error

pytestmark = pytest.mark.xdist_group("dask")
ROOT = Path(__file__).resolve().parents[2]
ENGINE = ROOT / "scripts" / "fault_engine.py"
WF = """\
nika: v1
workflow: { id: slow }
permits: { exec: ["sh"] }
tasks:
  a:
    exec: { command: ["sh", "-c", "echo a >> side.log; test -f fast || sleep 2; echo a"] }
  b:
    exec: { command: ["sh", "-c", "echo b >> side.log; test -f fast || sleep 2; echo b"] }
  c:
    with: { p: "${{ tasks.a.output }}" }
    exec: { command: ["sh", "-c", "echo c >> side.log; echo c-$0", "${{ with.p }}"] }
outputs:
  c: "${{ tasks.c.output }}"
"""


def test_a_lost_future_without_an_exception_is_the_typed_transient_error() -> None:
    """Before: `NIKA-IMPL-001 … NoneType: NoneType`, which `retry:` treats as permanent."""
    err = lost_error("error", None)
    assert err["code"] == "NIKA-IMPL-003" and err["transient"] is True and "scheduler was lost" in err["message"]
    for exc in (OSError("gone"), TimeoutError(), ConnectionRefusedError()):
        assert lost_error("error", exc)["transient"] is True
    assert lost_error("error", ValueError("a bug"))["code"] == "NIKA-IMPL-001"
    assert lost_error("error", ValueError("x"), scheduler_lost=True)["code"] == "NIKA-IMPL-003"


def _port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _cluster(tmp_path: Path, port: int) -> list[subprocess.Popen[bytes]]:
    dask = shutil.which("dask", path=os.path.dirname(sys.executable)) or "dask"
    logs = open(tmp_path / f"cluster-{port}.log", "wb")  # noqa: SIM115 - closed with the processes
    sched = subprocess.Popen(
        [dask, "scheduler", "--host", "127.0.0.1", "--port", str(port), "--no-dashboard"], stdout=logs, stderr=logs
    )
    worker = subprocess.Popen(
        [dask, "worker", f"tcp://127.0.0.1:{port}", "--nthreads", "2", "--no-dashboard", "--no-nanny"],
        stdout=logs,
        stderr=logs,
    )
    return [sched, worker]


def _stop(procs: list[subprocess.Popen[bytes]]) -> None:
    for p in procs:
        if p.poll() is None:
            p.kill()
        p.wait(30)


@pytest.fixture
def clusters(tmp_path: Path) -> Iterator[list[list[subprocess.Popen[bytes]]]]:
    started: list[list[subprocess.Popen[bytes]]] = []
    yield started
    for procs in started:
        _stop(procs)


def _nika(tmp_path: Path, port: int, fault: dict, *extra: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "NIKA_FAULT": json.dumps(fault)}
    cmd = [sys.executable, str(ENGINE), "run", "wf.nika.yaml", "--executor", "dask"]
    cmd += ["--scheduler", f"tcp://127.0.0.1:{port}", "--trace-dir", "traces", "--no-gc", "--output-format", "json"]
    return subprocess.run([*cmd, *extra], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=180)


def _wait_for_worker(port: int) -> None:
    from distributed import Client

    deadline = time.monotonic() + 60
    while True:
        try:
            with Client(f"tcp://127.0.0.1:{port}", timeout=5, set_as_default=False) as c:
                c.wait_for_workers(1, timeout=max(1.0, deadline - time.monotonic()))
                return
        except (OSError, TimeoutError):
            if time.monotonic() > deadline:
                raise


def test_a_killed_scheduler_fails_in_flight_effects_typed_and_a_resume_finishes(tmp_path: Path, clusters) -> None:
    (tmp_path / "wf.nika.yaml").write_text(WF)
    port = _port()
    clusters.append(_cluster(tmp_path, port))
    _wait_for_worker(port)
    sched = clusters[-1][0]
    # frame 10: both effects sent and assigned (workflow_started, 3 scheduled, 2 × started + permit, 2 assigned)
    proc = _nika(tmp_path, port, {"frame": 10, "do": "pid", "pid": sched.pid})
    assert proc.returncode == 1, proc.stderr[-2000:]
    assert "Traceback" not in proc.stderr and "NoneType" not in proc.stderr, proc.stderr[-2000:]
    assert "the connection to the scheduler" in proc.stderr
    rep = json.loads(proc.stdout)
    for t in ("a", "b"):
        err = rep["tasks"][t]["error"]
        assert err["code"] == "NIKA-IMPL-003" and err["transient"] is True, err
    _stop(clusters[-1])
    (tmp_path / "fast").touch()
    env = {**os.environ, "PYTHONPATH": str(ROOT)}  # the journal is the executor's as much as the local one's
    cmd = [sys.executable, "-m", "nika", "run", "wf.nika.yaml", "--trace-dir", "traces", "--no-gc"]
    done = subprocess.run(
        [*cmd, "--output-format", "json", "--resume", rep["trace"]],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert json.loads(done.stdout)["outputs"] == {"c": "c-a"}
    log = (tmp_path / "side.log").read_text().split()
    assert all(1 <= log.count(t) <= 2 for t in ("a", "b")) and log.count("c") == 1  # at most once more each
