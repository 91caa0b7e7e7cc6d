"""Nothing a run is handed can leave it waiting.

* every file the engine opens goes through the one bounded reader: a child workflow, a decision
  bundle or a mock-reply file that is a FIFO is refused at once (a plain `open()` waited
  forever, and SIGTERM could not stop it);
* values are admitted where they enter (`--var`, files, tool and model replies): a lone
  surrogate, an undecodable byte or a value nested too deep is a one-line error or a typed task
  failure, never a task that dies unsettled;
* whatever fails inside a task settles the task and the run.
"""

from __future__ import annotations

import os
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from checker.core.reader import FileReadError, read_file

ROOT = Path(__file__).resolve().parents[2]


def _nika(args: list[str], cwd: Path, **kw) -> subprocess.Popen[bytes]:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.Popen(
        [sys.executable, "-m", "nika", *args], cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, **kw
    )


def _finish(proc: subprocess.Popen[bytes]) -> tuple[int, str, str]:
    try:
        out, err = proc.communicate(timeout=120)  # a generous bound on a loaded machine; a hang fails
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.communicate()
        pytest.fail("the process did not finish")
    return proc.returncode, out.decode(errors="replace"), err.decode(errors="replace")


def test_the_reader_refuses_a_fifo_and_a_device(tmp_path: Path) -> None:
    fifo = tmp_path / "child.nika.yaml"
    os.mkfifo(fifo)
    with pytest.raises(FileReadError, match="named pipe"):
        read_file(str(fifo), 1024)
    with pytest.raises(FileReadError, match="device"):
        read_file("/dev/zero", 1024, pipes=True)


def test_a_pipe_asked_for_by_name_is_read_under_a_deadline(tmp_path: Path) -> None:
    r, w = os.pipe()
    os.write(w, b"secret-value\n")
    os.close(w)
    try:
        assert read_file(f"/dev/fd/{r}", 1024, pipes=True) == b"secret-value\n"
    finally:
        os.close(r)
    r, w = os.pipe()  # a writer that never writes: the deadline ends the read
    try:
        with pytest.raises(FileReadError, match="longer than"):
            read_file(f"/dev/fd/{r}", 1024, pipes=True, deadline_s=0.2)
    finally:
        os.close(r)
        os.close(w)


def test_a_child_workflow_that_is_a_fifo_fails_the_task_at_once(run, tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "child.nika.yaml")
    result = run(
        """\
        nika: v1
        workflow: { id: parent }
        permits: {}
        tasks:
          call:
            invoke: { workflow: ./child.nika.yaml }
        """
    )
    call = result.tasks["call"]
    assert call.status == "failure" and call.error is not None and "named pipe" in call.error["message"]


_LOG = """\
nika: v1
workflow: { id: edge }
inputs:
  s: { type: string }
tasks:
  log:
    invoke: { tool: "nika:log", args: { message: "${{ inputs.s }}" } }
"""


@pytest.mark.parametrize("raw", [b'"\\udfff"', b"\xfe\xfe", b'["\\ud83d"]'])
def test_an_inadmissible_var_is_a_one_line_error(tmp_path: Path, raw: bytes) -> None:
    (tmp_path / "wf.nika.yaml").write_text(_LOG)
    proc = _nika(["run", "wf.nika.yaml", "--var", os.fsdecode(b"s=" + raw)], tmp_path)
    code, _out, err = _finish(proc)
    assert code != 0 and "--var" in err and "Traceback" not in err
    assert len(err.strip().splitlines()) == 1


def test_admission_refuses_each_class_on_plain_data() -> None:
    from runtime.engine.inputs import value_problem

    assert value_problem({"a": ["ok", 1, None]}) is None
    assert "surrogate" in (value_problem({"k": "x\udc80"}) or "")
    assert "surrogate" in (value_problem({"\ud800": 1}) or "")
    deep: object = "leaf"
    for _ in range(200):
        deep = [deep]
    assert "deeper" in (value_problem(deep) or "")


def test_a_failure_before_the_verb_still_settles_the_task_and_the_run(monkeypatch, tmp_path: Path) -> None:
    """Whatever raises inside a task (here: the step that hashes its inputs), the task settles
    `failure` and the run ends instead of waiting for it."""
    from rt_helpers import run_yaml

    import runtime.engine.run as run_module

    def boom(*_a, **_k):
        raise UnicodeEncodeError("utf-8", "\ud800", 0, 1, "surrogates not allowed")

    monkeypatch.setattr(run_module, "hash_task", boom)
    got: list[object] = []
    worker = threading.Thread(target=lambda: got.append(run_yaml(_LOG, tmp_path, {"s": "fine"})), daemon=True)
    worker.start()
    worker.join(120)  # a generous bound on a loaded machine; before the fix the run waited forever
    assert not worker.is_alive() and got, "the run never ended"
    result = got[0]
    assert result.workflow_state == "failure" and result.tasks["log"].status == "failure"  # type: ignore[attr-defined]
