"""`nika mcp serve`: the checker's tools and the code registry over MCP, tested with the SDK's own
client over stdio (a real server process), plus the tools' edge cases called directly."""

from __future__ import annotations

import asyncio
import json
import os
import sys
from pathlib import Path
from typing import Any

import pytest

from checker import compile_text
from checker.views.projection import project
from nika.commands import mcp_tools

ROOT = Path(__file__).resolve().parents[2]
BROKEN = (
    "nika: v1\nworkflow: {id: x}\ntasks:\n  a:\n    with: {v: '${{ tasks.b.output }}'}\n    exec: {command: [echo]}\n"
)
FIXABLE = "nika: v1\nworkflow: {id: My_Flow}\nmodel: mock/echo\ntasks:\n  a:\n    infer: {prompt: hi}\n"
CLEAN = FIXABLE.replace("My_Flow", "my-flow")


async def _session(tmp_path: Path) -> dict[str, Any]:
    from mcp import Client, StdioServerParameters

    (tmp_path / "flow.nika.yaml").write_text(FIXABLE)
    (tmp_path / "clean.nika.yaml").write_text(CLEAN)
    env = {"PYTHONPATH": str(ROOT), "PATH": os.environ.get("PATH", "")}
    target = StdioServerParameters(
        command=sys.executable, args=["-m", "nika", "mcp", "serve"], env=env, cwd=str(tmp_path)
    )
    seen: dict[str, Any] = {}
    async with Client(target, mode="legacy", read_timeout_seconds=30) as client:
        seen["tools"] = sorted(t.name for t in (await client.list_tools()).tools)
        seen["check"] = (await client.call_tool("check", {"text": BROKEN})).structured_content
        seen["check_path"] = (await client.call_tool("check", {"path": "flow.nika.yaml"})).structured_content
        seen["fix"] = (await client.call_tool("fix", {"path": "flow.nika.yaml"})).structured_content
        seen["dry"] = (await client.call_tool("run_dry", {"path": "flow.nika.yaml"})).structured_content
        inspected = await client.call_tool("nika_inspect", {"path": "clean.nika.yaml"})
        seen["inspect"] = (inspected.content[0].text, inspected.structured_content)
        refused = await client.call_tool("nika_inspect", {"text": BROKEN})
        seen["inspect_refused"] = (refused.is_error, refused.content[0].text)
        listed = {t.name: t for t in (await client.list_tools()).tools}
        seen["inspect_annotations"] = listed["nika_inspect"].annotations
        seen["schema"] = (await client.call_tool("schema", {})).structured_content
        explained = await client.call_tool("explain", {"code": "DAG-002"})
        seen["explain"] = explained.content[0].text
        bad = await client.call_tool("explain", {"code": "NOPE-1"})
        seen["bad"] = (bad.is_error, bad.content[0].text)
        seen["codes"] = json.loads((await client.read_resource("nika://codes")).contents[0].text)
        seen["code"] = (await client.read_resource("nika://codes/DAG-002")).contents[0].text
    return seen


def test_an_agent_checks_fixes_and_plans_over_stdio(tmp_path: Path) -> None:
    seen = asyncio.run(_session(tmp_path))
    assert seen["tools"] == ["check", "explain", "fix", "nika_inspect", "run_dry", "schema"]
    findings = seen["check"]["reports"][0]["findings"]
    assert {f["code"] for f in findings} == {"NIKA-DAG-002", "NIKA-AUTH-006"} and seen["check"]["clean"] is False
    assert [f["code"] for f in seen["check_path"]["reports"][0]["findings"]] == ["NIKA-PARSE-004"]
    assert seen["fix"]["fixed"] == 1 and "+workflow: {id: my-flow}" in seen["fix"]["diff"]
    assert seen["fix"]["written"] is False and (tmp_path / "flow.nika.yaml").read_text() == FIXABLE  # never unasked
    assert seen["dry"]["workflow_state"] == "refused"
    text, data = seen["inspect"]
    assert text == project(compile_text(CLEAN)).canonical() and data == json.loads(text)  # nika inspect's bytes
    assert seen["inspect_refused"][0] is True and "no projection (findings)" in seen["inspect_refused"][1]
    notes = seen["inspect_annotations"]
    assert notes.read_only_hint is True and notes.destructive_hint is False and notes.open_world_hint is False
    assert seen["schema"]["$schema"].startswith("https://json-schema.org/draft/2020-12")
    assert seen["explain"].startswith("NIKA-DAG-002: ") and seen["code"] == seen["explain"]
    assert seen["bad"][0] is True and "unknown code `NOPE-1`" in seen["bad"][1]
    assert {"NIKA-DAG-002", "native-first/001"} <= {c["code"] for c in seen["codes"]}


