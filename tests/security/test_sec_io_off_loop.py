"""File work never stalls the engine: the I/O of the file builtins runs off the event loop, so
a task's `timeout:` fires on time even while a read is stuck (spec 02/03: a timeout is a hard
bound), and other tasks keep running. A read that blocks for over a second stands in for a huge file or a
slow disk."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

SLOW_S = 0.8


@pytest.fixture
def slow_reads(monkeypatch: pytest.MonkeyPatch) -> None:
    from runtime.builtins import _load, files

    _load()  # the whole registry first: importing one builtin module alone would leave it partial
    real = files.read_regular

    def slow(path: Path) -> bytes:
        time.sleep(SLOW_S)
        return real(path)

    monkeypatch.setattr(files, "read_regular", slow)


def test_a_stuck_read_does_not_hold_the_timeout(run, tmp_path: Path, slow_reads: None) -> None:
    (tmp_path / "big.txt").write_text("x")
    result = run(
        """nika: v1
workflow: { id: slow }
permits: { fs: { read: ["./big.txt"] }, tools: ["nika:read", "nika:jq"] }
tasks:
  read:
    timeout: 50ms
    invoke: { tool: "nika:read", args: { path: "./big.txt" } }
"""
    )
    rec = result.tasks["read"]
    assert rec.error is not None and rec.error["code"] == "NIKA-TIMEOUT-001", rec.error
    assert rec.duration_ms is not None and rec.duration_ms < SLOW_S * 1000 / 2, (
        f"the timeout waited ({rec.duration_ms} ms)"
    )
