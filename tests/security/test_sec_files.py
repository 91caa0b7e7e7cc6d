"""File builtins never block on a non-regular file and never leave a half-written file.

Spec 02/03: a task ends within its timeout and Ctrl-C is a blanket kill, so a FIFO or device
under a granted tree must be refused, not opened for a read that never returns. Spec 01
(`nika:write` with `overwrite: false`): the file either appears complete or not at all.
"""

from __future__ import annotations

import os
from pathlib import Path
from unittest import mock

import pytest
from builtins_harness import fails, make_ctx

from runtime.builtins import call


@pytest.fixture
def host(tmp_path: Path):
    return make_ctx(tmp_path)[0], tmp_path


@pytest.mark.parametrize("tool", ["nika:read", "nika:grep", "nika:edit"])
async def test_a_fifo_is_refused_not_read(host, tool: str) -> None:
    ctx, root = host
    os.mkfifo(root / "pipe")
    args = (
        {"path": "pipe"}
        | ({"pattern": "x"} if tool == "nika:grep" else {})
        | ({"find": "a", "replace": "b"} if tool == "nika:edit" else {})
    )
    e = await fails(tool, args, ctx)
    assert "regular file" in str(e)


async def test_write_without_overwrite_leaves_no_truncated_file(host) -> None:
    """A write that fails half way (disk full) leaves no file behind, so a retry is not blocked."""
    ctx, root = host
    with mock.patch("os.fsync", side_effect=OSError(28, "No space left on device")):
        e = await fails("nika:write", {"path": "out.txt", "content": "x" * 100000, "overwrite": False}, ctx)
    assert e.code == "NIKA-BUILTIN-WRITE-001"
    assert not (root / "out.txt").exists()
    assert [p.name for p in root.iterdir()] == []
    assert await call("nika:write", {"path": "out.txt", "content": "ok", "overwrite": False}, ctx) == "out.txt"
    assert (root / "out.txt").read_text() == "ok"
    e = await fails("nika:write", {"path": "out.txt", "content": "again", "overwrite": False}, ctx)
    assert e.code == "NIKA-BUILTIN-WRITE-002"
    assert (root / "out.txt").read_text() == "ok"
