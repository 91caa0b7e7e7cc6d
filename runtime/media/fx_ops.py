"""The pixel operations of ``nika:image_fx`` (v1 vocabulary), integer/fixed-point throughout.

Every op takes an (h, w, 4) int32 RGBA array (0..255) and its parameters (the contract's defaults
already filled in) and returns a new array; randomness comes only from :func:`noise`, a
counter-based splitmix64 stream keyed by the run's seed and the op's position, so the same
``(input, seed, ops)`` gives the same pixels everywhere. ``resize`` interpolates in linear light.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from runtime.media import color

if TYPE_CHECKING:
    import numpy as np

# cos/sin of the halftone screen angles in 16.16 fixed point (no trigonometry at run time)
SCREEN = {0: (65536, 0), 15: (63302, 16962), 45: (46341, 46341), 75: (16962, 63302)}
PI_NUM, PI_DEN = 355, 113


MAX_PIXELS = 1 << 26  # the output budget equals the input budget (stdlib §image_fx input caps)


class FxError(ValueError):
    """An argument the op cannot honour (NIKA-BUILTIN-IMAGE_FX-001)."""


class FxBudget(ValueError):
    """An op would produce more pixels than the decode budget allows (NIKA-BUILTIN-IMAGE_FX-005)."""


def within_budget(width: int, height: int, op: str) -> None:
    if width * height > MAX_PIXELS:
        raise FxBudget(f"`{op}` would make a {width}x{height} image, past the 2^26-pixel budget")


def noise(seed: int, salt: int, n: int) -> np.ndarray:
    """``n`` uint64 values of splitmix64 over the counter ``seed·2^20 + salt·2^40 + i``."""
    import numpy as np

    with np.errstate(over="ignore"):
        base = np.uint64((seed * (1 << 20) + salt * (1 << 40)) & 0xFFFFFFFFFFFFFFFF)
        z = np.arange(n, dtype=np.uint64) + base + np.uint64(0x9E3779B97F4A7C15)
        z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
        z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
        return z ^ (z >> np.uint64(31))


def _clip(a: np.ndarray) -> np.ndarray:
    import numpy as np

    return np.clip(a, 0, 255)


def resize(img: np.ndarray, p: dict[str, Any], **_: Any) -> np.ndarray:
    import numpy as np

    h, w = img.shape[:2]
    nw = p.get("width") or max(1, (w * p["height"] + h // 2) // h)
    nh = p.get("height") or max(1, (h * nw + w // 2) // w)
    within_budget(nw, nh, "resize")
    if p["filter"] == "nearest":
        ys = (2 * np.arange(nh) + 1) * h // (2 * nh)
        xs = (2 * np.arange(nw) + 1) * w // (2 * nw)
        return img[ys][:, xs]
    lin = img.copy()
    lin[..., :3] = color.to_linear()[img[..., :3]]
    y0, y1, fy = _axis(h, nh)
    rows = (lin[y0] * (256 - fy)[:, None, None] + lin[y1] * fy[:, None, None] + 128) >> 8
    x0, x1, fx = _axis(w, nw)
    out = (rows[:, x0] * (256 - fx)[None, :, None] + rows[:, x1] * fx[None, :, None] + 128) >> 8
    out[..., :3] = color.to_srgb(out[..., :3])
    return out


def _axis(n_in: int, n_out: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Source index pairs and 8-bit weights of pixel centres (bilinear, edge-clamped)."""
    import numpy as np

    pos = ((2 * np.arange(n_out, dtype=np.int64) + 1) * n_in * 256) // (2 * n_out) - 128
    pos = np.clip(pos, 0, (n_in - 1) * 256)
    i0 = pos >> 8
    return i0, np.minimum(i0 + 1, n_in - 1), pos & 255


def crop(img: np.ndarray, p: dict[str, Any], **_: Any) -> np.ndarray:
    h, w = img.shape[:2]
    x, y, cw, ch = p["x"], p["y"], p["width"], p["height"]
    if x < 0 or y < 0 or x + cw > w or y + ch > h:
        raise FxError(f"crop {cw}x{ch} at ({x}, {y}) does not fit inside the {w}x{h} image")
    return img[y : y + ch, x : x + cw].copy()


