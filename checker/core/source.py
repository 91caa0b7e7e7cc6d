"""Source text and positions.

Inside the project every position is a code-point offset into the decoded text. Line/column
pairs (1-based, columns in code points) and byte offsets are computed here, once, for the
edges that need them (CLI output, JSON report); UTF-16 lives only in the language server.
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Callable
from functools import cached_property
from typing import Any, NamedTuple

from checker.core.records import record

_BREAK_RE = re.compile(r"\r\n?|\n")
_CHECKPOINT = 64


class Span(NamedTuple):
    """A half-open range ``[start, end)`` of code-point offsets into a source text.

    A named tuple: immutable, hashable and cheap to create (the YAML layer makes one per node).
    """

    start: int
    end: int

    def contains(self, offset: int) -> bool:
        return self.start <= offset <= self.end

    def cover(self, other: Span) -> Span:
        return self.sibling(min(self.start, other.start), max(self.end, other.end))

    def sibling(self, start: int, end: int) -> Span:
        """The span ``[start, end)`` (offsets into the text) in the same frame as this one: an
        anchored span's sibling moves with its anchor too (see :class:`AnchoredSpan`)."""
        return Span(start, end)

    @property
    def base(self) -> int:
        """What this span's stored offsets are relative to (0: they are offsets into the text)."""
        return 0


class Anchor:
    """Where a piece of a document (one task of an incrementally analysed document) starts in
    the newest text analysed: the one mutable cell spans of that piece are relative to.

    The language server reuses an unchanged task's values, model and findings across versions
    of a document; when an edit above the task moves it, only its anchor's ``base`` changes.
    """

    __slots__ = ("base",)

    def __init__(self, base: int) -> None:
        self.base = base

    def __repr__(self) -> str:
        return f"Anchor({self.base})"


_tuple_item: Callable[[tuple[Any, ...], int], Any] = tuple.__getitem__  # the stored items, unshifted


class AnchoredSpan(Span):
    """A span stored relative to an :class:`Anchor`; ``start``/``end`` read as text offsets.

    Made only by the language server's incremental analysis (never by ``nika check`` or the
    runtime, which see plain spans). Equality, hashing, ordering, indexing and unpacking all see
    the text offsets, so code written against :class:`Span` reads it unchanged; a copy or a
    pickle is a plain span frozen at the offsets of that moment.
    """

    __slots__ = ()

    def __new__(cls, start: int, end: int, anchor: Anchor) -> AnchoredSpan:  # type: ignore[misc]
        """The span whose offsets relative to ``anchor`` are ``[start, end)``."""
        return tuple.__new__(cls, (start, end, anchor))

    @classmethod
    def _make(cls, iterable: Any) -> Span:  # type: ignore[override]
        return Span._make(iterable)  # no anchor given: plain offsets

    @property  # type: ignore[misc]
    def start(self) -> int:  # type: ignore[override]
        return _tuple_item(self, 0) + _tuple_item(self, 2).base

    @property  # type: ignore[misc]
    def end(self) -> int:  # type: ignore[override]
        return _tuple_item(self, 1) + _tuple_item(self, 2).base

    @property
    def base(self) -> int:
        return _tuple_item(self, 2).base

    @property
    def anchor(self) -> Anchor:
        return _tuple_item(self, 2)

    def sibling(self, start: int, end: int) -> Span:
        base = _tuple_item(self, 2).base
        return tuple.__new__(AnchoredSpan, (start - base, end - base, _tuple_item(self, 2)))

    def _pair(self) -> tuple[int, int]:
        base = _tuple_item(self, 2).base
        return (_tuple_item(self, 0) + base, _tuple_item(self, 1) + base)

    def __iter__(self):  # type: ignore[no-untyped-def]
        return iter(self._pair())

    def __len__(self) -> int:
        return 2

    def __contains__(self, item: object) -> bool:
        return item in self._pair()

    def __add__(self, other: tuple[Any, ...]) -> tuple[Any, ...]:  # type: ignore[override]
        return self._pair() + other

    def __radd__(self, other: tuple[Any, ...]) -> tuple[Any, ...]:
        return other + self._pair()

    def __mul__(self, n: Any) -> tuple[Any, ...]:  # type: ignore[override]
        return self._pair() * n

    __rmul__ = __mul__

    def count(self, value: Any) -> int:
        return self._pair().count(value)

    def index(self, value: Any, *args: Any) -> int:  # type: ignore[override]
        return self._pair().index(value, *args)

    def __getitem__(self, i):  # type: ignore[no-untyped-def]
        return self._pair()[i]

    def __eq__(self, other: object) -> bool:
        if isinstance(other, tuple):
            return self._pair() == tuple(other)
        return NotImplemented

    def __ne__(self, other: object) -> bool:
        if isinstance(other, tuple):
            return self._pair() != tuple(other)
        return NotImplemented

    def __hash__(self) -> int:
        return hash(self._pair())

    def __lt__(self, other: tuple[int, ...]) -> bool:  # type: ignore[override]
        return self._pair() < tuple(other)

    def __le__(self, other: tuple[int, ...]) -> bool:  # type: ignore[override]
        return self._pair() <= tuple(other)

    def __gt__(self, other: tuple[int, ...]) -> bool:  # type: ignore[override]
        return self._pair() > tuple(other)

    def __ge__(self, other: tuple[int, ...]) -> bool:  # type: ignore[override]
        return self._pair() >= tuple(other)

    def __repr__(self) -> str:
        start, end = self._pair()
        return f"Span(start={start}, end={end})"

    def __reduce__(self):  # type: ignore[no-untyped-def]
        return (Span, self._pair())

    def _replace(self, **kw: int) -> Span:  # type: ignore[override]
        start, end = self._pair()
        return self.sibling(kw.get("start", start), kw.get("end", end))