def test_fix_writes_only_when_asked(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "f.nika.yaml").write_text(FIXABLE)
    out = mcp_tools.fix(path="f.nika.yaml", write=True)
    assert out["written"] is True and "id: my-flow" in (tmp_path / "f.nika.yaml").read_text()
    with pytest.raises(mcp_tools.ToolError, match="cannot be combined with `text`"):
        mcp_tools.fix(text=FIXABLE, write=True)
    with pytest.raises(mcp_tools.ToolError, match="no such file"):
        mcp_tools.check(path="missing.nika.yaml")
    with pytest.raises(mcp_tools.ToolError, match="give the workflow as `text`"):
        mcp_tools.nika_inspect()


def test_run_dry_plans_a_clean_workflow(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    plan = mcp_tools.run_dry(text=FIXABLE.replace("My_Flow", "my-flow"))
    assert plan["waves"] == [["a"]] and plan["tasks"]["a"]["effects"] == ["model mock/echo"]


SELECTED = """\
nika: v1
workflow: { id: selected }
permits: { tools: ["nika:jq", "nika:prompt"] }
tasks:
  fetch:
    infer: { prompt: "rows", model: mock/echo }
  ok:
    invoke: { tool: "nika:prompt", args: { mode: confirm, message: "Ship?", default: true } }
  shape:
    after: { ok: success }
    with: { r: "${{ tasks.fetch.output }}" }
    invoke: { tool: "nika:jq", args: { input: "${{ with.r }}", expression: "." } }
  publish:
    with: { s: "${{ tasks.shape.output }}" }
    invoke: { tool: "nika:jq", args: { input: "${{ with.s }}", expression: "." } }
"""


def test_run_dry_shows_the_selection_of_a_task_run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The selection `nika run --task` makes, from the one `select` the run calls; nothing runs."""
    monkeypatch.chdir(tmp_path)
    plan = mcp_tools.run_dry(text=SELECTED, tasks=["shape"])
    assert plan["selection"] == {
        "named": ["shape"],
        "runs": ["ok", "shape"],  # the named task and every gate (a gate is never reused from a record)
        "reused_if_recorded": ["fetch"],
        "asks_again": ["ok"],
    }
    deps = mcp_tools.run_dry(text=SELECTED, tasks=["shape"], with_dependents=True)["selection"]
    assert deps["runs"] == ["ok", "publish", "shape"] and deps["reused_if_recorded"] == ["fetch"]
    assert "selection" not in mcp_tools.run_dry(text=SELECTED)
    with pytest.raises(mcp_tools.ToolError, match="the workflow has no such task"):
        mcp_tools.run_dry(text=SELECTED, tasks=["nope"])
    with pytest.raises(mcp_tools.ToolError, match="`with_dependents` needs `tasks`"):
        mcp_tools.run_dry(text=SELECTED, with_dependents=True)
    assert not (tmp_path / ".nika").exists()  # a plan: no journal, no run


def test_a_bad_http_address_is_one_line(capsys: pytest.CaptureFixture[str]) -> None:
    from nika.cli import main

    assert main(["mcp", "serve", "--http", "nonsense"]) == 1
    err = capsys.readouterr().err
    assert err == (
        "nika mcp serve: `--http nonsense`: give HOST:PORT with a port from 1 to 65535, e.g. --http 127.0.0.1:2087\n"
    )
    assert main(["mcp"]) == 1 and "give a subcommand: serve" in capsys.readouterr().err
