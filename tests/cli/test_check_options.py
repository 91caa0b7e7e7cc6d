"""`nika check` options around the verdict: --native-strict, suppressions, configuration, --fix."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from test_cli import nika_here

ROOT = Path(__file__).resolve().parents[2]

CURL = """\
nika: v1
workflow: {id: demo}
permits: { exec: true }
tasks:
  get:
    exec: { command: ["curl", "-s", "https://example.org"] }
"""

REDUNDANT = """\
nika: v1
workflow: {id: demo}   # the id stays
permits: { exec: true }
tasks:
  a:
    exec: { command: ["./a.sh"] }   # keep this comment
  b:
    # about b
    after:
      a: terminal
    with: { v: "${{ tasks.a.output }}" }
    exec: { command: ["./b.sh", "${{ with.v }}"] }
  c:
    after: { a: terminal, b: terminal }
    with:
      got: "${{ tasks.b.output }}"
    exec: { command: ["./c.sh", "${{ with.got }}"] }
"""


def nika_process(*args: str, stdin: str | None = None, cwd: Path = ROOT) -> subprocess.CompletedProcess[str]:
    """`nika ARGS` in a process of its own (the entry function, from any working directory)."""
    env_path = str(ROOT)
    return subprocess.run(
        [
            sys.executable,
            "-c",
            f"import sys; sys.path.insert(0, {env_path!r}); from nika.cli import main; sys.exit(main())",
            *args,
        ],
        input=stdin,
        capture_output=True,
        text=True,
        cwd=cwd,
    )


def nika(*args: str, stdin: str | None = None, cwd: Path = ROOT) -> subprocess.CompletedProcess[str]:
    """`nika ARGS` in this process (what :func:`nika_process` runs, without starting an
    interpreter); a few tests keep the real process for the exit-code and stdin contract."""
    return nika_here(*args, stdin=stdin, cwd=cwd)


def findings(proc: subprocess.CompletedProcess[str]) -> list[dict]:
    return [f for r in json.loads(proc.stdout)["reports"] for f in r["findings"]]


def write(tmp: Path, name: str, text: str) -> Path:
    p = tmp / name
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_text(text, encoding="utf-8")
    return p


# -- --native-strict -------------------------------------------------------------------------


def test_native_first_warns_and_native_strict_fails(tmp_path: Path) -> None:
    f = write(tmp_path, "w.nika.yaml", CURL)
    plain = nika("check", "--output-format", "json", str(f), cwd=tmp_path)
    assert plain.returncode == 0
    [d] = findings(plain)
    assert d["rule"] == "native-first/001" and d["severity"] == "warning" and d["code"] is None
    strict = nika("check", "--native-strict", "--output-format", "json", str(f), cwd=tmp_path)
    assert strict.returncode == 2
    assert [x["severity"] for x in findings(strict)] == ["error"]


# -- suppressions ----------------------------------------------------------------------------


def test_suppression_on_the_line_above_and_unused_and_invalid_entries(tmp_path: Path) -> None:
    text = (
        CURL.replace("    exec:", "    # nika: ignore[native-first/001, NIKA-DAG-02] vendor CLI only\n    exec:")
        + '  other:\n    exec: { command: ["./x.sh"] }  # nika: ignore[one-obvious-way/007]\n'
    )
    f = write(tmp_path, "s.nika.yaml", text)
    proc = nika("check", "--output-format", "json", str(f), cwd=tmp_path)
    got = [(d["rule"], d["severity"]) for d in findings(proc)]
    assert got == [("suppression/invalid", "hint"), ("suppression/unused", "hint")]
    assert proc.returncode == 0
    sarif = json.loads(nika("check", "--output-format", "sarif", str(f), cwd=tmp_path).stdout)
    [silenced] = [r for r in sarif["runs"][0]["results"] if "suppressions" in r]
    assert silenced["ruleId"] == "native-first/001"
    assert silenced["suppressions"] == [{"kind": "inSource", "justification": "vendor CLI only"}]


def test_file_level_suppression_and_structural_errors_stay(tmp_path: Path) -> None:
    text = "# nika: ignore-file[native-first/001, NIKA-PARSE-001]\n" + CURL + "    bogus_field: 1\n"
    f = write(tmp_path, "f.nika.yaml", text)
    proc = nika("check", "--output-format", "json", str(f), cwd=tmp_path)
    rules_or_codes = [d["rule"] or d["code"] for d in findings(proc)]
    assert "native-first/001" not in rules_or_codes
    assert any(c and c.startswith("NIKA-PARSE") for c in rules_or_codes)  # cannot be silenced
    assert "suppression/invalid" in rules_or_codes
    assert proc.returncode == 2


def test_suppression_by_code_of_an_error(tmp_path: Path) -> None:
    text = (
        CURL + "  b:\n    # nika: ignore[DAG-002] producer arrives in the next release\n    after: { ghost: success }\n"
    )
    text += '    exec: { command: ["./b.sh"] }\n'
    f = write(tmp_path, "e.nika.yaml", text)
    proc = nika("check", "--output-format", "json", str(f), cwd=tmp_path)
    assert proc.returncode == 0, proc.stdout
    assert [d["code"] for d in findings(proc) if d["code"]] == []


# -- configuration ---------------------------------------------------------------------------


def test_pyproject_ignore_severity_and_show_settings(tmp_path: Path) -> None:
    write(
        tmp_path,
        "pyproject.toml",
        '[project]\nname = "x"\n\n[tool.nika]\nignore = ["one-obvious-way"]\nstrict = true\n'
        '[tool.nika.severity]\n"native-first" = "hint"\n',
    )
    f = write(tmp_path, "flows/w.nika.yaml", CURL)
    proc = nika("check", "--output-format", "json", str(f), cwd=tmp_path)
    assert [(d["rule"], d["severity"]) for d in findings(proc)] == [("native-first/001", "hint")]
    assert proc.returncode == 0  # strict fails on warnings, and this is now a hint
    shown = nika("check", "--show-settings", str(f), cwd=tmp_path)
    assert shown.returncode == 0
    assert str(tmp_path / "pyproject.toml") in shown.stdout and "strict = true" in shown.stdout
    assert "# max-cost-usd: not set" in shown.stdout and "fetch-allow-private = []" in shown.stdout


def test_show_settings_lists_the_settings_nika_run_reads(tmp_path: Path) -> None:
    """The run-time keys of the project configuration are shown with their origin too."""
    write(tmp_path, "nika.toml", 'max-cost-usd = 2.5\nfetch-allow-private = ["127.0.0.1", "10.0.0.0/8"]\n')
    f = write(tmp_path, "w.nika.yaml", CURL)
    shown = nika("check", "--show-settings", str(f), cwd=tmp_path).stdout
    lines = {line.split(" = ")[0]: line for line in shown.splitlines() if " = " in line}
    assert lines["max-cost-usd"].startswith("max-cost-usd = 2.5") and "# from " in lines["max-cost-usd"]
    assert '["127.0.0.1", "10.0.0.0/8"]' in lines["fetch-allow-private"]


def test_strict_makes_warnings_fail_and_native_strict_setting(tmp_path: Path) -> None:
    write(tmp_path, "nika.toml", "strict = true\n")
    f = write(tmp_path, "w.nika.yaml", CURL)
    assert nika("check", str(f), cwd=tmp_path).returncode == 2
    write(tmp_path, "nika.toml", "native-strict = true\n")
    proc = nika("check", "--output-format", "json", str(f), cwd=tmp_path)
    assert proc.returncode == 2 and findings(proc)[0]["severity"] == "error"


def test_per_file_ignores_and_select(tmp_path: Path) -> None:
    write(tmp_path, "nika.toml", 'select = ["native-first"]\n[per-file-ignores]\n"legacy/*" = ["native-first/001"]\n')
    old = write(tmp_path, "legacy/w.nika.yaml", CURL)
    new = write(
        tmp_path, "new/w.nika.yaml", CURL + '  b:\n    after: { ghost: success }\n    exec: { command: ["./b.sh"] }\n'
    )
    proc = nika("check", "--output-format", "json", str(old), str(new), cwd=tmp_path)
    reports = json.loads(proc.stdout)["reports"]
    assert reports[0]["findings"] == []
    assert [d["rule"] for d in reports[1]["findings"]] == ["native-first/001"]  # DAG-002 not selected


@pytest.mark.parametrize(
    ("config", "needle"),
    [
        ("ignroe = []\n", "did you mean `ignore`"),
        ('ignore = ["NIKA-DAG-02"]\n', "NIKA-DAG-02"),
        ("strict = 1\n", "true or false"),
        ('[severity]\n"NIKA-YAML-004" = "hint"\n', "structural"),
        ("strict = \n", "not valid TOML"),
    ],
)
def test_bad_configuration_is_one_clear_error(tmp_path: Path, config: str, needle: str) -> None:
    cfg = write(tmp_path, "nika.toml", config)
    f = write(tmp_path, "w.nika.yaml", CURL)
    proc = nika("check", str(f), cwd=tmp_path)
    assert proc.returncode == 1
    assert "Traceback" not in proc.stderr and needle in proc.stderr and str(cfg) in proc.stderr


# -- --fix -----------------------------------------------------------------------------------


def test_fix_is_minimal_keeps_comments_and_converges(tmp_path: Path) -> None:
    f = write(tmp_path, "r.nika.yaml", REDUNDANT)
    before = nika("check", "--output-format", "json", str(f), cwd=tmp_path)
    assert [d["task"] for d in findings(before) if d["rule"] == "one-obvious-way/010"] == ["b", "c"]
    proc = nika("check", "--fix", str(f), cwd=tmp_path)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    fixed = f.read_text()
    assert "# keep this comment" in fixed and "# about b" in fixed and "# the id stays" in fixed
    # b's entry goes whole; c keeps `a: terminal` (it reads only b), only `b: terminal` goes
    assert fixed.splitlines() == [
        line.replace("{ a: terminal, b: terminal }", "{ a: terminal }")
        for line in REDUNDANT.splitlines()
        if line not in ("    after:", "      a: terminal")
    ]
    again = nika("check", "--fix", str(f), cwd=tmp_path)
    assert again.returncode == 0 and f.read_text() == fixed and "fixed" not in again.stderr


def test_fix_on_stdin_prints_the_fixed_text_and_diff_writes_nothing(tmp_path: Path) -> None:
    proc = nika_process("check", "--fix", "-", stdin=REDUNDANT, cwd=tmp_path)  # stdin through a pipe
    assert proc.returncode == 0
    assert "b: terminal" not in proc.stdout and "      a: terminal" not in proc.stdout
    assert proc.stdout.startswith("nika: v1")
    f = write(tmp_path, "d.nika.yaml", REDUNDANT)
    diff = nika("check", "--diff", str(f), cwd=tmp_path)
    assert "-      a: terminal" in diff.stdout and f.read_text() == REDUNDANT


def test_diff_fails_a_gate_when_it_shows_changes(tmp_path: Path) -> None:
    """`--diff` exits 1 when it would change something (as ruff and black do), 0 when not."""
    f = write(tmp_path, "d.nika.yaml", REDUNDANT)
    assert nika_process("check", "--diff", str(f), cwd=tmp_path).returncode == 1  # the process's exit code
    nika("check", "--fix", str(f), cwd=tmp_path)
    clean = nika("check", "--diff", str(f), cwd=tmp_path)
    assert clean.returncode == 0 and clean.stdout == ""


def test_fix_writes_atomically_and_keeps_the_file_mode(tmp_path: Path) -> None:
    f = write(tmp_path, "m.nika.yaml", REDUNDANT)
    f.chmod(0o640)
    nika("check", "--fix", str(f), cwd=tmp_path)
    assert f.read_text() != REDUNDANT and (f.stat().st_mode & 0o777) == 0o640
    assert [p.name for p in tmp_path.iterdir()] == ["m.nika.yaml"]  # no temporary file left


def test_unsafe_fixes_need_the_flag(tmp_path: Path) -> None:
    text = CURL.replace(
        "tasks:\n",
        'tasks:\n  r:\n    invoke: { tool: "nika:read", args: { path: x.json } }\n    output:\n      all: ".items[]"\n',
    )
    f = write(tmp_path, "u.nika.yaml", text)
    nika("check", "--fix", str(f), cwd=tmp_path)
    assert f.read_text() == text
    nika("check", "--fix", "--unsafe-fixes", str(f), cwd=tmp_path)
    assert '"[.items[]]"' in f.read_text()


def test_fix_refuses_a_file_whose_yaml_does_not_parse(tmp_path: Path) -> None:
    text = REDUNDANT + "  broken: [\n"
    f = write(tmp_path, "b.nika.yaml", text)
    proc = nika("check", "--fix", str(f), cwd=tmp_path)
    assert f.read_text() == text
    assert "not fixed" in proc.stderr and proc.returncode == 2


# -- exit codes ------------------------------------------------------------------------------


def test_errors_found_win_over_a_missing_path(tmp_path: Path) -> None:
    bad = write(tmp_path, "bad.nika.yaml", CURL + '  b:\n    after: { ghost: success }\n    exec: { command: ["x"] }\n')
    proc = nika("check", str(bad), str(tmp_path / "missing.nika.yaml"), cwd=tmp_path)
    assert proc.returncode == 2
    assert "NIKA-DAG-002" in proc.stdout and "missing.nika.yaml" in proc.stdout + proc.stderr


def test_empty_directory_exits_1_unless_allowed(tmp_path: Path) -> None:
    (tmp_path / "empty").mkdir()
    proc = nika("check", str(tmp_path / "empty"), cwd=tmp_path)
    assert proc.returncode == 1 and "no" in proc.stderr
    assert nika("check", "--allow-empty", str(tmp_path / "empty"), cwd=tmp_path).returncode == 0


HOIST = """\
nika: v1
workflow: {id: demo}
permits: { exec: true }
tasks:
  a:
    exec: { command: ["./a.sh"] }
  b:
    # b reads a
    exec: { command: ["./b.sh", "${{ tasks.a.output }}", "${{ tasks.a.output }}"] }
  c:
    with:
      x: "${{ tasks.a.output }}"   # keep
    exec: { command: ["./c.sh", "${{ tasks.b.output }}", "${{ tasks.a.output }}"] }
  d:
    exec: { command: ["./d.sh", "${{ tasks.nope.output }}"] }
