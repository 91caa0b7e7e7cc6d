"""The layering of the packages is a contract (``[tool.importlinter]`` in ``pyproject.toml``)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_import_contracts_hold() -> None:
    """``lint-imports`` keeps every layer above the ones it may use (issue 17's contract)."""
    code = "import sys; from importlinter.cli import lint_imports_command; sys.exit(lint_imports_command())"
    proc = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "broken" not in proc.stdout.lower() or "0 broken" in proc.stdout.lower(), proc.stdout
