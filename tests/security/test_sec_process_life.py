"""No process started by a run outlives it (spec 02/03: timeouts are hard kills; 05: Ctrl-C is
a blanket kill; issue 18: exec children are tied to the engine's life).

Each test starts `nika run` as a real process whose task leaves a background grandchild
(`sleep 100 &`) in its group, then ends the run a different way and checks, by pid, that neither
the shell nor the grandchild survives. A zombie (exited, not yet reaped) counts as gone.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
pytestmark = pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="needs /proc (Linux)")

WF = """nika: v1
workflow: {{ id: life }}
permits: {{ exec: true }}
tasks:
  long:
    {extra}exec: {{ shell: "sleep 100 & echo $! > grandchild.pid; echo $$ > child.pid; sleep 100" }}
"""


def running(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return False
    return state not in ("Z", "X")


def start(tmp_path: Path, extra: str = "") -> subprocess.Popen[bytes]:
    (tmp_path / "wf.nika.yaml").write_text(WF.format(extra=extra))
    return subprocess.Popen(
        [sys.executable, "-m", "nika", "run", "wf.nika.yaml", "--trace-dir", "traces"],
        cwd=tmp_path,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )


def pids_of(tmp_path: Path) -> list[int]:
    deadline = time.monotonic() + 30
    files = [tmp_path / "child.pid", tmp_path / "grandchild.pid"]
    while time.monotonic() < deadline:
        if all(f.exists() and f.read_text().strip() for f in files):
            return [int(f.read_text()) for f in files]
        time.sleep(0.02)
    raise AssertionError("the task never started")


def assert_all_gone(pids: list[int]) -> None:
    deadline = time.monotonic() + 30  # generous: the poll ends as soon as they are gone
    while any(running(p) for p in pids) and time.monotonic() < deadline:
        time.sleep(0.02)
    survivors = [p for p in pids if running(p)]
    for p in survivors:  # never leave them behind, even when the test fails
        os.kill(p, signal.SIGKILL)
    assert not survivors, f"processes outlived the run: {survivors}"


@pytest.mark.parametrize("how", [signal.SIGKILL])  # SIGINT/SIGTERM: the cancellation path, tested in-process
def test_the_group_dies_with_the_engine(tmp_path: Path, how: signal.Signals) -> None:
    engine = start(tmp_path)
    pids = pids_of(tmp_path)
    engine.send_signal(how)
    engine.wait(30)
    assert_all_gone(pids)


def test_the_group_dies_on_timeout(tmp_path: Path) -> None:
    engine = start(tmp_path, "timeout: 300ms\n    ")
    pids = pids_of(tmp_path)
    assert engine.wait(30) == 1  # the task failed on its timeout
    assert_all_gone(pids)


def cpu_ticks(pid: int) -> int:
    """User and system clock ticks ``pid`` has spent (0 when it is gone)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except (OSError, IndexError):
        return 0
    return int(fields[11]) + int(fields[12])  # utime, stime (fields 14 and 15 of proc(5))


def children_of(pid: int) -> set[int]:
    out: set[int] = set()
    for task in Path(f"/proc/{pid}/task").iterdir():
        with contextlib.suppress(OSError):
            out |= {int(c) for c in (task / "children").read_text().split()}
    return out


def test_a_jq_worker_mid_evaluation_dies_with_the_engine(tmp_path: Path) -> None:
    """A worker spinning on `last(range(1e12))` would never read the end of its input: the warden stops it."""
    (tmp_path / "wf.nika.yaml").write_text(
        'nika: v1\nworkflow: { id: spin }\npermits: { tools: ["nika:jq"] }\ntasks:\n'
        '  spin:\n    invoke: { tool: "nika:jq", args: { expression: "last(range(1e12))" } }\n'
    )
    engine = subprocess.Popen(
        [sys.executable, "-m", "nika", "run", "wf.nika.yaml", "--trace-dir", "traces"],
        cwd=tmp_path,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    deadline = time.monotonic() + 30
    while len(children_of(engine.pid)) < 2 and time.monotonic() < deadline:  # the warden and the worker
        time.sleep(0.02)
    helpers = children_of(engine.pid)
    assert len(helpers) >= 2, helpers
    deadline = time.monotonic() + 30  # until a helper has spent CPU: the worker is evaluating now
    while not any(cpu_ticks(p) >= 5 for p in helpers) and time.monotonic() < deadline:
        time.sleep(0.02)
    engine.kill()
    engine.wait(30)
    assert_all_gone(sorted(helpers))


ENGINE_AFTER_WARDEN_DIES = """
import asyncio, os, signal, sys
from runtime.tools import process_warden as warden
from runtime.tools.process_runner import ExecCall, run_process

async def main():
    env = {"PATH": os.environ["PATH"]}
    first = await warden.spawn("sh", "-c", "sleep 100 & echo $! > first.pid; wait", env=env)
    old = warden._proc
    old.kill(); old.wait()  # the warden dies (killed, OOM)
    got = await run_process(ExecCall(argv=["echo", "still works"], shell=None, cwd=".", env=env))
    assert got == "still works", got
    assert warden._proc is not old and warden._proc.poll() is None  # a new one stands by
    second = await warden.spawn("sh", "-c", "sleep 100 & echo $! > second.pid; wait", env=env)
    while not (os.path.exists("first.pid") and os.path.exists("second.pid")):
        await asyncio.sleep(0.01)
    print(first.pid, second.pid, flush=True)
    os._exit(0)  # the engine dies without a word: the new warden must kill both groups

asyncio.run(main())
"""


def test_a_killed_warden_never_poisons_exec_and_its_successor_guards_every_group(tmp_path: Path) -> None:
    """Before: once the warden died, every later exec in the process died of SIGPIPE (status -13)
    before its program started. Now exec keeps working, a new warden starts, and it guards the
    groups started under the old one too."""
    proc = subprocess.run(
        [sys.executable, "-c", ENGINE_AFTER_WARDEN_DIES],
        cwd=tmp_path,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 0, proc.stderr
    shells = [int(p) for p in proc.stdout.split()]
    grandchildren = [int((tmp_path / f).read_text()) for f in ("first.pid", "second.pid")]
    assert_all_gone(shells + grandchildren)
