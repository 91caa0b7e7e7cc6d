"""The Dask executor (runtime/engine/dask_executor.py, runtime/engine/dask_worker.py) on a real
LocalCluster: two single-threaded worker processes, started once per test process and shared
with test_dask_conformance.py (``dask_session`` in conftest.py).

Same workflow, same records and outputs on the local and the Dask executor; a worker refuses a
path outside the grant with the local executor's code; a worker killed mid-effect is a transient
error that `retry:` retries (and nothing runs twice without it); timeouts and cancellation stop
the process on the worker; a result over the cap is refused naming it; an unreachable scheduler
is a one-line error in seconds.
"""

from __future__ import annotations

import asyncio
import dataclasses
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from rt_helpers import DASK_SECRET_VAR, run_yaml

from runtime.engine.dask_executor import DaskSession, DaskUnavailable
from runtime.engine.records import RunResult

pytestmark = pytest.mark.xdist_group("dask")  # one cluster per test process, not one per test

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def session(dask_session: DaskSession) -> DaskSession:
    """The test process's shared cluster (conftest.py), both of its workers up."""
    return dask_session


def _env_names() -> list[str]:
    return sorted(os.environ)


def test_local_workers_do_not_keep_the_drivers_environment(session: DaskSession) -> None:
    seen = session.client.run(_env_names)
    assert len(seen) == 2
    for names in seen.values():
        assert DASK_SECRET_VAR not in names
        assert "PATH" in names


def _dask(session: DaskSession, tmp_path: Path, text: str, **opts: Any) -> RunResult:
    return run_yaml(text, tmp_path, executor=session.executor, **opts)


def _records(result: RunResult) -> dict[str, Any]:
    return {
        tid: (r.status, r.output, r.bindings, r.attempts, r.error and (r.error["code"], r.error["message"]))
        for tid, r in result.tasks.items()
    }


def _workers(result: RunResult) -> set[str]:
    return {e["worker"] for e in result.events if e["type"] == "verb.invoked" and e.get("phase") == "dask_effect"}


MIXED = """
nika: v1
workflow: { id: mixed }
permits:
  exec: ["echo"]
  fs: { read: ["./**"], write: ["./out/**"] }
  tools: ["nika:read", "nika:write", "nika:jq"]
tasks:
  seed:
    invoke: { tool: "nika:write", args: { path: "./out/seed.txt", content: "alpha beta", create_dirs: true } }
  read:
    after: { seed: success }
    invoke: { tool: "nika:read", args: { path: "./out/seed.txt" } }
  shout:
    exec: { command: ["echo", "loud"] }
  each:
    for_each: ["a", "b", "c", "d"]
    exec: { command: ["echo", "${{ item }}-${{ index }}"] }
  talk:
    with: { text: "${{ tasks.read.output }}" }
    infer: { model: mock/echo, prompt: "say ${{ with.text }}" }
  pure:
    invoke: { tool: "nika:jq", args: { expression: ".a", input: { a: 1 } } }
outputs:
  words: { value: "${{ tasks.each.output }}" }
  said: { value: "${{ tasks.talk.output }}" }
"""


def test_a_mixed_workflow_runs_identically_on_local_and_dask(session: DaskSession, tmp_path: Path) -> None:
    (tmp_path / "l").mkdir()
    (tmp_path / "d").mkdir()
    local = run_yaml(MIXED, tmp_path / "l")
    dask = _dask(session, tmp_path / "d", MIXED)
    assert local.workflow_state == dask.workflow_state == "success"
    assert _records(dask) == _records(local)
    assert dask.outputs == local.outputs == {"words": ["a-0", "b-1", "c-2", "d-3"], "said": "say alpha beta"}
    assert (tmp_path / "d" / "out" / "seed.txt").read_text() == "alpha beta"
    assert _workers(dask) and all(w.startswith("tcp://") for w in _workers(dask))
    kinds = {e.get("effect") for e in dask.events if e.get("phase") == "dask_effect"}
    assert kinds == {"exec", "tool", "model"}  # the pure `nika:jq` stayed in the driver
    # the witness the worker decided is in the driver's journal
    assert any(e["type"] == "permit.checked" and e.get("gate") == "./out/seed.txt" for e in dask.events)
    assert not _workers(local)
    # each effect is announced on its worker before its result (the live stream sees it at once)
    placed = [(e["phase"], e["task"], e["worker"]) for e in dask.events if e.get("phase", "").startswith("dask_")]
    for i, (phase, task, worker) in enumerate(placed):
        if phase == "dask_effect":
            assert ("dask_assigned", task, worker) in placed[:i], (task, placed)
    assert sum(p == "dask_assigned" for p, _, _ in placed) == sum(p == "dask_effect" for p, _, _ in placed)


