"""MCP calls under the Dask executor (runtime/engine/dask_mcp.py; the worker's side in
dask_worker.py) on the shared LocalCluster, with the stdio test server of test_mcp_client.py: the
server runs on a worker, one session per (run, server) that every task of the run shares, the
same results as the local executor, the spawn judged on the worker with the local code, the
agent's tool listing over the worker, the server stopped at the run's end and on cancellation, a
lost worker retried on another, and idle sessions closed by the worker."""

from __future__ import annotations

import asyncio
import dataclasses
import json
import os
import time
from pathlib import Path
from typing import Any

import pytest
from rt_helpers import run_yaml
from test_mcp_client import PY, alive, declare, http_server, invoke_wf, stdio

from runtime.engine.dask_executor import DaskSession
from runtime.engine.records import RunResult

pytestmark = pytest.mark.xdist_group("dask")
__all__ = ["http_server"]  # the fixture, shared with test_mcp_client.py


@pytest.fixture
def session(dask_session: DaskSession) -> DaskSession:
    return dask_session


def _gone(pid: int) -> None:
    deadline = time.monotonic() + 30  # generous: the poll ends as soon as the process is gone
    while alive(pid) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not alive(pid), "the MCP server outlived the run"


def _effects(result: RunResult) -> dict[str, set[str]]:
    out: dict[str, set[str]] = {}
    for e in result.events:
        if e["type"] == "verb.invoked" and e.get("phase") == "dask_effect":
            out.setdefault(e["task"], set()).add(e["worker"])
    return out


CALLS = (
    "nika: v1\nworkflow: { id: m }\npermits: { tools: ['mcp:demo/*', 'mcp:demoo/*'], exec: ['" + PY + "'] }\n"
    "tasks:\n"
    "  add:\n    invoke: { tool: 'mcp:demo/add', args: { a: 2, b: 3 } }\n"
    "  first:\n    invoke: { tool: 'mcp:demo/count', args: {} }\n"
    "  second:\n    after: { first: success }\n    invoke: { tool: 'mcp:demo/count', args: {} }\n"
    "  schema:\n    invoke: { tool: 'mcp:demo/add', args: { a: 'two', b: 3 } }\n"
    "  typo:\n    invoke: { tool: 'mcp:demo/ad', args: {} }\n"
    "  nowhere:\n    invoke: { tool: 'mcp:demoo/add', args: {} }\n"
)


def _counted(value: Any) -> dict[str, int] | None:
    """The `count` tool's answer (the SDK sends a dict as JSON text)."""
    if isinstance(value, str) and value.startswith("{"):
        parsed: dict[str, int] = json.loads(value)
        return parsed
    return None


def _outcome(result: RunResult) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for tid, r in result.tasks.items():
        value = _counted(r.output) or r.output
        if isinstance(value, dict):
            value = value["calls"]  # the process ids differ between the runs; the count must not
        out[tid] = (r.status, value, r.error and (r.error["code"], r.error["message"]))
    return out


def test_mcp_calls_run_on_one_pinned_worker_and_equal_the_local_run(session: DaskSession, tmp_path: Path) -> None:
    declare(tmp_path, {"demo": stdio(tmp_path)})
    env = {"PATH": os.environ.get("PATH", "")}
    local = run_yaml(CALLS, tmp_path, engine_env=env)
    dask = run_yaml(CALLS, tmp_path, engine_env=env, executor=session.executor)
    assert _outcome(dask) == _outcome(local)
    first, second = _counted(dask.tasks["first"].output), _counted(dask.tasks["second"].output)
    assert first is not None and second is not None
    assert (first["calls"], second["calls"]) == (1, 2)  # one session: the server's state persists
    assert first["pid"] == second["pid"]
    workers = {str(w): pid for w, pid in session.client.run(os.getpid).items()}
    assert first["ppid"] in workers.values()  # the server is a child of a worker, not of the driver
    assert first["ppid"] != os.getpid()
    ran = _effects(dask)
    holder = next(w for w, pid in workers.items() if pid == first["ppid"])
    for tid in ("add", "first", "second", "schema", "typo"):
        assert ran[tid] == {holder}, (tid, ran)  # the journal names the worker that holds the session
    spawns = [e for e in dask.events if e["type"] == "tool.invoked" and e.get("event") == "mcp_server_spawn"]
    assert len(spawns) == 1 and spawns[0]["argv"][0] == PY
    execs = [(i, e) for i, e in enumerate(dask.events) if e["type"] == "permit.checked" and e["plane"] == "exec"]
    assert [e["decision"] for _, e in execs] == ["allow"]  # sent by the worker at once, journaled once
    ((at, judged),) = execs
    done = next(i for i, e in enumerate(dask.events) if e["type"] == "task.completed" and e["task"] == judged["task"])
    assert at < done
    _gone(first["pid"])  # stopped at the run's end, on its worker


