"""File builtins: ``nika:read``, ``nika:write``, ``nika:edit`` (``nika:glob`` and ``nika:grep`` are in
:mod:`runtime.builtins.files_search`).

Every path goes through ``ctx.resolve_read`` / ``ctx.resolve_write`` right before the effect
(they canonicalise it and refuse one outside ``permits.fs`` with NIKA-SEC-004); the builtins never
open a path that did not come back from them. ``nika:grep`` resolves every file it opens, so a
symlink inside a granted tree that points outside it is refused, not followed. Paths in outputs
are written the way the workflow wrote them (``./src`` + ``a.rs`` → ``./src/a.rs``), never as
machine-specific absolute paths.

The file I/O itself (reads, atomic writes, directory walks, grep's per-file search) runs in a
thread (``asyncio.to_thread``), so a large file or tree never stalls the event loop: other tasks
go on, and a task's ``timeout:`` or a Ctrl-C settles it on time (the judging stays on the loop).

Reads no ``ctx.extra`` key.
"""

from __future__ import annotations

import asyncio
import codecs
import contextlib
import json
import os
import stat
import tempfile
from pathlib import Path
from typing import Any

from runtime.builtins import BuiltinContext, builtin
from runtime.builtins._support import ARG_CODE, arg, content_octets, describe, need, read_regular, render
from runtime.errors import TaskError

READ, WRITE, EDIT = "nika:read", "nika:write", "nika:edit"


# ── nika:read ─────────────────────────────────────────────────────────────────────────────────


@builtin(READ)
async def read(args: dict[str, Any], ctx: BuiltinContext) -> str | bytes:
    """The file's text (decoded strictly, never with replacement characters), or its bytes."""
    path = need(args, READ, "path", str)
    binary = arg(args, READ, "binary")
    encoding = arg(args, READ, "encoding")
    if not binary:
        try:
            codecs.lookup(encoding)
        except LookupError:
            raise TaskError(ARG_CODE, f"`encoding:` {encoding!r} of `{READ}` is not a known text encoding") from None
    target = ctx.resolve_read(path)
    try:
        data = await asyncio.to_thread(read_regular, target)
    except (FileNotFoundError, NotADirectoryError):
        raise TaskError("NIKA-BUILTIN-READ-001", f"there is no file at {path}", details={"path": path}) from None
    except OSError as e:
        raise TaskError("NIKA-BUILTIN-READ-002", f"cannot read {path}: {_why(e)}", details={"path": path}) from None
    if binary:
        return data
    try:
        return data.decode(encoding)
    except UnicodeDecodeError as e:
        raise TaskError(
            "NIKA-BUILTIN-READ-003",
            f"{path} is not {encoding} text (byte {e.start} cannot be decoded); read it with `binary: true`",
            details={"path": path, "offset": e.start},
        ) from None


# ── nika:write ────────────────────────────────────────────────────────────────────────────────

WRITE_001, WRITE_002 = "NIKA-BUILTIN-WRITE-001", "NIKA-BUILTIN-WRITE-002"


@builtin(WRITE)
async def write(args: dict[str, Any], ctx: BuiltinContext) -> str:
    """Write text, bytes, or any other JSON value as JSON; returns the path as given.

    A replaced file is swapped in whole (written beside it, then renamed) and keeps its mode.
    """
    path = need(args, WRITE, "path", str)
    data = content_octets(args["content"], WRITE, _readable_json)
    overwrite, create_dirs = arg(args, WRITE, "overwrite"), arg(args, WRITE, "create_dirs")
    target = ctx.resolve_write(path)
    parent = target.parent
    if not parent.is_dir():
        if not create_dirs:
            raise TaskError(
                WRITE_001,
                f"the directory of {path} does not exist; pass `create_dirs: true` to create it",
                details={"path": path},
            )
        try:
            parent.mkdir(parents=True, exist_ok=True)
        except OSError as e:
            raise TaskError(WRITE_001, f"cannot create the directory of {path}: {_why(e)}") from None
    try:
        await asyncio.to_thread(_replace, target, data, overwrite=overwrite)
    except FileExistsError:
        raise TaskError(WRITE_002, f"{path} already exists and `overwrite:` is false", details={"path": path}) from None
    except OSError as e:
        raise TaskError(WRITE_001, f"cannot write {path}: {_why(e)}", details={"path": path}) from None
    return path


