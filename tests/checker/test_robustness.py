"""Bad input never raises: every input yields a report (findings or a one-line error)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from checker import compile_bytes, compile_text
from checker.core.diagnostics import Diagnostic, Severity
from checker.core.source import LineCol, SourceText
from checker.model.workflow import CompiledWorkflow
from checker.parse.nodes import MAX_INT_DIGITS
from checker.project.files import check_paths
from checker.project.report import CheckRun, FileReport
from nika.output import render

VALID = """nika: v1
workflow:
  id: sample
permits: { exec: [echo] }
tasks:
  a:
    exec: { command: ["echo", "${{ const.x }}"] }
    retry: { max_attempts: 2 }
  b:
    with: { v: "${{ tasks.a.output }}" }
    after: { a: success }
    when: ${{ with.v != 'x' }}
    infer: { model: mock/echo, prompt: "Summarize ${{ with.v }}" }
outputs:
  out: ${{ tasks.b.output }}
"""


def no_internal_error(compiled: CompiledWorkflow) -> None:
    """A crash inside the checker is caught and reported as NIKA-IMPL-001, so "never raises" alone
    cannot fail: the properties below also demand that no such finding was made."""
    crashes = [d for d in compiled.diagnostics if d.code == "NIKA-IMPL-001"]
    assert not crashes, crashes[0].message + "\n" + (crashes[0].trace or "")


@settings(max_examples=300, deadline=None)
@given(st.binary(max_size=400))
def test_random_bytes_never_raise(data: bytes) -> None:
    no_internal_error(compile_bytes(data, "fuzz.nika.yaml"))


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet=st.sampled_from(list("nika:v1 workflow id tasks{}[]-\n\t#&*!|>'\"${}.")), max_size=300))
def test_yaml_shaped_text_never_raises(text: str) -> None:
    no_internal_error(compile_text(text))


@settings(max_examples=200, deadline=None)
@given(st.integers(min_value=0, max_value=len(VALID)))
def test_truncated_workflow_never_raises(cut: int) -> None:
    no_internal_error(compile_text(VALID[:cut]))


@settings(max_examples=200, deadline=None)
@given(st.integers(min_value=0, max_value=len(VALID) - 1), st.text(max_size=5))
def test_spliced_workflow_never_raises(at: int, junk: str) -> None:
    no_internal_error(compile_text(VALID[:at] + junk + VALID[at:]))


def test_the_properties_see_a_planted_crash(monkeypatch: pytest.MonkeyPatch) -> None:
    """A crash planted in a rule fails the properties above (they are not vacuous)."""
    from checker.rules import RULES

    def planted(ctx: object) -> list[Diagnostic]:
        raise RuntimeError("planted")

    monkeypatch.setattr("checker.rules.RULES", (*RULES, planted))
    with pytest.raises(AssertionError, match="planted"):
        no_internal_error(compile_text(VALID))


def test_invalid_utf8_is_a_positioned_finding() -> None:
    c = compile_bytes(b"nika: v1\nworkflow: {id: x}\n\xff\xfe\n", "bad.nika.yaml")
    assert [d.code for d in c.diagnostics] == ["NIKA-PARSE-001"]
    assert c.source.line_col(c.diagnostics[0].span.start).line == 3


def test_empty_file() -> None:
    c = compile_text("")
    assert c.diagnostics and all(d.code for d in c.diagnostics)


def test_deep_nesting_stops_at_the_cap() -> None:
    text = "nika: v1\nconst:\n  x: " + "[" * 5000 + "]" * 5000 + "\n"
    c = compile_text(text)
    assert "NIKA-YAML-009" in [d.code for d in c.diagnostics]


def test_huge_file_is_refused_without_reading_it_all(tmp_path: Path) -> None:
    big = tmp_path / "big.nika.yaml"
    with big.open("wb") as fh:
        fh.write(b"nika: v1\n")
        fh.write(b"# padding\n" * 5_000_000)  # about 50 MB
    [rep] = check_paths([str(big)])
    assert rep.error is None
    assert [d.code for d in rep.diagnostics] == ["NIKA-YAML-010"]


def test_unreadable_and_missing_paths_are_one_line_errors(tmp_path: Path) -> None:
    d = tmp_path / "wf"
    d.mkdir()
    ok = d / "a.nika.yaml"
    ok.write_text(VALID)
    secret = d / "b.nika.yaml"
    secret.write_text(VALID)
    secret.chmod(0)
    reports = check_paths([str(d), str(tmp_path / "missing.nika.yaml")])
    by_path = {r.path: r for r in reports}
    assert by_path[str(tmp_path / "missing.nika.yaml")].error == "no such file or directory"
    if os.geteuid() != 0:  # root reads anything
        assert by_path[str(secret)].error == "permission denied"


def test_cli_binary_junk_exits_with_findings_not_a_traceback(tmp_path: Path) -> None:
    junk = tmp_path / "junk.nika.yaml"
    junk.write_bytes(bytes(range(256)) * 10)
    proc = subprocess.run([sys.executable, "-m", "nika", "check", str(junk)], capture_output=True, text=True)
    assert proc.returncode == 2
    assert "Traceback" not in proc.stderr


# --- regressions: issue 6 items 4 and 7, issue 12 items 2 and 4 ---------------------------

WF_HEAD = "nika: v1\nworkflow:\n  id: t\n"
WF_TASK = 'tasks:\n  a:\n    infer: { model: mock/echo, prompt: "${{ const.x }}" }\n'  # reads the const under test


def _json(c: CompiledWorkflow) -> dict[str, Any]:
    """The JSON rendering of one compiled document (what `--output-format json` would print)."""
    run = CheckRun((FileReport(c.source.path, c.source, c.diagnostics),))
    return json.loads(render(run, "json"))


def _crashing_rule(ctx: object) -> list[Diagnostic]:
    raise ZeroDivisionError("boom")


def test_a_rule_crash_is_an_internal_error_that_fails_the_check(monkeypatch: pytest.MonkeyPatch) -> None:
    import checker.rules

    monkeypatch.setattr(checker.rules, "RULES", [*checker.rules.RULES, _crashing_rule])
    c = compile_text(VALID, "x.nika.yaml")
    [d] = [d for d in c.diagnostics if d.code == "NIKA-IMPL-001"]
    assert d.severity is Severity.ERROR and d.category == "internal_error" and d.namespace == "NIKA-IMPL"
    assert "_crashing_rule" in d.message and "ZeroDivisionError: boom" in d.message
    assert d.trace is not None and "Traceback" in d.trace and "boom" in d.trace
    rep = FileReport("x.nika.yaml", c.source, c.diagnostics)
    assert rep.incomplete and not rep.clean
    assert CheckRun((rep,)).exit_code == 1


def test_a_crash_before_the_rules_is_an_internal_error_too(monkeypatch: pytest.MonkeyPatch) -> None:
    import checker.engine.pipeline

    def broken(*args: object) -> None:
        raise KeyError("compiler")

    monkeypatch.setattr(checker.engine.pipeline, "compile_tree", broken)
    c = compile_text(VALID)
    assert [d.code for d in c.diagnostics] == ["NIKA-IMPL-001"]
    assert "parse and compile" in c.diagnostics[0].message


def test_cli_exits_1_on_an_internal_error_and_shows_the_traceback_only_with_debug(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    import checker.rules
    from nika.cli import main

    wf = tmp_path / "w.nika.yaml"
    wf.write_text(VALID)
    monkeypatch.setattr(checker.rules, "RULES", [_crashing_rule])
    assert main(["check", "--output-format", "concise", str(wf)]) == 1
    out, err = capsys.readouterr()
    assert "error[NIKA-IMPL-001]" in out and "could not be fully checked" in out
    assert "Traceback" not in out + err
    assert main(["check", "--debug", "--output-format", "json", str(wf)]) == 1
    out, err = capsys.readouterr()
    assert json.loads(out)["clean"] is False
    assert "Traceback" in err and "ZeroDivisionError: boom" in err


def test_a_type_alias_cycle_is_type_002_without_a_crash() -> None:
    c = compile_text(WF_HEAD + "types:\n  A: A\n  B: A\n" + WF_TASK.replace("${{ const.x }}", "x"))
    assert [(d.code, c.source.line_col(d.span.start).line) for d in c.diagnostics] == [("NIKA-TYPE-002", 5)]


def test_a_huge_decimal_integer_is_a_positioned_scalar_cap_finding() -> None:
    digits = "7" * 5000
    c = compile_text(WF_HEAD + f"const:\n  x: {digits}\n" + WF_TASK)
    [d] = c.diagnostics
    assert d.code == "NIKA-YAML-005" and "5000 digits" in d.message
    assert c.source.slice(d.span) == digits
    assert c.source.line_col(d.span.start) == LineCol(5, 6)


def test_an_integer_at_the_digit_cap_is_still_a_number() -> None:
    c = compile_text(WF_HEAD + f"const:\n  x: {'7' * MAX_INT_DIGITS}\n" + WF_TASK)
    assert not c.diagnostics


def test_a_huge_hex_integer_in_a_json_schema_is_refused_not_a_crash() -> None:
    text = (
        WF_HEAD + "tasks:\n  a:\n    infer:\n      model: mock/echo\n      prompt: hi\n"
        f"      schema:\n        type: object\n        maxProperties: [0x{'f' * 5000}]\n"
    )
    c = compile_text(text)
    codes = {d.code for d in c.diagnostics}
    assert "NIKA-YAML-005" in codes and "NIKA-IMPL-001" not in codes
    assert all(len(d.message) < 400 for d in c.diagnostics)
    for fmt in ("full", "concise", "json", "sarif", "github"):
        render(CheckRun((FileReport("x", c.source, c.diagnostics),)), fmt)


CR_TEXT = (
    "nika: v1\rworkflow:\r\n  id: t\rtasks:\r  a:\r    after: { ghost: success }\r"
    "    infer: { model: mock/echo, prompt: x }\r"
)


def test_lone_carriage_returns_are_line_breaks() -> None:
    src = SourceText(CR_TEXT)
    assert src.line_text(0) == "nika: v1" and src.line_text(1) == "workflow:" and src.line_text(2) == "  id: t"
    c = compile_text(CR_TEXT)
    [d] = c.diagnostics
    assert d.code == "NIKA-DAG-002"
    assert c.source.line_col(d.span.start) == LineCol(6, 14)
    span = _json(c)["reports"][0]["findings"][0]["span"]
    assert span["start"] == {"line": 6, "column": 14, "offset": CR_TEXT.index("ghost")}
    full = render(CheckRun((FileReport("x", c.source, c.diagnostics),)), "full")
    assert "6 |     after: { ghost: success }\n  |              ^^^^^\n" in full


def test_line_ends_exclude_every_kind_of_break() -> None:
    src = SourceText("a\r\rb\r\nc\nd")
    assert [src.line_text(i) for i in range(5)] == ["a", "", "b", "c", "d"]
    assert src.line_starts == [0, 2, 3, 6, 8]


def test_many_findings_on_one_line_fold() -> None:
    """2,000 findings on one line render as three and a fold line (the output stays small; its
    speed is measured in benchmarks/bounds.py, not here)."""
    text = WF_HEAD + "const:\n  x: [" + ", ".join([".nan"] * 2000) + "]\n" + WF_TASK
    c = compile_text(text)
    assert len(c.diagnostics) == 2000
    run = CheckRun((FileReport("x", c.source, c.diagnostics),))
    full = render(run, "full")
    concise = render(run, "concise")
    for out in (full, concise):
        assert out.count("error[NIKA-YAML-008]") == 4  # three shown, one fold line
        assert "1997 more error[NIKA-YAML-008] findings on this line (folded)" in out
        assert "1997 repeated findings are folded" in out.splitlines()[-1]
    assert len(full) < 10_000
    assert len(json.loads(render(run, "json"))["reports"][0]["findings"]) == 2000


def test_a_long_line_is_shown_as_a_window_with_the_caret_under_the_span() -> None:
    line = "  x: [" + ", ".join(["1"] * 400) + ", .inf]"
    c = compile_text(WF_HEAD + "const:\n" + line + "\n" + WF_TASK)
    assert len(c.diagnostics) == 1
    full = render(CheckRun((FileReport("x", c.source, c.diagnostics),)), "full")
    shown, carets = full.splitlines()[2:4]
    assert shown.startswith("5 | …") and len(shown) < 300
    at = carets.index("^")
    assert shown[at : at + 4] == ".inf" and carets[at:].rstrip() == "^^^^"


@pytest.mark.parametrize(
    ("data", "start", "end"),
    [(b"\xff", 0, 1), (b"a: \xc3\n", 3, 4), (b"\xe2\x82x: 1\n", 0, 1), ("é: ".encode() + b"\xfe\n", 4, 5)],
)
def test_offsets_of_invalid_utf8_are_bytes_of_the_file_as_given(data: bytes, start: int, end: int) -> None:
    c = compile_bytes(data, "bad.nika.yaml")
    assert [d.code for d in c.diagnostics] == ["NIKA-PARSE-001"]
    span = _json(c)["reports"][0]["findings"][0]["span"]
    assert (span["start"]["offset"], span["end"]["offset"]) == (start, end)
    assert c.source.byte_offset(len(c.source.text)) == len(data)


def test_a_lone_surrogate_is_reported_where_it_is() -> None:
    c = compile_text(WF_HEAD + "const:\n  x: ab\ud83dcd\n" + WF_TASK)
    [d] = c.diagnostics
    assert d.code == "NIKA-PARSE-001" and "U+D83D" in d.message and "surrogate" in d.message
    assert c.source.line_col(d.span.start) == LineCol(5, 8)


def test_a_control_character_is_reported_where_it_is() -> None:
    c = compile_text(WF_HEAD + "const:\n  x: ab\x01\n" + WF_TASK)
    [d] = c.diagnostics
    assert d.code == "NIKA-PARSE-001" and c.source.line_col(d.span.start) == LineCol(5, 8)


def test_a_control_character_after_non_ascii_text_is_reported_where_it_is() -> None:
    # libyaml counts the reader's position in UTF-8 bytes; the finding must count characters
    c = compile_text(WF_HEAD + "const:\n  x: é → ab\x7f\n" + WF_TASK)
    [d] = c.diagnostics
    assert d.code == "NIKA-PARSE-001" and "U+007F" in d.message
    assert c.source.line_col(d.span.start) == LineCol(5, 12)


@pytest.mark.parametrize("encoding", ["ascii", "latin-1", "utf-8"])
def test_output_survives_any_stdout_encoding_and_undecodable_file_names(tmp_path: Path, encoding: str) -> None:
    try:
        odd = Path(os.fsdecode(bytes(tmp_path) + b"/\xff-caf\xc3\xa9.nika.yaml"))
        odd.write_text(WF_HEAD.replace("id: t", "id: café") + WF_TASK, encoding="utf-8")
    except (OSError, UnicodeError):
        pytest.skip("this file system refuses undecodable file names")
    env = {**os.environ, "PYTHONIOENCODING": encoding}
    formats = ("full", "concise", "json", "sarif", "github")
    # one interpreter per encoding (its stdout is set up from PYTHONIOENCODING at start), each
    # format a `nika check` of its own in it, the reports split by a NUL byte
    proc = subprocess.run([sys.executable, "-c", _EACH_FORMAT, str(tmp_path), *formats], capture_output=True, env=env)
    assert b"Traceback" not in proc.stderr, proc.stderr
    assert proc.returncode == 0, proc.stderr
    codes = json.loads(proc.stderr.splitlines()[-1])
    assert codes == [2] * len(formats), proc.stderr
    outputs = dict(zip(formats, proc.stdout.split(b"\0"), strict=False))
    [rep] = json.loads(outputs["json"].decode("utf-8"))["reports"]
    assert rep["path"] == str(odd) and rep["findings"][0]["code"] == "NIKA-PARSE-004"


_EACH_FORMAT = """
import json, sys
from nika.cli import main
codes = []
for fmt in sys.argv[2:]:
    codes.append(main(["check", "--output-format", fmt, sys.argv[1]]))
    sys.stdout.flush()
    sys.stdout.buffer.write(b"\\0")
    sys.stdout.buffer.flush()
