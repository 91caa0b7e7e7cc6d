"""Per-document state: the text the client sent, its version, and the compiled result for it.

One :class:`Documents` object owns every open document and everything kept about it: the
current text (incremental edits applied here, with the client's notion of lines), the newest
analysis, the newest analysis that produced a workflow model, and the version last published.
Compilation gives what the checker's ``compile_source`` (the call ``nika check`` makes) gives,
once per version, reusing the unchanged tasks of the previous version (see
:mod:`checker.engine.incremental`), so every feature reads one :class:`Snapshot`; what a feature derives from a
snapshot (a symbol index, a model view) is memoised on that snapshot. Closing a document drops
all of it.
"""

from __future__ import annotations

import itertools
import os
import threading
from collections.abc import Callable, Hashable, Sequence
from functools import cached_property
from typing import Any, TypeVar
from urllib.parse import unquote, urlparse

from lsprotocol import types as lsp

from checker.core.source import SourceText
from checker.engine.incremental import IncrementalDocument
from checker.engine.pipeline import compile_source
from checker.model.workflow import CompiledWorkflow
from nika_lsp.convert import UTF16, client_lines, range_to_span
from nika_lsp.workdir import reading_roots, working_directory

T = TypeVar("T")
_MISSING: Any = object()


def uri_to_path(uri: str) -> str | None:
    parsed = urlparse(uri)
    if parsed.scheme != "file":
        return None
    return unquote(parsed.path)


class DocumentText:
    """One version of a document's text as the client has it, with its line index."""

    def __init__(self, uri: str, text: str, version: int | None) -> None:
        self.uri = uri
        self.version = version
        self.source = SourceText(text, uri_to_path(uri) or uri)
        self._disk: tuple[tuple[int, int] | None, bool] | None = None  # (the file's stat, text == file)

    def unsaved(self) -> bool:
        """Whether this text differs from the file on disk (a file that cannot be read counts as
        different). Compared once per version and state of the file."""
        path = uri_to_path(self.uri)
        if path is None:
            return True
        try:
            st = os.stat(path)
            key: tuple[int, int] | None = (st.st_mtime_ns, st.st_size)
        except OSError:
            key = None
        memo = self._disk
        if memo is not None and memo[0] == key:
            return not memo[1]
        same = False
        if key is not None:
            from checker.parse.referenced import read_referenced

            try:
                same = read_referenced(path) == self.text.encode("utf-8", "surrogatepass")
            except (OSError, UnicodeError):
                same = False
        self._disk = (key, same)
        return not same

    @property
    def text(self) -> str:
        return self.source.text

    @cached_property
    def lines(self) -> Sequence[str]:
        """The lines as the client counts them (see :func:`nika_lsp.convert.client_lines`)."""
        return client_lines(self.source)


class Snapshot:
    """An immutable view of one document version and its analysis.

    Features memoise what they derive from it with :meth:`derived`; the memo lives and dies
    with the snapshot, so nothing derived outlives the document or a newer version.
    """

    __slots__ = (
        "__weakref__",
        "_derived",
        "_lock",
        "compiled",
        "reads",
        "roots",
        "serial",
        "uri",
        "version",
        "work_dir",
    )

    def __init__(
        self,
        uri: str,
        version: int | None,
        compiled: CompiledWorkflow,
        work_dir: str | None = None,
        roots: tuple[str, ...] | None = None,
        reads: frozenset[str] = frozenset(),
    ) -> None:
        self.uri = uri
        self.serial = next(_SERIALS)  # tells two analyses of one version apart (a child changed between)
        self.reads = reads  # the other files (absolute paths) the analysis read: its child workflows
        self.work_dir = work_dir  # where the document's relative paths resolve from (nika_lsp.workdir)
        self.roots = roots  # the only folders files it names may be read from (nika_lsp.workdir)
        self.version = version
        self.compiled = compiled
        self._derived: dict[Hashable, Any] = {}
        self._lock = threading.Lock()

    def __repr__(self) -> str:
        return f"Snapshot({self.uri!r}, version={self.version!r})"

    @property
    def source(self) -> SourceText:
        return self.compiled.source

    @property
    def lines(self) -> Sequence[str]:
        return self.derived("lines", lambda: client_lines(self.source))

    def derived(self, key: Hashable, make: Callable[[], T]) -> T:
        """``make()`` computed once per snapshot and ``key`` (two racing threads keep the first)."""
        with self._lock:
            hit = self._derived.get(key, _MISSING)
        if hit is not _MISSING:
            return hit  # type: ignore[no-any-return]
        value = make()
        with self._lock:
            return self._derived.setdefault(key, value)  # type: ignore[no-any-return]


_SERIALS = itertools.count(1)


class OpenBuffers:
    """The checker's view of the other open documents for one analysis (:mod:`checker.core.buffers`):
    the text of each one that differs from its file on disk. Records every path it is asked
    about: the files the analysis depends on, so an edit of one re-analyses this document."""

    def __init__(self, docs: Documents, own: str) -> None:
        self.docs, self.own = docs, own
        self.asked: set[str] = set()

    def text(self, path: str) -> str | None:
        self.asked.add(path)
        doc = self.docs.open_at(path)
        if doc is None or doc.uri == self.own or not doc.unsaved():
            return None
        return doc.text


