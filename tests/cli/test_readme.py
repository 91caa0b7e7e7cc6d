"""The README's first example is a golden case: its file checks to exactly the output it shows."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_the_greet_example_prints_what_the_readme_shows(tmp_path: Path) -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    m = re.search(r"\$ cat greet\.nika\.yaml\n(.*?)\n\$ nika check greet\.nika\.yaml\n(.*?)\n```", readme, re.S)
    assert m, "the README no longer opens with the greet example"
    (tmp_path / "greet.nika.yaml").write_text(m.group(1).strip("\n") + "\n", encoding="utf-8")
    env = {**os.environ, "PYTHONPATH": str(ROOT), "NO_COLOR": "1"}
    proc = subprocess.run(
        [sys.executable, "-m", "nika", "check", "greet.nika.yaml"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        env=env,
    )
    assert proc.stdout.strip("\n") == m.group(2).strip("\n")
