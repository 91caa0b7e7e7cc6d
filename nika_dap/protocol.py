"""DAP's base protocol: a ``Content-Length`` header, a blank line, a JSON body (UTF-8).

:func:`read_message` reads one message from a binary stream (``None`` at a clean end of stream);
a malformed header or body raises :class:`ProtocolError` with one line saying what was wrong.
:func:`encode` frames one message.
"""

from __future__ import annotations

import json
from typing import Any, BinaryIO

MAX_BODY = 64 * 1024 * 1024  # one message; a larger Content-Length is refused before reading it
MAX_HEADER_LINE = 8192


class ProtocolError(Exception):
    """The peer sent something that is not a DAP message."""


def encode(message: dict[str, Any]) -> bytes:
    body = json.dumps(message, ensure_ascii=False, separators=(",", ":"), default=str).encode("utf-8")
    return b"Content-Length: %d\r\n\r\n" % len(body) + body


def read_message(stream: BinaryIO) -> dict[str, Any] | None:
    length: int | None = None
    first = True
    while True:
        line = stream.readline(MAX_HEADER_LINE + 1)
        if not line:
            if first:
                return None
            raise ProtocolError("the stream ended inside a message header")
        first = False
        if len(line) > MAX_HEADER_LINE:
            raise ProtocolError("a header line is longer than 8192 bytes")
        text = line.rstrip(b"\r\n")
        if not text:
            break
        name, sep, value = text.partition(b":")
        if not sep:
            raise ProtocolError(f"not a header line: {text[:80]!r}")
        if name.strip().lower() == b"content-length":
            try:
                length = int(value.strip())
            except ValueError:
                raise ProtocolError(f"Content-Length is not a number: {value.strip()[:40]!r}") from None
    if length is None:
        raise ProtocolError("a message without a Content-Length header")
    if length < 0 or length > MAX_BODY:
        raise ProtocolError(f"Content-Length {length} is outside 0..{MAX_BODY}")
    body = stream.read(length)
    if len(body) < length:
        raise ProtocolError("the stream ended inside a message body")
    try:
        message = json.loads(body.decode("utf-8"))
    except (UnicodeDecodeError, ValueError) as exc:
        raise ProtocolError(f"the body is not JSON: {exc}") from None
    if not isinstance(message, dict) or not isinstance(message.get("type"), str):
        raise ProtocolError("the body is not a DAP message (an object with a `type`)")
    return message
