"""The one bounded decoder of a response body, for every reader of the network (the fetch client,
the model providers, the media providers).

A body is read raw from the wire and decoded here, in steps of at most :data:`STEP` bytes of
output, so memory stays near the cap whatever the wire holds: a compressed bomb is refused when
its decoded size passes the cap, never inflated first. One content coding is decoded (``gzip``,
``deflate``; ``identity`` is none); a body encoded twice or more (``gzip, gzip``) or in a coding
this engine does not decode is refused: the engine asks for ``gzip, deflate`` only
(:data:`ACCEPT_ENCODING`), so neither is an answer to what it asked.
"""

from __future__ import annotations

import zlib
from collections.abc import AsyncIterator, Iterator
from typing import Any

ACCEPT_ENCODING = "gzip, deflate"
STEP = 64 * 1024
_GZIP = ("gzip", "x-gzip")


class BodyRefused(Exception):
    """The body is refused: ``why`` names it; ``limit`` is the cap when it is the size."""

    def __init__(self, why: str, limit: int | None = None) -> None:
        super().__init__(why)
        self.why = why
        self.limit = limit


def codings(header: str | None) -> list[str]:
    """The content codings of a ``Content-Encoding`` value, in the order they were applied."""
    return [c.strip().lower() for c in (header or "").split(",") if c.strip() and c.strip().lower() != "identity"]


class BoundedDecoder:
    """Decodes one body: :meth:`feed` the raw bytes as they arrive, then :meth:`close`; each
    yields decoded pieces of at most :data:`STEP` bytes and raises :class:`BodyRefused` once
    more than ``cap`` bytes would have been decoded (after yielding up to ``cap + 1`` of them,
    so a caller that cuts instead of failing has what it keeps)."""

    def __init__(self, content_encoding: str | None, cap: int) -> None:
        found = codings(content_encoding)
        if len(found) > 1:
            raise BodyRefused(
                f"the body is encoded {len(found)} times ({', '.join(found)}); the engine decodes one content coding"
            )
        if found and found[0] not in (*_GZIP, "deflate"):
            raise BodyRefused(f"the body's content coding `{found[0]}` is not one this engine decodes (gzip, deflate)")
        self.coding = found[0] if found else None
        self.cap = cap
        self.total = 0
        self._z: Any = None
        self._head = b""
        if self.coding in _GZIP:
            self._z = zlib.decompressobj(16 + zlib.MAX_WBITS)

    def feed(self, raw: bytes) -> Iterator[bytes]:
        if self.coding is None:
            for i in range(0, len(raw), STEP):
                yield from self._emit(raw[i : i + STEP])
            return
        if self._z is None:  # deflate: zlib-wrapped as RFC 9110 says, or raw as some servers send it
            self._head += raw
            if len(self._head) < 2:
                return
            raw, self._head = self._head, b""
            wrapped = raw[0] & 0x0F == 8 and (raw[0] << 8 | raw[1]) % 31 == 0
            self._z = zlib.decompressobj(zlib.MAX_WBITS if wrapped else -zlib.MAX_WBITS)
        data = raw
        while data:
            try:
                piece = self._z.decompress(data, self._room())
            except zlib.error as exc:
                raise BodyRefused(f"the body is not valid {self.coding} data ({exc})") from None
            yield from self._emit(piece)
            data = self._z.unconsumed_tail
            if not data and self._z.eof and self._z.unused_data and self.coding in _GZIP:
                data = self._z.unused_data  # another gzip member follows (RFC 1952 §2.2)
                self._z = zlib.decompressobj(16 + zlib.MAX_WBITS)

    def close(self) -> Iterator[bytes]:
        if self._head:  # a deflate body of one byte
            raise BodyRefused(f"the body is not valid {self.coding} data (truncated)")
        if self._z is not None:
            try:
                rest = self._z.flush()
            except zlib.error as exc:
                raise BodyRefused(f"the body is not valid {self.coding} data ({exc})") from None
            for i in range(0, len(rest), STEP):
                yield from self._emit(rest[i : i + STEP])

    def _room(self) -> int:
        return max(1, min(STEP, self.cap + 1 - self.total))

    def _emit(self, piece: bytes) -> Iterator[bytes]:
        room = self.cap - self.total
        self.total += len(piece)
        if self.total > self.cap:
            if room > 0:
                yield piece[:room]
            raise BodyRefused(f"the body is larger than the {_size(self.cap)} cap", self.cap)
        if piece:
            yield piece


def decode_all(raw_chunks: Iterator[bytes], content_encoding: str | None, cap: int) -> bytes:
    """A whole body decoded from its raw chunks (plain data: the property tests' entry)."""
    d = BoundedDecoder(content_encoding, cap)
    out = bytearray()
    for chunk in raw_chunks:
        for piece in d.feed(chunk):
            out += piece
    for piece in d.close():
        out += piece
    return bytes(out)


async def decoded(resp: Any, cap: int) -> AsyncIterator[bytes]:
    """The decoded body of an ``httpx`` streamed response, in pieces, under ``cap``."""
    d = BoundedDecoder(resp.headers.get("content-encoding"), cap)
    async for chunk in resp.aiter_raw():
        for piece in d.feed(chunk):
            yield piece
    for piece in d.close():
        yield piece


def _size(n: int) -> str:
    if n >= 1024 * 1024:
        return f"{n // (1024 * 1024)} MiB"
    return f"{n // 1024} KiB" if n >= 1024 else f"{n} bytes"
