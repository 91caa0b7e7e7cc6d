"""`nika init` and `nika new`: the starter project and every template check clean, run under the
mock provider, and pass their own tests; nothing that exists is ever overwritten."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from nika.cli import main
from nika.commands.init import render, templates

TEMPLATES = ("summarise", "fanout", "agent", "fetch-notify", "exec-retry", "approval")


def _nika(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    rc = main(list(args))
    out = capsys.readouterr()
    return rc, out.out, out.err


def test_the_template_list_names_every_shape(capsys: pytest.CaptureFixture[str]) -> None:
    rc, out, _ = _nika(capsys, "new", "--list")
    assert rc == 0
    assert set(templates()) == set(TEMPLATES)
    for name in TEMPLATES:
        line = next(line for line in out.splitlines() if line.startswith(name + " "))
        assert len(line.split(None, 1)[1]) > 20  # a real one-line summary


def test_init_in_an_empty_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    rc, out, _ = _nika(capsys, "init", "proj")
    assert rc == 0
    root = tmp_path / "proj"
    for name in ("hello.nika.yaml", "hello.nika-test.yaml", ".nika/providers.env", ".nika/mcp.json"):
        assert (root / name).is_file(), name
        assert f"created  proj/{name}" in out
    assert ".nika/traces/" in (root / ".gitignore").read_text().splitlines()
    assert "id: nika-check" in (root / ".pre-commit-config.yaml").read_text()
    mcp = json.loads((root / ".nika/mcp.json").read_text())
    assert mcp["mcpServers"] == {} and any("mcp:NAME/TOOL" in line for line in mcp["//"])
    env = (root / ".nika/providers.env").read_text()
    assert "# ANTHROPIC_API_KEY=" in env and all(not ln or ln.startswith("#") for ln in env.splitlines())
    monkeypatch.chdir(root)
    assert _nika(capsys, "check", ".")[0] == 0
    rc, out, _ = _nika(capsys, "test")
    assert rc == 0 and "3 passed" in out, out
    rc, out, _ = _nika(capsys, "run", "hello.nika.yaml", "--var", "name=Ada")
    assert rc == 0 and json.loads(out) == {"greeting": "Say hello to Ada.!"}
    assert list((root / ".nika/traces").glob("*.ndjson"))  # and .gitignore keeps them out of git


def test_init_never_overwrites_and_appends_only_what_is_missing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "hello.nika.yaml").write_text("mine\n")
    (tmp_path / ".gitignore").write_text("*.pyc")
    (tmp_path / ".pre-commit-config.yaml").write_text("repos:\n  - repo: https://example.com/x\n    rev: v1\n")
    rc, out, _ = _nika(capsys, "init")
    assert rc == 0
    assert (tmp_path / "hello.nika.yaml").read_text() == "mine\n"
    assert "skipped  hello.nika.yaml (exists)" in out
    assert (tmp_path / ".gitignore").read_text() == "*.pyc\n# nika run journals\n.nika/traces/\n"
    precommit = (tmp_path / ".pre-commit-config.yaml").read_text()
    assert precommit.startswith("repos:\n  - repo: https://example.com/x\n") and precommit.count("repos:") == 1
    import yaml as pyyaml  # pre-commit's own parser is PyYAML

    hooks = [h["id"] for r in pyyaml.safe_load(precommit)["repos"] for h in r.get("hooks", [])]
    assert hooks == ["nika-check"]
    before = {p: p.read_bytes() for p in tmp_path.rglob("*") if p.is_file()}
    rc, out, _ = _nika(capsys, "init")  # a second run changes nothing and says so
    assert rc == 0 and "created" not in out
    assert "skipped  .gitignore (already has .nika/traces/)" in out
    assert before == {p: p.read_bytes() for p in tmp_path.rglob("*") if p.is_file()}


@pytest.mark.parametrize("template", TEMPLATES)
def test_each_template_is_clean_and_passes_its_tests(
    template: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    rc, out, _ = _nika(capsys, "new", template, "my-flow")
    assert rc == 0, out
    wf = (tmp_path / "my-flow.nika.yaml").read_text()
    assert "  id: my-flow\n" in wf and "# summary:" not in wf
    assert "workflow: my-flow.nika.yaml" in (tmp_path / "my-flow.nika-test.yaml").read_text()
    rc, out, err = _nika(capsys, "check", "--strict", "my-flow.nika.yaml")
    assert rc == 0, out + err
    rc, out, _ = _nika(capsys, "test", "-v")
    assert rc == 0 and " failed" not in out and "passed" in out, out


# The templates whose builtins all run offline here, run for real under mock/echo (no mocks).
# fetch-notify reaches the network: it runs against the loopback demo server below.
RUNNABLE = {
    "summarise": {"summary", "files"},
    "fanout": {"answers"},
    "agent": {"answer"},
    "exec-retry": {"tests", "status"},
    "approval": {"approved", "published"},
}


@pytest.mark.parametrize("template", sorted(RUNNABLE))
def test_each_runnable_template_runs_under_mock(
    template: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "a.md").write_text("Alpha.\n")
    workflow, _ = render(template, template)
    (tmp_path / "wf.nika.yaml").write_text(workflow)
    rc, out, err = _nika(capsys, "run", "wf.nika.yaml", "--trace-dir", str(tmp_path / "traces"))
    assert rc == 0, err
    assert set(json.loads(out)) == RUNNABLE[template]


def test_summarise_says_when_nothing_matches_and_new_writes_a_sample_input(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    workflow, _ = render("summarise", "summarise")
    (tmp_path / "wf.nika.yaml").write_text(workflow)
    rc, out, err = _nika(capsys, "run", "wf.nika.yaml", "--trace-dir", str(tmp_path / "traces"))
    assert rc == 0, err
    assert json.loads(out) == {"summary": "No file matches the pattern.", "files": []}, "never a summary of null"
    rc, out, _ = _nika(capsys, "new", "summarise", "notes")
    assert rc == 0 and "created  docs/example.md (a sample input)" in out
    rc, out, err = _nika(capsys, "run", "notes.nika.yaml", "--trace-dir", str(tmp_path / "traces"))
    assert rc == 0 and json.loads(out)["files"] == ["./docs/example.md"], err
    rc, out, _ = _nika(capsys, "new", "summarise", "again")
    assert rc == 0 and "sample" not in out, "inputs exist: no second sample"


def test_fetch_notify_runs_offline_against_the_loopback_demo_server(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    import threading
    from http.server import ThreadingHTTPServer

    from nika.templates import loopback

    srv = ThreadingHTTPServer(("127.0.0.1", 0), loopback._Handler)
    threading.Thread(target=srv.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True).start()
    base = f"http://127.0.0.1:{srv.server_address[1]}"
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("NIKA_FETCH_ALLOW_PRIVATE", "127.0.0.1")
    monkeypatch.setenv("NIKA_MOCK_JSON", '{"version": "2.0.0", "breaking": true, "headline": "Drops Python 3.10"}')
    try:
        rc, _, _ = _nika(capsys, "new", "fetch-notify", "releases")
        assert rc == 0
        assert "nika run releases.nika.yaml" in (tmp_path / "releases.nika.yaml").read_text(), "its own file name"
        args = ["--var", f"feed={base}/releases/latest", "--var", f"webhook={base}/hook", "--model", "mock/mock-json"]
        rc, out, err = _nika(capsys, "run", "releases.nika.yaml", *args, "--trace-dir", str(tmp_path / "traces"))
    finally:
        srv.shutdown()
        srv.server_close()
    assert rc == 0, err
    hook, _, report = out.partition("\n")  # the server's thread prints to this process's stdout, first
    assert hook.startswith('webhook got: {"message": "Release 2.0.0: Drops Python 3.10"'), out
    assert json.loads(report)["facts"]["version"] == "2.0.0"


def test_new_refuses_what_it_cannot_do(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    rc, _, err = _nika(capsys, "new", "fanuot")
    assert rc == 1 and "no template `fanuot`; did you mean `fanout`?" in err
    rc, _, err = _nika(capsys, "new", "fanout", "Bad_Name")
    assert rc == 1 and "not kebab-case" in err
    (tmp_path / "fanout.nika-test.yaml").write_text("keep\n")
    rc, _, err = _nika(capsys, "new", "fanout")
    assert rc == 1 and "fanout.nika-test.yaml already exists" in err
    assert not (tmp_path / "fanout.nika.yaml").exists()  # all or nothing
    assert (tmp_path / "fanout.nika-test.yaml").read_text() == "keep\n"


def test_templates_are_package_data() -> None:
    text = (Path(__file__).resolve().parents[2] / "pyproject.toml").read_text()
    assert '"templates/*.yaml"' in text and '"templates/*.env"' in text and '"templates/*.json"' in text
    assert '"templates/*.md"' in text


def test_the_precommit_hook_init_writes_runs_under_the_real_precommit(tmp_path: Path) -> None:
    """The `.pre-commit-config.yaml` entry `nika init` writes, as written, under the real pre-commit."""
    import importlib.util
    import os
    import shutil
    import subprocess
    import sys

    if importlib.util.find_spec("pre_commit") is None or shutil.which("git") is None:
        pytest.skip("needs pre-commit (the test extras) and git on PATH")
    root = Path(__file__).resolve().parents[2]
    bindir = tmp_path / "bin"
    bindir.mkdir()
    launcher = bindir / "nika"  # this checkout as the `nika` on PATH the local hook calls
    launcher.write_text(
        f"#!{sys.executable}\nimport sys\nsys.path.insert(0, {str(root)!r})\n"
        "from nika.cli import main\nsys.exit(main())\n"
    )
    launcher.chmod(0o755)
    work = tmp_path / "proj"
    env = {
        **{k: v for k, v in os.environ.items() if k != "PYTHONPATH"},
        "PATH": f"{bindir}{os.pathsep}{os.environ.get('PATH', '')}",
        "PRE_COMMIT_HOME": str(tmp_path / "pre-commit-home"),
        "GIT_AUTHOR_NAME": "t",
        "GIT_AUTHOR_EMAIL": "t@example.invalid",
        "GIT_COMMITTER_NAME": "t",
        "GIT_COMMITTER_EMAIL": "t@example.invalid",
        "GIT_CONFIG_GLOBAL": os.devnull,
        "GIT_CONFIG_NOSYSTEM": "1",
    }

    def sh(*cmd: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(list(cmd), cwd=work, env=env, capture_output=True, text=True, timeout=120)

    assert subprocess.run([str(launcher), "init", str(work)], env=env, capture_output=True).returncode == 0
    sh("git", "init", "-q", "-b", "main")
    installed = sh(sys.executable, "-m", "pre_commit", "install")
    if installed.returncode != 0:
        pytest.skip(f"pre-commit install failed here: {installed.stdout}{installed.stderr}".strip())
    (work / "bad.nika.yaml").write_text("nika: v1\nworkflow: {id: bad}\ntasks:\n  a:\n    after: {ghost: success}\n")
    sh("git", "add", "-A")
    refused = sh("git", "commit", "-q", "-m", "bad")
    assert refused.returncode != 0 and "bad.nika.yaml:5" in refused.stdout + refused.stderr
    sh("git", "rm", "-q", "--cached", "bad.nika.yaml")
    (work / "bad.nika.yaml").unlink()
    sh("git", "add", "-A")
    accepted = sh("git", "commit", "-q", "-m", "start")
    assert accepted.returncode == 0, accepted.stdout + accepted.stderr
    assert "nika check....." in accepted.stdout + accepted.stderr and "Passed" in accepted.stdout + accepted.stderr
