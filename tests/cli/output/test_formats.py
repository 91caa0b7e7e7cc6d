"""Snapshot and contract tests for the output formats of ``nika check``.

Each format is compared with ``==`` against a golden file in ``tests/cli/output/snapshots/<format>.txt``.
After an intended change of a format, regenerate the golden files with

    NIKA_UPDATE_SNAPSHOTS=1 .venv/bin/python -m pytest tests/cli/output

and review the diff before committing it.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from checker.core.codes import CodeInfo
from checker.core.diagnostics import Diagnostic, Edit, Fix, Label, Severity
from checker.core.source import SourceText, Span
from checker.project.report import CheckRun, FileReport
from nika.output import FORMATS, github, json_report, render, sarif, text

SNAPSHOTS = Path(__file__).with_name("snapshots")
UPDATE = os.environ.get("NIKA_UPDATE_SNAPSHOTS") == "1"

# Line 4 puts an 'é', an emoji (4 UTF-8 bytes, 2 terminal columns) and a tab before the spans,
# so code-point columns, byte offsets and display columns all differ.
TEXT = (
    "nika: v1\n"
    "tasks:\n"
    "  - id: café\n"
    '    prompt: "Crème 🍰\tfor {{ missing }}"\n'
    "    needs: [café]\n"
    "    with:\n"
    "      retries: 3\n"
)
PATH = "examples/café.nika.yaml"


def _span_of(needle: str, after: int = 0) -> Span:
    start = TEXT.index(needle, after)
    return Span(start, start + len(needle))


MISSING = _span_of("missing")
TASK_ID = _span_of("café")
TAB = _span_of("\t")
WITH_BLOCK = Span(TEXT.index("with:"), TEXT.index("3\n") + 1)

ERROR = Diagnostic(
    code="NIKA-VAR-001",
    namespace="NIKA-VAR",
    category="variable_error",
    severity=Severity.ERROR,
    message="variable `missing` is not defined",
    span=MISSING,
    help="Declare it under `inputs:` or correct its name.",
    related=(Label(TASK_ID, "used by task `café`"),),
    fixes=(Fix("Read it from `inputs`", (Edit(MISSING, "inputs.missing"),)),),
    task="café",
)
WARNING = Diagnostic(
    code=None,
    namespace="NIKA-LINT",
    category="validation_error",
    severity=Severity.WARNING,
    message="tab character inside a prompt",
    span=TAB,
    help="Use spaces so the prompt reads the same in every editor.",
    rule="prompt-tab",
)
HINT = Diagnostic(
    code=None,
    namespace="NIKA-LINT",
    category="validation_error",
    severity=Severity.HINT,
    message="`with:` only sets a default value",
    span=WITH_BLOCK,
    rule="redundant-with",
)

CODES = {
    "NIKA-VAR-001": CodeInfo(
        code="NIKA-VAR-001",
        title="Undefined variable",
        category="variable_error",
        phase="check",
        severity=Severity.ERROR,
        teaching="A template refers to a name that no input, task output or binding provides.",
    )
}


def make_run() -> CheckRun:
    return CheckRun(
        reports=(
            # Deliberately out of order: every format sorts findings by position.
            FileReport(PATH, SourceText(TEXT, PATH), (HINT, ERROR, WARNING)),
            FileReport("examples/clean.nika.yaml", SourceText("nika: v1\n"), ()),
            FileReport("examples/gone.nika.yaml", None, (), error="No such file or directory"),
        )
    )


def _rendered(fmt: str) -> str:
    run = make_run()
    if fmt == "sarif":
        return sarif.render(run, codes=CODES, version="0.0.0-test")
    return render(run, fmt)


def _check_snapshot(name: str, actual: str) -> None:
    path = SNAPSHOTS / f"{name}.txt"
    if UPDATE:
        SNAPSHOTS.mkdir(exist_ok=True)
        path.write_bytes(actual.encode("utf-8"))
        return
    assert path.exists(), f"missing snapshot {path}; run with NIKA_UPDATE_SNAPSHOTS=1"
    assert actual == path.read_bytes().decode("utf-8")


@pytest.mark.parametrize("fmt", FORMATS)
def test_snapshot(fmt: str) -> None:
    _check_snapshot(fmt, _rendered(fmt))


def test_unknown_format() -> None:
    with pytest.raises(ValueError, match="unknown output format"):
        render(make_run(), "xml")


# --- json ---------------------------------------------------------------------------------


def test_json_contract() -> None:
    out = render(make_run(), "json")
    assert out.endswith("}\n") and "\n" not in out[:-1]
    assert "café" in out  # ensure_ascii=False
    data = json.loads(out)
    assert data == json_report.report_dict(make_run())
    assert list(data) == ["report_version", "clean", "reports"]
    assert data["report_version"] == 1 and data["clean"] is False

    first, clean, gone = data["reports"]
    assert first["path"] == PATH and first["clean"] is False
    # `certificate` (added last) is null here: these reports carry no compiled workflow
    assert clean == {"path": "examples/clean.nika.yaml", "clean": True, "findings": [], "certificate": None}
    assert gone == {
        "path": "examples/gone.nika.yaml",
        "clean": False,
        "error": "No such file or directory",
        "findings": [],
        "certificate": None,
    }

    warning, error, hint = first["findings"]  # sorted by start offset
    assert list(error) == [
        "code", "namespace", "category", "severity", "rule", "task",
        "message", "span", "related", "fixes", "docs_url",
    ]  # fmt: skip
    assert error["code"] == "NIKA-VAR-001" and error["severity"] == "error"
    assert error["message"] == ERROR.full_message()
    assert error["docs_url"] == "https://nika.sh/errors/NIKA-VAR-001"
    # `missing` is code point 57 of the text but byte 62: 'é' (twice) and the emoji widen it.
    # On its line it is code point 29 ('é' + emoji + tab before it).
    assert error["span"] == {
        "start": {"line": 4, "column": 29, "offset": 62},
        "end": {"line": 4, "column": 36, "offset": 69},
    }
    assert MISSING.start == 57
    assert len(TEXT[: MISSING.start].encode("utf-8")) == 62
    assert error["related"] == [
        {
            "message": "used by task `café`",
            "span": {
                "start": {"line": 3, "column": 9, "offset": 24},
                "end": {"line": 3, "column": 13, "offset": 29},
            },
        }
    ]
    assert error["fixes"] == [
        {
            "title": "Read it from `inputs`",
            "applicability": "safe",
            "edits": [{"span": error["span"], "new_text": "inputs.missing"}],
        }
    ]
    assert warning["code"] is None and warning["rule"] == "prompt-tab"
    assert warning["severity"] == "warning" and warning["docs_url"] is None
    assert hint["severity"] == "hint"
    assert hint["span"]["start"]["line"] == 6 and hint["span"]["end"]["line"] == 7


# --- sarif --------------------------------------------------------------------------------


def test_sarif_shape() -> None:
    log = json.loads(sarif.render(make_run(), codes=CODES, version="9.9.9"))
    assert log["$schema"] == "https://json.schemastore.org/sarif-2.1.0.json"
    assert log["version"] == "2.1.0"
    (run,) = log["runs"]
    driver = run["tool"]["driver"]
    assert driver["name"] == "nika" and driver["version"] == "9.9.9"
    assert driver["informationUri"].startswith("https://")
    assert run["columnKind"] == "unicodeCodePoints"

    rules = driver["rules"]
    assert [r["id"] for r in rules] == ["prompt-tab", "NIKA-VAR-001", "redundant-with"]
    var = rules[1]
    assert var["name"] == "UndefinedVariable"
    assert var["shortDescription"]["text"] == "Undefined variable"
    assert var["fullDescription"]["text"] == CODES["NIKA-VAR-001"].teaching
    assert var["help"]["text"] == CODES["NIKA-VAR-001"].teaching
    assert var["helpUri"] == "https://nika.sh/errors/NIKA-VAR-001"
    assert var["defaultConfiguration"]["level"] == "error"
    assert rules[2]["defaultConfiguration"]["level"] == "note"

    results = run["results"]
    assert [(r["ruleId"], r["ruleIndex"], r["level"]) for r in results] == [
        ("prompt-tab", 0, "warning"),
        ("NIKA-VAR-001", 1, "error"),
        ("redundant-with", 2, "note"),
    ]
    err = results[1]
    assert err["message"]["text"] == ERROR.full_message()
    loc = err["locations"][0]["physicalLocation"]
    assert loc["artifactLocation"]["uri"] == "examples/caf%C3%A9.nika.yaml"
    assert loc["region"] == {"startLine": 4, "startColumn": 29, "endLine": 4, "endColumn": 36}
    related = err["relatedLocations"][0]
    assert related["message"]["text"] == "used by task `café`"
    assert related["physicalLocation"]["region"]["startLine"] == 3
    (fix,) = err["fixes"]
    (change,) = fix["artifactChanges"]
    (replacement,) = change["replacements"]
    assert replacement["insertedContent"]["text"] == "inputs.missing"
    assert replacement["deletedRegion"] == loc["region"]

    (invocation,) = run["invocations"]
    assert invocation["executionSuccessful"] is False
    (note,) = invocation["toolExecutionNotifications"]
    assert note["message"]["text"] == "No such file or directory"


def test_sarif_codeless_without_rule_and_unregistered_code() -> None:
    bare = Diagnostic(None, "NIKA-LINT", "validation_error", Severity.INFO, "odd", Span(0, 4))
    unknown = Diagnostic("NIKA-ZZZ-999", "NIKA-ZZZ", "internal_error", Severity.ERROR, "x", Span(5, 6))
    run = CheckRun((FileReport("a\\b c.yaml", SourceText("nika: v1\n"), (bare, unknown)),))
    log = sarif.sarif_log(run, codes={}, version="1")
    rules = log["runs"][0]["tool"]["driver"]["rules"]
    assert [r["id"] for r in rules] == ["nika", "NIKA-ZZZ-999"]
    assert "fullDescription" not in rules[1] and rules[1]["name"] == "NIKAZZZ999"
    assert log["runs"][0]["invocations"][0]["executionSuccessful"] is True
    uri = log["runs"][0]["results"][0]["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]
    assert uri == "a/b%20c.yaml"


def test_sarif_rule_name() -> None:
    assert sarif.rule_name("Cycle in `needs` graph") == "CycleInNeedsGraph"
    assert sarif.rule_name("prompt-tab") == "PromptTab"


def test_sarif_tool_version_is_a_string() -> None:
    assert isinstance(sarif.tool_version(), str) and sarif.tool_version()


# --- github -------------------------------------------------------------------------------


def test_github_escaping() -> None:
    assert github.escape_data("50%\r\nnext: a,b") == "50%25%0D%0Anext: a,b"
    assert github.escape_property("C:\\x,y%\n") == "C%3A\\x%2Cy%25%0A"
    d = Diagnostic("NIKA-VAR-001", "NIKA-VAR", "variable_error", Severity.ERROR, "bad: 100%\nreally", Span(0, 4))
    run = CheckRun((FileReport("dir,x/a:b.yaml", SourceText("nika: v1\n"), (d,)),))
    assert github.render(run) == (
        "::error file=dir%2Cx/a%3Ab.yaml,line=1,col=1,endLine=1,endColumn=5,title=NIKA-VAR-001::bad: 100%25%0Areally\n"
    )


def test_github_clean_run_is_empty() -> None:
    run = CheckRun((FileReport("a.yaml", SourceText("nika: v1\n"), ()),))
    assert github.render(run) == ""


# --- text ---------------------------------------------------------------------------------


def test_full_carets_line_up_with_tabs_and_wide_characters() -> None:
    out = render(make_run(), "full")
    lines = out.splitlines()
    i = lines.index("examples/café.nika.yaml:4:29: error[NIKA-VAR-001] variable `missing` is not defined")
    source_line, caret_line = lines[i + 2], lines[i + 3]
    shown, cols = text.display_columns(TEXT.splitlines()[3])
    assert source_line == "4 | " + shown
    # The emoji takes two terminal columns and the tab runs to the next stop of four.
    gutter = len("4 | ")
    assert caret_line == " " * (gutter - 2) + "| " + " " * cols[28] + "^" * 7
    assert "\t" not in out
    # Caret under the tab spans the whole expanded tab.
    j = lines.index("examples/café.nika.yaml:4:21: warning[prompt-tab] tab character inside a prompt")
    assert cols[21] - cols[20] == 3
    assert lines[j + 3] == "  | " + " " * cols[20] + "^^^"


def test_display_columns() -> None:
    shown, cols = text.display_columns("a\tb🍰c\x1b")
    assert shown == "a   b🍰c\\x1b"  # a control character is escaped: it neither drives the terminal nor vanishes
    assert cols == [0, 1, 4, 5, 7, 8, 12]
    shown, cols = text.display_columns("x\ufffd\ufffdy", {1: 0x80})
    assert shown == "x\\x80\ufffdy"  # a replaced byte whose value is known is shown as that byte
    assert cols == [0, 1, 5, 6, 7]
    _, cols = text.display_columns("e\u0301x")  # combining accent takes no column
    assert cols == [0, 1, 1, 2]


def test_binary_lines_are_escaped_and_capped() -> None:
    from checker.engine.pipeline import compile_bytes

    data = b"nika: v1\n" + bytes(range(0x80, 0x100)) * 8 + b"\n"
    compiled = compile_bytes(data, "bin.nika.yaml")
    out = render(CheckRun((FileReport("bin.nika.yaml", compiled.source, compiled.diagnostics),)), "full")
    source_line = out.splitlines()[2]
    assert source_line.startswith("2 | \\x80\\x81\\x82") and source_line.endswith("…")
    assert "\ufffd" not in out
    assert len(source_line) <= len("2 | ") + 4 * text.MAX_SHOWN_BINARY + 2
    elf = b"\x7fELF\x02\x01\x01" + b"\x00" * 9 + b"\x02\x00>\x00" + bytes(range(0xC0, 0x100)) * 20
    compiled = compile_bytes(elf, "a.out")
    out = render(CheckRun((FileReport("a.out", compiled.source, compiled.diagnostics),)), "full")
    assert "\\x02\\x00>\\x00\\xc0\\xc1" in out and "\ufffd" not in out
    assert max(len(line) for line in out.splitlines()[:4]) < 4 * text.MAX_SHOWN_BINARY + 16


def test_full_without_and_with_color() -> None:
    plain = render(make_run(), "full")
    assert "\x1b[" not in plain
    colored = render(make_run(), "full", color=True)
    assert "\x1b[31m" in colored and "\x1b[33m" in colored and "\x1b[34m" in colored
    assert "\x1b[1m" in colored
    # Colors never change the words.
    import re

    assert re.sub(r"\x1b\[[0-9;]*m", "", colored) == plain
    assert render(make_run(), "concise", color=False) == _rendered("concise")


def _report(*severities: Severity, path: str = "a.yaml") -> FileReport:
    ds = tuple(
        Diagnostic(None, "NIKA-LINT", "validation_error", s, "m", Span(i, i + 1), rule="r")
        for i, s in enumerate(severities)
    )
    return FileReport(path, SourceText("nika: v1\n", path), ds)


@pytest.mark.parametrize(
    ("reports", "expected"),
    [
        ((), "No files checked."),
        ((_report(), _report(), _report()), "All checked: 3 files, no findings."),
        ((_report(),), "All checked: 1 file, no findings."),
        ((_report(Severity.ERROR),), "Found 1 error in 1 file."),
        (
            (_report(Severity.ERROR, Severity.ERROR, Severity.WARNING), _report()),
            "Found 2 errors and 1 warning in 1 of 2 files.",
        ),
        (
            (_report(Severity.WARNING, Severity.INFO, Severity.HINT), _report(Severity.ERROR)),
            "Found 1 error, 1 warning and 2 notes in 2 files.",
        ),
        (
            (_report(), FileReport("x", None, (), error="gone")),
            "No findings in 1 file, but 1 file could not be read.",
        ),
        ((FileReport("x", None, (), error="gone"),), "Nothing checked: 1 file could not be read."),
        (
            (
                _report(Severity.WARNING),
                FileReport("x", None, (), error="a"),
                FileReport("y", None, (), error="b"),
            ),
            "Found 1 warning in 1 file. 2 files could not be read.",
        ),
    ],
)
def test_summary(reports: tuple[FileReport, ...], expected: str) -> None:
    run = CheckRun(reports)
    assert text.summary(run) == expected
    assert render(run, "full").endswith(expected + "\n")
    assert render(run, "concise").endswith(expected + "\n")


def test_span_ending_after_line_break_stays_on_one_line() -> None:
    src = "ab\ncd\n"
    d = Diagnostic(None, "NIKA-LINT", "validation_error", Severity.ERROR, "m", Span(0, 3), rule="r")
    out = render(CheckRun((FileReport("f", SourceText(src, "f"), (d,)),)), "full")
    assert "  | ^^\n" in out and "continues" not in out


def test_renderers_do_not_pull_in_heavy_modules() -> None:
    import subprocess
    import sys

    code = (
        "import sys; import nika.output as o; from checker.project.report import CheckRun;"
        "[o.render(CheckRun(()), f) for f in o.FORMATS];"
        "bad = [m for m in ('pygls', 'lsprotocol', 'typer', 'nika_lsp') if m in sys.modules];"
        "print(','.join(bad))"
    )
    root = Path(__file__).resolve().parents[3]
    out = subprocess.run([sys.executable, "-c", code], cwd=root, capture_output=True, text=True, check=True)
    assert out.stdout.strip() == ""