def levels(img: np.ndarray, p: dict[str, Any], **_: Any) -> np.ndarray:
    out = img.copy()
    out[..., :3] = _clip((img[..., :3] - 128) * (128 + p["contrast"]) // 128 + 128 + p["brightness"])
    return out


def grayscale(img: np.ndarray, p: dict[str, Any], **_: Any) -> np.ndarray:
    out = img.copy()
    out[..., :3] = color.luma(img)[..., None]
    return out


def palette_map(img: np.ndarray, p: dict[str, Any], **_: Any) -> np.ndarray:
    import numpy as np

    pal = _palette(p["palette"])
    out = img.copy()
    out[..., :3] = np.array(pal, dtype=np.int64)[color.nearest(img[..., :3], pal)]
    return out


def _palette(value: Any) -> list[tuple[int, int, int]]:
    try:
        return color.palette(value)
    except color.BadColour as e:
        raise FxError(str(e)) from None


def duotone(img: np.ndarray, p: dict[str, Any], **_: Any) -> np.ndarray:
    import numpy as np

    if p.get("dark") is None or p.get("light") is None:
        raise FxError("`duotone` needs both `dark:` and `light:` colours")
    try:
        dark, light = (np.array(color.parse_colour(p[k]), dtype=np.int64) for k in ("dark", "light"))
    except color.BadColour as e:
        raise FxError(str(e)) from None
    y = color.luma(img)[..., None]
    out = img.copy()
    out[..., :3] = dark + (light - dark) * y // 255
    return out


def pixelate(img: np.ndarray, p: dict[str, Any], **_: Any) -> np.ndarray:
    import numpy as np

    h, w = img.shape[:2]
    b = p["block"]
    ys, xs = np.arange(0, h, b), np.arange(0, w, b)
    sums = np.add.reduceat(np.add.reduceat(img, ys, axis=0), xs, axis=1)
    counts = np.diff(np.append(ys, h))[:, None, None] * np.diff(np.append(xs, w))[None, :, None]
    means = sums // counts
    return np.repeat(np.repeat(means, b, axis=0)[:h], b, axis=1)[:, :w]


def halftone(img: np.ndarray, p: dict[str, Any], **_: Any) -> np.ndarray:
    """Black dots on white along a rotated screen; a dot's area is its cell's ink."""
    import numpy as np

    h, w = img.shape[:2]
    cell, (c, s) = p["cell"], SCREEN[p["angle"]]
    yy, xx = np.mgrid[0:h, 0:w].astype(np.int64)
    u, v = xx * c + yy * s, yy * c - xx * s  # 16.16
    size = cell << 16
    iu, iv = u // size, v // size
    du, dv = (u - iu * size - (size >> 1)) >> 8, (v - iv * size - (size >> 1)) >> 8  # 8-bit fraction
    cu, cv = iu * size + (size >> 1), iv * size + (size >> 1)
    sx = np.clip((cu * c - cv * s) >> 32, 0, w - 1)
    sy = np.clip((cu * s + cv * c) >> 32, 0, h - 1)
    ink = 255 - color.luma(img[sy, sx])
    r2 = ink * (cell * cell << 16) * PI_DEN // (255 * PI_NUM)
    out = img.copy()
    out[..., :3] = np.where((du * du + dv * dv) < r2, 0, 255)[..., None]
    return out


def grain(img: np.ndarray, p: dict[str, Any], *, seed: int, salt: int) -> np.ndarray:
    import numpy as np

    h, w = img.shape[:2]
    span = 2 * p["intensity"] + 1
    n = (noise(seed, salt, h * w) % np.uint64(span)).astype(np.int64).reshape(h, w) - p["intensity"]
    out = img.copy()
    out[..., :3] = _clip(img[..., :3] + n[..., None])
    return out


def vignette(img: np.ndarray, p: dict[str, Any], **_: Any) -> np.ndarray:
    import numpy as np

    h, w = img.shape[:2]
    dy = (2 * np.arange(h, dtype=np.int64) - (h - 1)) * 1024 // max(h - 1, 1)
    dx = (2 * np.arange(w, dtype=np.int64) - (w - 1)) * 1024 // max(w - 1, 1)
    d2 = dy[:, None] ** 2 + dx[None, :] ** 2  # 0 .. 2·1024²
    factor = 256 - p["strength"] * d2 // (2 * 1024 * 1024)
    out = img.copy()
    out[..., :3] = img[..., :3] * factor[..., None] >> 8
    return out


def chromatic_aberration(img: np.ndarray, p: dict[str, Any], **_: Any) -> np.ndarray:
    import numpy as np

    w, k = img.shape[1], p["shift"]
    cols = np.arange(w)
    out = img.copy()
    out[..., 0] = img[:, np.clip(cols + k, 0, w - 1), 0]
    out[..., 2] = img[:, np.clip(cols - k, 0, w - 1), 2]
    return out


def scanlines(img: np.ndarray, p: dict[str, Any], **_: Any) -> np.ndarray:
    out = img.copy()
    out[:: p["period"], :, :3] = img[:: p["period"], :, :3] * (255 - p["strength"]) // 255
    return out


def glitch(img: np.ndarray, p: dict[str, Any], *, seed: int, salt: int) -> np.ndarray:
    import numpy as np

    line, chan, blocks = p["line_shift"], p["channel_shift"], p["blocks"]
    if min(line, chan, blocks) < 0 or not (line or chan or blocks):
        raise FxError("`glitch` takes non-negative `line_shift`, `channel_shift`, `blocks`, at least one above 0")
    h, w = img.shape[:2]
    out = img.copy()
    rnd = [int(v) for v in noise(seed, salt, h + 2 + 6 * blocks)]
    if line:
        for y in range(h):
            if rnd[y] % 4 == 0:
                out[y] = np.roll(out[y], (rnd[y] >> 8) % (2 * line + 1) - line, axis=0)
    if chan:
        for i, ch in enumerate((1, 2)):
            out[..., ch] = np.roll(out[..., ch], (rnd[h + i] >> 8) % (2 * chan + 1) - chan, axis=1)
    for k in range(blocks):
        r = rnd[h + 2 + 6 * k : h + 8 + 6 * k]
        bw, bh = 1 + r[0] % max(1, w // 4), 1 + r[1] % max(1, h // 8)
        sx, sy = r[2] % (w - bw + 1), r[3] % (h - bh + 1)
        tx, ty = r[4] % (w - bw + 1), r[5] % (h - bh + 1)
        out[ty : ty + bh, tx : tx + bw] = img[sy : sy + bh, sx : sx + bw]
    return out
