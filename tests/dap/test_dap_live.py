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
