"""PNG in and out for the image effects.

Reading: the header is judged first (signature, IHDR: 8-bit grey/RGB/RGBA, not interlaced, each
side ≤ 16384 and at most 2^26 pixels) before a single byte is decompressed; the pixels are then
decoded by Pillow (lazily imported) with its decompression-bomb guard on and chunk CRCs checked.

Writing is our own: filter 0 rows in *stored* (uncompressed) deflate blocks, a ``nika`` tEXt chunk
for the recipe, no time chunk. A compressor's output depends on the zlib build (zlib, zlib-ng,
other levels of the same library), so compressed bytes could differ between two machines for the
same pixels; stored blocks make the file a function of the pixels alone.
"""

from __future__ import annotations

import struct
import zlib
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import numpy as np

SIGNATURE = b"\x89PNG\r\n\x1a\n"
MAX_SIDE = 16384
MAX_PIXELS = 1 << 26
COLOUR_TYPES = {0: "grey", 2: "RGB", 6: "RGBA"}


class PngError(ValueError):
    """``kind``: ``format`` (unsupported, -003), ``decode`` (corrupt, -004) or ``budget`` (-005)."""

    def __init__(self, kind: str, message: str) -> None:
        super().__init__(message)
        self.kind = kind


def header(data: bytes) -> tuple[int, int]:
    """(width, height) from the IHDR, refusing what this reader does not take."""
    if not data.startswith(SIGNATURE):
        raise PngError("format", "the input is not a PNG (produce one upstream, e.g. `image_generate format: png`)")
    if len(data) < 33 or data[12:16] != b"IHDR":
        raise PngError("decode", "the PNG has no IHDR header")
    width, height, depth, colour, _, _, interlace = struct.unpack(">IIBBBBB", data[16:29])
    if zlib.crc32(data[12:29]) != struct.unpack(">I", data[29:33])[0]:
        raise PngError("decode", "the PNG header's CRC does not match")
    if depth != 8 or colour not in COLOUR_TYPES:
        raise PngError("format", f"only 8-bit grey, RGB or RGBA PNGs are read (this one: depth {depth}, type {colour})")
    if interlace:
        raise PngError("format", "interlaced (Adam7) PNGs are not read; save it without interlacing")
    if not (1 <= width <= MAX_SIDE and 1 <= height <= MAX_SIDE) or width * height > MAX_PIXELS:
        raise PngError("budget", f"{width}x{height} exceeds the decode budget (each side ≤ {MAX_SIDE}, ≤ 2^26 pixels)")
    return width, height


def decode(data: bytes) -> np.ndarray:
    """An (h, w, 4) uint8 RGBA array."""
    import io
    import warnings

    import numpy as np
    from PIL import Image

    width, height = header(data)
    Image.MAX_IMAGE_PIXELS = MAX_PIXELS
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error", Image.DecompressionBombWarning)
            with Image.open(io.BytesIO(data), formats=["PNG"]) as im:
                im.load()
                rgba = im.convert("RGBA")
    except (Image.DecompressionBombError, Image.DecompressionBombWarning) as e:
        raise PngError("budget", f"the PNG decompresses past the budget: {e}") from None
    except Exception as e:  # Pillow reports corruption as OSError, SyntaxError, ValueError, zlib.error…
        raise PngError("decode", f"the PNG is corrupt or truncated: {e}") from None
    if rgba.size != (width, height):
        raise PngError("decode", "the decoded size differs from the header")
    return np.asarray(rgba, dtype=np.uint8).copy()


def _chunk(kind: bytes, body: bytes) -> bytes:
    return struct.pack(">I", len(body)) + kind + body + struct.pack(">I", zlib.crc32(kind + body))


def _stored(raw: bytes) -> bytes:
    """A zlib stream of stored deflate blocks (≤ 65535 bytes each) with its Adler-32."""
    out = [b"\x78\x01"]
    blocks = [raw[i : i + 65535] for i in range(0, len(raw), 65535)] or [b""]
    for i, block in enumerate(blocks):
        final = 1 if i == len(blocks) - 1 else 0
        out.append(struct.pack("<BHH", final, len(block), len(block) ^ 0xFFFF) + block)
    out.append(struct.pack(">I", zlib.adler32(raw)))
    return b"".join(out)


def encode(pixels: np.ndarray, text: str) -> bytes:
    """PNG bytes of an (h, w, 4) RGBA (or (h, w, 3) RGB) uint8 array with a ``nika`` tEXt chunk."""
    height, width, channels = pixels.shape
    return encode_rows(pixels.reshape(height, width * channels).tobytes(), width, height, channels, text)


def encode_rows(pixels: bytes, width: int, height: int, channels: int, text: str) -> bytes:
    """PNG bytes of ``height`` rows of ``width`` RGBA (``channels`` 4) or RGB (3) pixels, given as
    one run of bytes, row after row: what :func:`encode` writes, without numpy."""
    stride = width * channels
    if len(pixels) != stride * height:
        raise ValueError(f"{len(pixels)} bytes are not {height} rows of {width} pixels of {channels} channels")
    colour = 6 if channels == 4 else 2
    rows = b"".join(b"\x00" + pixels[i : i + stride] for i in range(0, stride * height, stride))
    ihdr = struct.pack(">IIBBBBB", width, height, 8, colour, 0, 0, 0)
    meta = b"nika\x00" + text.encode("latin-1", errors="replace")
    return (
        SIGNATURE
        + _chunk(b"IHDR", ihdr)
        + _chunk(b"tEXt", meta)
        + _chunk(b"IDAT", _stored(rows))
        + _chunk(b"IEND", b"")
    )