ContentChange = lsp.TextDocumentContentChangePartial | lsp.TextDocumentContentChangeWholeDocument


def apply_changes(text: str, changes: Sequence[Any], encoding: str = UTF16) -> str:
    """``text`` after the ``contentChanges`` of one ``didChange``, in order.

    Ranges are read over :class:`~checker.core.source.SourceText`'s lines, the same index every
    position the server sends is computed from, and clamped to the text.
    """
    for change in changes:
        if isinstance(change, lsp.TextDocumentContentChangePartial):
            span = range_to_span(SourceText(text), change.range, encoding)
            start, end = min(span.start, span.end), max(span.start, span.end)
            text = text[:start] + change.text + text[end:]
        else:
            text = change.text
    return text


class _Job:
    """One analysis in progress: the text it reads and, once done, its snapshot."""

    __slots__ = ("done", "entry", "gen", "result")

    def __init__(self, entry: DocumentText, gen: int) -> None:
        self.entry = entry
        self.gen = gen  # the document's generation when it started (see Documents.invalidate)
        self.done = threading.Event()
        self.result: Snapshot | None = None


class Documents:
    """Open documents keyed by URI; thread-safe, since analysis runs off the request loop."""

    def __init__(self, folders: Callable[[], Sequence[str]] = tuple) -> None:
        self.folders = folders  # the workspace folders' paths, asked at each analysis
        self.analysed: Callable[[], None] | None = None  # called after each analysis (the server's collector)
        self._lock = threading.Lock()
        self._text: dict[str, DocumentText] = {}
        self._cache: dict[str, Snapshot] = {}
        self._good: dict[str, Snapshot] = {}
        self._published: dict[str, int | None] = {}
        self._jobs: dict[str, _Job] = {}
        self._incremental: dict[str, IncrementalDocument] = {}
        self._paths: dict[str, str] = {}  # the real path of each open document -> its uri
        self._state: dict[str, dict[str, Any]] = {}  # what a feature keeps across versions, per document
        # Bumped when a file an analysis read changes: an analysis of an older generation is
        # computed again, for the same version (_fresh: the generation each cached one was made at).
        self._gen: dict[str, int] = {}
        self._fresh: dict[str, int] = {}

    # -- text ------------------------------------------------------------------------------
    def set(self, uri: str, text: str, version: int | None) -> None:
        doc = DocumentText(uri, text, version)
        with self._lock:
            if uri not in self._text and (path := uri_to_path(uri)) is not None:
                self._paths[os.path.realpath(path)] = uri
            self._text[uri] = doc

    def open_at(self, path: str) -> DocumentText | None:
        """The open document whose file is ``path`` (a real path), if any."""
        with self._lock:
            uri = self._paths.get(path)
            return self._text.get(uri) if uri is not None else None

    def state(self, uri: str, key: str, make: Callable[[], T]) -> T:
        """What a feature keeps about an open document across its versions (dropped with it)."""
        with self._lock:
            kept = self._state.setdefault(uri, {})
            if key not in kept:
                kept[key] = make()
            return kept[key]  # type: ignore[no-any-return]

    def dependents(self, uri: str) -> list[str]:
        """The open documents whose last analysis read ``uri``'s file, directly or through
        another open document (a parent of a parent): those an edit of it changes."""
        path = uri_to_path(uri)
        if path is None:
            return []
        todo, found = [os.path.realpath(path)], []
        with self._lock:
            while todo:
                p = todo.pop()
                for other, snap in self._cache.items():
                    if other != uri and other not in found and p in snap.reads:
                        found.append(other)
                        if (q := uri_to_path(other)) is not None:
                            todo.append(os.path.realpath(q))
        return found

    def invalidate(self, uri: str) -> None:
        """Forget the analysis of ``uri`` (a file it read changed): the next one is computed
        again, for the same version."""
        with self._lock:
            self._gen[uri] = self._gen.get(uri, 0) + 1

    def change(self, uri: str, version: int | None, changes: Sequence[Any], encoding: str = UTF16) -> bool:
        """Apply one ``didChange``; ``False`` (nothing changed) for a document that was never
        opened, unless a whole-document change gives its full text."""
        with self._lock:
            current = self._text.get(uri)
        if current is None:
            full = [c for c in changes if isinstance(c, lsp.TextDocumentContentChangeWholeDocument)]
            if not full:
                return False
            changes = changes[changes.index(full[-1]) :]
            base = ""
        else:
            base = current.text
        self.set(uri, apply_changes(base, changes, encoding), version)
        if current is not None and regresses(current.version, version):
            # The text was taken (see ``did_change``): forget the version last pushed, so the
            # diagnostics of this text are pushed although its number is lower.
            with self._lock:
                self._published.pop(uri, None)
        return True

    def text(self, uri: str) -> DocumentText | None:
        """The client's current text of ``uri`` (newer than any snapshot while a check is pending)."""
        with self._lock:
            return self._text.get(uri)

    def close(self, uri: str) -> None:
        with self._lock:
            if (path := uri_to_path(uri)) is not None and self._paths.get(os.path.realpath(path)) == uri:
                del self._paths[os.path.realpath(path)]
            self._gen.pop(uri, None)
            self._fresh.pop(uri, None)
            self._state.pop(uri, None)
            self._text.pop(uri, None)
            self._cache.pop(uri, None)
            self._good.pop(uri, None)
            self._published.pop(uri, None)
            self._incremental.pop(uri, None)

    def holds(self, uri: str) -> bool:
        """Whether anything at all is kept about ``uri``."""
        with self._lock:
            kept = (self._text, self._cache, self._good, self._published, self._state, self._incremental)
            return any(uri in d for d in kept)

    def version(self, uri: str) -> int | None:
        with self._lock:
            entry = self._text.get(uri)
            return entry.version if entry else None

    def analysis_key(self, uri: str) -> object:
        """What the analysis of ``uri`` now would read: its text and its generation (two equal
        keys: one analysis serves both)."""
        with self._lock:
            return (id(self._text.get(uri)), self._gen.get(uri, 0))

    def known(self, uri: str) -> bool:
        with self._lock:
            return uri in self._text

    # -- analyses ----------------------------------------------------------------------------
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
        """The analysis of the latest text of ``uri`` (computed once per version).

        Two threads asking for the same version (a pull request racing the debounced push)
        share one analysis: the second waits for the first instead of computing it again.
        """
        with self._lock:
            entry = self._text.get(uri)
            if entry is None:
                return None
            cached = self._cache.get(uri)
            if (
                cached is not None
                and cached.version == entry.version
                and cached.source.text == entry.text
                and self._fresh.get(uri, 0) == self._gen.get(uri, 0)
            ):
                return cached
            job = self._jobs.get(uri)
            gen = self._gen.get(uri, 0)
            owner = job is None or job.entry is not entry or job.gen != gen
            if owner:
                job = self._jobs[uri] = _Job(entry, gen)
            incremental = self._incremental.setdefault(uri, IncrementalDocument())
        assert job is not None
        if not owner:
            job.done.wait()
            if job.result is not None:
                return job.result
        try:
            snap = analyze_source(uri, entry.source, entry.version, incremental, self.folders(), self)
            job.result = snap
        finally:
            job.done.set()
            with self._lock:
                if self._jobs.get(uri) is job:
                    del self._jobs[uri]
        if self.analysed is not None:
            self.analysed()
        with self._lock:
            # Kept when it is the newest analysis of the open document, even if the text has
            # moved on meanwhile: the incremental analysis shares tasks between versions, and
            # an older analysis kept instead would read positions of this newer text.
            if uri in self._text:
                current = self._text[uri] is entry
                if current or _newer(snap, self._cache.get(uri)):
                    self._cache[uri] = snap
                    self._fresh[uri] = job.gen
                if snap.compiled.workflow is not None and (current or _newer(snap, self._good.get(uri))):
                    self._good[uri] = snap
        return snap

    # -- publishing ----------------------------------------------------------------------------
    def should_publish(self, snap: Snapshot) -> bool:
        """Whether ``snap``'s diagnostics may be pushed (never an older version after a newer
        one); records its version when they may."""
        with self._lock:
            if snap.uri not in self._text:
                return False
            last = self._published.get(snap.uri)
            if last is not None and snap.version is not None and snap.version < last:
                return False
            self._published[snap.uri] = snap.version
            return True