OUTSIDE = """
nika: v1
workflow: { id: outside }
permits: { fs: { read: ["./data/**"] }, tools: ["nika:read"] }
tasks:
  peek:
    invoke: { tool: "nika:read", args: { path: "./data/link.txt" } }
"""


def test_a_worker_refuses_a_path_outside_the_grant_with_the_local_code(session: DaskSession, tmp_path: Path) -> None:
    secret = tmp_path / "secret.txt"
    secret.write_text("nope")
    (tmp_path / "data").mkdir()
    (tmp_path / "data" / "link.txt").symlink_to(secret)  # inside by name, outside once resolved
    local = run_yaml(OUTSIDE, tmp_path)
    dask = _dask(session, tmp_path, OUTSIDE)
    for r in (local, dask):
        err = r.tasks["peek"].error
        assert r.tasks["peek"].status == "failure" and err is not None
        assert err["code"] == "NIKA-SEC-004"
        assert "outside the paths `permits.fs.read` grants" in err["message"]
    assert dask.tasks["peek"].error == local.tasks["peek"].error
    denials = [e for e in dask.events if e["type"] == "permit.checked" and e.get("decision") == "deny"]
    assert [d["gate"] for d in denials] == ["./data/link.txt"]
    assert _workers(dask)  # decided on the worker, journaled by the driver


def test_a_timeout_stops_the_process_on_the_worker(session: DaskSession, tmp_path: Path) -> None:
    pidfile = tmp_path / "pid"
    script = tmp_path / "slow.sh"
    script.write_text(f"#!/bin/sh\necho $$ > {pidfile}\nexec sleep 30\n")
    script.chmod(0o755)
    wf = """
nika: v1
workflow: { id: slow }
permits: { exec: ["./slow.sh"] }
tasks:
  slow:
    timeout: 400ms
    exec: { command: ["./slow.sh"] }
"""
    result = _dask(session, tmp_path, wf)  # the script sleeps 30 s: the timeout, not its end, finished it
    err = result.tasks["slow"].error
    assert err is not None and err["code"] == "NIKA-TIMEOUT-001" and "400ms" in err["message"]
    _gone(int(pidfile.read_text()))


def test_cancelling_the_run_cancels_the_future_and_kills_the_child(session: DaskSession, tmp_path: Path) -> None:
    from checker.engine.pipeline import compile_text
    from runtime.engine.options import Options
    from runtime.engine.run import Run
    from runtime.verbs import VERBS

    pidfile = tmp_path / "pid"
    script = tmp_path / "slow.sh"
    script.write_text(f"#!/bin/sh\necho $$ > {pidfile}\nexec sleep 30\n")
    script.chmod(0o755)
    src = 'nika: v1\nworkflow: { id: c }\npermits: { exec: ["./slow.sh"] }\n'
    src += 'tasks:\n  slow: { exec: { command: ["./slow.sh"] } }\n'
    compiled = compile_text(src, str(tmp_path / "c.nika.yaml"), str(tmp_path))

    async def go() -> RunResult:
        run = Run(compiled, {}, Options(trace_dir=None, executor=session.executor), verbs=VERBS, workdir=tmp_path)
        task = asyncio.ensure_future(run.execute())
        deadline = asyncio.get_running_loop().time() + 60  # generous: a loaded machine starts processes slowly
        while asyncio.get_running_loop().time() < deadline:  # the process runs, its worker announced first
            announced = any(e.get("phase") == "dask_assigned" for e in run.sink.events)
            if announced and pidfile.exists() and pidfile.read_text().strip():
                break
            await asyncio.sleep(0.02)
        run.cancel()
        return await task

    result = asyncio.run(go())
    assert result.workflow_state == "cancelled"
    assert result.tasks["slow"].status == "cancelled"
    assigned = [e for e in result.events if e.get("phase") == "dask_assigned"]
    assert [e["task"] for e in assigned] == ["slow"] and assigned[0]["worker"].startswith("tcp://")
    assert not any(e.get("phase") == "dask_effect" for e in result.events)  # it never came back
    _gone(int(pidfile.read_text()))


