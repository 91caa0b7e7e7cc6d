"""Bad input never raises: every input yields a report (findings or a one-line error)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from checker import compile_bytes, compile_text
from checker.files import check_paths

VALID = """nika: v1
workflow:
  id: sample
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


@settings(max_examples=300, deadline=None)
@given(st.binary(max_size=400))
def test_random_bytes_never_raise(data: bytes) -> None:
    compile_bytes(data, "fuzz.nika.yaml")


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet=st.sampled_from(list("nika:v1 workflow id tasks{}[]-\n\t#&*!|>'\"${}.")), max_size=300))
def test_yaml_shaped_text_never_raises(text: str) -> None:
    compile_text(text)


@settings(max_examples=200, deadline=None)
@given(st.integers(min_value=0, max_value=len(VALID)))
def test_truncated_workflow_never_raises(cut: int) -> None:
    compile_text(VALID[:cut])


@settings(max_examples=200, deadline=None)
@given(st.integers(min_value=0, max_value=len(VALID) - 1), st.text(max_size=5))
def test_spliced_workflow_never_raises(at: int, junk: str) -> None:
    compile_text(VALID[:at] + junk + VALID[at:])


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
