"""A real editor: headless Neovim attaches `nika lsp` and receives its diagnostics."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
pytestmark = pytest.mark.skipif(shutil.which("nvim") is None, reason="nvim is not installed (apt-get install neovim)")


def test_neovim_receives_diagnostics(tmp_path: Path) -> None:
    wf = tmp_path / "demo.nika.yaml"
    wf.write_text(
        "nika: v1\nworkflow:\n  id: nvim-demo\ntasks:\n  a:\n    after: { ghost: success }\n"
        '    infer: { model: mock/echo, prompt: "Café ☕ ${{ const.nope }}" }\n',
        encoding="utf-8",
    )
    env = dict(os.environ, NIKA_CMD=f"{sys.executable} -m nika lsp")
    proc = subprocess.run(
        [str(ROOT / "scripts" / "nvim-lsp-check.sh"), str(wf)], capture_output=True, text=True, env=env, timeout=60
    )
    lines = proc.stdout.splitlines()
    assert any(line.startswith("6:14 NIKA-DAG-002") for line in lines), proc.stdout + proc.stderr
    # Neovim reports byte columns: "Café ☕ " is 7 characters but 10 bytes before `${{ `.
    assert any(line.startswith("7:55 NIKA-VAR-001") for line in lines), proc.stdout + proc.stderr
