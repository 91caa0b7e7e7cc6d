"""``nika dap`` live sessions, in process: breakpoints hold a task before its effect."""

from __future__ import annotations

from pathlib import Path

import pytest
from dap_client import Client

MARKER = """nika: v1
workflow:
  id: marker
permits:
  exec: ["echo", "touch"]
tasks:
  prepare:
    exec:
      command: ["echo", "marker.txt"]
  write_marker:
    with:
      name: ${{ tasks.prepare.output }}
    exec:
      command: ["touch", "${{ with.name }}"]
"""


def _write(tmp: Path, name: str, text: str) -> Path:
    p = tmp / name
    p.write_text(text, encoding="utf-8")
    return p


def _line(path: Path, needle: str) -> int:
    return next(i for i, line in enumerate(path.read_text().splitlines(), 1) if needle in line)


async def test_breakpoint_pauses_before_the_effect(tmp_path: Path) -> None:
    wf = _write(tmp_path, "m.nika.yaml", MARKER)
    c = Client(tmp_path)
    line = _line(wf, '"touch", "${{')  # a line inside the task's body
    answers = await c.start({"program": str(wf)}, {str(wf): [{"line": line}]})
    bp = answers[str(wf)]["body"]["breakpoints"][0]
    assert bp["verified"] and bp["line"] == _line(wf, "write_marker:")
    stop = await c.stopped()
    assert stop["body"]["reason"] == "breakpoint" and stop["body"]["allThreadsStopped"] is True
    assert not (tmp_path / "marker.txt").exists()  # held before the effect
    v = await c.variables_of(stop["body"]["threadId"])
    task = v["Task"]
    assert task["with"]["name"] == '"marker.txt"'
    assert task["exec"]["command"] == {"[0]": '"touch"', "[1]": '"marker.txt"'}  # resolved, not yet run
    assert (await c.request("continue", {"threadId": stop["body"]["threadId"]}))["success"]
    code = await c.finish()
    assert code == 0, [e["body"]["output"] for e in c.events if e["event"] == "output"]
    assert (tmp_path / "marker.txt").exists()


PARALLEL = """nika: v1
workflow:
  id: parallel
permits:
  exec: ["echo", "touch"]
tasks:
  held:
    exec:
      command: ["echo", "held"]
  other:
    after: { held: success }
    exec:
      command: ["touch", "other.txt"]
  sibling:
    exec:
      command: ["touch", "sibling.txt"]
"""


async def test_a_stop_holds_the_whole_run_and_next_steps_to_the_next_task(tmp_path: Path) -> None:
    wf = _write(tmp_path, "p.nika.yaml", PARALLEL)
    c = Client(tmp_path)
    await c.start({"program": str(wf)}, {str(wf): [{"line": _line(wf, "held:")}]})
    first = await c.stopped()
    assert first["body"]["reason"] == "breakpoint" and first["body"]["allThreadsStopped"] is True
    threads = (await c.request("threads"))["body"]["threads"]
    assert first["body"]["threadId"] in [t["id"] for t in threads]
    live = c.session.live
    assert live is not None and live.run is not None
    # `sibling` was ready with `held`, has no breakpoint, and still has not started: the stop holds the run
    assert live.run.records["sibling"].started_at is None
    assert not (tmp_path / "sibling.txt").exists()
    await c.request("next", {"threadId": first["body"]["threadId"]})
    second = await c.stopped()  # `next`: held runs, and the next task to reach its effect stops
    assert second["body"]["reason"] == "step"
    name = next(
        t["name"] for t in (await c.request("threads"))["body"]["threads"] if t["id"] == second["body"]["threadId"]
    )
    assert name in {"sibling", "other"}
    assert live.run.records["held"].status == "success"  # `next` ran the held task to its end
    last = (await c.variables_of(second["body"]["threadId"]))["Last step"]
    assert last == {"task": '"held"', "status": '"success"', "output": '"held"'}
    await c.request("continue", {"threadId": second["body"]["threadId"]})
    assert await c.finish() == 0
    assert (tmp_path / "other.txt").exists() and (tmp_path / "sibling.txt").exists()


