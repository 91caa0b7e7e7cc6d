"""``nika dap`` replays of a recorded journal, in process: forward, back, and what each point shows."""

from __future__ import annotations

from pathlib import Path

import pytest
from dap_client import Client

RECORDED = """nika: v1
workflow:
  id: recorded
permits:
  exec: ["echo", "false"]
secrets:
  api:
    source: env
    key: NIKA_DAP_REPLAY_KEY
    egress: [{ to: "exec" }]
tasks:
  first:
    exec:
      command: ["echo", "one"]
  second:
    with:
      prev: ${{ tasks.first.output }}
    exec:
      command: ["echo", "two after ${{ with.prev }}"]
  third:
    after: { second: success }
    with:
      token: ${{ secrets.api }}
    exec:
      command: ["echo", "three"]
  broken:
    after: { third: success }
    exec:
      command: ["false"]
    on_error: { skip: true }
"""
SECRET = "replay-secret-4242"


async def _record(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, Path]:
    monkeypatch.setenv("NIKA_DAP_REPLAY_KEY", SECRET)
    wf = tmp_path / "r.nika.yaml"
    wf.write_text(RECORDED, encoding="utf-8")
    c = Client(tmp_path)
    await c.start({"program": str(wf), "traceDir": "traces"})
    assert await c.finish() == 0
    (trace,) = (tmp_path / "traces").rglob("*.ndjson")
    return wf, trace


def _line(path: Path, needle: str) -> int:
    return next(i for i, line in enumerate(path.read_text().splitlines(), 1) if needle in line)


async def _task(c: Client) -> dict:
    return (await c.variables_of(1))["Task"]


async def test_replay_steps_forward_and_back_through_the_recorded_frames(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    wf, trace = await _record(tmp_path, monkeypatch)
    before = trace.read_bytes()
    c = Client(tmp_path)
    await c.start({"trace": str(trace), "program": str(wf)}, {str(wf): [{"line": _line(wf, "second:")}]})
    stop = await c.stopped()
    assert stop["body"]["reason"] == "entry"
    assert (await _task(c))["id"] == '"first"'
    await c.request("continue", {"threadId": 1})
    stop = await c.stopped()
    assert stop["body"]["reason"] == "breakpoint"
    t = await _task(c)
    assert t["id"] == '"second"' and t["with"] == {"prev": '"one"'} and t["output"] == '"two after one"'
    assert t["permits"]["[0]"]["decision"] == '"allow"'
    frames = (await c.request("stackTrace", {"threadId": 1}))["body"]["stackFrames"]
    assert frames[0]["line"] == _line(wf, "second:")
    await c.request("next", {"threadId": 1})
    await c.stopped()
    t = await _task(c)
    assert t["id"] == '"third"' and "«redacted»" in t["with"]["token"]  # masked when it was written
    await c.request("stepBack", {"threadId": 1})
    await c.stopped()
    assert (await _task(c))["id"] == '"second"'
    await c.request("reverseContinue", {"threadId": 1})
    stop = await c.stopped()
    assert stop["body"]["reason"] == "entry" and (await _task(c))["id"] == '"first"'
    run = (await c.variables_of(1))["Run"]
    assert run["recorded_outcome"] == '"success"' and run["point"] == '"1 of 4"'
    await c.request("continue", {"threadId": 1})
    await c.stopped()  # the breakpoint on `second` again
    await c.request("continue", {"threadId": 1})
    assert await c.finish() == 0  # past the last breakpoint: the recorded run's exit code
    assert trace.read_bytes() == before  # nothing was written, nothing ran again
    assert SECRET not in repr(c._seen)


async def test_replay_stops_on_a_recorded_failure(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _wf, trace = await _record(tmp_path, monkeypatch)
    c = Client(tmp_path)
    await c.start({"trace": str(trace), "stopOnEntry": False}, exceptions=True)
    stop = await c.stopped()
    assert stop["body"]["reason"] == "exception"
    t = await _task(c)
    assert t["id"] == '"broken"' and t["status"] == '"skipped"' and t["error_code"].startswith('"NIKA-')


async def test_a_forged_trace_is_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _wf, trace = await _record(tmp_path, monkeypatch)
    lines = trace.read_bytes().splitlines(keepends=True)
    i = next(n for n, line in enumerate(lines) if n and b'"value":"first"' in line)
    lines[i] = lines[i].replace(b'"value":"first"', b'"value":"forge"')
    trace.write_bytes(b"".join(lines))
    c = Client(tmp_path)
    await c.request("initialize", {"adapterID": "nika"})
    answer = await c.request("launch", {"trace": str(trace)})
    assert answer["success"] is False and "forged" in answer["message"]
