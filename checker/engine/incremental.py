"""Incremental analysis of one document across versions, for the language server.

After an edit inside one task of a big workflow, every other task's source slice is unchanged,
so its value tree, its compiled model, its findings and its expression sites are too; only
their position in the text may have moved. :class:`IncrementalDocument` keeps them between
versions: the YAML layer builds each task from its own slice with spans relative to an
:class:`~checker.core.source.Anchor` at the slice's start, and when an edit above a task moves it,
only that anchor's ``base`` is updated. The envelope (everything outside ``tasks:``) is parsed
again each time, with the tasks region blanked out; then the graph and every rule run over the
whole model as ``nika check`` runs them. The result is the same :class:`CompiledWorkflow` that
:func:`checker.engine.pipeline.compile_source` gives for the same text (a test compares the two over
random edits).

Only the common shape is done this way: a block ``tasks:`` map at the root whose tasks start on
lines of their own, in a document the YAML profile has nothing to say about. Anything else, and
any YAML finding, falls back to the whole-document analysis, which reports it exactly.

Sharing objects across versions means a superseded analysis's positions follow the newest text
of its document once the next analysis commits. So analyses commit in version order (an older
text analysed after a newer one is analysed whole, moving nothing), and the language server
keeps the newest analysis as its last good one even when the text moved on while it ran (see
``nika_lsp.documents``); a request still running on a superseded analysis in another thread
may see its task positions move to the newer text mid-way.
"""

from __future__ import annotations

import itertools
import re
import threading
import unicodedata
from functools import lru_cache

from checker.compiler import TaskMemo, compile_tree
from checker.core.buffers import Buffers
from checker.core.memo import RuleMemo
from checker.core.records import record, replace
from checker.core.source import Anchor, AnchoredSpan, SourceText, Span
from checker.engine.pipeline import compile_source, judge
from checker.model.workflow import CompiledWorkflow
from checker.parse.nodes import MAX_DOCUMENT_BYTES, parse_piece
from checker.parse.values import Entry, MapValue, ScalarValue

_TASKS_LINE = re.compile(r"tasks:[ ]*(?:#[^\n]*)?\r?\n")


@record
class Layout:
    """Where the tasks region of a document lies: ``[start, end)`` after the ``tasks:`` key at
    ``key``, and each task's slice in it."""

    key: int
    start: int
    end: int
    slices: tuple[tuple[int, int], ...]


def layout(text: str) -> Layout | None:
    """The tasks region of ``text`` when it has the shape the incremental analysis handles: a
    ``tasks:`` line at column 0 followed by indented lines (comments and blank lines anywhere),
    each line at the first task's indentation starting a task. ``None`` otherwise."""
    m = None
    for found in _TASKS_LINE.finditer(text):
        if found.start() == 0 or text[found.start() - 1] == "\n":
            if m is not None:
                return None  # a second `tasks:` key: the whole-document analysis reports it
            m = found
    if m is None or _odd_breaks(text):
        return None
    start = m.end() - 1  # the patterns below match a line break and the line after it
    after = _ROOT_LINE.search(text, start)  # the next root key or document marker ends the region
    end = after.start() + 1 if after else len(text)
    first = _CONTENT_LINE.search(text, start, end)
    if first is None:
        return None
    indent = len(first.group(1))
    if ("\t" in text and _TAB_LINE.search(text, start, end)) or (
        indent > 1 and _shallower(indent).search(text, start, end)
    ):
        return None
    heads = [h.start() + 1 for h in _at_indent(indent).finditer(text, start, end)]
    if any(text[h + indent] in "-?[{&*!|>%@`\"'" for h in heads):
        return None  # a list item, a complex or quoted key, a flow or tagged node: not a plain task
    # The first slice takes the lines before the first task too (comments, blank lines): every
    # character of the region is then read by the YAML layer in exactly one slice.
    bounds = [start + 1, *heads[1:], end]
    return Layout(m.start(), start + 1, end, tuple(itertools.pairwise(bounds)))


