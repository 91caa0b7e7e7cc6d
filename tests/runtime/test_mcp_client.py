"""The MCP client against a real MCP server built with the SDK's own server class, over stdio and
over streamable HTTP on 127.0.0.1: calls, schema-checked arguments, tool errors, a server that
crashes mid-call, agent whitelists over MCP tools, and no process left behind."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import textwrap
import time
from pathlib import Path
from unittest import mock

import pytest
from fake_llm import openai, serve
from rt_helpers import RunResult, run_yaml

pytestmark = pytest.mark.xdist_group("mcp")  # one worker starts the shared stdio server (module fixture)

SERVER = textwrap.dedent(
    """
    import os, sys
    from mcp.server.mcpserver import MCPServer

    srv = MCPServer("demo")

    @srv.tool()
    def add(a: int, b: int) -> int:
        "Add two integers."
        return a + b

    @srv.tool()
    def boom() -> str:
        "Always fails."
        raise ValueError("kaboom")

    @srv.tool()
    def crash() -> str:
        "Exits mid-call."
        os._exit(3)

    @srv.tool()
    def env_probe() -> str:
        "What the server sees of the environment."
        return os.environ.get("LEAKY_SECRET", "absent") + "|" + os.environ.get("ROOT", "unset")

    @srv.tool()
    def env_names() -> list[str]:
        "The names of the server's environment variables."
        return sorted(os.environ)

    @srv.tool()
    def pid() -> int:
        "The server's process id."
        return os.getpid()

    CALLS = [0]

    @srv.tool()
    def count() -> dict:
        "How often this server process was asked, its pid and its parent's."
        CALLS[0] += 1
        return {"calls": CALLS[0], "pid": os.getpid(), "ppid": os.getppid()}

    @srv.tool()
    def kill_parent(marker: str) -> str:
        "The first time, kill the process that started this server (a Dask worker); later, answer."
        if not os.path.exists(marker):
            open(marker, "w").write(str(os.getpid()))
            os.kill(os.getppid(), 9)
            import time
            time.sleep(2)
        return f"recovered by {os.getpid()}"

    @srv.tool()
    async def nap(marker: str) -> str:
        "Write the pid to `marker`, then sleep long."
        import anyio
        open(marker, "w").write(str(os.getpid()))
        await anyio.sleep(30)
        return "woke"

    if sys.argv[1:2] == ["http"]:
        srv.run("streamable-http", host="127.0.0.1", port=int(sys.argv[2]))
    else:
        srv.run()
    """
)


PY = sys.executable  # a stdio server is a process: the workflow must grant it (`permits.exec`)


def declare(tmp_path: Path, servers: dict[str, dict]) -> None:
    (tmp_path / "server.py").write_text(SERVER)
    (tmp_path / ".nika").mkdir(exist_ok=True)
    (tmp_path / ".nika" / "mcp.json").write_text(json.dumps({"mcpServers": servers}))


def stdio(tmp_path: Path) -> dict:
    # the SDK's server spends about a second of CPU importing itself: on a loaded machine that is more
    # than the default 20 s to start, so these servers ask for the time a slow server is given
    return {
        "command": sys.executable,
        "args": [str(tmp_path / "server.py")],
        "env": {"ROOT": "/data"},
        "startupTimeout": 300,
    }


def invoke_wf(tool: str, args: str = "{}", task_extra: str = "") -> str:
    extra = f"    {task_extra}\n" if task_extra else ""
    return (
        "nika: v1\nworkflow: { id: mcp-test }\npermits: { tools: ['mcp:demo/*'], exec: ['" + PY + "'] }\ntasks:\n  t:\n"
        f"{extra}    invoke:\n      tool: {tool}\n      args: {args}\n"
    )


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


SHARED = (
    "nika: v1\nworkflow: { id: m }\npermits: { tools: ['mcp:demo/*', 'mcp:demoo/*'], exec: ['" + PY + "'] }\n"
    "tasks:\n"
    "  a:\n    invoke: { tool: 'mcp:demo/add', args: { a: 2, b: 3 } }\n"
    "  p:\n    invoke: { tool: 'mcp:demo/pid', args: {} }\n"
    "  e:\n    invoke: { tool: 'mcp:demo/env_probe', args: {} }\n"
    "  names:\n    invoke: { tool: 'mcp:demo/env_names', args: {} }\n"
    "  schema:\n    invoke: { tool: 'mcp:demo/add', args: { a: 'two', b: 3 } }\n"
    "  boom:\n    invoke: { tool: 'mcp:demo/boom', args: {} }\n"
    "  typo:\n    invoke: { tool: 'mcp:demo/ad', args: {} }\n"
    "  nowhere:\n    invoke: { tool: 'mcp:demoo/add', args: {} }\n"
)


@pytest.fixture(scope="module")
def shared_run(tmp_path_factory: pytest.TempPathFactory) -> RunResult:
    """One run of one stdio server for the calls that leave it standing (a server costs about a
    second to start); each test below reads its own tasks of it."""
    tmp_path = tmp_path_factory.mktemp("mcp-shared")
    declare(tmp_path, {"demo": stdio(tmp_path)})
    # names the MCP SDK would copy from the engine's own process environment into the server's
    inherited = {"SHELL": "/bin/sh", "TERM": "xterm", "HOME": "/root-of-the-engine", "USER": "engine"}
    with mock.patch.dict(os.environ, inherited):
        return run_yaml(SHARED, tmp_path, engine_env={"LEAKY_SECRET": "s3cret", "PATH": os.environ.get("PATH", "")})


def test_stdio_call_result_and_shutdown(shared_run: RunResult):
    result = shared_run
    assert result.tasks["a"].output == 5, result.tasks["a"].error
    assert result.tasks["e"].output == "absent|/data"  # composed, never inherited
    # exactly the composed environment: the floor names the run's engine environment has (PATH) and
    # the declared `env:`; nothing from the engine process (LC_CTYPE: Python's own locale coercion)
    assert set(result.tasks["names"].output) - {"LC_CTYPE"} == {"PATH", "ROOT"}, result.tasks["names"].output
    spawns = [e for e in result.events if e["type"] == "tool.invoked" and e.get("event") == "mcp_server_spawn"]
    assert len(spawns) == 1 and spawns[0]["argv"][0] == PY  # one server, witnessed as an exec effect
    assert any(
        e["type"] == "permit.checked" and e["plane"] == "exec" and e["decision"] == "allow" for e in result.events
    )
    pid = result.tasks["p"].output
    assert isinstance(pid, int)
    deadline = time.monotonic() + 30  # generous: the poll ends as soon as it is gone
    while alive(pid) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not alive(pid), "the MCP server outlived the run"


def test_arguments_checked_against_the_input_schema(shared_run: RunResult):
    err = shared_run.tasks["schema"].error
    assert err["code"] == "NIKA-MCP-002"
    assert "input schema" in err["message"] and "a" in err["message"]


def test_tool_error_and_unknown_tool_and_unknown_server(shared_run: RunResult):
    boom = shared_run.tasks["boom"].error
    assert boom["code"] == "NIKA-MCP-002"
    assert "reported an error" in boom["message"]
    assert "did you mean `add`" in shared_run.tasks["typo"].error["message"]
    assert shared_run.tasks["nowhere"].error["code"] == "NIKA-MCP-001"


def test_server_crash_mid_call_is_a_typed_failure(run, tmp_path: Path):
    declare(tmp_path, {"demo": stdio(tmp_path)})
    result = run(invoke_wf("mcp:demo/crash"))
    assert result.tasks["t"].error["code"] == "NIKA-MCP-002"


def test_server_that_never_starts(run, tmp_path: Path):
    (tmp_path / "garbage.py").write_text("print('garbage'); import sys; sys.exit(1)\n")
    declare(tmp_path, {"demo": {"command": sys.executable, "args": [str(tmp_path / "garbage.py")]}})
    result = run(invoke_wf("mcp:demo/add", "{ a: 1, b: 2 }"))
    assert result.tasks["t"].error["code"] in ("NIKA-MCP-001", "NIKA-MCP-002")


def test_a_server_silent_past_its_startup_timeout_is_a_typed_failure(run, tmp_path: Path):
    """`startupTimeout` bounds the start: a server that never answers `initialize` fails as
    NIKA-MCP-001 naming the bound (a slower machine only makes it fail later, never pass)."""
    (tmp_path / "mute.py").write_text("import time; time.sleep(3600)\n")
    server = {"command": sys.executable, "args": [str(tmp_path / "mute.py")], "startupTimeout": 0.5}
    declare(tmp_path, {"demo": server})
    err = run(invoke_wf("mcp:demo/add", "{ a: 1, b: 2 }")).tasks["t"].error
    assert err["code"] == "NIKA-MCP-001" and "did not finish starting within 0.5s" in err["message"], err


@pytest.mark.parametrize("bad", [0, -1, "20", True, 601])
def test_a_bad_startup_timeout_is_refused(tmp_path: Path, bad: object) -> None:
    from runtime.errors import TaskError
    from runtime.tools.mcp_config import parse

    path = tmp_path / "mcp.json"
    path.write_text(json.dumps({"mcpServers": {"demo": {"command": "x", "startupTimeout": bad}}}))
    with pytest.raises(TaskError) as e:
        parse(path)
    assert e.value.code == "NIKA-MCP-001" and "`startupTimeout` must be a number of seconds" in e.value.message


def test_agent_calls_mcp_tools_through_its_whitelist(run, tmp_path: Path):
    declare(tmp_path, {"demo": stdio(tmp_path)})
    replies = [openai(calls=[("mcp_demo_add", {"a": 20, "b": 22})]), openai("42 it is")]
    with serve(replies) as fake:
        result = run(
            "nika: v1\nworkflow: { id: m }\nmodel: openai/x\npermits: { tools: ['mcp:demo/*'], exec: ['"
            + PY
            + "'] }\ntasks:\n"
            "  t:\n    agent:\n      prompt: add\n      tools: ['mcp:demo/*', '!mcp:demo/crash']\n",
            engine_env={"NIKA_OPENAI_BASE_URL": fake.url, "NIKA_OPENAI_API_KEY": "k"},
        )
    assert result.tasks["t"].output == "42 it is", result.tasks["t"].error
    offered = {t["function"]["name"] for t in fake.seen[0].body["tools"]}
    assert "mcp_demo_add" in offered and "mcp_demo_crash" not in offered
    add = next(t for t in fake.seen[0].body["tools"] if t["function"]["name"] == "mcp_demo_add")
    assert add["function"]["parameters"]["required"] == ["a", "b"]
    assert fake.seen[1].body["messages"][-1]["content"] == "42"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture
def http_server(tmp_path: Path):
    (tmp_path / "server.py").write_text(SERVER)
    port = _free_port()
    proc = subprocess.Popen(
        [sys.executable, str(tmp_path / "server.py"), "http", str(port)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    deadline = time.monotonic() + 15
    while time.monotonic() < deadline:
        with socket.socket() as s:
            if s.connect_ex(("127.0.0.1", port)) == 0:
                break
        time.sleep(0.05)
    try:
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        os.killpg(proc.pid, 15)
        proc.wait(5)


def test_streamable_http(run, tmp_path: Path, http_server: str):
    declare(tmp_path, {"demo": {"url": http_server}})
    result = run(invoke_wf("mcp:demo/add", "{ a: 40, b: 2 }"))
    assert result.tasks["t"].output == 42, result.tasks["t"].error


# -- in-flight bounds (issue 40 item 7) --------------------------------------------------------------

AGENT_MCP = (
    "nika: v1\nworkflow: {{ id: m }}\nmodel: openai/x\npermits: {{ tools: ['mcp:demo/*'], exec: ['" + PY + "'] }}\n"
    "tasks:\n  t:\n{extra}    agent:\n      prompt: go\n      tools: ['mcp:demo/*']\n"
)
AGENT_ENV = {"NIKA_OPENAI_API_KEY": "k"}


def agent_frames(result: RunResult) -> list[dict]:
    return [e for e in result.events if e["type"] == "tool.invoked" and e.get("phase") == "agent"]


def test_a_hung_mcp_call_is_bounded_by_the_task_time_and_journaled(run, tmp_path: Path):
    """An MCP call that never answers ends at the task's deadline (not the fixed 120 s), leaves a
    `cut` frame for the call, and the budget checkpoint is written on that path too."""
    declare(tmp_path, {"demo": stdio(tmp_path)})
    marker = str(tmp_path / "nap.pid")
    replies = [openai(calls=[("mcp_demo_nap", {"marker": marker})]), openai("never")]
    with serve(replies) as fake:
        result = run(
            AGENT_MCP.format(extra='    timeout: "8s"\n'),
            engine_env={**AGENT_ENV, "NIKA_OPENAI_BASE_URL": fake.url + "/v1/chat/completions"},
        )
    r = result.tasks["t"]
    assert r.error["code"] == "NIKA-TIMEOUT-001" and r.agent["stop_reason"] == "deadline", r.error
    (nap,) = [f for f in agent_frames(result) if f["tool"] == "mcp:demo/nap"]
    assert nap["status"] == "cut" and nap["error_code"] == "NIKA-TIMEOUT-001"
    assert any(e["type"].endswith("budget_checkpoint") for e in result.events)
    assert fake.count == 1  # no model call was sent after the deadline


def test_a_crashed_stdio_server_is_restarted_once_per_task(run, tmp_path: Path):
    declare(tmp_path, {"demo": stdio(tmp_path)})
    replies = [
        openai(calls=[("mcp_demo_crash", {})]),  # the server exits mid-call
        openai(calls=[("mcp_demo_pid", {})]),  # started again for this task: answers
        openai(calls=[("mcp_demo_crash", {})]),  # exits again
        openai(calls=[("mcp_demo_count", {})]),  # not restarted twice: a clear failure, fed back
        openai("done"),
    ]
    with serve(replies) as fake:
        result = run(
            AGENT_MCP.format(extra=""),
            engine_env={**AGENT_ENV, "NIKA_OPENAI_BASE_URL": fake.url + "/v1/chat/completions"},
        )
    r = result.tasks["t"]
    assert r.status == "success" and r.output == "done", r.error
    assert fake.count == 5
    statuses = [(f["tool"], f["status"]) for f in agent_frames(result)]
    assert statuses == [
        ("mcp:demo/crash", "error"),
        ("mcp:demo/pid", "ok"),
        ("mcp:demo/crash", "error"),
        ("mcp:demo/count", "error"),
    ]
    spawns = [e for e in result.events if e["type"] == "tool.invoked" and e.get("event") == "mcp_server_spawn"]
    assert len(spawns) == 2  # the restart is a spawn of its own, judged and witnessed
    last = json.loads([m for m in fake.seen[4].body["messages"] if m["role"] == "tool"][-1]["content"])
    assert last["error"]["code"] == "NIKA-MCP-001" and "not restarted twice" in last["error"]["message"]