def test_a_streamable_http_server_is_reached_from_a_worker(
    session: DaskSession, tmp_path: Path, http_server: str
) -> None:
    declare(tmp_path, {"demo": {"url": http_server}})
    result = run_yaml(invoke_wf("mcp:demo/add", "{ a: 40, b: 2 }"), tmp_path, executor=session.executor)
    assert result.tasks["t"].output == 42, result.tasks["t"].error
    assert next(iter(_effects(result)["t"])).startswith("tcp://")


def test_an_unpermitted_spawn_is_refused_on_the_worker_with_the_local_code(
    session: DaskSession, tmp_path: Path
) -> None:
    declare(tmp_path, {"demo": stdio(tmp_path)})
    wf = (
        "nika: v1\nworkflow: { id: m }\npermits: { tools: ['mcp:demo/*'], exec: ['echo'] }\ntasks:\n"
        "  t:\n    invoke: { tool: 'mcp:demo/add', args: { a: 1, b: 2 } }\n"
    )
    local = run_yaml(wf, tmp_path)
    dask = run_yaml(wf, tmp_path, executor=session.executor)
    lerr, derr = local.tasks["t"].error, dask.tasks["t"].error
    assert lerr is not None and derr is not None
    assert (derr["code"], derr["message"]) == (lerr["code"], lerr["message"])
    assert derr["code"] == "NIKA-SEC-004"
    assert _effects(dask)["t"] != {"local"}  # decided on a worker
    denied = [e for e in dask.events if e["type"] == "permit.checked" and e["decision"] != "allow"]
    assert [e["plane"] for e in denied] == ["exec"]  # once, though sent at once and in the record
    assert not any(e.get("event") == "mcp_server_spawn" for e in dask.events)


def test_an_agent_under_dask_lists_and_calls_mcp_tools(session: DaskSession, tmp_path: Path) -> None:
    from fake_llm import openai, serve

    declare(tmp_path, {"demo": stdio(tmp_path)})
    replies = [openai(calls=[("mcp_demo_add", {"a": 20, "b": 22})]), openai("42 it is")]
    with serve(replies) as fake:
        result = run_yaml(
            "nika: v1\nworkflow: { id: m }\nmodel: openai/x\npermits: { tools: ['mcp:demo/*'], exec: ['"
            + PY
            + "'] }\ntasks:\n"
            "  t:\n    agent:\n      prompt: add\n      tools: ['mcp:demo/*', '!mcp:demo/crash']\n",
            tmp_path,
            engine_env={"NIKA_OPENAI_BASE_URL": fake.url, "NIKA_OPENAI_API_KEY": "k"},
            executor=session.executor,
        )
    assert result.tasks["t"].output == "42 it is", result.tasks["t"].error
    offered = {t["function"]["name"] for t in fake.seen[0].body["tools"]}
    assert "mcp_demo_add" in offered and "mcp_demo_crash" not in offered
    add = next(t for t in fake.seen[0].body["tools"] if t["function"]["name"] == "mcp_demo_add")
    assert add["function"]["parameters"]["required"] == ["a", "b"]
    assert fake.seen[1].body["messages"][-1]["content"] == "42"
    kinds = [e["effect"] for e in result.events if e.get("phase") == "dask_effect"]
    assert kinds.count("mcp") == 2  # the listing and the call, both on the worker
    mcp_workers = {e["worker"] for e in result.events if e.get("phase") == "dask_effect" and e["effect"] == "mcp"}
    assert len(mcp_workers) == 1 and next(iter(mcp_workers)).startswith("tcp://")


