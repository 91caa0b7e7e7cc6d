"""Per-document state: the text the client sent, its version, and the compiled result for it.

One :class:`Documents` object owns every open document. Compilation is the checker's
``compile_source`` — the same call ``nika check`` makes — cached per (uri, version), so every
feature (diagnostics, hover, completion, navigation) reads one immutable snapshot.
"""

from __future__ import annotations

import os
import threading
from dataclasses import dataclass
from urllib.parse import unquote, urlparse

from checker.engine import compile_source
from checker.model import CompiledWorkflow
from checker.source import SourceText


def uri_to_path(uri: str) -> str | None:
    parsed = urlparse(uri)
    if parsed.scheme != "file":
        return None
    return unquote(parsed.path)


@dataclass(frozen=True, slots=True)
class Snapshot:
    """An immutable view of one document version and its analysis."""

    uri: str
    version: int | None
    compiled: CompiledWorkflow

    @property
    def source(self) -> SourceText:
        return self.compiled.source


class Documents:
    """Open documents keyed by URI; thread-safe, since analysis runs off the request loop."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._text: dict[str, tuple[int | None, str]] = {}
        self._cache: dict[str, Snapshot] = {}
        self._good: dict[str, Snapshot] = {}

    def set(self, uri: str, text: str, version: int | None) -> None:
        with self._lock:
            self._text[uri] = (version, text)

    def close(self, uri: str) -> None:
        with self._lock:
            self._text.pop(uri, None)
            self._cache.pop(uri, None)
            self._good.pop(uri, None)

    def version(self, uri: str) -> int | None:
        with self._lock:
            entry = self._text.get(uri)
            return entry[0] if entry else None

    def known(self, uri: str) -> bool:
        with self._lock:
            return uri in self._text

    def peek(self, uri: str) -> Snapshot | None:
        """The newest analysis already computed for ``uri`` (possibly of an older version), or None.

        Never compiles: latency-sensitive features (completion) use it while the debounced
        check of the newest text is still pending.
        """
        with self._lock:
            return self._cache.get(uri)

    def last_good(self, uri: str) -> Snapshot | None:
        """The newest analysis of ``uri`` that produced a workflow model (the text may have
        broken since): what hover and completion read while a document is mid-edit."""
        with self._lock:
            return self._good.get(uri)

    def snapshot(self, uri: str) -> Snapshot | None:
        """The analysis of the latest text of ``uri`` (computed once per version)."""
        with self._lock:
            entry = self._text.get(uri)
            cached = self._cache.get(uri)
        if entry is None:
            return None
        version, text = entry
        if cached is not None and cached.version == version and cached.source.text == text:
            return cached
        snap = analyze(uri, text, version)
        with self._lock:
            current = self._text.get(uri)
            if current is not None and current[0] == version:
                self._cache[uri] = snap
                if snap.compiled.workflow is not None:
                    self._good[uri] = snap
        return snap


def analyze(uri: str, text: str, version: int | None) -> Snapshot:
    path = uri_to_path(uri)
    base = os.path.dirname(path) if path else None
    src = SourceText(text, path or uri)
    return Snapshot(uri, version, compile_source(src, base))
