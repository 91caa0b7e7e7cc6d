"""Where a project's configuration lives, and what goes wrong reading it.

The governing file of a path is the nearest ``nika.toml``, or ``pyproject.toml`` that names
``tool.nika``, in its folder or any folder above. Nothing is cached by path alone: what is
remembered is keyed by the file's signature (inode, size, mtime), so a long-lived language
server sees a configuration file created or edited while it runs. Only inside :func:`one_run`
(one ``nika check`` command, which edits no configuration file) is the search answered once
per folder: a batch of files in one folder asks the file system once, not once per file.
"""

from __future__ import annotations

import contextlib
import errno
import os
import stat
from collections.abc import Iterator
from functools import lru_cache

MAX_CONFIG_BYTES = 1024 * 1024  # a configuration file is a few KiB; 1 MiB is generous


class SettingsError(Exception):
    """A configuration file that cannot be used; ``str()`` is the one-line explanation."""

    def __init__(self, path: str, key: str | None, message: str) -> None:
        self.path, self.key = path, key
        self.message = message
        where = f"{path}: `{key}`" if key else path
        super().__init__(f"{where}: {message}")

    def __reduce__(self) -> tuple[type[SettingsError], tuple[str, str | None, str]]:
        return SettingsError, (self.path, self.key, self.message)  # crosses process boundaries whole


_RUN: dict[str, tuple[str, bool] | None] | None = None  # folder -> its search, inside one_run()


@contextlib.contextmanager
def one_run() -> Iterator[None]:
    """Within, each folder's configuration search runs once (see the module docstring)."""
    global _RUN
    outer = _RUN
    _RUN = {} if outer is None else outer
    try:
        yield
    finally:
        _RUN = outer


def config_file_for(path: str) -> tuple[str, bool] | None:
    """``(file, is_pyproject)`` of the configuration that governs ``path`` (``-``: the cwd)."""
    start = os.getcwd() if path == "-" else os.path.dirname(os.path.abspath(path))
    memo = _RUN
    if memo is None:
        return _search(start)
    if start not in memo:
        memo[start] = _search(start)
    return memo[start]


def _search(directory: str) -> tuple[str, bool] | None:
    while True:
        found = _config_in(directory)
        if found is not None:
            return found
        parent = os.path.dirname(directory)
        if parent == directory:
            return None
        directory = parent


def signature(path: str) -> tuple[int, int, int] | None:
    """What identifies a file's current content cheaply (inode, size, mtime), or ``None`` when
    it is not a regular file: caches keyed by it see an edit (the language server lives long)."""
    try:
        st = os.stat(path)
    except (OSError, ValueError):
        return None
    return (st.st_ino, st.st_size, st.st_mtime_ns) if stat.S_ISREG(st.st_mode) else None


def _config_in(directory: str) -> tuple[str, bool] | None:
    nika = os.path.join(directory, "nika.toml")
    if signature(nika) is not None:
        return nika, False  # `load` reads it bounded and names the cap when it is over
    py = os.path.join(directory, "pyproject.toml")
    sig = signature(py)
    if sig is not None and _names_nika(py, sig):
        return py, True
    return None


@lru_cache(maxsize=256)
def _names_nika(py: str, sig: tuple[int, int, int]) -> bool:
    """Whether the pyproject file (at this content signature) may hold ``[tool.nika]``."""
    from checker.core.reader import FileReadError, read_file

    try:
        text = read_file(py, MAX_CONFIG_BYTES).decode("utf-8", errors="replace")
    except FileReadError as exc:
        return exc.errno == errno.EFBIG  # too big to pre-check: `load` reports the cap
    return "tool.nika" in text  # cheap pre-check before parsing TOML