def test_cancelling_the_run_cancels_the_call_and_stops_the_server(session: DaskSession, tmp_path: Path) -> None:
    from checker.engine.pipeline import compile_text
    from runtime.engine.options import Options
    from runtime.engine.run import Run
    from runtime.verbs import VERBS

    declare(tmp_path, {"demo": stdio(tmp_path)})
    marker = tmp_path / "napping"
    src = (
        "nika: v1\nworkflow: { id: c }\npermits: { tools: ['mcp:demo/*'], exec: ['" + PY + "'] }\ntasks:\n"
        f"  t:\n    invoke: {{ tool: 'mcp:demo/nap', args: {{ marker: '{marker}' }} }}\n"
    )
    compiled = compile_text(src, str(tmp_path / "c.nika.yaml"), str(tmp_path))

    async def go() -> RunResult:
        opts = Options(trace_dir=None, executor=session.executor, engine_env={"PATH": os.environ.get("PATH", "")})
        run = Run(compiled, {}, opts, verbs=VERBS, workdir=tmp_path)
        task = asyncio.ensure_future(run.execute())
        deadline = asyncio.get_running_loop().time() + 60  # generous: the server starts on a worker first
        while asyncio.get_running_loop().time() < deadline:
            if marker.exists() and marker.read_text().strip():
                break
            await asyncio.sleep(0.02)
        run.cancel()
        return await task

    result = asyncio.run(go())
    assert result.workflow_state == "cancelled" and result.tasks["t"].status == "cancelled"
    _gone(int(marker.read_text()))


def _set_failures(n: int, dask_scheduler: Any = None) -> None:
    dask_scheduler.allowed_failures = n


@pytest.mark.parametrize("failures", [0, 3], ids=["fails-lost-tasks", "reruns-lost-tasks"])
def test_a_lost_session_worker_is_a_transient_error_and_the_retry_pins_a_new_one(
    session: DaskSession, tmp_path: Path, failures: int
) -> None:
    """Whatever the scheduler does with a task whose worker died (fail it, or wait to re-run it,
    which a task pinned to that worker never could), the call fails as lost and is retried."""
    declare(tmp_path, {"demo": stdio(tmp_path)})
    marker = tmp_path / "killed"
    wf = (
        "nika: v1\nworkflow: { id: lost }\npermits: { tools: ['mcp:demo/*'], exec: ['" + PY + "'] }\ntasks:\n"
        "  t:\n    retry: { max_attempts: 2, backoff_ms: 10 }\n"
        f"    invoke: {{ tool: 'mcp:demo/kill_parent', args: {{ marker: '{marker}' }} }}\n"
    )
    session.client.run_on_scheduler(_set_failures, failures)
    try:
        policy = dataclasses.replace(session, allowed_failures=failures)
        result = run_yaml(wf, tmp_path, engine_env={"PATH": os.environ.get("PATH", "")}, executor=policy.executor)
    finally:
        session.client.run_on_scheduler(_set_failures, 0)
    rec = result.tasks["t"]
    assert (rec.status, rec.attempts) == ("success", 2), (rec.error, [e for e in result.events if "dask" in str(e)])
    first_server = int(marker.read_text())
    assert rec.output.startswith("recovered by ") and rec.output != f"recovered by {first_server}"
    retrying = [e for e in result.events if e["type"] == "task.retrying"]
    assert [(e["task"], e["error_code"]) for e in retrying] == [("t", "NIKA-IMPL-003")]
    # the session died with its worker and the retry started the server again: both spawns are
    # witnessed (the lost attempt's were sent at once, before its server started), each once
    spawns = [e for e in result.events if e.get("event") == "mcp_server_spawn"]
    assert len(spawns) == 2
    allowed = [e for e in result.events if e["type"] == "permit.checked" and e["plane"] == "exec"]
    assert [e["decision"] for e in allowed] == ["allow", "allow"]
    lost = [e["worker"] for e in result.events if e.get("phase") == "dask_assigned"]
    done = [e["worker"] for e in result.events if e.get("phase") == "dask_effect" and e["worker"]]
    assert len(set(lost)) == 2 and done[-1] == lost[-1] != lost[0]


