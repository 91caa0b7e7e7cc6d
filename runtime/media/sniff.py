"""Header-only validation of provider payloads: the magic bytes decide the format, and image
dimensions come from the PNG IHDR, the JPEG SOF marker or the WebP VP8/VP8L/VP8X header. Nothing
is decoded, so a hostile payload offers no decompression-bomb surface. WAV duration is header
arithmetic; MP3 duration is honestly unknown (None)."""

from __future__ import annotations

import struct

MAX_SIDE = 16384


class NotMedia(ValueError):
    pass


def image(data: bytes) -> tuple[str, str, int, int]:
    """(format, mime type, width, height); :class:`NotMedia` when the bytes are no image we take."""
    if data.startswith(b"\x89PNG\r\n\x1a\n") and len(data) >= 24 and data[12:16] == b"IHDR":
        w, h = struct.unpack(">II", data[16:24])
        return _sized("png", "image/png", w, h)
    if data.startswith(b"\xff\xd8\xff"):
        w, h = _jpeg_size(data)
        return _sized("jpeg", "image/jpeg", w, h)
    if data[:4] == b"RIFF" and data[8:12] == b"WEBP":
        w, h = _webp_size(data)
        return _sized("webp", "image/webp", w, h)
    raise NotMedia("the provider's payload is not a PNG, JPEG or WebP image")


def _sized(fmt: str, mime: str, w: int, h: int) -> tuple[str, str, int, int]:
    if not (1 <= w <= MAX_SIDE and 1 <= h <= MAX_SIDE):
        raise NotMedia(f"the {fmt} header claims {w}x{h}, outside 1..{MAX_SIDE} per side")
    return fmt, mime, w, h


def _jpeg_size(data: bytes) -> tuple[int, int]:
    i = 2
    while i + 9 < len(data):
        if data[i] != 0xFF:
            raise NotMedia("the JPEG's marker stream is broken")
        marker = data[i + 1]
        if marker in (0xD8, 0x01) or 0xD0 <= marker <= 0xD7:
            i += 2
            continue
        length = struct.unpack(">H", data[i + 2 : i + 4])[0]
        if 0xC0 <= marker <= 0xCF and marker not in (0xC4, 0xC8, 0xCC):
            h, w = struct.unpack(">HH", data[i + 5 : i + 9])
            return w, h
        i += 2 + length
    raise NotMedia("the JPEG has no frame header (SOF)")


def _webp_size(data: bytes) -> tuple[int, int]:
    kind = data[12:16]
    if kind == b"VP8 " and len(data) >= 30 and data[23:26] == b"\x9d\x01\x2a":
        w, h = struct.unpack("<HH", data[26:30])
        return w & 0x3FFF, h & 0x3FFF
    if kind == b"VP8L" and len(data) >= 25 and data[20] == 0x2F:
        bits = int.from_bytes(data[21:25], "little")
        return (bits & 0x3FFF) + 1, ((bits >> 14) & 0x3FFF) + 1
    if kind == b"VP8X" and len(data) >= 30:
        return int.from_bytes(data[24:27], "little") + 1, int.from_bytes(data[27:30], "little") + 1
    raise NotMedia("the WebP header is not VP8, VP8L or VP8X")


def audio(data: bytes) -> tuple[str, str, int | None]:
    """(format, mime type, duration in ms or None)."""
    if data[:4] == b"RIFF" and data[8:12] == b"WAVE":
        return "wav", "audio/wav", _wav_ms(data)
    if data.startswith(b"ID3") or (len(data) > 1 and data[0] == 0xFF and data[1] & 0xE0 == 0xE0):
        return "mp3", "audio/mpeg", None
    raise NotMedia("the provider's payload is neither WAV (RIFF/WAVE) nor MP3 (ID3 or frame sync)")


def _wav_ms(data: bytes) -> int | None:
    i, rate_bytes, size = 12, None, None
    while i + 8 <= len(data):
        kind, length = data[i : i + 4], struct.unpack("<I", data[i + 4 : i + 8])[0]
        if kind == b"fmt " and length >= 16:
            rate_bytes = struct.unpack("<I", data[i + 16 : i + 20])[0]  # byte rate
        elif kind == b"data":
            size = min(length, len(data) - i - 8)
            break
        i += 8 + length + (length & 1)
    if not rate_bytes or size is None:
        return None
    return size * 1000 // rate_bytes
