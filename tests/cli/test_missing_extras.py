"""An installation without an extra (simulated in-process: the `without_modules` fixture blocks the
imports, nothing is uninstalled). A builtin or mode that needs it fails before any effect with one
line naming the extra; `nika run --dry-run` and `nika doctor` say which extras are here and which
tasks need a missing one; `nika check`'s verdict does not change, it only adds a note."""

from __future__ import annotations

import json
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from typing import Any

import pytest

from nika.cli import main
from runtime import builtins
from runtime.errors import TaskError
from tests.runtime.builtins_harness import make_ctx
from tests.runtime.rt_helpers import serving

FETCH = ("selectolax", "html_to_markdown", "trafilatura", "lxml_html_clean", "feedparser", "lxml", "protego")
INSTALL_FETCH = "pip install 'nika-tools[fetch]'"


class _Page(BaseHTTPRequestHandler):
    hits: list[str] = []  # noqa: RUF012 - shared by the server's threads

    def do_GET(self) -> None:
        type(self).hits.append(self.path)
        body = b'{"ok": true}' if self.path.endswith(".json") else b"<html><body><p>hello</p></body></html>"
        self.send_response(200)
        self.send_header("content-type", "application/json" if self.path.endswith(".json") else "text/html")
        self.send_header("content-length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def site() -> Iterator[str]:
    _Page.hits = []
    with serving(_Page) as port:
        yield f"http://127.0.0.1:{port}"


def _workflow(tmp_path: Path, site: str, mode: str | None = None, extra_task: str = "") -> Path:
    args = f'url: "{site}/page", ' + (f"mode: {mode}" if mode else "")
    path = tmp_path / "flow.nika.yaml"
    path.write_text(
        "nika: v1\nworkflow: { id: flow }\n"
        'permits: { net: { http: ["127.0.0.1"] }, tools: ["nika:fetch"] }\n'
        f'tasks:\n  page:\n    invoke: {{ tool: "nika:fetch", args: {{ {args} }} }}\n{extra_task}'
    )
    return path


def _cli(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    got = capsys.readouterr()
    return code, got.out, got.err


# -- nika run: refused before any effect ------------------------------------------------------------


def test_a_run_needing_a_missing_extra_is_refused_before_any_effect(
    tmp_path: Path, site: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], without_modules: Any
) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("NIKA_FETCH_ALLOW_PRIVATE", "127.0.0.1")
    flow = _workflow(tmp_path, site)  # the default mode, `markdown`
    without_modules(*FETCH)
    code, out, err = _cli(capsys, "run", str(flow), "--trace-dir", "traces")
    assert code == 2 and out == ""
    (line,) = err.splitlines()
    assert line.startswith(f"nika run: {flow}: task `page`: `nika:fetch` mode `markdown` needs the `fetch` extra")
    assert line.endswith(f"{INSTALL_FETCH} [NIKA-IMPL-002]") and "selectolax" in line
    assert _Page.hits == [] and not (tmp_path / "traces").exists()  # no request, no journal
    code, out, _ = _cli(capsys, "run", str(flow), "--trace-dir", "traces", "--output-format", "json")
    doc = json.loads(out)
    assert code == 2 and doc["workflow_state"] == "refused" and doc["error"]["code"] == "NIKA-IMPL-002"


def test_what_needs_no_extra_still_runs(
    tmp_path: Path, site: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], without_modules: Any
) -> None:
    """`mode: jq` (and `raw`) read the body with the base install's own libraries."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("NIKA_FETCH_ALLOW_PRIVATE", "127.0.0.1")
    flow = tmp_path / "jq.nika.yaml"
    flow.write_text(
        "nika: v1\nworkflow: { id: jq }\n"
        'permits: { net: { http: ["127.0.0.1"] }, tools: ["nika:fetch"] }\n'
        f'tasks:\n  get:\n    invoke: {{ tool: "nika:fetch", args: {{ url: "{site}/a.json", mode: jq, jq: ".ok" }} }}\n'
        "outputs:\n  ok: ${{ tasks.get.output }}\n"
    )
    without_modules(*FETCH)
    code, out, err = _cli(capsys, "run", str(flow), "--trace-dir", "traces", "--output-format", "json")
    assert code == 0, err
    assert json.loads(out)["outputs"] == {"ok": True} and _Page.hits == ["/a.json"]


async def test_a_mode_known_only_at_run_is_refused_by_the_builtin_before_its_request(
    tmp_path: Path, site: str, without_modules: Any
) -> None:
    """An agent's call, or a `mode:` written as an expression: the builtin asks before it fetches."""
    without_modules("trafilatura", "protego")
    ctx, _ = make_ctx(tmp_path, env={"NIKA_FETCH_ALLOW_PRIVATE": "127.0.0.1"})
    with pytest.raises(TaskError) as e:
        await builtins.call("nika:fetch", {"url": f"{site}/page", "mode": "article"}, ctx)
    assert e.value.code == "NIKA-IMPL-002" and e.value.details == {"feature": "extra", "extra": "fetch"}
    assert e.value.message == (
        f"`nika:fetch` mode `article` needs the `fetch` extra (trafilatura not installed): {INSTALL_FETCH}"
    )
    with pytest.raises(TaskError) as e:
        await builtins.call("nika:fetch", {"url": site, "traverse": {"max_pages": 2}}, ctx)
    assert e.value.message == (
        f"`nika:fetch` with `traverse:` needs the `fetch` extra (protego not installed): {INSTALL_FETCH}"
    )
    assert _Page.hits == []  # neither call sent a request


