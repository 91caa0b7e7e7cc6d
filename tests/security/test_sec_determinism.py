"""Declared determinism is honoured or refused, never silently ignored.

NEP-0010 / spec 01 §run: `run: { entropy: { seeded: N }, clock: virtual }` promises byte-identical
journals. This build draws ids and timestamps from the ambient clock, so `nika run` refuses such a
workflow before any effect with a "this build of nika does not implement" error (NIKA-IMPL-002).
"""

from __future__ import annotations

import io
from pathlib import Path

import pytest

from nika.commands.run import run_command


@pytest.mark.parametrize("block", ["{ entropy: { seeded: 7 } }", "{ clock: virtual }"])
def test_declared_determinism_is_refused_before_any_effect(tmp_path: Path, monkeypatch, block: str) -> None:
    monkeypatch.chdir(tmp_path)
    wf = tmp_path / "det.nika.yaml"
    wf.write_text(
        f"""\
nika: v1
workflow: {{ id: det }}
run: {block}
permits: {{ fs: {{ write: ["./out/**"] }}, tools: ["nika:write"] }}
tasks:
  w:
    invoke: {{ tool: "nika:write", args: {{ path: "./out/marker.txt", content: "x", create_dirs: true }} }}
"""
    )
    out, err = io.StringIO(), io.StringIO()
    code = run_command(str(wf), trace_dir=str(tmp_path / "traces"), out=out, err=err)
    assert code == 2, err.getvalue()
    assert "this build of nika does not implement" in err.getvalue() and "[NIKA-IMPL-002]" in err.getvalue()
    assert not (tmp_path / "out").exists()
