"""Untrusted text never reaches the terminal raw.

Spec 01 §secrets / 05 (the progress view is output like any other): a model output or jq error
message inside an error line could otherwise erase a FAILED line, print a fake "ok" or write
the clipboard (OSC 52). Every C0/C1 control but newline and tab is escaped.
"""

from __future__ import annotations

import io
from pathlib import Path

import pytest

from checker.core.display import terminal_safe
from nika.commands.run import run_command


def test_hostile_error_text_is_escaped_in_the_text_reporter(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A jq error carrying ANSI/OSC escapes and C1 CSI is printed escaped, never as controls."""
    monkeypatch.chdir(tmp_path)
    wf = tmp_path / "ansi.nika.yaml"
    wf.write_text(
        """\
nika: v1
workflow: { id: ansi }
permits: { tools: ["nika:jq"] }
tasks:
  t:
    invoke:
      tool: "nika:jq"
      args: { input: null, expression: 'error("\\u001b[2K\\r  ok t\\u001b]52;c;ZXZpbA==\\u0007\\u009b31m")' }
"""
    )
    out, err = io.StringIO(), io.StringIO()
    code = run_command(str(wf), trace_dir=str(tmp_path / "traces"), out=out, err=err)
    assert code == 1
    printed = out.getvalue() + err.getvalue()
    assert "FAILED" in printed
    for control in ("\x1b", "\r", "\x07", "\x9b"):
        assert control not in printed
    assert "\\u001b[2K" in printed


def test_terminal_safe_keeps_json_valid_and_newlines() -> None:
    assert terminal_safe('{"a": "\x85"}\nnext\tcol') == '{"a": "\\u0085"}\nnext\tcol'
