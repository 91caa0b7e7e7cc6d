"""MCP configuration cannot be used to start a process the workflow may not start.

Spec 01 §permits: omitted `exec` under a present block is "no exec"; 08 §MCP: the server set
lives in engine config, not workflow YAML; 01 §environment: a stdio `mcp:*` server is a child
process. So the spawn of a stdio server is judged by `permits.exec` and witnessed, the table is
read once before the first task, and a table the workflow can write is refused.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

PY = sys.executable


def evil_config(tmp_path: Path) -> Path:
    """A server whose "command" only leaves a marker file behind: it must never run."""
    marker = tmp_path / "spawned.marker"
    (tmp_path / "evil.py").write_text(f"open({str(marker)!r}, 'w').write('started')\n")
    return marker


def write_config(tmp_path: Path) -> None:
    (tmp_path / ".nika").mkdir(exist_ok=True)
    server = {"command": PY, "args": [str(tmp_path / "evil.py")]}
    (tmp_path / ".nika" / "mcp.json").write_text(json.dumps({"mcpServers": {"evil": server}}))


CALL = "  call:\n    invoke: { tool: 'mcp:evil/x', args: {} }\n"


def test_a_tools_grant_without_exec_starts_no_server(run, tmp_path: Path) -> None:
    marker = evil_config(tmp_path)
    write_config(tmp_path)
    result = run("nika: v1\nworkflow: { id: m }\npermits: { tools: ['mcp:evil/*'] }\ntasks:\n" + CALL)
    err = result.tasks["call"].error
    assert err is not None and err["code"] == "NIKA-SEC-004", err
    assert not marker.exists(), "the MCP server was started without an exec grant"
    denied = [e for e in result.events if e["type"] == "permit.checked" and e.get("plane") == "exec"]
    assert denied and denied[0]["decision"] == "deny" and denied[0]["gate"] == PY


def test_a_config_written_mid_run_is_not_read(run, tmp_path: Path) -> None:
    """The table is a snapshot taken before the first task: writing `.nika/mcp.json` adds nothing."""
    marker = evil_config(tmp_path)
    doc = json.dumps({"mcpServers": {"evil": {"command": PY, "args": [str(tmp_path / "evil.py")]}}})
    wf = (
        "nika: v1\nworkflow: { id: m }\n"
        f"permits: {{ fs: {{ write: ['./.nika/**'] }}, tools: ['nika:write', 'mcp:evil/*'], exec: ['{PY}'] }}\n"
        "tasks:\n  plant:\n    invoke:\n      tool: nika:write\n"
        f"      args: {{ path: ./.nika/mcp.json, content: {json.dumps(doc)}, create_dirs: true }}\n"
        "  call:\n    after: { plant: success }\n    invoke: { tool: 'mcp:evil/x', args: {} }\n"
    )
    result = run(wf)
    assert result.tasks["plant"].status == "success", result.tasks["plant"].error
    err = result.tasks["call"].error
    assert err is not None and err["code"] == "NIKA-MCP-001" and "no MCP server `evil`" in err["message"]
    assert not marker.exists()


def test_a_config_inside_a_write_grant_is_refused(run, tmp_path: Path) -> None:
    """The next run, the planted file is there: it lies inside `permits.fs.write`, so it is refused."""
    marker = evil_config(tmp_path)
    write_config(tmp_path)
    wf = (
        "nika: v1\nworkflow: { id: m }\n"
        f"permits: {{ fs: {{ write: ['./**'] }}, tools: ['mcp:evil/*'], exec: ['{PY}'] }}\ntasks:\n" + CALL
    )
    result = run(wf)
    err = result.tasks["call"].error
    assert err is not None and err["code"] == "NIKA-MCP-001", err
    assert "permits.fs.write" in err["message"] and "NIKA_MCP_CONFIG" in err["message"]
    assert not marker.exists()


def test_the_engine_names_its_config_outside_the_tree(run, tmp_path: Path) -> None:
    """`NIKA_MCP_CONFIG` points at engine configuration elsewhere; the workflow's own file is ignored."""
    marker = evil_config(tmp_path)
    write_config(tmp_path)
    engine = tmp_path.parent / f"{tmp_path.name}-engine.json"
    engine.write_text(json.dumps({"mcpServers": {}}))
    wf = f"nika: v1\nworkflow: {{ id: m }}\npermits: {{ tools: ['mcp:evil/*'], exec: ['{PY}'] }}\ntasks:\n" + CALL
    result = run(wf, engine_env={"NIKA_MCP_CONFIG": str(engine)})
    err = result.tasks["call"].error
    assert err is not None and err["code"] == "NIKA-MCP-001" and str(engine) in err["message"]
    assert not marker.exists()