async def test_image_fx_needs_media_and_the_mock_image_needs_nothing(tmp_path: Path, without_modules: Any) -> None:
    without_modules("numpy", "PIL")
    ctx, _ = make_ctx(tmp_path)
    made = await builtins.call(
        "nika:image_generate", {"provider": "mock", "prompt": "a cat", "output_dir": str(tmp_path / "out")}, ctx
    )
    path = made["images"][0]["path"]
    assert Path(path).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    with pytest.raises(TaskError) as e:
        await builtins.call(
            "nika:image_fx", {"input": path, "out": str(tmp_path / "fx.png"), "ops": [{"resize": {"width": 8}}]}, ctx
        )
    assert e.value.code == "NIKA-IMPL-002"
    assert e.value.message.endswith(
        "needs the `media` extra (PIL, numpy not installed): pip install 'nika-tools[media]'"
    )
    assert not (tmp_path / "fx.png").exists()


def test_the_dask_executor_without_distributed_is_one_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], without_modules: Any
) -> None:
    monkeypatch.chdir(tmp_path)
    flow = tmp_path / "w.nika.yaml"
    flow.write_text('nika: v1\nworkflow: { id: w }\ntasks:\n  a: { infer: { model: mock/echo, prompt: "x" } }\n')
    without_modules("distributed", "dask")
    code, out, err = _cli(capsys, "run", str(flow), "--executor", "dask", "--trace-dir", "traces")
    assert code == 2 and out == "" and not (tmp_path / "traces").exists()
    assert err.splitlines() == [
        f"nika run: {flow}: `--executor dask` needs the `dask` extra (dask, distributed not installed): "
        "pip install 'nika-tools[dask]' [NIKA-IMPL-002]"
    ]


# -- what the reports say -----------------------------------------------------------------------------


def test_the_dry_run_says_what_is_installed_and_which_task_needs_what(
    tmp_path: Path, site: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], without_modules: Any
) -> None:
    monkeypatch.chdir(tmp_path)
    dynamic = '  pick:\n    invoke: { tool: "nika:fetch", args: { url: "' + site + '/b", mode: "${{ inputs.m }}" } }\n'
    flow = _workflow(tmp_path, site, extra_task=dynamic)
    flow.write_text(flow.read_text() + "inputs:\n  m: { type: string, default: feed }\n")
    without_modules(*FETCH)
    code, out, _ = _cli(capsys, "run", str(flow), "--dry-run")
    assert code == 0
    assert "extras this run needs: fetch (not installed)\n" in out
    assert (
        "task `page` needs `fetch` for `nika:fetch` mode `markdown` (selectolax, html_to_markdown not installed): "
        f"{INSTALL_FETCH}" in out
    )
    assert "task `pick` may need `fetch` for `nika:fetch`" in out
    code, out, _ = _cli(capsys, "run", str(flow), "--dry-run", "--output-format", "json")
    extras = json.loads(out)["extras"]
    here = {"media": True, "vault": True, "dask": True, "otel": True, "watch": True, "serve": True}
    assert extras["installed"] == {"fetch": False, **here}
    rows = {r["task"]: r for r in extras["needs"]}
    assert rows["page"]["certain"] is True and rows["page"]["extra"] == "fetch" and rows["page"]["missing"]
    assert rows["pick"]["certain"] is False