@record
class LineCol:
    """A 1-based line and a 1-based column counted in code points."""

    line: int
    column: int


class SourceText:
    """The decoded text of one document plus the index that turns offsets into lines and columns."""

    __slots__ = ("__dict__", "path", "repaired", "repaired_bytes", "text")

    def __init__(
        self, text: str, path: str = "<stdin>", repaired: tuple[int, ...] = (), repaired_bytes: bytes = b""
    ) -> None:
        self.text = text
        self.path = path
        # Sorted offsets of U+FFFD characters that each replace one invalid byte of the file,
        # and those bytes (same order, when known), so a display can show them as `\xNN`.
        self.repaired = repaired
        self.repaired_bytes = repaired_bytes

    def replaced_byte(self, offset: int) -> int | None:
        """The invalid byte of the file that the U+FFFD at ``offset`` stands for, if known."""
        i = bisect.bisect_left(self.repaired, offset)
        if i < len(self.repaired) and self.repaired[i] == offset and i < len(self.repaired_bytes):
            return self.repaired_bytes[i]
        return None

    @cached_property
    def line_starts(self) -> list[int]:
        """Offsets where lines start. A line ends at ``\r\n``, ``\n`` or a lone ``\r`` (YAML 1.2 line breaks)."""
        if "\r" in self.text:
            return [0, *(m.end() for m in _BREAK_RE.finditer(self.text))]
        starts = [0]
        find = self.text.find
        i = find("\n")
        while i != -1:
            starts.append(i + 1)
            i = find("\n", i + 1)
        return starts

    @cached_property
    def _is_ascii(self) -> bool:
        return self.text.isascii()

    def line_index(self, offset: int) -> int:
        """0-based index of the line holding ``offset``."""
        offset = max(0, min(offset, len(self.text)))
        return bisect.bisect_right(self.line_starts, offset) - 1

    def line_col(self, offset: int) -> LineCol:
        idx = self.line_index(offset)
        offset = max(0, min(offset, len(self.text)))
        return LineCol(idx + 1, offset - self.line_starts[idx] + 1)

    def offset_of(self, line: int, column: int) -> int:
        """Code-point offset of a 0-based line and 0-based code-point column (clamped)."""
        if line < 0:
            return 0
        if line >= len(self.line_starts):
            return len(self.text)
        start = self.line_starts[line]
        end = self.line_end(line)
        return min(start + max(column, 0), end)

    def line_end(self, line: int) -> int:
        """Offset just past the last character of a 0-based line, line break excluded."""
        starts = self.line_starts
        if line + 1 >= len(starts):
            return len(self.text)
        nxt = starts[line + 1]
        return nxt - 2 if nxt - 2 >= starts[line] and self.text[nxt - 2 : nxt] == "\r\n" else nxt - 1

    def line_text(self, line: int) -> str:
        """The text of a 0-based line, without its line break."""
        if line < 0 or line >= len(self.line_starts):
            return ""
        return self.text[self.line_starts[line] : self.line_end(line)]

    def byte_offset(self, offset: int) -> int:
        """0-based byte offset of a code-point offset, in the file as it was given.

        The text is UTF-8; a replacement character listed in ``repaired`` stands for one
        invalid byte of the original file and counts as that one byte. Cost is bounded per call
        (a checkpoint every 64 code points), so many findings on one long line stay linear.
        """
        offset = max(0, min(offset, len(self.text)))
        if self._is_ascii:
            return offset
        k = offset // _CHECKPOINT
        base = self._byte_checkpoints[k]
        out = base + len(self.text[k * _CHECKPOINT : offset].encode("utf-8", "surrogatepass"))
        if self.repaired:
            out -= 2 * bisect.bisect_left(self.repaired, offset)
        return out

    @cached_property
    def _byte_checkpoints(self) -> list[int]:
        """UTF-8 length of ``text[:i * _CHECKPOINT]`` for every checkpoint ``i``."""
        text = self.text
        out = [0]
        total = 0
        for i in range(0, len(text), _CHECKPOINT):
            total += len(text[i : i + _CHECKPOINT].encode("utf-8", "surrogatepass"))
            out.append(total)
        return out

    def slice(self, span: Span) -> str:
        return self.text[span.start : span.end]