FOR_EACH = """nika: v1
workflow:
  id: fan
permits:
  exec: ["echo"]
const:
  items: [3, 7, 11]
tasks:
  each:
    for_each: "${{ const.items }}"
    max_parallel: 1
    exec:
      command: ["echo", "n=${{ item }}"]
"""


async def test_for_each_breaks_per_iteration_with_the_item_and_a_condition(tmp_path: Path) -> None:
    wf = _write(tmp_path, "f.nika.yaml", FOR_EACH)
    c = Client(tmp_path)
    await c.start({"program": str(wf)}, {str(wf): [{"line": _line(wf, 'echo", "n='), "condition": "${{ item > 5 }}"}]})
    seen = []
    for _ in range(2):  # 7 and 11 hold; 3 does not (the condition is false)
        stop = await c.stopped()
        v = await c.variables_of(stop["body"]["threadId"])
        seen.append((v["Task"]["item"], v["Task"]["index"], v["Task"]["exec"]["command"]["[1]"]))
        await c.request("continue", {"threadId": stop["body"]["threadId"]})
    assert seen == [("7", "1", '"n=7"'), ("11", "2", '"n=11"')]
    assert await c.finish() == 0
    assert not [e for e in c.events if e["event"] == "stopped" and not e.get("_taken")]


async def test_a_condition_that_does_not_parse_is_an_unverified_breakpoint(tmp_path: Path) -> None:
    wf = _write(tmp_path, "f.nika.yaml", FOR_EACH)
    c = Client(tmp_path)
    answers = await c.start(
        {"program": str(wf)}, {str(wf): [{"line": _line(wf, "each:"), "condition": "item >"}, {"line": 1}]}
    )
    bad, off = answers[str(wf)]["body"]["breakpoints"]
    assert bad["verified"] is False and "condition" in bad["message"]
    assert off["verified"] is False and "no task" in off["message"]
    assert await c.finish() == 0  # neither stops the run


FAILING = """nika: v1
workflow:
  id: failing
permits:
  exec: ["false", "echo"]
tasks:
  broken:
    exec:
      command: ["false"]
    on_error: { skip: true }
  fine:
    exec:
      command: ["echo", "fine"]
"""


async def test_an_exception_breakpoint_stops_on_failure_before_on_error(tmp_path: Path) -> None:
    wf = _write(tmp_path, "x.nika.yaml", FAILING)
    c = Client(tmp_path)
    await c.start({"program": str(wf)}, exceptions=True)
    stop = await c.stopped()
    assert stop["body"]["reason"] == "exception" and "broken" in stop["body"]["description"]
    v = await c.variables_of(stop["body"]["threadId"])
    assert v["Task"]["error"]["code"].startswith('"NIKA-')
    await c.request("continue", {"threadId": stop["body"]["threadId"]})
    assert await c.finish() == 0  # on_error: skip decided after the stop


CHILD = """nika: v1
workflow:
  id: child
permits:
  exec: ["echo"]
inputs:
  who: { type: string, required: true }
tasks:
  inner:
    exec:
      command: ["echo", "child ${{ inputs.who }}"]
"""
PARENT = """nika: v1
workflow:
  id: parent
permits:
  exec: ["echo"]
tasks:
  call:
    invoke: { workflow: "./child.nika.yaml", args: { who: "ada" } }
"""


async def test_a_breakpoint_in_a_child_workflow_shows_the_call_chain(tmp_path: Path) -> None:
    child = _write(tmp_path, "child.nika.yaml", CHILD)
    parent = _write(tmp_path, "parent.nika.yaml", PARENT)
    c = Client(tmp_path)
    await c.start({"program": str(parent)}, {str(child): [{"line": _line(child, "inner:")}]})
    stop = await c.stopped()
    frames = (await c.request("stackTrace", {"threadId": stop["body"]["threadId"]}))["body"]["stackFrames"]
    assert [f["name"] for f in frames] == ["child › inner", "parent › call"]
    assert frames[0]["source"]["path"] == str(child.resolve()) and frames[0]["line"] == _line(child, "inner:")
    assert frames[1]["source"]["path"] == str(parent.resolve()) and frames[1]["line"] == _line(parent, "call:")
    v = await c.variables_of(stop["body"]["threadId"])
    assert v["Inputs"]["who"] == '"ada"'
    await c.request("continue", {"threadId": stop["body"]["threadId"]})
    assert await c.finish() == 0


