"""What the media builtins share: reading an input through ``permits.fs.read``, saving an artifact
through ``permits.fs.write`` (atomic, idempotent when identical bytes are already there), and the
``artifact`` trace event that joins the artifact's sha256 to the hash-chained trace (spec 17).

Every path is judged (``ctx.resolve_*``) before any I/O on it; a write lands whole or not at all
(temporary file + rename), so a failure never leaves a truncated artifact behind.
"""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import TYPE_CHECKING

from runtime.builtins._support import read_regular
from runtime.builtins.files import _replace
from runtime.errors import TaskError

if TYPE_CHECKING:
    from runtime.builtins import BuiltinContext


def read_input(ctx: BuiltinContext, path: str, code: str, *, limit: int) -> bytes:
    """The bytes of ``path`` (judged by ``permits.fs.read``), at most ``limit`` of them."""
    target = ctx.resolve_read(path)
    try:
        size = target.stat().st_size
        if size > limit:
            raise TaskError(code, f"{path} is {size} bytes; at most {limit} are read", details={"path": path})
        return read_regular(target)
    except OSError as e:
        raise TaskError(code, f"cannot read {path}: {e.strerror or e}", details={"path": path}) from None


def judge_write(ctx: BuiltinContext, path: str) -> Path:
    """The canonical target of ``path`` once ``permits.fs.write`` grants it (NIKA-SEC-004 if not)."""
    return ctx.resolve_write(path)


def save(target: Path, data: bytes, code: str, shown: str) -> bool:
    """Write ``data`` to the already-judged ``target``; False when identical bytes were there."""
    try:
        if target.is_file() and target.stat().st_size == len(data) and target.read_bytes() == data:
            return False
        target.parent.mkdir(parents=True, exist_ok=True)
        _replace(target, data)
    except OSError as e:
        raise TaskError(code, f"cannot write {shown}: {e.strerror or e}", details={"path": shown}) from None
    return True


def sha256_hex(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def emit_artifact(ctx: BuiltinContext, tool: str, path: str, data: bytes, wrote: bool) -> None:
    """The trace's record of an artifact: its path, size and sha256 (never its bytes)."""
    ctx.emit(
        {
            "type": "artifact",
            "task": ctx.task_id,
            "tool": tool,
            "path": path,
            "sha256": sha256_hex(data),
            "bytes": len(data),
            "wrote": wrote,
        }
    )