"""


def test_var_021_hoist_into_with_is_a_safe_fix(tmp_path: Path) -> None:
    f = write(tmp_path, "h.nika.yaml", HOIST)
    proc = nika("check", "--fix", "--output-format", "json", str(f), cwd=tmp_path)
    fixed = f.read_text()
    assert (
        '    with:\n      a: "${{ tasks.a.output }}"\n'
        '    exec: { command: ["./b.sh", "${{ with.a }}", "${{ with.a }}"] }' in fixed
    )
    assert '      x: "${{ tasks.a.output }}"   # keep\n      b: "${{ tasks.b.output }}"\n' in fixed
    assert '["./c.sh", "${{ with.b }}", "${{ with.x }}"]' in fixed  # an existing binding is reused
    [left] = findings(proc)
    assert left["code"] == "NIKA-VAR-021" and left["task"] == "d" and left["fixes"] == []
    assert "tasks.nope.output" not in left["message"]  # no repair that leads into NIKA-DAG-002


DEPENDS = """\
nika: v1
workflow: {id: demo}
permits: { exec: true }
tasks:
  a:
    exec: { command: ["./a.sh"] }
  maybe:
    exec: { command: ["./m.sh"] }
    on_error: { skip: true }
  b:
    depends_on:    # old style
      - a
    exec: { command: ["./b.sh"] }
  c:
    depends_on: [maybe]
    exec: { command: ["./c.sh"] }