def _odd_breaks(text: str) -> bool:
    """Line breaks other than ``\n`` and ``\r\n`` (YAML also breaks lines at a lone CR, NEL, LS
    and PS), which the line patterns of :func:`layout` do not see."""
    if "\r" in text and text.count("\r") != text.count("\r\n"):
        return True
    return "\x85" in text or "\u2028" in text or "\u2029" in text


# Each matches at a line break, looking at the line that follows it.
_ROOT_LINE = re.compile(r"\n(?=[^ \t\r\n#])")
_CONTENT_LINE = re.compile(r"\n( *)[^ \r\n#]")
_TAB_LINE = re.compile(r"\n *\t")


@lru_cache(maxsize=16)
def _at_indent(n: int) -> re.Pattern[str]:
    return re.compile(rf"\n {{{n}}}(?=[^ \r\n#])")


@lru_cache(maxsize=16)
def _shallower(n: int) -> re.Pattern[str]:
    return re.compile(rf"\n {{1,{n - 1}}}(?=[^ \r\n#])")


class _Piece:
    """One task as built from its slice: the entry the YAML layer made and its anchor."""

    __slots__ = ("anchor", "entry")

    def __init__(self, entry: Entry, anchor: Anchor) -> None:
        self.entry = entry
        self.anchor = anchor


def _build_piece(text: str) -> _Piece | None:
    anchor = Anchor(0)  # offsets into the slice while it is built; placed when committed
    parsed = parse_piece(text, anchor, depth=1)  # its root map stands for the `tasks:` map
    if parsed is None:
        return None
    root = parsed.root
    if not isinstance(root, MapValue) or root.flow or len(root.entries) != 1:
        return None
    entry = root.entries[0]
    if not isinstance(entry.key.value, str):
        return None
    return _Piece(entry, anchor)