def test_a_result_over_the_cap_is_refused_naming_the_cap(session: DaskSession, tmp_path: Path) -> None:
    small = dataclasses.replace(session, cap_bytes=64)
    wf = """
nika: v1
workflow: { id: big }
permits: { exec: ["echo"] }
tasks:
  big: { exec: { command: ["echo", "%s"] } }
""" % ("x" * 500)
    result = run_yaml(wf, tmp_path, executor=small.executor)
    err = result.tasks["big"].error
    assert err is not None and err["code"] == "NIKA-IMPL-003"
    assert "64 bytes" in err["message"] and "NIKA_DASK_MAX_RESULT_BYTES" in err["message"]
    assert err["details"]["cap_bytes"] == 64


KILLER = """#!/bin/sh
# The first time, kill the Dask worker that runs this effect (the parent); later, succeed.
echo run >> {count}
if [ ! -f {marker} ]; then touch {marker}; kill -9 $PPID; sleep 5; fi
echo recovered
"""


def _killer(tmp_path: Path) -> Path:
    script = tmp_path / "killer.sh"
    script.write_text(KILLER.format(count=tmp_path / "count", marker=tmp_path / "marker"))
    script.chmod(0o755)
    return tmp_path / "count"


def test_a_killed_worker_is_a_transient_error_that_retry_retries(session: DaskSession, tmp_path: Path) -> None:
    count = _killer(tmp_path)
    wf = """
nika: v1
workflow: { id: lost }
permits: { exec: ["./killer.sh"] }
tasks:
  work:
    retry: { max_attempts: 2, backoff_ms: 10 }
    exec: { command: ["./killer.sh"] }
"""
    result = _dask(session, tmp_path, wf)
    rec = result.tasks["work"]
    assert (rec.status, rec.output, rec.attempts) == ("success", "recovered", 2)
    retrying = [e for e in result.events if e["type"] == "task.retrying"]
    assert [(e["task"], e["error_code"]) for e in retrying] == [("work", "NIKA-IMPL-003")]
    assert count.read_text().split() == ["run", "run"]
    frames = Path(result.trace or "").read_text()
    assert '"task_retrying"' in frames and "NIKA-IMPL-003" in frames


def test_without_retry_a_lost_effect_is_not_run_again(session: DaskSession, tmp_path: Path) -> None:
    count = _killer(tmp_path)
    wf = 'nika: v1\nworkflow: { id: once }\npermits: { exec: ["./killer.sh"] }\n'
    wf += 'tasks:\n  work: { exec: { command: ["./killer.sh"] } }\n'
    result = _dask(session, tmp_path, wf)
    err = result.tasks["work"].error
    assert err is not None and err["code"] == "NIKA-IMPL-003" and err["transient"] is True
    assert "lost" in err["message"]
    # the scheduler re-runs a lost task before it reports it erred, so the count is final now
    assert count.read_text().split() == ["run"]


def test_an_unreachable_scheduler_is_a_clear_error_within_seconds() -> None:
    import socket

    with socket.socket() as s:  # a port nothing listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    with pytest.raises(DaskUnavailable) as info:
        DaskSession.start(f"tcp://127.0.0.1:{port}", timeout_s=1.0)
    assert f"cannot reach the Dask scheduler at tcp://127.0.0.1:{port} within 1s" in str(info.value)
    with pytest.raises(DaskUnavailable, match=r"`nonsense` is not a Dask scheduler address \(tcp://HOST:PORT\)"):
        DaskSession.start("nonsense", timeout_s=1.0)