def _readable_json(content: Any) -> str:
    """Structured content lands as readable JSON: two-space indent, keys in their order, a final newline."""
    return json.dumps(content, ensure_ascii=False, indent=2) + "\n"


def _current_umask() -> int:
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


_UMASK = _current_umask()


def _replace(target: Path, data: bytes, *, overwrite: bool = True) -> None:
    """Write ``data`` to a temporary file next to ``target``, fsync it, then rename it over
    (``overwrite``) or hard-link it into place (``FileExistsError`` if ``target`` exists): no
    reader ever sees half a file, and a failure mid-write leaves no truncated ``target``."""
    try:
        mode = stat.S_IMODE(os.stat(target).st_mode)
    except FileNotFoundError:
        mode = 0o666 & ~_UMASK
    if overwrite and target.is_dir():
        raise IsADirectoryError(21, "Is a directory")
    fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.chmod(tmp, mode)
        if overwrite:
            os.replace(tmp, target)
        else:
            os.link(tmp, target)  # atomic create-if-absent; the name appears only complete
            os.unlink(tmp)
        _fsync_dir(target.parent)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def _fsync_dir(directory: Path) -> None:
    with contextlib.suppress(OSError):
        fd = os.open(directory, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


# ── nika:edit ─────────────────────────────────────────────────────────────────────────────────

EDIT_001, EDIT_002 = "NIKA-BUILTIN-EDIT-001", "NIKA-BUILTIN-EDIT-002"


@builtin(EDIT)
async def edit(args: dict[str, Any], ctx: BuiltinContext) -> str:
    """Replace a literal string (every match, or the first ``count``); returns the path as given."""
    path = need(args, EDIT, "path", str)
    find = _literal(args, "find")
    replace = _literal(args, "replace")
    count = args.get("count")
    if count is not None and (isinstance(count, bool) or not isinstance(count, int) or count < 0):
        # Never fall back to "replace all" on a malformed count: that would over-edit the file.
        raise TaskError(EDIT_001, f"`count:` of `{EDIT}` must be a non-negative integer, but it is {describe(count)}")
    if find == "":
        raise TaskError(EDIT_001, f"`find:` of `{EDIT}` is empty, so it would match between every character")
    if count == 0:
        raise TaskError(EDIT_001, f"`count: 0` makes `{EDIT}` replace nothing in {path}")
    ctx.resolve_read(path)
    target = ctx.resolve_write(path)
    try:
        text = (await asyncio.to_thread(read_regular, target)).decode("utf-8")
    except UnicodeDecodeError:
        raise TaskError(EDIT_002, f"{path} is not UTF-8 text, so it cannot be edited as text") from None
    except OSError as e:
        raise TaskError(EDIT_002, f"cannot read {path}: {_why(e)}", details={"path": path}) from None
    found = text.count(find)
    if found == 0:
        raise TaskError(EDIT_001, f"{find!r} does not occur in {path}", details={"path": path})
    updated = text.replace(find, replace, -1 if count is None else count)
    try:
        await asyncio.to_thread(_replace, target, updated.encode("utf-8"))
    except OSError as e:
        raise TaskError(EDIT_002, f"cannot write {path}: {_why(e)}", details={"path": path}) from None
    return path


def _literal(args: dict[str, Any], name: str) -> str:
    value = need(args, EDIT, name, (str, int, float, bool))
    return render(value)


# ── nika:glob ─────────────────────────────────────────────────────────────────────────────────


def _why(e: OSError) -> str:
    return e.strerror or type(e).__name__