class IncrementalDocument:
    """The analyses of one open document, reusing unchanged tasks from version to version."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._pieces: dict[str, _Piece] = {}
        self._memo = TaskMemo()
        self._rules = RuleMemo()
        self._model: ScalarValue | None = None
        self._model_text = ""
        self._version: int | None = None

    def compile(
        self,
        src: SourceText,
        base_dir: str | None = None,
        version: int | None = None,
        roots: tuple[str, ...] | None = None,
        buffers: Buffers | None = None,
    ) -> CompiledWorkflow:
        """What :func:`checker.engine.pipeline.compile_source` gives for ``src`` (never raises).

        ``version`` orders the texts of the document: one older than the last text analysed
        incrementally (an analysis that lost a race with a newer one) is analysed whole, so it
        never moves the anchors the newer analysis placed.
        """
        with self._lock:
            if version is not None and self._version is not None and version < self._version:
                return compile_source(src, base_dir, roots=roots, buffers=buffers)
            try:
                done = self._compile(src, base_dir, roots, buffers)
                if done is not None and version is not None:
                    self._version = version
            except Exception:  # a bug here must not cost the user the analysis: do it whole
                self._pieces.clear()
                self._memo = TaskMemo()
                self._rules = RuleMemo()
                self._model = None
                done = None
            return done if done is not None else compile_source(src, base_dir, roots=roots, buffers=buffers)

    def _kept_model(self, text: str, entry: Entry | None) -> tuple[ScalarValue | None, int]:
        """The envelope's default ``model:`` value as one object for as long as its text stays
        the same (compiled tasks hold it), anchored at its start; and where it starts now."""
        value = entry.value if entry is not None else None
        if not isinstance(value, ScalarValue):
            return None, 0
        start, end = value.span.start, value.span.end
        kept = self._model
        if kept is not None and kept.__class__ is value.__class__ and self._model_text == text[start:end]:
            return kept, start
        anchor = Anchor(start)
        offsets = value.offsets
        if offsets is not None:
            offsets = (
                range(offsets.start - start, offsets.stop - start)
                if isinstance(offsets, range)
                else (tuple(o - start for o in offsets))
            )
        self._model_text = text[start:end]
        return replace(value, span=AnchoredSpan(0, end - start, anchor), offsets=offsets), start

    def _place_tasks(self, text: str, shape: Layout) -> tuple[dict[str, _Piece], list[tuple[_Piece, int]]] | None:
        """Each task slice's piece (the earlier one when the slice is unchanged) with where it now
        starts; None when a slice does not build alone or two tasks share an id."""
        old = self._pieces
        pieces: dict[str, _Piece] = {}
        placed: list[tuple[_Piece, int]] = []
        ids: set[str] = set()
        for s, e in shape.slices:
            piece_text = text[s:e]
            piece = old.get(piece_text)
            if piece is None:
                piece = _build_piece(piece_text)
                if piece is None:
                    return None
            tid = piece.entry.key.value
            if tid in ids:
                return None  # a duplicate task id: reported by the whole-document analysis
            ids.add(tid)  # type: ignore[arg-type]
            pieces[piece_text] = piece
            placed.append((piece, s))
        return pieces, placed

    def _compile(
        self,
        src: SourceText,
        base_dir: str | None,
        roots: tuple[str, ...] | None = None,
        buffers: Buffers | None = None,
    ) -> CompiledWorkflow | None:
        text = src.text
        if len(text) * 4 > MAX_DOCUMENT_BYTES and len(text.encode("utf-8", "surrogatepass")) > MAX_DOCUMENT_BYTES:
            return None
        if text.startswith("\ufeff") or (not text.isascii() and not _plain_unicode(text)):
            return None
        if text.startswith("%") or "\n%" in text:
            return None  # a directive (`%TAG`) changes how every slice reads: analyse it whole
        shape = layout(text)
        if shape is None:
            return None
        # 1. Every task from its slice, reused when the slice is unchanged. Nothing shared with
        # an earlier analysis is touched until the whole document is known to fit.
        tasks = self._place_tasks(text, shape)
        if tasks is None:
            return None
        pieces, placed = tasks
        # 2. The envelope, with the tasks region blanked (same length, so its offsets hold).
        envelope = _skeleton(text, shape)
        if envelope is None:
            return None
        root, tasks_entry = envelope
        model_entry = root.entry("model")
        model, model_at = self._kept_model(text, model_entry)
        # 3. Commit: move the reused tasks to where they are now, splice them into the tree.
        for piece, at in placed:
            piece.anchor.base = at
        self._pieces = pieces
        if model is not None:
            model.span.anchor.base = model_at  # type: ignore[attr-defined]
        self._model = model
        entries = tuple(p.entry for p, _ in placed)
        tasks_map = MapValue(Span(entries[0].key.span.start, entries[-1].value.span.end), entries)
        spliced = tuple(
            Entry(e.key, tasks_map)
            if e is tasks_entry
            else Entry(e.key, model)
            if e is model_entry and model is not None
            else e
            for e in root.entries
        )
        end = tasks_map.span.end if root.entries[-1] is tasks_entry else root.span.end
        whole = MapValue(Span(root.span.start, end), spliced)
        # (No duplicate keys anywhere: the YAML layer reports them, so the text fell back.)
        compiled = compile_tree(src, whole, (), self._memo)
        self._memo.prune()
        return judge(src, whole, compiled, [], base_dir, roots, self._rules, buffers)


def _skeleton(text: str, shape: Layout) -> tuple[MapValue, Entry] | None:
    """The envelope parsed with the tasks region blanked, and its ``tasks:`` entry (left empty);
    None when it does not read as a block mapping with the tasks key where the layout found it."""
    width = shape.end - shape.start
    blank = (" " * (width - 1) + "\n") if text[shape.end - 1 : shape.end] == "\n" else " " * width
    skeleton = parse_piece(text[: shape.start] + blank + text[shape.end :], None)
    if skeleton is None or not isinstance(skeleton.root, MapValue) or skeleton.root.flow:
        return None
    root = skeleton.root
    tasks_entry = root.entry("tasks")
    if (
        tasks_entry is None
        or not isinstance(tasks_entry.value, ScalarValue)
        or tasks_entry.value.value is not None
        or tasks_entry.key.span.start != shape.key
    ):
        return None
    return root, tasks_entry


def _plain_unicode(text: str) -> bool:
    """True when the YAML layer's whole-text checks (NFC, lone surrogates) have nothing to say."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return unicodedata.is_normalized("NFC", text)


__all__ = ["IncrementalDocument", "Layout", "layout"]
