"""Fixtures for the runtime tests (helpers live in rt_helpers.py)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from rt_helpers import RunResult, run_yaml


@pytest.fixture
def run(tmp_path: Path):
    def go(text: str, inputs: dict[str, Any] | None = None, **opts: Any) -> RunResult:
        return run_yaml(text, tmp_path, inputs, **opts)

    return go
