"""Source text and positions.

Inside the project every position is a code-point offset into the decoded text. Line/column
pairs (1-based, columns in code points) and byte offsets are computed here, once, for the
edges that need them (CLI output, JSON report); UTF-16 lives only in the language server.
"""

from __future__ import annotations

import bisect
import re
from functools import cached_property
from typing import NamedTuple

from checker.records import record

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
        return Span(min(self.start, other.start), max(self.end, other.end))


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
