"""Regression tests for the papercuts a new user hit (issue 10, item 8) not covered elsewhere.

Covered in other files: usage errors and exit codes (test_cli, test_check_options), YAML syntax
errors in plain words (checker/test_yaml_errors), binary source lines (output/test_formats),
SARIF (output/test_sarif_schema), diagnostic refresh (lsp/test_diagnostic_refresh).
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

from test_cli import nika_here

from checker import compile_text
from nika.commands.explain import judged_statically

ROOT = Path(__file__).resolve().parents[2]


def nika(*args: str, cwd: Path = ROOT) -> subprocess.CompletedProcess[str]:
    """`nika ARGS` in this process (the CLI entry function; test_cli keeps the real-process cases)."""
    return nika_here(*args, cwd=cwd)


def findings(path: Path) -> list[dict[str, Any]]:
    proc = nika("check", "--output-format", "json", str(path), cwd=path.parent)
    return [f for r in json.loads(proc.stdout)["reports"] for f in r["findings"]]


HEAD = 'nika: v1\nworkflow: {id: d}\npermits: { exec: true }\ntasks:\n  fetch:\n    exec: { command: ["./a.sh"] }\n'


# -- VAR-021: the repair never leads into another error --------------------------------------


def test_var_021_on_a_misspelled_task_binds_the_did_you_mean_for_review(tmp_path: Path) -> None:
    f = tmp_path / "w.nika.yaml"
    f.write_text(HEAD + '  b:\n    exec: { command: ["./b.sh", "${{ tasks.fech.output }}"] }\n', encoding="utf-8")
    [d] = findings(f)
    assert d["code"] == "NIKA-VAR-021" and "tasks.fetch.output" in d["message"]
    [fix] = d["fixes"]
    assert fix["applicability"] == "maybe-incorrect"  # another task: what b waits for changes
    assert "tasks.fetch.output" in fix["title"]
    nika("check", "--fix", "--unsafe-fixes", str(f), cwd=tmp_path)
    assert findings(f) == []


def test_var_021_on_a_misspelled_field_binds_the_corrected_field_in_one_pass(tmp_path: Path) -> None:
    f = tmp_path / "w.nika.yaml"
    f.write_text(HEAD + '  b:\n    exec: { command: ["./b.sh", "${{ tasks.fetch.outptu }}"] }\n', encoding="utf-8")
    [d] = findings(f)
    [fix] = d["fixes"]
    assert fix["applicability"] == "safe" and "`tasks.fetch.output`" in fix["title"]
    nika("check", "--fix", str(f), cwd=tmp_path)
    fixed = f.read_text(encoding="utf-8")
    assert 'fetch: "${{ tasks.fetch.output }}"' in fixed and "outptu" not in fixed
    assert findings(f) == []


def test_var_021_help_names_the_field_actually_read(tmp_path: Path) -> None:
    f = tmp_path / "w.nika.yaml"
    f.write_text(
        HEAD + "  b:\n    after: { fetch: terminal }\n    when: \"${{ tasks.fetch.status == 'success' }}\"\n"
        '    exec: { command: ["./b.sh"] }\n',
        encoding="utf-8",
    )
    [d] = findings(f)
    assert "`fetch: ${{ tasks.fetch.status }}`" in d["message"]
    assert d["fixes"][0]["edits"][0]["new_text"].strip().endswith('"${{ tasks.fetch.status }}"')


def test_var_021_field_with_no_close_guess_offers_no_binding(tmp_path: Path) -> None:
    f = tmp_path / "w.nika.yaml"
    f.write_text(HEAD + '  b:\n    exec: { command: ["./b.sh", "${{ tasks.fetch.zzzz }}"] }\n', encoding="utf-8")
    d = next(x for x in findings(f) if x["code"] == "NIKA-VAR-021")
    assert d["fixes"] == [] and "tasks.fetch.zzzz" not in d["message"]


# -- duplicates ------------------------------------------------------------------------------


def test_a_list_of_args_under_nika_read_is_one_finding() -> None:
    text = (
        'nika: v1\nworkflow: {id: d}\npermits: { fs: { read: ["./x.txt"] }, tools: ["nika:read"] }\n'
        'tasks:\n  a:\n    invoke: { tool: "nika:read", args: ["./x.txt"] }\n'
    )
    codes = [(d.code, d.span) for d in compile_text(text).diagnostics]
    assert [c for c, _ in codes] == ["NIKA-PARSE-019"]


# -- explain ---------------------------------------------------------------------------------


def test_explain_of_one_code_into_a_closed_pipe_is_quiet() -> None:
    proc = subprocess.run(
        f"{sys.executable} -m nika explain NIKA-PARSE-017 | head -1",
        shell=True,
        capture_output=True,
        text=True,
        cwd=ROOT,
    )
    assert proc.stdout.startswith("NIKA-PARSE-017: ") and proc.stdout.count("\n") == 1
    assert "Traceback" not in proc.stderr and "BrokenPipe" not in proc.stderr


def test_explain_says_when_the_checker_does_not_judge_a_code_yet() -> None:
    from checker.core.codes import registry

    pending = [c for c, i in registry().items() if i.phase != "run" and not judged_statically(c)]
    if pending:
        out = nika("explain", pending[0]).stdout
        assert "does not judge this code yet" in out
    assert "does not judge" not in nika("explain", "NIKA-DAG-002").stdout


def test_explain_list_with_a_filter() -> None:
    proc = nika("explain", "--list", "DAG-00")
    assert proc.returncode == 0
    rows = proc.stdout.splitlines()
    assert rows and all(r.startswith("NIKA-DAG-00") for r in rows)
    assert nika("explain", "--list", "no-such-thing-anywhere").returncode == 1


def test_another_kind_of_yaml_is_one_finding() -> None:
    """A CI config saved as `.nika.yaml`: one PARSE-002 saying what the file is not, not three
    missing blocks plus an unknown field per key."""
    text = "name: CI\non:\n  push: {}\njobs:\n  build:\n    runs-on: ubuntu-latest\n"
    found = compile_text(text).diagnostics
    assert [(d.code, d.span.start) for d in found] == [("NIKA-PARSE-002", 0)]
    assert "not a Nika workflow" in found[0].message


def test_a_workflow_missing_only_some_blocks_still_names_each() -> None:
    found = compile_text("nika: v1\ntasks:\n  a:\n    infer: { prompt: x, model: mock/echo }\n").diagnostics
    assert [d.code for d in found if d.is_error] == ["NIKA-PARSE-002"]
    assert "`workflow:`" in found[0].message


# -- issue 25, item 8: fields written one level off ----------------------------------------------


def _helps(text: str) -> dict[str, str]:
    return {d.code or "": d.help or "" for d in compile_text(text).diagnostics}


def test_a_verb_field_at_task_level_says_where_it_belongs() -> None:
    text = 'nika: v1\nworkflow: { id: t }\ntasks:\n  b:\n    invoke: { tool: "nika:log" }\n    args: { message: hi }\n'
    assert _helps(text)["NIKA-PARSE-005"] == "`args` belongs under `invoke:`, one level deeper."


def test_a_task_field_inside_a_verb_body_says_one_level_up() -> None:
    text = (
        "nika: v1\nworkflow: { id: t }\npermits: { exec: [echo] }\ntasks:\n  a:\n"
        '    exec: { command: ["echo"], retry: { max_attempts: 2 } }\n'
    )
    assert _helps(text)["NIKA-PARSE-005"] == "`retry` is a task field: write it beside the verb, one level up."


def test_a_dedented_task_body_is_named_as_such() -> None:
    text = "nika: v1\nworkflow: { id: t }\ntasks:\n  a:\n  exec: { command: [echo] }\n"
    helps = _helps(text)
    assert helps["NIKA-PARSE-019"] == "Indent the body under `a:`." and "NIKA-PARSE-008" not in helps
    # a task-field key among the task ids with no empty task before it: still named as a stray field
    stray = "nika: v1\nworkflow: { id: t }\ntasks:\n  a: { exec: { command: [echo] } }\n  exec: { command: [echo] }\n"
    assert "one indentation level too shallow" in _helps(stray)["NIKA-PARSE-008"]
