"""check ≡ run, the static half (issue 39): each gap found by running accepted workflows through
`nika run` is closed on the side the spec supports, and each is run here through `nika run` (in
process): no code of phase `check` appears first at run. Where the spec makes the failure a
check-time one, the check refuses and the run refuses with the same code before any effect; where
the spec makes the workflow valid, the run does not fail with a check-phase code.

Also: the workflows that fail by design at run (``tests/checker/cases/runfail/``) fail at run with
the code the check warned about, so the warning says what every run does.
"""

from __future__ import annotations

import io
import json
import shutil
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path

import pytest

from checker import compile_text
from checker.core.codes import lookup

ROOT = Path(__file__).resolve().parents[2]
SPEC = ROOT.parent / "shared" / "nika-spec"
RUNFAIL = ROOT / "tests" / "checker" / "cases" / "runfail"


def run(text: str, tmp: Path, *args: str, monkeypatch: pytest.MonkeyPatch) -> dict:
    from nika.cli import main

    (tmp / "w.nika.yaml").write_text(text)
    monkeypatch.chdir(tmp)
    out = io.StringIO()
    with redirect_stdout(out), redirect_stderr(io.StringIO()):
        main(["run", "w.nika.yaml", "--output-format", "json", "--trace-dir", str(tmp / "traces"), *args])
    return json.loads(out.getvalue())


def check_errors(text: str) -> list[str]:
    return [d.code or "" for d in compile_text(text, "w.nika.yaml").diagnostics if d.is_error]


def run_codes(report: dict) -> list[str]:
    codes = [(t.get("error") or {}).get("code") for t in (report.get("tasks") or {}).values()]
    return [c for c in [*codes, (report.get("error") or {}).get("code")] if c]


def no_check_phase_code_at_run(report: dict) -> None:
    if report.get("workflow_state") == "refused":
        return  # refused at admission: the check's own verdict, before any effect
    assert [c for c in run_codes(report) if lookup(c).phase == "check"] == [], report


