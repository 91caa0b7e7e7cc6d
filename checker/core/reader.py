"""The one bounded reader for every file the checker, the runtime and the servers open.

Workflows, child workflows, skills, decision bundles, configuration, secrets files and schemas
may all be files someone else wrote. A plain ``open()`` on a FIFO or a blocking device waits
forever, and a huge file costs its size in memory; so every such read goes through
:func:`read_file`: regular files only (``stat`` before ``open``, then ``O_NONBLOCK`` and
``fstat`` on the open descriptor, so a file swapped in between is caught), a size cap named in
the error, symlink loops refused, and a deadline on the read itself. :func:`read_file_async`
is the same read off the event loop (a run's ``timeout:`` and SIGTERM keep working while it
reads).

One exception, asked for by name: ``pipes=True`` also admits a pipe (a FIFO, ``/dev/fd/N``, a
process substitution ``<(make-workflow)``), read without ever blocking (``O_NONBLOCK`` and
``select`` against the same deadline) and under the same cap. It is for what the user names on
the command line (``nika check <(…)``, ``nika run -``) and for secrets files, which secret
injectors hand over as ``/dev/fd/N``. Devices and sockets are refused whatever the caller asks.
"""

from __future__ import annotations

import errno
import os
import select
import stat
import time

DEFAULT_DEADLINE_S = 2.0
_CHUNK = 1 << 16


class FileReadError(OSError):
    """A file that was not read; ``reason`` is one lower-case line for a finding or an error."""

    def __init__(self, path: str, reason: str, err: int = errno.EIO) -> None:
        super().__init__(err, reason, path)
        self.reason = reason


def _kib(n: int) -> str:
    return f"{n // (1024 * 1024)} MiB" if n >= 1024 * 1024 and n % (1024 * 1024) == 0 else f"{n // 1024} KiB"


def cap_reason(cap: int) -> str:
    return f"the file is larger than the {_kib(cap)} cap"


def _admitted(mode: int, pipes: bool) -> bool:
    return stat.S_ISREG(mode) or (pipes and stat.S_ISFIFO(mode))


def read_file(
    path: str, cap: int, *, deadline_s: float = DEFAULT_DEADLINE_S, truncate: bool = False, pipes: bool = False
) -> bytes:
    """The bytes of the regular file at ``path`` (with ``pipes``, of a pipe too).

    Refused (``FileReadError``) when the path is not a regular file (or a pipe, with ``pipes``),
    is a symlink loop, is over ``cap`` bytes, or cannot be read within ``deadline_s``. With
    ``truncate`` an oversized file is not refused: at most ``cap + 1`` bytes are returned, so
    the caller can say it is too big with its own finding.
    """
    try:
        st = os.stat(path)
    except (OSError, ValueError) as exc:
        raise _error(path, exc) from None
    if not _admitted(st.st_mode, pipes):
        raise FileReadError(path, file_kind(st.st_mode), errno.EISDIR if stat.S_ISDIR(st.st_mode) else errno.EINVAL)
    if stat.S_ISREG(st.st_mode) and st.st_size > cap and not truncate:
        raise FileReadError(path, cap_reason(cap), errno.EFBIG)
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0) | getattr(os, "O_BINARY", 0)
    try:
        fd = os.open(path, flags)
    except OSError as exc:
        raise _error(path, exc) from None
    try:
        mode = os.fstat(fd).st_mode
        if not _admitted(mode, pipes) or stat.S_IFMT(mode) != stat.S_IFMT(st.st_mode):  # swapped since the stat
            raise FileReadError(path, "not a regular file", errno.EINVAL)
        return _read_fd(path, fd, cap, deadline_s, truncate, stat.S_ISFIFO(mode))
    finally:
        os.close(fd)


async def read_file_async(
    path: str, cap: int, *, deadline_s: float = DEFAULT_DEADLINE_S, truncate: bool = False, pipes: bool = False
) -> bytes:
    """:func:`read_file` in a worker thread: the event loop keeps running (timers, signals) while
    it reads, and the read itself ends within ``deadline_s`` whatever the file does."""
    import asyncio

    return await asyncio.to_thread(read_file, path, cap, deadline_s=deadline_s, truncate=truncate, pipes=pipes)


def _read_fd(path: str, fd: int, cap: int, deadline_s: float, truncate: bool, pipe: bool = False) -> bytes:
    end = time.monotonic() + deadline_s
    parts: list[bytes] = []
    got = 0
    while got <= cap:
        left = end - time.monotonic()
        if left < 0:
            raise FileReadError(path, f"reading took longer than {deadline_s:g} s", errno.ETIMEDOUT)
        try:
            chunk = os.read(fd, min(_CHUNK, cap + 1 - got))
        except BlockingIOError:
            if not pipe:
                raise FileReadError(path, "the file would block", errno.EAGAIN) from None
            select.select([fd], [], [], max(left, 0.0))  # wait for data (or the deadline), never forever
            continue
        except OSError as exc:
            raise _error(path, exc) from None
        if not chunk:
            break
        parts.append(chunk)
        got += len(chunk)
    data = b"".join(parts)
    if len(data) > cap and not truncate:
        raise FileReadError(path, cap_reason(cap), errno.EFBIG)
    return data


def file_kind(mode: int) -> str:
    """What a non-regular file is, in words for an error line."""
    if stat.S_ISDIR(mode):
        return "is a directory"
    if stat.S_ISFIFO(mode):
        return "not a regular file (a named pipe)"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "not a regular file (a device)"
    if stat.S_ISSOCK(mode):
        return "not a regular file (a socket)"
    return "not a regular file"


def _error(path: str, exc: OSError | ValueError) -> FileReadError:
    if isinstance(exc, ValueError):  # an embedded NUL
        return FileReadError(path, "the path is not a file name", errno.EINVAL)
    if exc.errno == errno.ELOOP:
        return FileReadError(path, "symlink loop", errno.ELOOP)
    if exc.errno == errno.ENOENT:
        return FileReadError(path, "no such file or directory", errno.ENOENT)
    if exc.errno in (errno.EACCES, errno.EPERM):
        return FileReadError(path, "permission denied", exc.errno)
    if isinstance(exc, FileReadError):
        return exc
    return FileReadError(path, (exc.strerror or str(exc)).lower(), exc.errno or errno.EIO)


def is_regular_file(path: str) -> bool:
    """``os.path.isfile`` that never follows a symlink loop into an exception."""
    try:
        return stat.S_ISREG(os.stat(path).st_mode)
    except (OSError, ValueError):
        return False
