"""One admission: `nika run` (and `--dry-run`) refuses exactly when `nika check` with the same
configuration exits non-zero, with the same codes, and a refused run has no effect.

Issue 19, item 2; spec 06 (a run is refused before any effect when the workflow does not check)
together with the project configuration `nika check` honours (per-code severities, suppressions,
`strict`)."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest

from checker.project.admission import admit
from checker.project.files import compile_path
from nika.cli import main
from nika.commands.run import run_command

# An error that does not touch the run (a suffix wildcard in `net.http`: NIKA-AUTH-010) and a
# warning (`exec:` of `touch`: native-first/002), beside an exec that leaves a marker file.
FLOW = """\
nika: v1
workflow: { id: adm }
permits: { exec: ["touch"], net: { http: ["*.example.com"] } }@COMMENT@
tasks:
  t:
    exec: { command: ["touch", "marker.txt"] }
"""
CLEAN_NET = FLOW.replace('"*.example.com"', '"api.example.com"')


def project(tmp: Path, config: str, flow: str = FLOW, comment: str = "", kind: str = "nika.toml") -> Path:
    if kind == "pyproject.toml":
        config = "[tool.nika]\n" + config.replace("[severity]", "[tool.nika.severity]")
    (tmp / kind).write_text(config)
    path = tmp / "flows" / "adm.nika.yaml"
    path.parent.mkdir(exist_ok=True)
    path.write_text(flow.replace("@COMMENT@", comment))
    return path


def check(path: Path, capsys: pytest.CaptureFixture[str]) -> tuple[int, set[str]]:
    code = main(["check", "--output-format", "json", str(path)])
    doc = json.loads(capsys.readouterr().out)
    failing = {f["code"] or f.get("rule") for f in doc["reports"][0]["findings"] if f["severity"] == "error"}
    return code, failing


def run(path: Path, *, dry_run: bool = False) -> tuple[int, dict]:
    out, err = io.StringIO(), io.StringIO()
    code = run_command(
        str(path), output_format="json", trace_dir=str(path.parent / "traces"), dry_run=dry_run, out=out, err=err
    )
    text = out.getvalue()
    return code, (json.loads(text) if text.strip().startswith("{") else {})


def marker(tmp: Path) -> bool:
    return (tmp / "marker.txt").exists() or (tmp / "flows" / "marker.txt").exists()


@pytest.fixture
def here(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    return tmp_path


@pytest.mark.parametrize("kind", ["nika.toml", "pyproject.toml"])
def test_a_code_demoted_to_a_warning_passes_check_and_run(here, capsys, kind):
    path = project(here, '[severity]\n"NIKA-AUTH-010" = "warning"\n', kind=kind)
    assert check(path, capsys)[0] == 0
    assert run(path, dry_run=True)[0] == 0
    code, rep = run(path)
    assert code == 0 and rep["workflow_state"] == "success"
    assert marker(here)


def test_a_warning_raised_to_an_error_fails_check_and_run_with_the_same_code(here, capsys):
    path = project(here, '[severity]\n"native-first/002" = "error"\n', flow=CLEAN_NET)
    code, failing = check(path, capsys)
    assert code == 2 and failing == {"native-first/002"}
    assert run(path, dry_run=True)[0] == 2
    code, rep = run(path)
    assert code == 2 and rep["workflow_state"] == "refused"
    assert {f["code"] or f.get("rule") for f in rep["findings"] if f["severity"] == "error"} == failing
    assert not marker(here)


def test_a_suppressed_finding_does_not_block_a_run(here, capsys):
    path = project(here, "", comment="  # nika: ignore[NIKA-AUTH-010] the host list is reviewed elsewhere")
    assert check(path, capsys)[0] == 0
    code, rep = run(path)
    assert code == 0 and rep["workflow_state"] == "success"
    assert marker(here)


def test_the_unsuppressed_error_refuses_both_with_the_same_code(here, capsys):
    path = project(here, "")
    code, failing = check(path, capsys)
    assert code == 2 and failing == {"NIKA-AUTH-010"}
    code, rep = run(path)
    assert code == 2 and rep["error"]["code"] == "NIKA-AUTH-010"
    assert not marker(here)


def test_strict_configuration_makes_a_warning_refuse_both(here, capsys):
    path = project(here, "strict = true\n", flow=CLEAN_NET)
    assert check(path, capsys)[0] == 2
    assert run(path, dry_run=True)[0] == 2
    code, rep = run(path)
    assert code == 2 and rep["workflow_state"] == "refused"
    assert rep["error"]["code"] is None or rep["error"]["code"] != "NIKA-AUTH-010"
    assert not marker(here)


def test_an_ignored_code_passes_both(here, capsys):
    path = project(here, 'ignore = ["NIKA-AUTH-010"]\n')
    assert check(path, capsys)[0] == 0
    assert run(path)[0] == 0 and marker(here)


def test_a_broken_configuration_refuses_the_run_before_any_effect(here, capsys):
    path = project(here, "no-such-key = 1\n", flow=CLEAN_NET)
    assert main(["check", str(path)]) == 1
    capsys.readouterr()
    assert run(path)[0] == 1
    assert not marker(here)


def test_admit_is_the_verdict_check_renders(here):
    path = project(here, '[severity]\n"NIKA-AUTH-010" = "warning"\n')
    compiled, _ = compile_path(str(path))
    assert compiled is not None and not compiled.clean  # raw: the compiler's error
    verdict = admit(compiled, str(path))
    assert not verdict.refused and verdict.errors == ()
    assert admit(compiled, str(path), strict=True).refused  # --strict: the demoted warning fails


def test_a_child_workflow_is_admitted_with_the_same_configuration(here, capsys):
    """A child launched by `invoke: { workflow: }` passes or fails as `nika check` judges that file."""
    child = project(here, '[severity]\n"NIKA-AUTH-010" = "warning"\n')
    parent = child.parent / "parent.nika.yaml"
    parent.write_text(
        "nika: v1\nworkflow: { id: parent }\n"
        'permits: { exec: ["touch"], net: { http: ["*.example.com"] } }\ntasks:\n'
        f"  call:\n    invoke: {{ workflow: {json.dumps(str(child))} }}\n"
    )
    assert check(parent, capsys)[0] == 0 and check(child, capsys)[0] == 0
    code, rep = run(parent)
    assert code == 0, rep
    assert marker(here)


MODELLED = """\
nika: v1
workflow: { id: m }
model: mock/echo
permits: { exec: ["touch"] }
tasks:
  t:
    exec: { command: ["touch", "marker.txt"] }
  ask:
    after: { t: success }
    infer: { prompt: "hi" }
