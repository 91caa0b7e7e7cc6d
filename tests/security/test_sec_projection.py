"""The projection is structure only (spec 16 §read discipline): never a `config` value, a secret,
an input's value or a run's output — on every surface — and the MCP tool reads its file through
the server's one reader, as `check` does.

`nika:inspect` reads its own run without opening a side door around `with:`: its `records` view
has statuses and timings, never a task's output or error message (those go through a data edge
the checker orders and judges for taint and secret flow).
"""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from checker import compile_text
from checker.views.projection import project, semantic_document
from nika.commands import mcp_tools

WORKFLOW = """nika: v1
workflow: { id: quiet }
model: mock/echo
inputs:
  who: { type: string, default: "INPUT-SENTINEL" }
config:
  region: { type: string, default: "CONFIG-SENTINEL" }
const:
  greeting: "CONST-SENTINEL"
secrets:
  token: { source: env, key: SECRET_SENTINEL_KEY, egress: [{ to: exec }] }
permits:
  exec: ["echo"]
  env: ["SECRET_SENTINEL_KEY"]
  tools: ["nika:inspect"]
tasks:
  say:
    with: { who: "${{ inputs.who }}", hi: "${{ const.greeting }}" }
    exec:
      command: ["echo", "${{ with.hi }} ${{ with.who }} OUTPUT-SENTINEL"]
      env: { TOKEN: "${{ secrets.token }}" }
  look:
    after: { say: success }
    invoke: { tool: "nika:inspect", args: { view: records } }
"""
SENTINELS = ("INPUT-SENTINEL", "CONFIG-SENTINEL", "CONST-SENTINEL", "OUTPUT-SENTINEL")


def test_no_value_reaches_any_surface(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    compiled = compile_text(WORKFLOW)
    assert compiled.clean, [(d.code, d.message) for d in compiled.diagnostics if d.is_error]
    p = project(compiled)
    text = p.canonical()
    assert text is not None
    doc = semantic_document(p, lambda src, span: [span.start, span.end], compiled.source)
    monkeypatch.chdir(tmp_path)
    (tmp_path / "quiet.nika.yaml").write_text(WORKFLOW)
    served = [text, str(doc), mcp_tools.nika_inspect(path="quiet.nika.yaml")]
    for sentinel in SENTINELS:
        assert not any(sentinel in s for s in served), sentinel


def test_inspect_records_carry_no_output(tmp_path: Path) -> None:
    from runtime.engine.options import Options
    from runtime.engine.run import Run
    from runtime.verbs import VERBS

    compiled = compile_text(WORKFLOW, str(tmp_path / "quiet.nika.yaml"), str(tmp_path))
    env = {"SECRET_SENTINEL_KEY": "s3cr3t-value", "PATH": "/usr/bin:/bin"}
    opts = Options(trace_dir=None, engine_env=env)
    run = Run(compiled, {"who": "INPUT-SENTINEL"}, opts, verbs=VERBS, workdir=tmp_path)
    result = asyncio.run(run.execute())
    assert result.workflow_state == "success", {t: r.error for t, r in result.tasks.items()}
    assert "OUTPUT-SENTINEL" in str(result.tasks["say"].output)  # the output exists, and stays out of the view
    records = result.tasks["look"].output
    assert [r["id"] for r in records["tasks"]] == ["say", "look"]
    assert not any(s in str(records) for s in ("OUTPUT-SENTINEL", "s3cr3t-value", "INPUT-SENTINEL"))


def test_the_tool_reads_through_the_server_s_one_reader(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """What `check` refuses to read, `nika_inspect` refuses the same way (one reader for both)."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "folder.nika.yaml").mkdir()
    refusals = []
    for tool in (mcp_tools.check, mcp_tools.nika_inspect):
        with pytest.raises(mcp_tools.ToolError) as caught:
            tool(path="folder.nika.yaml")
        refusals.append(str(caught.value))
    assert refusals[0] == refusals[1]
