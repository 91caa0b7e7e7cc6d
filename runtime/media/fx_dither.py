"""``dither`` (ordered: Bayer 2/4/8, blue noise, interleaved gradient noise; error diffusion: Floyd-Steinberg,
Atkinson, Jarvis-Judice-Ninke) and ``ascii`` (text, ANSI or a PNG drawn with a built-in 5x7 font).

Palette matching is :func:`runtime.media.color.nearest` (Oklab). Error diffusion runs in integer
sRGB with floor division, pixel by pixel in scan order, so it is deterministic (and slow on big
images: resize first)."""

from __future__ import annotations

import functools
from decimal import Decimal, localcontext
from typing import TYPE_CHECKING, Any

from runtime.media import color
from runtime.media.fx_ops import FxError, _palette, within_budget

if TYPE_CHECKING:
    import numpy as np

KERNELS: dict[str, tuple[int, tuple[tuple[int, int, int], ...]]] = {
    "floyd_steinberg": (16, ((1, 0, 7), (-1, 1, 3), (0, 1, 5), (1, 1, 1))),
    "atkinson": (8, ((1, 0, 1), (2, 0, 1), (-1, 1, 1), (0, 1, 1), (1, 1, 1), (0, 2, 1))),
    "jjn": (48, ((1, 0, 7), (2, 0, 5), (-2, 1, 3), (-1, 1, 5), (0, 1, 7), (1, 1, 5), (2, 1, 3),
                 (-2, 2, 1), (-1, 2, 3), (0, 2, 5), (1, 2, 3), (2, 2, 1))),
}  # fmt: skip
RAMP = " .:-=+*#%@"
DIFFUSION_PIXELS = 1 << 22
FONT = {  # 5x7 glyphs, one string of 7 rows of 5 cells each
    " ": "." * 35,
    ".": "." * 25 + "..#.." + "." * 5,
    ":": "." * 5 + "..#.." + "." * 10 + "..#.." + "." * 10,
    "-": "." * 15 + ".###." + "." * 15,
    "=": "." * 10 + "#####" + "." * 5 + "#####" + "." * 10,
    "+": "....." + "..#.." + "..#.." + "#####" + "..#.." + "..#.." + ".....",
    "*": "....." + "..#.." + "#.#.#" + ".###." + "#.#.#" + "..#.." + ".....",
    "#": ".#.#." + ".#.#." + "#####" + ".#.#." + "#####" + ".#.#." + ".#.#.",
    "%": "##..." + "##..#" + "...#." + "..#.." + ".#..." + "#..##" + "...##",
    "@": ".###." + "#...#" + "#.###" + "#.#.#" + "#.###" + "#...." + ".###.",
}


def _bayer(n: int) -> np.ndarray:
    import numpy as np

    m = np.array([[0, 2], [3, 1]], dtype=np.int64)
    while m.shape[0] < n:
        m = np.block([[4 * m, 4 * m + 2], [4 * m + 3, 4 * m + 1]])
    return m


BLUE = 32  # side of the blue-noise threshold tile
SIGMA2_X2 = Decimal("7.22")  # 2σ² with σ = 1.9, the usual void-and-cluster filter width


