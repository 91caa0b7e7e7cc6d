"""Colour arithmetic for the image effects, integer-only at pixel time.

sRGB ↔ linear light goes through 256-entry 16-bit tables computed once with :mod:`decimal` (a
software arithmetic identical on every platform, never the C library's ``pow``). Oklab, the
perceptual space nearest-colour matching uses, is computed with integer matrices and an exact
integer cube root, so a pixel's nearest palette entry is the same everywhere.
"""

from __future__ import annotations

import functools
import re
from decimal import Decimal, localcontext
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import numpy as np

PRESETS: dict[str, tuple[str, ...]] = {
    "bw": ("#000000", "#ffffff"),
    "gray4": ("#000000", "#555555", "#aaaaaa", "#ffffff"),
    "gameboy": ("#0f380f", "#306230", "#8bac0f", "#9bbc0f"),
    "cga": ("#000000", "#55ffff", "#ff55ff", "#ffffff"),
    "okabe_ito": ("#000000", "#e69f00", "#56b4e9", "#009e73", "#f0e442", "#0072b2", "#d55e00", "#cc79a7"),
}
CHUNK = 1 << 20  # pixels per nearest-colour batch
HEX = re.compile(r"#([0-9a-fA-F]{6})")
M1 = ((0.4122214708, 0.5363325363, 0.0514459929), (0.2119034982, 0.6806995451, 0.1073969566),
      (0.0883024619, 0.2817188376, 0.6299787005))  # fmt: skip
M2 = ((0.2104542553, 0.7936177850, -0.0040720468), (1.9779984951, -2.4285922050, 0.4505937099),
      (0.0259040371, 0.7827717662, -0.8086757660))  # fmt: skip


class BadColour(ValueError):
    pass


def parse_colour(value: Any) -> tuple[int, int, int]:
    """``#rrggbb`` or ``[r, g, b]`` (0..255 each)."""
    if isinstance(value, str) and HEX.fullmatch(value):
        h = value[1:]
        return int(h[0:2], 16), int(h[2:4], 16), int(h[4:6], 16)
    if isinstance(value, list) and len(value) == 3 and all(type(c) is int and 0 <= c <= 255 for c in value):
        return value[0], value[1], value[2]
    raise BadColour(f"{value!r} is not a colour (`#rrggbb` or `[r, g, b]` with 0..255)")


def palette(value: Any) -> list[tuple[int, int, int]]:
    if isinstance(value, str):
        if value not in PRESETS:
            raise BadColour(f"`{value}` is not a palette preset ({', '.join(PRESETS)})")
        return [parse_colour(c) for c in PRESETS[value]]
    if not isinstance(value, list) or not 2 <= len(value) <= 256:
        raise BadColour("a palette is a preset name or a list of 2..256 colours")
    return [parse_colour(c) for c in value]


@functools.cache
def to_linear() -> np.ndarray:
    """sRGB 8-bit → linear light 0..65535."""
    import numpy as np

    out = []
    with localcontext() as ctx:
        ctx.prec = 30
        for c in range(256):
            v = Decimal(c) / 255
            lin = (
                v / Decimal("12.92")
                if v <= Decimal("0.04045")
                else ((v + Decimal("0.055")) / Decimal("1.055")) ** Decimal("2.4")
            )
            out.append(int((lin * 65535).to_integral_value()))
    return np.array(out, dtype=np.int64)


@functools.cache
def _thresholds() -> np.ndarray:
    lut = to_linear()
    return (lut[:-1] + lut[1:] + 1) // 2


def to_srgb(lin: np.ndarray) -> np.ndarray:
    """Linear 0..65535 → the nearest sRGB 8-bit code (by the table's midpoints)."""
    import numpy as np

    return np.searchsorted(_thresholds(), lin, side="right").astype(np.uint8)


def _icbrt(x: np.ndarray) -> np.ndarray:
    """The exact floor cube root of non-negative int64 values (a float guess, corrected)."""
    import numpy as np

    r = np.floor(np.cbrt(x.astype(np.float64))).astype(np.int64)
    for _ in range(3):
        r = np.where((r + 1) ** 3 <= x, r + 1, r)
        r = np.where(r**3 > x, r - 1, r)
    return r


def oklab(rgb: np.ndarray) -> np.ndarray:
    """(..., 3) uint8 sRGB → (..., 3) int64 Oklab in fixed point."""
    import numpy as np

    lin = to_linear()[rgb.astype(np.int64)]
    m1 = np.array([[round(c * 2**32) for c in row] for row in M1], dtype=np.int64)
    m2 = np.array([[round(c * 2**8) for c in row] for row in M2], dtype=np.int64)
    lms = np.clip(lin @ m1.T, 0, None)
    return _icbrt(lms) @ m2.T


def nearest(rgb: np.ndarray, pal: list[tuple[int, int, int]]) -> np.ndarray:
    """Index of the perceptually nearest palette colour for each (..., 3) pixel; ties → first."""
    import numpy as np

    p = oklab(np.array(pal, dtype=np.uint8))
    pixels = rgb.reshape(-1, 3)
    best = np.zeros(len(pixels), dtype=np.int64)
    for at in range(0, len(pixels), CHUNK):  # bounded working memory on big images
        flat = oklab(pixels[at : at + CHUNK])
        best_d = np.full(len(flat), np.iinfo(np.int64).max, dtype=np.int64)
        part = best[at : at + CHUNK]
        for i, c in enumerate(p):
            d = ((flat - c) ** 2).sum(axis=1)
            closer = d < best_d
            part[closer], best_d = i, np.where(closer, d, best_d)
    return best.reshape(rgb.shape[:-1])


@functools.cache
def _scalar_tables() -> tuple[list[int], list[list[int]], list[list[int]]]:
    lut = [int(v) for v in to_linear()]
    m1 = [[round(c * 2**32) for c in row] for row in M1]
    m2 = [[round(c * 2**8) for c in row] for row in M2]
    return lut, m1, m2


def _icbrt_one(n: int) -> int:
    r = round(n ** (1 / 3)) if n > 0 else 0
    while (r + 1) ** 3 <= n:
        r += 1
    while r**3 > n:
        r -= 1
    return r


def oklab_one(px: tuple[int, int, int]) -> tuple[int, int, int]:
    """:func:`oklab` of one pixel in plain integers (the same exact arithmetic, no array overhead)."""
    lut, m1, m2 = _scalar_tables()
    lin = [lut[c] for c in px]
    lms = [_icbrt_one(max(0, sum(a * b for a, b in zip(row, lin, strict=True)))) for row in m1]
    lab = [sum(a * b for a, b in zip(row, lms, strict=True)) for row in m2]
    return lab[0], lab[1], lab[2]


def nearest_one(px: tuple[int, int, int], pal_lab: list[tuple[int, int, int]]) -> int:
    lab = oklab_one(px)
    dists = [sum((a - b) ** 2 for a, b in zip(lab, c, strict=True)) for c in pal_lab]
    return dists.index(min(dists))


def luma(rgb: np.ndarray) -> np.ndarray:
    """Rec. 709 luma of sRGB codes in integer arithmetic (0..255)."""
    import numpy as np

    r, g, b = (rgb[..., i].astype(np.int64) for i in range(3))
    return ((2126 * r + 7152 * g + 722 * b + 5000) // 10000).astype(np.int64)
