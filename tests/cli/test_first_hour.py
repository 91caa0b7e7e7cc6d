"""The first-hour papercuts of issue 25, item 8 (each as the user meets it, through the CLI)."""

from __future__ import annotations

import json
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from nika.cli import main
from nika_lsp.transport import parse_tcp, watch

ROOT = Path(__file__).resolve().parents[2]


def _nika(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    rc = main(list(args))
    out = capsys.readouterr()
    return rc, out.out, out.err


def _write(path: Path, text: str) -> str:
    path.write_text(text)
    return str(path)


GREET = """\
nika: v1
workflow:
  id: greet
model: mock/echo
inputs:
  name: { type: string, required: true }
tasks:
  hello:
    infer: { prompt: "Hi ${{ inputs.name }}" }
"""


def test_a_var_typo_gets_a_did_you_mean(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    wf = _write(tmp_path / "g.nika.yaml", GREET)
    rc, _, err = _nika(capsys, "run", wf, "--var", "nmae=Ada")
    assert rc == 2
    assert "unknown input `nmae` (did you mean `name`?); declared inputs: `name`" in err


FAILED = """\
nika: v1
workflow:
  id: f
permits:
  exec: ["false", "echo"]
tasks:
  a:
    exec: { command: ["false"], decode: json }
    returns: { object: { field: string } }
  b:
    exec: { command: ["echo", "ok"] }
outputs:
  x: ${{ tasks.a.output.field }}
  typed: { value: "${{ tasks.a.output }}", type: { object: { field: string } } }
  y: ${{ tasks.b.output }}
"""


def test_a_failed_run_has_null_outputs_and_no_second_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    wf = _write(tmp_path / "f.nika.yaml", FAILED)
    rc, out, _ = _nika(capsys, "run", wf, "--output-format", "json")
    report = json.loads(out)
    assert rc == 1 and report["workflow_state"] == "failure"
    assert report["outputs"] == {"x": None, "typed": None, "y": "ok"}
    assert report["error"] is None  # the failure is task `a`'s, not a VAR-001/VAR-009 about outputs
    rc, _, err = _nika(capsys, "run", wf)
    assert "NIKA-VAR-001" not in err and "has(" not in err


def test_dry_run_prints_permits_as_grants_and_names_what_cannot_run(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    wf = _write(
        tmp_path / "c.nika.yaml",
        """\
nika: v1
workflow:
  id: c
permits:
  tools: ["nika:chart", "nika:jq"]
  fs:
    write: ["./out/**"]
tasks:
  plot:
    invoke:
      tool: "nika:chart"
      args: { chart: { type: bar, x: day, y: n }, data: [{ day: mon, n: 3 }], out: ./out/n.svg }
""",
    )
    rc, out, _ = _nika(capsys, "run", "--dry-run", wf)
    assert rc == 0
    assert "permits:\n  tools: nika:chart, nika:jq\n  fs.write: ./out/**\n" in out
    assert "{'" not in out  # no Python dict
    assert "not available in this build" not in out  # every builtin is built now (the listing is tested
    rc, out, _ = _nika(capsys, "run", "--dry-run", "--output-format", "json", wf)  # with a fake runtime tree
    assert json.loads(out)["unavailable"] == []  # in tests/runtime/test_built_features.py)


def test_explain_impl_002_lists_what_is_actually_missing(capsys: pytest.CaptureFixture[str]) -> None:
    rc, out, _ = _nika(capsys, "explain", "NIKA-IMPL-002")
    assert rc == 0
    assert "other than `mock`" not in out and "the `agent:` loop, an MCP tool" not in out
    assert "fetch` extract modes other than" not in out and "nika:chart" not in out  # both are built
    assert "Not in this build" in out
    from checker.contracts.built_features import built
    from checker.contracts.tables import tool_ids
    from checker.grammar.table import SECRET_SOURCES

    have = built()
    assert have is not None
    missing = sorted(t for t in tool_ids() if t not in have.tools)
    assert f"builtins with no implementation: {', '.join(missing) or 'none'}" in out
    sources = sorted(s for s in SECRET_SOURCES if s not in have.secret_sources)
    assert f"secret sources: {', '.join(sources) or 'none'}" in out
    assert all(f"  {u.id} " in out for u in have.unbuilt)  # the declared list, from the same reading


def test_exclude_setting_skips_fixtures_in_a_directory_search(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "tests" / "fixtures").mkdir(parents=True)
    _write(tmp_path / "tests" / "fixtures" / "broken.nika.yaml", "nika: v1\n")
    _write(tmp_path / "ok.nika.yaml", GREET)
    assert _nika(capsys, "check", ".")[0] == 2
    _write(tmp_path / "nika.toml", 'exclude = ["tests/fixtures/**"]\n')
    # (a configuration file edited in between is seen: lookups are keyed by its signature)
    rc, out, _ = _nika(capsys, "check", ".")
    assert rc == 0 and "1 file, no findings" in out
    assert _nika(capsys, "check", "tests/fixtures/broken.nika.yaml")[0] == 2  # named: always checked
    rc, _, err = _nika(capsys, "check", "tests")
    assert rc == 1 and "every workflow file here is excluded by the `exclude` setting" in err
    rc, out, _ = _nika(capsys, "check", "--show-settings", "tests/fixtures/broken.nika.yaml")
    assert 'exclude = ["tests/fixtures/**"]' in out and "excluded from directory searches" in out
    # a folder left out is not searched at all, even when it has a configuration of its own
    _write(tmp_path / "tests" / "fixtures" / "nika.toml", "# a project of its own\n")
    rc, out, _ = _nika(capsys, "check", ".")
    assert rc == 0 and "1 file, no findings" in out
    (tmp_path / "tests" / "fixtures" / "nika.toml").unlink()
    _write(tmp_path / "nika.toml", 'exclude = "tests"\n')
    rc, _, err = _nika(capsys, "check", "ok.nika.yaml")
    assert rc == 1 and "exclude" in err and "must be a list of path globs" in err


def test_graph_waves_count_from_one(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    wf = _write(tmp_path / "g.nika.yaml", GREET)
    rc, out, _ = _nika(capsys, "graph", wf)
    assert rc == 0 and 'subgraph w0["wave 1"]' in out and '"wave 0"' not in out
    _, dot, _ = _nika(capsys, "graph", "--format", "dot", wf)
    assert 'label="wave 1"' in dot


def _lsp(*args: str) -> subprocess.CompletedProcess[str]:
    code = f"import sys; sys.path.insert(0, {str(ROOT)!r}); from nika.cli import main; sys.exit(main())"
    return subprocess.run(
        [sys.executable, "-c", code, "lsp", *args], capture_output=True, text=True, timeout=20, input=""
    )


@pytest.mark.parametrize("value", ["nonsense", "host:99999", "host:", "127.0.0.1:-1"])
def test_lsp_tcp_nonsense_is_one_line(value: str, capsys: pytest.CaptureFixture[str]) -> None:
    rc, _, err = _nika(capsys, "lsp", "--tcp", value)
    assert rc == 1
    assert err.count("\n") == 1 and "Traceback" not in err
    assert f"`--tcp {value}`: give HOST:PORT" in err
    assert parse_tcp("2087") == ("127.0.0.1", 2087) and parse_tcp("[::1]:2087") == ("::1", 2087)


def test_lsp_accepts_stdio_and_client_process_id_and_exits_when_the_editor_is_gone(
    capsys: pytest.CaptureFixture[str],
) -> None:
    gone = subprocess.Popen([sys.executable, "-c", "pass"])
    gone.wait()
    proc = _lsp("--stdio", f"--clientProcessId={gone.pid}")
    assert proc.returncode == 1 and "Traceback" not in proc.stderr and "error:" not in proc.stderr
    with pytest.raises(SystemExit) as exc:
        main(["lsp", "--stdio", "--tcp", "127.0.0.1:2087"])
    assert exc.value.code == 1 and "not allowed with argument" in capsys.readouterr().err


def test_the_watchdog_fires_once_the_process_ends() -> None:
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"])
    fired = threading.Event()
    watch(child.pid, poll=0.01, on_gone=fired.set)
    assert not fired.wait(0.1)  # alive: nothing happens
    child.kill()
    child.wait()
    assert fired.wait(30)  # generous: returns as soon as the watchdog fires


def test_a_unique_did_you_mean_for_a_task_reference_is_a_fix(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    text = (
        "nika: v1\nworkflow: {id: d}\nmodel: mock/echo\ntasks:\n  hello:\n    infer: {prompt: hi}\n"
        '  b:\n    with: {v: "${{ tasks.helo.output }}"}\n    infer: {prompt: "${{ with.v }}"}\n'
        "outputs:\n  o: ${{ tasks.helo.output }}\n"
    )
    wf = _write(tmp_path / "d.nika.yaml", text)
    rc, out, _ = _nika(capsys, "check", "--output-format", "json", wf)
    findings = json.loads(out)["reports"][0]["findings"]
    assert [f["code"] for f in findings] == ["NIKA-DAG-002", "NIKA-VAR-001"]
    assert all(f["fixes"] for f in findings)
    rc, _, _ = _nika(capsys, "check", "--fix", wf)
    assert rc == 0 and Path(wf).read_text() == text.replace("tasks.helo.", "tasks.hello.")
    # never towards the task itself (that would be a cycle, not a repair)
    selfish = "nika: v1\nworkflow: {id: s}\ntasks:\n  abc:\n    with: {v: '${{ tasks.abd.output }}'}\n"
    rc, out, _ = _nika(
        capsys,
        "check",
        "--output-format",
        "json",
        _write(tmp_path / "s.nika.yaml", selfish + "    exec: {command: [echo]}\n"),
    )
    dag = [f for f in json.loads(out)["reports"][0]["findings"] if f["code"] == "NIKA-DAG-002"]
    assert dag and not dag[0]["fixes"]


def test_a_recovered_task_says_so_and_keeps_the_error_it_replaced(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    wf = _write(
        tmp_path / "r.nika.yaml",
        'nika: v1\nworkflow: {id: r}\npermits: {exec: ["false"]}\ntasks:\n  a:\n'
        '    exec: {command: ["false"]}\n    on_error: {recover: "fallback"}\n',
    )
    rc, _, err = _nika(capsys, "run", wf)
    assert rc == 0 and "recovered a (" in err and "from NIKA-EXEC-001 (on_error.recover)" in err
    assert "ok a" not in err
    rc, out, _ = _nika(capsys, "run", wf, "--output-format", "json")
    record = json.loads(out)["tasks"]["a"]
    assert record["status"] == "success" and record["output"] == "fallback" and record["error"] is None
    assert record["recovered_from"]["code"] == "NIKA-EXEC-001"  # spec 13: success(recovered) keeps it
    completed = next(e for e in json.loads(out)["events"] if e["type"] == "task.completed")
    assert completed["recovered_from"] == "NIKA-EXEC-001"