@functools.cache
def blue_noise() -> np.ndarray:
    """A 32x32 threshold tile by Ulichney's void-and-cluster, computed once and identically on every
    platform: the Gaussian filter is an integer table built with :mod:`decimal`, the initial pattern
    comes from the splitmix64 stream, and ties fall to the first index."""
    import numpy as np

    from runtime.media.fx_ops import noise

    n = BLUE
    d = np.minimum(np.arange(n), n - np.arange(n))
    with localcontext() as ctx:
        ctx.prec = 30
        table = {k: int((Decimal(-k) / SIGMA2_X2).exp() * (1 << 20)) for k in range(2 * (n // 2) ** 2 + 1)}
    kernel = np.vectorize(table.__getitem__)(d[:, None] ** 2 + d[None, :] ** 2).astype(np.int64).ravel()
    shifts = [np.roll(kernel.reshape(n, n), (i // n, i % n), axis=(0, 1)).ravel() for i in range(n * n)]
    ones = np.zeros(n * n, dtype=bool)
    ones[np.argsort(noise(0, 0xB1, n * n), kind="stable")[: n * n // 10]] = True
    energy = sum((shifts[i] for i in np.flatnonzero(ones)), np.zeros(n * n, dtype=np.int64))
    for _ in range(4 * n * n):  # swap the tightest cluster into the largest void until stable
        cluster = int(np.argmax(np.where(ones, energy, -1)))
        ones[cluster], energy = False, energy - shifts[cluster]
        void = int(np.argmin(np.where(ones, np.iinfo(np.int64).max, energy)))
        ones[void], energy = True, energy + shifts[void]
        if void == cluster:
            break
    rank = np.zeros(n * n, dtype=np.int64)
    start, e1, o1 = int(ones.sum()), energy.copy(), ones.copy()
    for r in range(start - 1, -1, -1):  # phase 1: peel the initial pattern from its tightest clusters
        cluster = int(np.argmax(np.where(o1, e1, -1)))
        o1[cluster], e1, rank[cluster] = False, e1 - shifts[cluster], r
    for r in range(start, n * n):  # phase 2: fill the largest voids
        void = int(np.argmin(np.where(ones, np.iinfo(np.int64).max, energy)))
        ones[void], energy, rank[void] = True, energy + shifts[void], r
    return rank.reshape(n, n)


def dither(img: np.ndarray, p: dict[str, Any], **_: Any) -> np.ndarray:
    import numpy as np

    mode, pal = p["mode"], _palette(p["palette"])
    colours = np.array(pal, dtype=np.int64)
    out = img.copy()
    if mode in KERNELS:
        if img.shape[0] * img.shape[1] > DIFFUSION_PIXELS:
            raise FxError(
                f"error-diffusion `{mode}` runs pixel by pixel and takes at most {DIFFUSION_PIXELS:,} pixels"
                " in this build; `resize` first, or use an ordered mode (`bayer8`, `blue_noise`, `ign`)"
            )
        out[..., :3] = colours[_diffuse(img[..., :3], pal, *KERNELS[mode])]
        return out
    h, w = img.shape[:2]
    spread = 256 // max(1, len(pal) - 1)
    if mode == "ign":
        yy, xx = np.mgrid[0:h, 0:w].astype(np.float64)
        inner = 0.06711056 * xx + 0.00583715 * yy
        t = 52.9829189 * (inner - np.floor(inner))
        level = ((t - np.floor(t)) * spread).astype(np.int64)
    else:
        n = BLUE if mode == "blue_noise" else int(mode.removeprefix("bayer"))
        m = blue_noise() if mode == "blue_noise" else _bayer(n)
        level = (m[np.arange(h)[:, None] % n, np.arange(w)[None, :] % n] * 2 + 1) * spread // (2 * n * n)
    shifted = np.clip(img[..., :3] + (level - spread // 2)[..., None], 0, 255)
    out[..., :3] = colours[color.nearest(shifted, pal)]
    return out


def _diffuse(rgb: np.ndarray, pal: list[tuple[int, int, int]], div: int, kernel: tuple) -> np.ndarray:
    import numpy as np

    h, w = rgb.shape[:2]
    work = rgb.astype(np.int64).tolist()
    index = np.zeros((h, w), dtype=np.int64)
    memo: dict[tuple[int, int, int], int] = {}
    pal_lab = [color.oklab_one(c) for c in pal]
    for y in range(h):
        row = work[y]
        for x in range(w):
            px = tuple(min(255, max(0, c)) for c in row[x])
            k = memo.get(px)
            if k is None:
                k = memo[px] = color.nearest_one(px, pal_lab)
            index[y, x] = k
            err = [px[i] - pal[k][i] for i in range(3)]
            for dx, dy, wt in kernel:
                tx, ty = x + dx, y + dy
                if 0 <= tx < w and ty < h:
                    cell = work[ty][tx]
                    for i in range(3):
                        cell[i] += err[i] * wt // div
    return index


def ascii_art(img: np.ndarray, p: dict[str, Any], **_: Any) -> tuple[np.ndarray | None, bytes | None]:
    """(pixels, None) for ``emit: png``; (None, text bytes) for ``text``/``ansi``."""
    import numpy as np

    h, w = img.shape[:2]
    cols = min(p["cols"], w)
    rows = max(1, (h * cols) // (w * 2))
    xs, ys = np.arange(cols + 1) * w // cols, np.arange(rows + 1) * h // rows
    cells = np.add.reduceat(np.add.reduceat(img[..., :3].astype(np.int64), ys[:-1], axis=0), xs[:-1], axis=1)
    counts = np.diff(ys)[:, None, None] * np.diff(xs)[None, :, None]
    means = cells // counts
    chars = (255 - color.luma(means)) * (len(RAMP) - 1) // 255
    if p["emit"] == "png":
        within_budget(cols * 6, rows * 8, "ascii")
        glyphs = np.array([[c == "#" for c in FONT[ch]] for ch in RAMP], dtype=np.int64).reshape(len(RAMP), 7, 5)
        mask = np.pad(glyphs, ((0, 0), (0, 1), (0, 1)))[chars]  # rows, cols, 8, 6
        ink = mask[..., None] * means[:, :, None, None, :]
        pix = ink.transpose(0, 2, 1, 3, 4).reshape(rows * 8, cols * 6, 3)
        return np.concatenate([pix, np.full((rows * 8, cols * 6, 1), 255, dtype=np.int64)], axis=2), None
    lines = []
    for r in range(rows):
        if p["emit"] == "text":
            lines.append("".join(RAMP[c] for c in chars[r]))
        else:
            parts = [
                f"\x1b[38;2;{m[0]};{m[1]};{m[2]}m{RAMP[c]}" for c, m in zip(chars[r], means[r].tolist(), strict=True)
            ]
            lines.append("".join(parts) + "\x1b[0m")
    return None, ("\n".join(lines) + "\n").encode("utf-8")