sys.stderr.write("\\n" + json.dumps(codes) + "\\n")
"""


def test_a_message_quoting_a_huge_value_is_bounded() -> None:
    task = 'tasks:\n  a:\n    timeout: "' + "9" * 5000 + 's"\n    infer: { model: mock/echo, prompt: x }\n'
    c = compile_text(WF_HEAD + task)
    [d] = c.diagnostics
    assert d.code == "NIKA-PARSE-010" and len(d.message) <= 1000 and "characters)" in d.message


def test_a_mapping_as_the_program_is_one_parse_finding() -> None:
    """Found by fuzzing: `command: ["true": ]` makes argv[0] a mapping; the authority rule must
    not read it as a program name (it raised inside `check_fit`)."""
    text = (
        'nika: v1\nworkflow:\n  id: w\npermits: {exec: ["true"]}\ntasks:\n  seed:\n    exec: { command: ["true": ] }\n'
    )
    found = compile_text(text).diagnostics
    assert [d.code for d in found if d.is_error] == ["NIKA-PARSE-019"]


@pytest.mark.parametrize("sep", ["\u2028", "\x85"])
def test_a_syntax_error_label_stays_inside_the_text(sep: str) -> None:
    """Found by fuzzing: a line holding a Unicode line separator (a break for YAML, not for our
    line index) made the "this line has no `: `" label run past the end of the file."""
    text = "nika: v1\nworkflow:\n  id: w # " + "7" * 80 + sep + "7" * 80 + "\n  description: x\n"
    found = compile_text(text).diagnostics
    assert found
    for d in found:
        for sp in (d.span, *(lb.span for lb in d.related)):
            assert 0 <= sp.start <= sp.end <= len(text)


def test_a_huge_integer_where_a_tool_argument_takes_a_number_is_accepted_not_a_crash() -> None:
    """Found by fuzzing: judging a 400-digit integer against a `number` argument type overflowed
    while testing it for finiteness (NIKA-IMPL-001, the whole `check_invoke` rule dropped)."""
    text = (
        "nika: v1\nworkflow: { id: t }\n"
        'permits: { fs: { read: ["./d/**"], write: ["./d/**"] }, tools: ["nika:edit"] }\n'
        "tasks:\n  fix:\n    invoke:\n      tool: nika:edit\n"
        f'      args: {{ path: "./d/n.txt", find: "TODO", replace: {"1" * 400}, count: 1 }}\n'
    )
    c = compile_text(text)
    codes = [d.code for d in c.diagnostics]
    assert codes == [], codes  # `replace:` takes a number: a long one is a number too