def regresses(current: int | None, version: int | None) -> bool:
    """Whether ``version`` breaks LSP's rule that a document's version only grows: lower than
    ``current``, or negative."""
    if version is None:
        return False
    return version < 0 or (current is not None and version < current)


def _newer(snap: Snapshot, than: Snapshot | None) -> bool:
    """Whether ``snap`` analyses a later version of its document than ``than``."""
    if than is None:
        return True
    return snap.version is not None and than.version is not None and snap.version > than.version


def analyze_source(
    uri: str,
    src: SourceText,
    version: int | None,
    incremental: IncrementalDocument | None = None,
    folders: Sequence[str] = (),
    docs: Documents | None = None,
) -> Snapshot:
    """The analysis of ``src``; with ``docs``, the child workflows open there are read from
    their unsaved buffers (:class:`OpenBuffers`), and the snapshot records the files it read."""
    path = uri_to_path(uri)
    base = working_directory(path, folders)
    roots = reading_roots(path, folders)
    buffers = OpenBuffers(docs, uri) if docs is not None else None
    compiled = (
        incremental.compile(src, base, version, roots, buffers)
        if incremental is not None
        else compile_source(src, base, roots=roots, buffers=buffers)
    )
    reads = frozenset(buffers.asked) if buffers is not None else frozenset()
    from checker.project.admission import configured  # the findings `nika check` would print

    return Snapshot(uri, version, configured(compiled, path), base, roots, reads)


def analyze(uri: str, text: str, version: int | None, folders: Sequence[str] = ()) -> Snapshot:
    """The analysis of ``text`` as document ``uri`` (outside any :class:`Documents`)."""
    return analyze_source(uri, SourceText(text, uri_to_path(uri) or uri), version, None, folders)
