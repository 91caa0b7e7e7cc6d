"""A cache of what the checker builds from its own static data, kept in the user's cache folder.

A cold ``nika check`` rebuilds the same things on every run from files that change only when
the tool does: the record classes' generated methods, the code registry, the contract tables,
what the runtime implements. Each is stored here with :mod:`marshal` (plain values and code
objects only: nothing is imported or called on loading) under a key that names everything it was
built from: the Python build and the size, modification time and checksum of each file read (the data and
the module that turns it into the value; installing another version of the package replaces
those files, so it never reads an old cache). A different key, a missing,
truncated or unreadable file, or a folder that cannot be written all mean the same thing: the
value is built as if there were no cache. So a result never depends on the cache; only the time
to get it does.

The folder is ``$NIKA_CACHE_DIR``, else ``$XDG_CACHE_HOME/nika``, else ``~/.cache/nika``;
``NIKA_CACHE_DIR=off`` (or an empty value) turns the cache off.
"""

from __future__ import annotations

import contextlib
import marshal
import os
import sys
from collections.abc import Callable, Iterable
from typing import Any, TypeVar

T = TypeVar("T")

FORMAT = 2  # the layout of a cache file; bump it when that changes
_BUILD = (FORMAT, sys.implementation.cache_tag, sys.hexversion)


def folder() -> str | None:
    """Where the cache lives, or ``None`` when it is turned off."""
    chosen = os.environ.get("NIKA_CACHE_DIR")
    if chosen is not None:
        return None if chosen in ("", "off") else chosen
    base = os.environ.get("XDG_CACHE_HOME", "")
    if not os.path.isabs(base):  # unset, or relative (which the XDG rules say to ignore)
        home = os.path.expanduser("~")
        if not os.path.isabs(home):  # no home folder at all: no cache rather than one in the cwd
            return None
        base = os.path.join(home, ".cache")
    return os.path.join(base, "nika")


UNREADABLE = -1


def stamp(paths: Iterable[str]) -> tuple[tuple[str, int, int, int], ...]:
    """Each path with its size, modification time and CRC-32 of its bytes (``-1`` for all three
    when it cannot be read). The checksum keeps a same-size edit under pinned timestamps (a
    reproducible build, a restored cache volume) from matching; the files are a few hundred kB."""
    import zlib

    out = []
    for p in paths:
        try:
            with open(p, "rb") as f:
                st = os.fstat(f.fileno())
                crc = zlib.crc32(f.read())
        except (OSError, ValueError):
            out.append((p, UNREADABLE, UNREADABLE, UNREADABLE))
        else:
            out.append((p, st.st_size, st.st_mtime_ns, crc))
    return tuple(out)


def _unreadable(key: object) -> bool:
    """A key stamped from a file that could not be read: never stored (it would match again
    while the file stays unreadable, and say nothing about what the file holds)."""
    return type(key) is tuple and any(type(e) is tuple and len(e) == 4 and e[1] == UNREADABLE for e in key)


def named(prefix: str, path: str) -> str:
    """A cache name for what is built from ``path``: two copies of the package (two checkouts,
    two virtual environments) keep two files instead of overwriting each other's."""
    import zlib

    return f"{prefix}-{zlib.crc32(os.fsencode(path)):08x}"


def _file(name: str) -> str | None:
    where = folder()
    return None if where is None else os.path.join(where, f"{name}.{sys.implementation.cache_tag}.marshal")


def load(name: str, key: object) -> Any | None:
    """The value stored under ``name`` for ``key``, or ``None`` (no cache, another key, a bad file)."""
    path = _file(name)
    if path is None:
        return None
    try:
        with open(path, "rb") as f:
            stored = marshal.loads(f.read())  # marshal.load(f) reads the file in small pieces: slower
    except (OSError, ValueError, EOFError, TypeError):
        return None
    if type(stored) is tuple and len(stored) == 3 and stored[0] == _BUILD and stored[1] == key:
        return stored[2]
    return None


def store(name: str, key: object, value: object) -> None:
    """Keep ``value`` under ``name`` for ``key``; silently nothing when the folder is not writable."""
    path = _file(name)
    if path is None or _unreadable(key):
        return
    import threading

    tmp = f"{path}.{os.getpid()}.{threading.get_ident()}.tmp"  # unique per writer: process and thread
    try:
        data = marshal.dumps((_BUILD, key, value))
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(tmp, "wb") as f:
            f.write(data)
        os.replace(tmp, path)  # atomic: a concurrent reader sees the old file or the new one
    except (OSError, ValueError):
        with contextlib.suppress(OSError):
            os.unlink(tmp)


def cached(
    name: str, key: object, build: Callable[[], T], *, dump: Callable[[T], object], undump: Callable[[Any], T]
) -> T:
    """``build()``, or what a previous process stored for the same ``key``.

    ``dump`` turns the value into marshal-able data, ``undump`` turns that back; a stored value
    that ``undump`` cannot read is rebuilt."""
    got = load(name, key)
    if got is not None:
        try:
            return undump(got)
        except (TypeError, ValueError, KeyError, IndexError, AttributeError):
            pass
    value = build()
    store(name, key, dump(value))
    return value


class Table:
    """A dictionary kept between processes under ``name`` for ``key``: read on first use, written
    back at exit when this process added to it (what one process looks up, the next finds).

    ``limit`` bounds what is written back: past it only this process's entries are kept (a
    table keyed by generated source would otherwise keep every old version's)."""

    def __init__(self, name: str, key: object, limit: int = 2000) -> None:
        self.name, self.key, self.limit = name, key, limit
        self._data: dict[Any, Any] | None = None
        self._used: set[Any] = set()
        self._dirty = False

    def _loaded(self) -> dict[Any, Any]:
        if self._data is None:
            stored = load(self.name, self.key)
            self._data = stored if type(stored) is dict else {}
        return self._data

    def get(self, k: Any) -> Any | None:
        """The value stored for ``k``, or ``None``."""
        self._used.add(k)
        return self._loaded().get(k)

    def put(self, k: Any, value: Any) -> None:
        self._used.add(k)
        self._loaded()[k] = value
        if not self._dirty:
            import atexit

            atexit.register(self.save)
            self._dirty = True

    def save(self) -> None:
        if self._data is None or not self._dirty:
            return
        data = self._data
        if len(data) > self.limit:
            data = {k: v for k, v in data.items() if k in self._used}
        store(self.name, self.key, data)
        self._dirty = False


__all__ = ["Table", "cached", "folder", "load", "named", "stamp", "store"]