def _touches() -> int:
    from runtime.engine import dask_worker

    return dask_worker._HUB.touches if dask_worker._HUB is not None else 0


def test_a_live_run_keeps_its_sessions_on_the_worker_between_calls(
    session: DaskSession, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from runtime.engine import dask_mcp

    monkeypatch.setattr(dask_mcp, "KEEPALIVE_S", 0.05)
    declare(tmp_path, {"demo": stdio(tmp_path)})
    wf = (
        "nika: v1\nworkflow: { id: keep }\npermits: { tools: ['mcp:demo/*'], exec: ['" + PY + "', 'sleep'] }\n"
        "tasks:\n  first:\n    invoke: { tool: 'mcp:demo/count', args: {} }\n"
        "  pause:\n    after: { first: success }\n    exec: { command: ['sleep', '0.4'] }\n"
    )
    before = session.client.run(_touches)
    result = run_yaml(wf, tmp_path, engine_env={"PATH": os.environ.get("PATH", "")}, executor=session.executor)
    assert result.tasks["pause"].status == "success", result.tasks["pause"].error
    after = session.client.run(_touches)
    (holder,) = _effects(result)["first"]
    assert after[holder] - before.get(holder, 0) >= 3  # the call's own touch, then the run's keepalives


def test_a_worker_closes_the_sessions_of_a_run_left_idle(tmp_path: Path) -> None:
    from runtime.engine.dask_worker import Hub

    hub = Hub(idle_s=5.0, poll_s=3600)

    async def touch(run: str) -> None:
        hub.sessions(run, tmp_path)

    hub.submit(touch("old")).result(2)
    hub.submit(touch("fresh")).result(2)
    hub.used["old"] -= 10  # its last call was ten seconds ago
    assert hub.submit(hub.expire()).result(2) == ["old"]
    assert set(hub.runs) == {"fresh"}
    assert hub.submit(hub.close("fresh")).result(2) is True
    hub.stop()
    assert not hub.thread.is_alive()


def test_a_worker_lost_by_the_run_is_never_pinned_again_while_the_scheduler_still_lists_it() -> None:
    """The scheduler may list a dead worker for a while after it died: the retry of a call lost
    there must pin another worker (else it is lost a second time), unless no other is listed."""
    from runtime.engine.dask_mcp import RemoteMcp

    class Session:
        _turn = 0
        listed = ("tcp://a", "tcp://b")

        def worker_addresses(self) -> list[str]:
            return list(self.listed)

        def next_worker(self, alive: list[str]) -> str:
            self._turn += 1
            return alive[self._turn % len(alive)]

    remote = object.__new__(RemoteMcp)
    remote.executor = type("Executor", (), {"session": Session()})()
    remote.pins, remote.listings, remote.lost = {}, {}, {"tcp://b"}
    remote._lock = asyncio.Lock()

    async def pins() -> list[str]:
        remote._keepalive = None
        got = []
        for _ in range(3):
            remote.pins.clear()
            got.append(await remote._pin("demo"))
        if remote._keepalive is not None:
            remote._keepalive.cancel()
        return got

    assert asyncio.run(pins()) == ["tcp://a"] * 3
    remote.lost = {"tcp://a", "tcp://b"}  # every listed worker lost once: one back at its old address
    assert set(asyncio.run(pins())) <= {"tcp://a", "tcp://b"}