"""


def test_depends_on_migrates_only_when_provably_equivalent(tmp_path: Path) -> None:
    f = write(tmp_path, "d.nika.yaml", DEPENDS)
    before = findings(nika("check", "--output-format", "json", str(f), cwd=tmp_path))
    by_task = {d["task"]: d for d in before if d["code"] == "NIKA-PARSE-024"}
    assert by_task["b"]["fixes"][0]["applicability"] == "safe"
    assert by_task["c"]["fixes"] == [] and "may settle skipped" in by_task["c"]["message"]
    nika("check", "--fix", str(f), cwd=tmp_path)
    fixed = f.read_text()
    assert "    after: { a: success }  # old style\n    exec:" in fixed
    assert "    depends_on: [maybe]\n" in fixed  # the ambiguous one waits for a human


def test_field_and_status_did_you_mean_carry_their_fix(tmp_path: Path) -> None:
    text = (
        'nika: v1\nworkflow: {id: d}\npermits: {exec: true}\ntasks:\n  a:\n    exec: { command: ["./a.sh"] }\n  b:\n'
        '    with: { v: "${{ tasks.a.outptu }}", s: "${{ tasks.a.status == \'sucess\' }}",'
        " t: \"${{ tasks.a.status == 'ok' }}\" }\n"
        '    exec: { command: ["./b.sh", "${{ with.v }}", "${{ with.s }}", "${{ with.t }}"] }\n'
    )
    f = write(tmp_path, "y.nika.yaml", text)
    got = {
        d["code"] + ":" + d["message"].split("`")[1]: d["fixes"]
        for d in findings(nika("check", "--output-format", "json", str(f), cwd=tmp_path))
    }
    assert got["NIKA-VAR-001:a"][0]["edits"][0]["new_text"] == "output"
    fixes = {k: v[0]["applicability"] for k, v in got.items() if v}
    assert fixes == {"NIKA-VAR-001:a": "safe", "NIKA-DAG-007:sucess": "safe", "NIKA-DAG-007:ok": "maybe-incorrect"}
    nika("check", "--fix", str(f), cwd=tmp_path)
    fixed = f.read_text()
    assert "tasks.a.output" in fixed and "'success'" in fixed and "'ok'" in fixed  # a synonym waits for review


def test_suppress_edit_inserts_or_extends_a_comment_and_silences_the_finding() -> None:
    from checker.engine.pipeline import compile_text
    from checker.project.suppressions import apply as suppress
    from checker.project.suppressions import suppress_edit
    from checker.rules.support.fixes import apply_edits

    text = CURL + '  b:\n    exec: { command: ["cat", "x"] }\n'
    wf = compile_text(text)
    d1, _ = [d for d in wf.diagnostics if d.rule]
    once = apply_edits(text, [suppress_edit(wf.source, d1, "vendor CLI")])  # type: ignore[list-item]
    assert '    # nika: ignore[native-first/001] vendor CLI\n    exec: { command: ["curl"' in once
    wf2 = compile_text(once)
    [d2b] = [d for d in wf2.diagnostics if d.rule == "native-first/002"]
    edit = suppress_edit(wf2.source, d2b)
    assert edit is not None and edit.new_text == "    # nika: ignore[native-first/002]\n"
    twice = apply_edits(once, [edit])
    out = suppress(compile_text(twice).source, compile_text(twice).diagnostics)
    assert [d.rule for d, _ in out.suppressed] == ["native-first/001", "native-first/002"] and out.notes == ()
    # a comment already on the line above is extended rather than duplicated
    wf3 = compile_text(CURL.replace("    exec:", "    # nika: ignore[NIKA-DAG-002] later\n    exec:"))
    [d3] = [d for d in wf3.diagnostics if d.rule == "native-first/001"]
    e3 = suppress_edit(wf3.source, d3)
    assert e3 is not None and e3.new_text == ", native-first/001"
    assert "# nika: ignore[NIKA-DAG-002, native-first/001] later" in apply_edits(wf3.source.text, [e3])


def test_strict_flag_makes_warnings_fail(tmp_path: Path) -> None:
    """`--strict` does what the `strict = true` setting does: a warning fails the check (exit 2)."""
    f = write(tmp_path, "w.nika.yaml", CURL)
    assert nika("check", str(f), cwd=tmp_path).returncode == 0
    assert nika("check", "--strict", str(f), cwd=tmp_path).returncode == 2


def test_check_help_has_the_exit_codes_and_both_suffixes() -> None:
    out = nika("check", "--help").stdout
    assert "*.nika.yml" in out and "exit status: 0" in out and "2 at least one error" in out