def test_check_and_a_local_run_never_import_distributed(tmp_path: Path) -> None:
    wf = tmp_path / "w.nika.yaml"
    wf.write_text('nika: v1\nworkflow: { id: w }\ntasks:\n  a: { infer: { model: mock/echo, prompt: "x" } }\n')
    code = (
        "import sys, io, contextlib\n"
        "from nika.cli import main\n"
        "with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):\n"
        f"    main(['check', {str(wf)!r}])\n"
        f"    main(['run', {str(wf)!r}, '--trace-dir', {str(tmp_path / 't')!r}])\n"
        "print(sorted({m.split('.')[0] for m in sys.modules} & {'dask', 'distributed'}))\n"
    )
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=tmp_path, env=env)
    assert proc.stdout.strip() == "[]", proc.stdout + proc.stderr


def _gone(pid: int) -> None:
    """The process ``pid`` exits (it was killed with its group): polled with a generous deadline."""
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return
        time.sleep(0.05)
    pytest.fail(f"process {pid} outlived its task")


def test_workers_on_another_version_are_refused_clearly() -> None:
    from runtime.engine import dask_worker
    from runtime.engine.dask_wire import version_mismatch

    ours = {"python": "3.11", "nika": "nika-tools 0.1.0", "distributed": "2026.8.0"}
    assert version_mismatch(ours, {"tcp://a:1": dict(ours)}) is None
    why = version_mismatch(ours, {"tcp://a:1": dict(ours), "tcp://b:2": {**ours, "python": "3.12"}})
    assert why == (
        "the Dask worker tcp://b:2 runs python 3.12 (the driver has 3.11); every worker must run the driver's versions"
    )
    # a worker that joined later still refuses an effect sent by another engine version
    out = dask_worker.perform({"kind": "exec", "engine": "nika-tools 0.0.1", "cap_bytes": 1000})
    assert out["error"]["code"] == "NIKA-IMPL-003"
    assert "nika-tools 0.0.1" in out["error"]["message"] and dask_worker.ENGINE_VERSION in out["error"]["message"]


