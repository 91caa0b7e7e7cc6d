"""The attack suite: each test plays one attack class against `nika run` (mock provider,
loopback servers, a sandbox directory) and asserts nothing outside the grant was touched, read,
sent or started. The run helpers are shared with tests/runtime."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "runtime"))

from rt_helpers import RunResult, run_yaml


@pytest.fixture
def run(tmp_path: Path):
    def go(text: str, inputs: dict[str, Any] | None = None, **opts: Any) -> RunResult:
        return run_yaml(text, tmp_path, inputs, **opts)

    return go


@pytest.fixture
def canary(monkeypatch: pytest.MonkeyPatch) -> str:
    """A secret-looking value planted in the engine's environment; no workflow may see it."""
    value = "canary-7f3a91c0-do-not-leak"
    monkeypatch.setenv("NIKA_TEST_CANARY_KEY", value)
    return value
