"""Positions at the protocol edge: code-point offsets <-> LSP positions in the negotiated encoding.

Lines are :class:`~checker.core.source.SourceText`'s lines, which are the protocol's: a line ends at
``\n``, ``\r\n`` or a lone ``\r``. Nothing else in :mod:`nika_lsp` splits text into lines.
"""

from __future__ import annotations

from collections.abc import Sequence

from lsprotocol import types as lsp

from checker.core.source import SourceText, Span

UTF8 = "utf-8"
UTF16 = "utf-16"
UTF32 = "utf-32"


def client_lines(src: SourceText) -> Sequence[str]:
    """The text of each line of ``src`` without its line break: line ``n`` of the list is line
    ``n`` of every position sent to or received from the client."""
    text = src.text
    if "\r" not in text:
        return text.split("\n")  # `\n` is the only break in the text: the fast path, same lines
    return [src.line_text(i) for i in range(len(src.line_starts))]


def _units(text: str, encoding: str) -> int:
    if encoding == UTF32 or text.isascii():
        return len(text)
    if encoding == UTF8:
        return len(text.encode("utf-8", "surrogatepass"))
    return len(text.encode("utf-16-le", "surrogatepass")) // 2


def position(src: SourceText, offset: int, encoding: str = UTF16) -> lsp.Position:
    """The LSP position of a code-point offset."""
    offset = max(0, min(offset, len(src.text)))
    line = src.line_index(offset)
    start = src.line_starts[line]
    return lsp.Position(line=line, character=_units(src.text[start:offset], encoding))


def span_to_range(src: SourceText, span: Span, encoding: str = UTF16) -> lsp.Range:
    return lsp.Range(start=position(src, span.start, encoding), end=position(src, span.end, encoding))


def offset_of(src: SourceText, pos: lsp.Position, encoding: str = UTF16) -> int:
    """The code-point offset of an LSP position (clamped to the document)."""
    if pos.line < 0:
        return 0
    if pos.line >= len(src.line_starts):
        return len(src.text)
    start = src.line_starts[pos.line]
    line = src.text[start : src.line_end(pos.line)]
    want = max(pos.character, 0)
    if encoding == UTF32 or line.isascii():
        return start + min(want, len(line))
    used = 0
    for i, ch in enumerate(line):
        # surrogatepass: a lone surrogate (a broken document) counts 3 bytes, as in `_units`
        w = len(ch.encode("utf-8", "surrogatepass")) if encoding == UTF8 else (2 if ord(ch) > 0xFFFF else 1)
        if used + w > want:
            return start + i
        used += w
    return start + len(line)


def range_to_span(src: SourceText, rng: lsp.Range, encoding: str = UTF16) -> Span:
    return Span(offset_of(src, rng.start, encoding), offset_of(src, rng.end, encoding))
