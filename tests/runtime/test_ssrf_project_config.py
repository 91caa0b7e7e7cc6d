"""The SSRF allowance from project configuration (`fetch-allow-private` in nika.toml / [tool.nika]):
joined to NIKA_FETCH_ALLOW_PRIVATE as a union, metadata addresses still lifted only by address, and
withheld when the workflow could rewrite the project file."""

from __future__ import annotations

from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from typing import Any

import pytest
from rt_helpers import serving

from checker.project.config_files import SettingsError
from checker.project.settings import load
from runtime.errors import TaskError
from runtime.net.ssrf import ALLOW_ENV, Allowance, judge_host, with_project_allowance
from tests.runtime.rt_helpers import run_yaml


class _Handler(BaseHTTPRequestHandler):
    def log_message(self, *a: Any) -> None:
        pass

    def do_GET(self) -> None:
        body = b"inside"
        self.send_response(200)
        self.send_header("content-type", "text/plain")
        self.send_header("content-length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


@pytest.fixture(scope="module")
def port() -> Iterator[int]:
    with serving(_Handler) as port:
        yield port


class _Boundary:
    def __init__(self, grant: str | None = None) -> None:
        self.grant = grant

    def write_grant_covering(self, path: str) -> str | None:
        return self.grant


def _project(tmp_path: Path, items: str) -> Path:
    (tmp_path / "nika.toml").write_text(f"fetch-allow-private = {items}\n")
    wf = tmp_path / "w.nika.yaml"
    wf.write_text("nika: v1\n")
    return wf


def _never(host: str, port: int) -> list[str]:
    raise AssertionError("a literal address is never resolved")


def test_the_project_list_and_the_variable_make_one_union(tmp_path: Path) -> None:
    wf = _project(tmp_path, '["127.0.0.1", "10.0.0.0/8"]')
    env = with_project_allowance({ALLOW_ENV: "192.168.0.0/16,10.0.0.0/8", "OTHER": "x"}, str(wf), _Boundary())
    assert env[ALLOW_ENV].split(",") == ["192.168.0.0/16", "10.0.0.0/8", "127.0.0.1"]
    assert env["OTHER"] == "x"
    allow = Allowance.from_env(env)
    for addr in ("127.0.0.1", "10.1.2.3", "192.168.4.5"):  # each side lifts its own, neither narrows
        assert str(judge_host(addr, 80, allow, _never)) == addr
    with pytest.raises(TaskError) as e:
        judge_host("172.16.0.1", 80, allow, _never)
    assert e.value.code == "NIKA-SEC-004"


def test_without_a_project_list_the_environment_is_unchanged(tmp_path: Path) -> None:
    (tmp_path / "nika.toml").write_text("strict = true\n")
    env = {ALLOW_ENV: "127.0.0.1"}
    assert with_project_allowance(env, str(tmp_path / "w.nika.yaml"), _Boundary()) == env


def test_metadata_stays_refused_unless_the_project_lists_its_address(tmp_path: Path) -> None:
    wf = _project(tmp_path, '["169.254.0.0/16"]')
    allow = Allowance.from_env(with_project_allowance({}, str(wf), _Boundary()))
    assert str(judge_host("169.254.10.10", 80, allow, _never)) == "169.254.10.10"  # link-local: lifted
    with pytest.raises(TaskError) as e:
        judge_host("169.254.169.254", 80, allow, _never)
    assert e.value.code == "NIKA-SEC-004" and "169.254.169.254` itself" in e.value.message
    wf = _project(tmp_path, '["169.254.169.254"]')
    allow = Allowance.from_env(with_project_allowance({}, str(wf), _Boundary()))
    assert str(judge_host("169.254.169.254", 80, allow, _never)) == "169.254.169.254"


def test_a_project_file_the_workflow_may_write_lifts_nothing(tmp_path: Path) -> None:
    wf = _project(tmp_path, '["127.0.0.1"]')
    env = with_project_allowance({}, str(wf), _Boundary("`./**`"))
    assert ALLOW_ENV not in env
    with pytest.raises(TaskError) as e:
        judge_host("127.0.0.1", 80, Allowance.from_env(env), _never)
    msg = e.value.message
    assert "not honoured" in msg and str(tmp_path / "nika.toml") in msg and "`./**`" in msg


@pytest.mark.parametrize(
    "value",
    ['"127.0.0.1,10.0.0.0/8"', '["127.0.0.1,10.0.0.1"]', '[""]', "[1]", '["a b"]'],
)
def test_malformed_project_lists_are_refused_by_name(tmp_path: Path, value: str) -> None:
    (tmp_path / "nika.toml").write_text(f"fetch-allow-private = {value}\n")
    with pytest.raises(SettingsError) as e:
        load(str(tmp_path / "nika.toml"), False)
    assert "fetch-allow-private" in str(e.value)


_WF = """
nika: v1
workflow:
  id: fetch-project
permits:
  tools: ["nika:fetch"]
  net:
    http: ["127.0.0.1"]
{extra}
tasks:
  get:
    invoke:
      tool: "nika:fetch"
      args: {{ url: "http://127.0.0.1:{port}/", mode: raw }}
    timeout: "5s"
"""


def test_nika_run_honours_the_project_allowance(tmp_path: Path, port: int) -> None:
    text = _WF.format(port=port, extra="")
    refused = run_yaml(text, tmp_path, engine_env={}).tasks["get"]
    assert refused.status == "failure" and refused.error["code"] == "NIKA-SEC-004"
    (tmp_path / "nika.toml").write_text('fetch-allow-private = ["127.0.0.1"]\n')
    done = run_yaml(text, tmp_path, engine_env={}).tasks["get"]
    assert done.status == "success" and done.output == "inside"


def test_nika_run_withholds_a_writable_project_file(tmp_path: Path, port: int) -> None:
    (tmp_path / "nika.toml").write_text('fetch-allow-private = ["127.0.0.1"]\n')
    text = _WF.format(port=port, extra='  fs:\n    write: ["./**"]')
    rec = run_yaml(text, tmp_path, engine_env={}).tasks["get"]
    assert rec.status == "failure" and rec.error["code"] == "NIKA-SEC-004"
    assert "not honoured" in rec.error["message"]