async def test_disconnect_while_held_cancels_the_run_cleanly(tmp_path: Path) -> None:
    from runtime.journal.scan import scan

    wf = _write(tmp_path, "m.nika.yaml", MARKER)
    c = Client(tmp_path)
    await c.start({"program": str(wf), "traceDir": "traces"}, {str(wf): [{"line": _line(wf, "write_marker:")}]})
    await c.stopped()
    answer = await c.request("disconnect", {"terminateDebuggee": True})
    assert answer["success"]
    assert await c.finish() == 3  # exit 3: cancelled
    assert not (tmp_path / "marker.txt").exists()  # the held effect never happened
    (journal,) = (tmp_path / "traces").rglob("*.ndjson")
    s = scan(journal.read_bytes())
    assert s.damage == "whole" and s.terminal == "workflow_cancelled"


TIMED = """nika: v1
workflow:
  id: timed
permits:
  exec: ["echo"]
tasks:
  quick:
    timeout: "1s"
    exec:
      command: ["echo", "in time"]
"""


async def test_a_held_task_timeout_does_not_count_while_held(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The hold comes before the `timeout:` timer starts (it is the verb stage's first step), and the
    held time is given back to the task's start on the real clock, which the deadlines of a child
    workflow and an agent count from: a fake clock that jumps 100 s during the hold shows it."""
    import runtime.engine.debug as debug

    wf = _write(tmp_path, "t.nika.yaml", TIMED)
    c = Client(tmp_path)
    await c.start({"program": str(wf)}, {str(wf): [{"line": _line(wf, "quick:")}]})
    stop = await c.stopped()
    live = c.session.live
    assert live is not None and live.run is not None
    rec = live.run.records["quick"]
    started = rec.started_monotonic
    real = debug.clock
    monkeypatch.setattr(debug, "clock", lambda: real() + 100.0)  # 100 s pass while held
    await c.request("continue", {"threadId": stop["body"]["threadId"]})
    assert await c.finish() == 0
    assert rec.started_monotonic - started >= 100.0
    assert live.result.tasks["quick"].status == "success"


async def test_live_runs_refuse_to_step_back_and_bad_launches_say_why(tmp_path: Path) -> None:
    wf = _write(tmp_path, "m.nika.yaml", MARKER)
    c = Client(tmp_path)
    await c.start({"program": str(wf)}, {str(wf): [{"line": _line(wf, "prepare:")}]})
    stop = await c.stopped()
    back = await c.request("stepBack", {"threadId": stop["body"]["threadId"]})
    assert back["success"] is False and "replay" in back["message"]
    await c.request("continue", {"threadId": stop["body"]["threadId"]})
    assert await c.finish() == 0
    bad = Client(tmp_path)
    await bad.request("initialize", {"adapterID": "nika"})
    missing = await bad.request("launch", {"program": "nope.nika.yaml"})
    assert missing["success"] is False and "nope.nika.yaml" in missing["message"]
    neither = await bad.request("launch", {})
    assert neither["success"] is False and "program" in neither["message"]


async def test_stop_on_entry_and_pause(tmp_path: Path) -> None:
    wf = _write(tmp_path, "p.nika.yaml", PARALLEL)
    c = Client(tmp_path)
    await c.start({"program": str(wf), "stopOnEntry": True})
    entry = await c.stopped()
    assert entry["body"]["reason"] == "entry"
    assert (await c.request("pause", {"threadId": entry["body"]["threadId"]}))["success"]
    await c.request("continue", {"threadId": entry["body"]["threadId"]})
    paused = await c.stopped()  # the pause stops the next task that reaches its effect
    assert paused["body"]["reason"] == "pause"
    await c.request("continue", {"threadId": paused["body"]["threadId"]})
    assert await c.finish() == 0