def refused_first_at_check(text: str, code: str, tmp: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The check refuses with ``code``; the run refuses the same file with it, before any task."""
    assert code in check_errors(text)
    report = run(text, tmp, monkeypatch=monkeypatch)
    assert report["workflow_state"] == "refused" and report["tasks"] == {}
    assert report["error"]["code"] in check_errors(text)


HEAD = "nika: v1\nworkflow: { id: w }\n"


def test_decide_without_bundle_or_evidence_is_refused_at_check(tmp_path, monkeypatch) -> None:
    import sys

    sys.path.insert(0, str(ROOT / "tests" / "decide"))
    from decide_fixtures import BUNDLE

    for missing in ("bundle", "evidence"):
        args = {"bundle": json.dumps(BUNDLE), "evidence": '{t: "2026", evidence: []}'}
        del args[missing]
        body = ", ".join(f"{k}: {v}" for k, v in args.items())
        call = f'invoke: {{ tool: "nika:decide", args: {{ {body} }} }}'
        text = HEAD + f'permits: {{ tools: ["nika:decide"] }}\ntasks:\n  t:\n    {call}\n'
        refused_first_at_check(text, "NIKA-BUILTIN-001", tmp_path, monkeypatch)
    whole = HEAD + (
        'permits: { tools: ["nika:decide"] }\ntasks:\n  t:\n    invoke: { tool: "nika:decide", args: '
        f'{{ bundle: {json.dumps(BUNDLE)}, evidence: {{t: "2026", evidence: []}} }} }}\n'
    )
    report = run(whole, tmp_path, monkeypatch=monkeypatch)
    assert report["workflow_state"] == "success" and report["tasks"]["t"]["output"]["outcome"] == "defer"


def test_a_bare_directory_grant_covers_the_files_written_into_it(tmp_path, monkeypatch) -> None:
    """01 §permits: fs globs are gitignore-style; the spec's valid image-generate fixture runs."""
    files = [ROOT / "tests" / "checker" / "valid" / "bare-directory-grant.nika.yaml"]
    fixture = SPEC / "conformance" / "tests" / "stdlib" / "builtins" / "005-valid-image-generate" / "input.yaml"
    if fixture.is_file():
        files.append(fixture)
    for path in files:
        text = path.read_text()
        assert check_errors(text) == []
        report = run(text, tmp_path, monkeypatch=monkeypatch)
        assert report["workflow_state"] == "success", report
        no_check_phase_code_at_run(report)
    assert any(p.suffix == ".png" for p in (tmp_path / "assets" / "og").iterdir())


def test_a_with_binding_reading_a_sibling_is_refused_at_check(tmp_path, monkeypatch) -> None:
    text = HEAD + (
        'permits: { tools: ["nika:log"] }\ntasks:\n  t:\n    with: { a: 1, b: "${{ with.a }}" }\n'
        '    invoke: { tool: "nika:log", args: { message: "${{ with.b }}" } }\n'
    )
    refused_first_at_check(text, "NIKA-VAR-001", tmp_path, monkeypatch)


@pytest.mark.parametrize(
    "url",
    ["https:///no-host", "https://example.com:99999/x", "https://example.com:abc/x", "${{ const.n }}", "ftp://x/y"],
)
def test_a_fetch_url_no_permit_can_judge_is_refused_at_check(url: str, tmp_path, monkeypatch) -> None:
    text = HEAD + (
        'const: { n: 5 }\npermits: { tools: ["nika:fetch"], net: { http: ["example.com"] } }\n'
        f'tasks:\n  t:\n    invoke: {{ tool: "nika:fetch", args: {{ url: "{url}" }} }}\n'
    )
    refused_first_at_check(text, "NIKA-SEC-004", tmp_path, monkeypatch)


@pytest.mark.parametrize("tool", ["nika:fetch", "nika:notify"])
def test_a_computed_url_with_a_malformed_port_is_refused_at_run_not_a_crash(tool: str, tmp_path, monkeypatch) -> None:
    """The one URL reading (checker.contracts.effects.url_host) refuses a port that is no port, so
    the run's permits refuse it (NIKA-SEC-004) before any request, never NIKA-IMPL-001."""
    args = (
        '{ url: "${{ inputs.u }}" }'
        if tool == "nika:fetch"
        else '{ channel: webhook, target: "${{ inputs.u }}", message: hi }'
    )
    text = HEAD + (
        f'inputs: {{ u: {{ type: string }} }}\npermits: {{ tools: ["{tool}"], net: {{ http: ["example.com"] }} }}\n'
        f'tasks:\n  t:\n    invoke: {{ tool: "{tool}", args: {args} }}\n'
    )
    assert check_errors(text) == []
    report = run(text, tmp_path, "--var", 'u="https://example.com:99999/hook"', monkeypatch=monkeypatch)
    assert run_codes(report) == ["NIKA-SEC-004"], report


def test_a_number_in_exec_command_is_refused_at_check(tmp_path, monkeypatch) -> None:
    text = HEAD + 'permits: { exec: ["sleep"] }\ntasks:\n  t:\n    exec: { command: ["sleep", 0] }\n'
    refused_first_at_check(text, "NIKA-PARSE-019", tmp_path, monkeypatch)


def _runnable(path: Path) -> bool:
    return "chart" not in path.name  # a chart case writes under ./out; the check's judge is the run's (media tests)


@pytest.mark.parametrize("path", sorted(p for p in RUNFAIL.glob("*.nika.yaml") if _runnable(p)), ids=lambda p: p.name)
def test_a_by_design_run_failure_fails_at_run_with_the_warned_code(path: Path, tmp_path, monkeypatch) -> None:
    text = path.read_text()
    warned = {
        d.code
        for d in compile_text(text, str(path)).diagnostics
        if d.code and not d.is_error and d.code != "NIKA-DRIFT-001"
    }
    assert warned
    shutil.copy(path, tmp_path / path.name)
    report = run(text, tmp_path, "--model", "mock/echo", monkeypatch=monkeypatch)
    no_check_phase_code_at_run(report)
    recovered = [((t.get("recovered_from") or {}).get("code")) for t in report["tasks"].values()]
    assert warned & {*run_codes(report), *recovered}, (warned, report)


def test_an_integral_float_fits_an_integer_contract_at_run(tmp_path, monkeypatch) -> None:
    """09: `integer` lowers to `{"type": "integer"}`, which takes `10.0`: a JSON body carrying it
    fits `returns:` at run, as the lowering says (never refused for nothing)."""
    text = HEAD + (
        'permits: { exec: ["printf"] }\ntasks:\n  t:\n'
        '    exec: { command: ["printf", \'{"n": 10.0}\'], decode: json }\n    returns: { object: { n: integer } }\n'
    )
    assert check_errors(text) == []
    report = run(text, tmp_path, monkeypatch=monkeypatch)
    assert report["workflow_state"] == "success", report
    half = text.replace("10.0", "10.5")
    assert run_codes(run(half, tmp_path, monkeypatch=monkeypatch)) == ["NIKA-TYPE-101"]