"""


@pytest.mark.parametrize("given", ["nosuch/x", "mocc/echo", "echo", "mock/"])
def test_a_model_option_without_a_known_provider_is_refused_before_the_first_effect(here, given):
    """`--model` is judged as a literal `model:` is (NIKA-PROVIDER-002), at admission: the exec
    that would run before the model call never happens, and `--dry-run` refuses the same way."""
    path = project(here, "", flow=MODELLED)
    out, err = io.StringIO(), io.StringIO()
    assert run_command(str(path), output_format="text", dry_run=True, model=given, out=out, err=err) == 2
    assert "NIKA-PROVIDER-002" not in out.getvalue() and "--model" in err.getvalue()
    out = io.StringIO()
    code = run_command(
        str(path), output_format="json", model=given, trace_dir=str(here / "traces"), out=out, err=io.StringIO()
    )
    rep = json.loads(out.getvalue())
    assert code == 2 and rep["workflow_state"] == "refused" and rep["error"]["code"] == "NIKA-PROVIDER-002"
    assert not marker(here)


def test_a_model_option_with_a_known_provider_runs(here):
    path = project(here, "", flow=MODELLED)
    out = io.StringIO()
    code = run_command(
        str(path), output_format="json", model="mock/echo", trace_dir=str(here / "traces"), out=out, err=io.StringIO()
    )
    assert code == 0 and json.loads(out.getvalue())["workflow_state"] == "success"
    assert marker(here)