def test_the_executor_options_are_judged_before_any_effect(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import io

    from nika.commands.run import run_command

    wf = tmp_path / "w.nika.yaml"
    wf.write_text('nika: v1\nworkflow: { id: w }\ntasks:\n  a: { infer: { model: mock/echo, prompt: "x" } }\n')
    monkeypatch.chdir(tmp_path)
    err = io.StringIO()
    assert run_command(str(wf), scheduler="tcp://127.0.0.1:1", out=io.StringIO(), err=err) == 1
    assert err.getvalue() == "nika run: --scheduler needs --executor dask\n"
    monkeypatch.setenv("NIKA_EXECUTOR", "ray")
    err = io.StringIO()
    assert run_command(str(wf), out=io.StringIO(), err=err) == 1
    assert "NIKA_EXECUTOR is `ray`; the executors are `local` and `dask`" in err.getvalue()


def test_a_scheduler_that_reruns_lost_tasks_still_runs_an_effect_once(session: DaskSession, tmp_path: Path) -> None:
    def set_failures(n: int, dask_scheduler: Any = None) -> None:
        dask_scheduler.allowed_failures = n

    session.client.run_on_scheduler(set_failures, 3)  # a shared cluster's default policy
    try:
        count = _killer(tmp_path)
        wf = 'nika: v1\nworkflow: { id: once }\npermits: { exec: ["./killer.sh"] }\n'
        wf += 'tasks:\n  work: { exec: { command: ["./killer.sh"] } }\n'
        result = run_yaml(wf, tmp_path, executor=dataclasses.replace(session, allowed_failures=3).executor)
    finally:
        session.client.run_on_scheduler(set_failures, 0)
    err = result.tasks["work"].error
    assert err is not None and err["code"] == "NIKA-IMPL-003" and err["transient"] is True
    assert "not run twice" in err["message"]
    assert count.read_text().split() == ["run"]


AGENT = """
nika: v1
workflow: { id: agent-on-dask }
model: openai/gpt-test
permits: { tools: ["nika:done"] }
tasks:
  loop:
    agent:
      prompt: "go"
      tools: ["nika:done"]
      schema: { type: object, required: [status], properties: { status: { type: string } } }
"""


def test_an_agent_turn_is_performed_on_a_worker_with_only_its_provider_key(
    session: DaskSession, tmp_path: Path
) -> None:
    from fake_llm import openai, serve

    key = "sk-test-0123456789abcdef"
    results = []
    for executor in ("local", session.executor):
        with serve([openai(calls=[("nika_done", {"result": {"status": "ok"}})])]) as fake:
            env = {"NIKA_OPENAI_BASE_URL": fake.url + "/v1/chat/completions", "NIKA_OPENAI_API_KEY": key}
            results.append(run_yaml(AGENT, tmp_path, engine_env={**env, "UNRELATED_TOKEN": "t0p"}, executor=executor))
            assert fake.count == 1 and fake.seen[0].headers["authorization"] == f"Bearer {key}"
    local, dask = results
    assert _records(dask) == _records(local)
    assert dask.tasks["loop"].output == {"status": "ok"} and dask.tasks["loop"].agent == local.tasks["loop"].agent
    assert [e["effect"] for e in dask.events if e.get("phase") == "dask_effect"] == ["model"]
    from runtime.engine.dask_wire import provider_env

    assert provider_env("openai/gpt-test", {"NIKA_OPENAI_API_KEY": key, "UNRELATED_TOKEN": "t0p"}) == {
        "NIKA_OPENAI_API_KEY": key
    }


def test_the_worker_judge_built_from_the_sent_grant_decides_as_the_driver(tmp_path_factory: Any) -> None:
    """check ≡ run on the worker: the grant as Dask sends it (pickled permits, the caller's too)
    rebuilt by the worker gives every path the driver's verdict, code and message."""
    import json
    import pickle

    from hypothesis import HealthCheck, given, settings
    from hypothesis import strategies as st
    from test_check_run_differential import literal_path, path_text

    from checker.engine.pipeline import compile_text
    from runtime.engine.dask_worker import grant_boundary
    from runtime.errors import TaskError
    from runtime.guard.permits import Boundary

    def verdict(fn: Any) -> Any:
        try:
            return str(fn())
        except TaskError as exc:
            return (exc.code, exc.message)

    @settings(max_examples=30, derandomize=True, deadline=None, suppress_health_check=list(HealthCheck))
    @given(mine=st.lists(path_text, max_size=3), callers=st.lists(path_text, max_size=2), path=literal_path)
    def case(mine: list[str], callers: list[str], path: str) -> None:
        tmp = tmp_path_factory.mktemp("grant")
        perms = []
        for grants in (mine, callers):
            src = f"nika: v1\nworkflow: {{ id: g }}\npermits: {{ fs: {{ read: {json.dumps(grants)} }} }}\n"
            src += 'tasks:\n  t: { infer: { model: mock/echo, prompt: "x" } }\n'
            wf = compile_text(src, str(tmp / "g.nika.yaml"), str(tmp)).workflow
            if wf is None:
                return
            perms.append(wf.permits)
        driver = Boundary(perms[0], tmp, None, Boundary(perms[1], tmp))
        sent = pickle.loads(pickle.dumps([b.permits for b in driver._chain()]))
        worker = grant_boundary(sent, tmp, [])
        assert verdict(lambda: worker.resolve("t", path, "read")) == verdict(lambda: driver.resolve("t", path, "read"))

    case()


def test_max_parallel_caps_the_futures_in_flight(session: DaskSession, tmp_path: Path) -> None:
    """`max_parallel: 1` on a fan-out over two workers: one effect at a time, in input order."""
    wf = """
nika: v1
workflow: { id: seq }
permits: { exec: ["sh"] }
tasks:
  t:
    for_each: ["a", "b", "c", "d"]
    max_parallel: 1
    exec: { command: ["sh", "-c", "echo start-$0 >> o.txt; sleep 0.05; echo end-$0 >> o.txt; echo $0", "${{ item }}"] }
"""
    result = _dask(session, tmp_path, wf)
    assert result.tasks["t"].output == ["a", "b", "c", "d"]
    lines = (tmp_path / "o.txt").read_text().split()
    assert lines == [f"{edge}-{x}" for x in "abcd" for edge in ("start", "end")]
    assert len(_workers(result)) >= 1


MOCK_JSON = """
nika: v1
workflow: { id: configured-mock }
tasks:
  answer:
    infer: { model: "mock/mock-json", prompt: "give the record" }
"""


def test_a_configured_mock_reads_its_fixture_on_the_worker(session: DaskSession, tmp_path: Path) -> None:
    """`mock/mock-json` reads NIKA_MOCK_JSON from engine configuration: the worker that makes the
    model call is sent that variable (and the other mock fixtures), like a provider's key."""
    engine_env = {"NIKA_MOCK_JSON": '{"ok": true}', "UNRELATED_TOKEN": "t0p"}
    (tmp_path / "local").mkdir()
    (tmp_path / "dask").mkdir()
    local = run_yaml(MOCK_JSON, tmp_path / "local", engine_env=engine_env)
    dask = _dask(session, tmp_path / "dask", MOCK_JSON, engine_env=engine_env)
    assert _records(dask) == _records(local)
    assert dask.tasks["answer"].output == '{"ok": true}'  # no `schema:`: the reply text
    assert [e["effect"] for e in dask.events if e.get("phase") == "dask_effect"] == ["model"]
    from runtime.engine.dask_wire import provider_env

    assert provider_env("mock/mock-json", engine_env) == {"NIKA_MOCK_JSON": '{"ok": true}'}


def test_the_worker_list_is_the_schedulers_fresh_answer(session: DaskSession, monkeypatch: pytest.MonkeyPatch) -> None:
    """`Client.scheduler_info()` returns an attribute the client's periodic refresh rewrites
    without its per-worker part (seen here: 1 read in ~10,000 came back short), so an MCP
    session could find "no workers": the list is asked of the scheduler each time."""
    monkeypatch.setattr(session.client, "scheduler_info", lambda *a, **k: {"workers": {}})
    assert len(session.worker_addresses()) == 2


def test_a_task_no_worker_can_run_errs_as_lost_instead_of_waiting_forever(session: DaskSession) -> None:
    """A cluster whose workers all died (or a session's pinned worker gone): the scheduler gives
    the task up after its no-workers timeout, and the driver reads that as a lost effect."""
    from distributed.scheduler import NoValidWorkerError

    from runtime.engine.dask_wire import lost_error

    def timeout(dask_scheduler: Any = None) -> float | None:
        return dask_scheduler.no_workers_timeout

    assert session.client.run_on_scheduler(timeout) == 120.0
    err = lost_error(
        "error",
        NoValidWorkerError(
            task="k", host_restrictions=set(), worker_restrictions=set(), resource_restrictions={}, timeout=120.0
        ),
    )
    assert (err["code"], err["transient"]) == ("NIKA-IMPL-003", True)
    assert err["details"] == {"dask": "NoValidWorkerError", "status": "error"}


def _kill_warden() -> int | None:
    """Run on a worker: SIGKILL the process warden of this worker process (None: it had none yet)."""
    from runtime.tools import process_warden

    proc = process_warden._proc
    if proc is None or proc.poll() is not None:
        return None
    proc.kill()
    proc.wait()
    return proc.pid


def test_a_worker_whose_warden_was_killed_still_runs_exec(session: DaskSession, tmp_path: Path) -> None:
    """Before: once a worker's warden died, every later exec on that worker died of SIGPIPE (status
    -13) until the worker restarted, failing every run sent to it."""
    wf = 'nika: v1\nworkflow: { id: reap }\npermits: { exec: ["sh"] }\ntasks:\n'
    for i in range(4):
        wf += f'  t{i}:\n    exec: {{ command: ["sh", "-c", "echo t{i}"] }}\n'
    first = _dask(session, tmp_path, wf)
    assert first.workflow_state == "success"
    killed = session.client.run(_kill_warden)
    assert any(pid is not None for pid in killed.values()), killed
    again = _dask(session, tmp_path, wf)
    assert again.workflow_state == "success", {t: r.error for t, r in again.tasks.items() if r.error}
    assert [again.tasks[f"t{i}"].output for i in range(4)] == [f"t{i}" for i in range(4)]
    assert any(pid is not None for pid in session.client.run(_kill_warden).values())  # a new one stood by