def test_doctor_lists_the_extras_and_the_workflows_that_need_a_missing_one(
    tmp_path: Path, site: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], without_modules: Any
) -> None:
    monkeypatch.chdir(tmp_path)
    _workflow(tmp_path, site)
    code, out, _ = _cli(capsys, "doctor")
    assert "extras   fetch installed: trafilatura" in out and "broken  extras" not in out
    without_modules(*FETCH)
    code, out, _ = _cli(capsys, "doctor")
    assert code == 1  # a workflow here will fail to run
    assert (
        "ok      extras   fetch not installed (selectolax, html_to_markdown, trafilatura, lxml_html_clean, "
        "feedparser, lxml, protego)" in out
    )
    assert (
        "broken  extras   flow.nika.yaml: task `page`: `nika:fetch` mode `markdown` needs the `fetch` extra "
        f"(selectolax, html_to_markdown not installed) — {INSTALL_FETCH}"
    ) in out
    code, out, _ = _cli(capsys, "doctor", "--output-format", "json")
    lines = [c for c in json.loads(out)["checks"] if c["topic"] == "extras"]
    assert {c["status"] for c in lines} == {"ok", "broken"}


def test_the_check_verdict_does_not_depend_on_the_extras(
    tmp_path: Path, site: str, capsys: pytest.CaptureFixture[str], without_modules: Any
) -> None:
    flow = _workflow(tmp_path, site)
    outputs = {}
    for blocked in (False, True):
        if blocked:
            without_modules(*FETCH)
        for fmt in ("json", "sarif", "concise"):
            code, out, err = _cli(capsys, "check", "--output-format", fmt, str(flow))
            outputs[blocked, fmt] = (code, out)
            if fmt == "concise":
                noted = "nika check: note: running this file needs an extra not installed here (fetch)" in err
                assert noted is blocked
                assert "the check itself does not depend on it" in err or not blocked
    for fmt in ("json", "sarif", "concise"):
        assert outputs[True, fmt] == outputs[False, fmt]


def test_vault_secrets_without_keyring_are_one_line_and_a_vault_file_needs_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], without_modules: Any
) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("NIKA_VAULT_FILE", raising=False)
    flow = tmp_path / "s.nika.yaml"
    flow.write_text(
        "nika: v1\nworkflow: { id: s }\npermits: { exec: [echo] }\n"
        'secrets:\n  tok: { source: vault, key: api/token, egress: [{ to: "exec" }] }\n'
        'tasks:\n  a: { exec: { command: ["echo", "${{ secrets.tok }}"] } }\n'
    )
    without_modules("keyring")
    code, _, err = _cli(capsys, "run", str(flow), "--trace-dir", "traces")
    assert code == 2 and not (tmp_path / "traces").exists()
    assert err.splitlines() == [
        f"nika run: {flow}: a `source: vault` secret (the nika-vault in the OS keyring) needs the `vault` extra "
        "(keyring not installed): pip install 'nika-tools[vault]' [NIKA-IMPL-002]"
    ]
    code, _, err = _cli(capsys, "secrets", "list")
    assert code == 2 and len(err.splitlines()) == 1
    assert "needs the `vault` extra (keyring not installed): pip install 'nika-tools[vault]'" in err
    assert "NIKA_VAULT_FILE" in err  # the other way out
    monkeypatch.setenv("NIKA_VAULT_FILE", str(tmp_path / "vault.json"))
    (tmp_path / "vault.json").write_text('{"api/token": "t0k3n-value"}')
    code, out, err = _cli(capsys, "secrets", "list")
    assert (code, out.split()) == (0, ["api/token"]), err
    code, out, err = _cli(capsys, "run", str(flow), "--trace-dir", "traces", "--output-format", "json")
    assert code == 0, err
    assert json.loads(out)["workflow_state"] == "success"
