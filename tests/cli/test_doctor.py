"""`nika doctor`: one ok/warn/broken line per fact, a repair on each non-ok line, key names but never
their values, MCP servers looked up but never started, exit 1 only when something is broken."""

from __future__ import annotations

import json
import os
import stat
import sys
from pathlib import Path

import pytest

from nika.cli import main
from nika.commands import doctor

SECRET = "sk-very-secret-value-1234"


def _run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], *args: str
) -> tuple[int, str]:
    monkeypatch.chdir(tmp_path)
    rc = main(["doctor", *args])
    out = capsys.readouterr()
    return rc, out.out + out.err


@pytest.fixture(autouse=True)
def _no_keys(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in list(os.environ):
        if name.endswith(("_API_KEY", "_TOKEN")):
            monkeypatch.delenv(name)


def test_key_names_are_reported_never_their_values(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", SECRET)
    monkeypatch.setenv("NIKA_OPENAI_API_KEY", SECRET + "2")
    for fmt in ("text", "json"):
        rc, out = _run(tmp_path, monkeypatch, capsys, "--output-format", fmt)
        assert rc == 0
        assert "very-secret" not in out and SECRET not in out
        assert "anthropic: key set in ANTHROPIC_API_KEY" in out
        assert "openai: key set in NIKA_OPENAI_API_KEY" in out
    rc, out = _run(tmp_path, monkeypatch, capsys, "--output-format", "json")
    doc = json.loads(out)
    assert doc["ok"] is True
    assert {c["topic"] for c in doc["checks"]} >= {"python", "package", "provider", "config", "mcp", "traces"}


def test_no_key_at_all_is_a_warning_with_the_variable_to_export(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    lines = [x for x in doctor.diagnose(tmp_path, {}) if x.topic == "provider"]
    assert len(lines) == 1 and lines[0].status == doctor.WARN
    assert "ANTHROPIC_API_KEY" in lines[0].message and lines[0].repair


def test_versions_come_from_the_installed_distributions() -> None:
    lines = doctor.diagnose(Path("/nonexistent-dir-for-doctor"), {})
    assert lines[0].topic == "python" and f"{sys.version_info.major}.{sys.version_info.minor}" in lines[0].message
    from importlib.metadata import version

    assert any(x.message == f"mcp {version('mcp')}" for x in lines)


def test_mcp_servers_stdio_on_path_or_broken_never_started(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    bindir = tmp_path / "bin"
    bindir.mkdir()
    tool = bindir / "my-mcp-server"
    marker = tmp_path / "started"
    tool.write_text(f"#!/bin/sh\ntouch {marker}\n")
    tool.chmod(tool.stat().st_mode | stat.S_IXUSR)
    (tmp_path / ".nika").mkdir()
    cfg = {
        "mcpServers": {
            "here": {"command": "my-mcp-server", "env": {"TOKEN": SECRET}},
            "web": {"url": "http://127.0.0.1:9/mcp", "headers": {"Authorization": SECRET}},
        }
    }
    (tmp_path / ".nika" / "mcp.json").write_text(json.dumps(cfg))
    monkeypatch.setenv("PATH", f"{bindir}{os.pathsep}{os.environ.get('PATH', '')}")
    rc, out = _run(tmp_path, monkeypatch, capsys)
    assert rc == 0, out
    assert "server `here`: stdio command `my-mcp-server` found" in out and "not started" in out
    assert "server `web`: streamable HTTP" in out
    assert not marker.exists()  # nothing was started
    assert SECRET not in out

    cfg["mcpServers"]["gone"] = {"command": "no-such-mcp-command-xyz"}
    (tmp_path / ".nika" / "mcp.json").write_text(json.dumps(cfg))
    rc, out = _run(tmp_path, monkeypatch, capsys)
    assert rc == 1
    assert "broken" in out and "`no-such-mcp-command-xyz` is not on PATH" in out and "Install" in out


def test_a_broken_mcp_json_is_broken_with_a_repair(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / ".nika").mkdir()
    (tmp_path / ".nika" / "mcp.json").write_text("{not json")
    rc, out = _run(tmp_path, monkeypatch, capsys, "--output-format", "json")
    assert rc == 1
    bad = [c for c in json.loads(out)["checks"] if c["status"] == "broken"]
    assert len(bad) == 1 and bad[0]["topic"] == "mcp" and "cannot be read as JSON" in bad[0]["message"]
    assert bad[0]["repair"]


def test_trace_folder_missing_present_and_counted(tmp_path: Path) -> None:
    def traces() -> doctor.Line:
        return next(x for x in doctor.diagnose(tmp_path, {}) if x.topic == "traces")

    assert traces().status == doctor.OK and "first `nika run` creates it" in traces().message
    folder = tmp_path / ".nika" / "traces"
    folder.mkdir(parents=True)
    (folder / "a.ndjson").write_text("{}\n")
    (folder / "b.ndjson").write_text("{}\n")
    assert traces().status == doctor.OK and "writable, 2 trace file(s)" in traces().message
    assert next(x for x in doctor.diagnose(tmp_path, {}) if x.topic == "config").status == doctor.OK


@pytest.mark.skipif(os.name != "posix" or os.geteuid() == 0, reason="root writes into read-only folders")
def test_an_unwritable_trace_folder_is_broken(tmp_path: Path) -> None:
    folder = tmp_path / ".nika" / "traces"
    folder.mkdir(parents=True)
    folder.chmod(0o500)
    try:
        line = next(x for x in doctor.diagnose(tmp_path, {}) if x.topic == "traces")
    finally:
        folder.chmod(0o700)
    assert line.status == doctor.BROKEN and "--trace-dir" in line.repair


def test_a_trace_path_that_is_a_file_is_broken(tmp_path: Path) -> None:
    (tmp_path / ".nika").mkdir()
    (tmp_path / ".nika" / "traces").write_text("")
    line = next(x for x in doctor.diagnose(tmp_path, {}) if x.topic == "traces")
    assert line.status == doctor.BROKEN and line.repair


def test_every_non_ok_line_carries_a_repair(tmp_path: Path) -> None:
    for x in doctor.diagnose(tmp_path, {}):
        assert x.status in (doctor.OK, doctor.WARN, doctor.BROKEN)
        if x.status != doctor.OK:
            assert x.repair.endswith("."), x


def test_the_module_imports_nothing_heavy() -> None:
    import subprocess

    code = (
        "import sys, nika.commands.doctor; heavy = [m for m in ('runtime.tools.mcp_client', 'mcp', 'httpx', "
        "'checker.contracts.tables', "
        "'pygls', 'ruamel.yaml') if m in sys.modules]; print(heavy)"
    )
    root = str(Path(__file__).resolve().parents[2])
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env={**os.environ, "PYTHONPATH": root}, check=True
    )
    assert out.stdout.strip() == "[]"
