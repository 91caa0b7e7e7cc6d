"""nika:image_fx: byte-identical artifacts (goldens, a fresh process), every v1 op, the recipe in
the file, the fs boundaries, idempotent re-runs, and the -001..-006 refusals."""

from __future__ import annotations

import hashlib
import json
import struct
import subprocess
import sys
import zlib
from pathlib import Path

import numpy as np
import pytest
from builtins_harness import fails, make_ctx

from runtime.builtins import call
from runtime.media import png

ROOT = Path(__file__).resolve().parents[2]
GOLDEN = Path(__file__).parent / "goldens" / "image_fx" / "sha256.json"
CHAINS = {
    "resize": [{"resize": {"width": 24}}],
    "resize_nearest": [{"resize": {"height": 50, "filter": "nearest"}}],
    "crop": [{"crop": {"x": 2, "y": 3, "width": 10, "height": 9}}],
    "levels": [{"levels": {"brightness": 10, "contrast": 40}}],
    "grayscale": [{"grayscale": None}],
    "palette_map": [{"palette_map": {"palette": "gameboy"}}],
    "palette_inline": [{"palette_map": {"palette": ["#000000", [255, 0, 0], "#ffffff"]}}],
    "bayer4": [{"dither": {"mode": "bayer4", "palette": "cga"}}],
    "ign": [{"dither": {"mode": "ign", "palette": "gray4"}}],
    "blue_noise": [{"dither": {"mode": "blue_noise", "palette": "bw"}}],
    "floyd_steinberg": [{"dither": None}],
    "atkinson": [{"dither": {"mode": "atkinson", "palette": "okabe_ito"}}],
    "jjn": [{"dither": {"mode": "jjn"}}],
    "duotone": [{"duotone": {"dark": "#101040", "light": [250, 240, 200]}}],
    "pixelate": [{"pixelate": {"block": 5}}],
    "halftone": [{"halftone": {"cell": 6, "angle": 15}}],
    "grain": [{"grain": {"intensity": 32}}],
    "vignette": [{"vignette": None}],
    "chromatic_aberration": [{"chromatic_aberration": {"shift": 3}}],
    "scanlines": [{"scanlines": None}],
    "glitch": [{"glitch": {"line_shift": 5, "channel_shift": 2, "blocks": 3}}],
    "ascii_png": [{"ascii": {"cols": 8}}],
    "spec_example": [
        {"resize": {"width": 20}},
        {"dither": {"mode": "floyd_steinberg", "palette": "gameboy"}},
        {"grain": {"intensity": 32}},
        {"scanlines": {"strength": 110, "period": 4}},
        {"vignette": {"strength": 140}},
    ],
}


def source_png() -> bytes:
    """A 40x30 RGBA gradient written by our own encoder, so the input bytes never vary."""
    a = np.zeros((30, 40, 4), dtype=np.uint8)
    a[..., 0] = np.arange(40)[None, :] * 6
    a[..., 1] = np.arange(30)[:, None] * 8
    a[..., 2] = 128
    a[..., 3] = 255
    return png.encode(a, "{}")


def hashes(root: Path, names: list[str] | None = None) -> dict[str, str]:
    import asyncio

    ctx, _ = make_ctx(root)

    async def run() -> dict[str, str]:
        out = {}
        for name in names or list(CHAINS):
            ops = CHAINS[name]
            r = await call("nika:image_fx", {"input": "in.png", "out": f"{name}.png", "ops": ops, "seed": 7}, ctx)
            out[name] = r["sha256"]
        return out

    return asyncio.run(run())


@pytest.fixture
def src(tmp_path: Path) -> Path:
    (tmp_path / "in.png").write_bytes(source_png())
    return tmp_path


def test_every_op_matches_its_golden(src):
    """The committed sha256 of each chain's artifact: any drift in an op or the writer fails."""
    assert hashes(src) == json.loads(GOLDEN.read_text())


def test_a_fresh_process_writes_the_same_bytes(src):
    names = ["resize", "atkinson", "halftone", "glitch", "spec_example"]
    ours = hashes(src, names)
    code = "import sys,json;sys.path.insert(0,'tests/runtime');import test_image_fx as t;from pathlib import Path;"
    code += f"print(json.dumps(t.hashes(Path(sys.argv[1]), {names!r})))"
    other = src / "other"
    other.mkdir()
    (other / "in.png").write_bytes(source_png())
    done = subprocess.run(
        [sys.executable, "-c", code, str(other)],
        capture_output=True, text=True, cwd=ROOT, env={"PYTHONPATH": str(ROOT), "PYTHONHASHSEED": "7"}, timeout=120,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == ours


async def test_output_receipt_and_recipe_chunk(src):
    ctx, events = make_ctx(src)
    ops = CHAINS["spec_example"]
    r = await call("nika:image_fx", {"input": "in.png", "out": "out/styled.png", "ops": ops, "seed": 42}, ctx)
    data = (src / "out" / "styled.png").read_bytes()
    assert r["sha256"] == hashlib.sha256(data).hexdigest() and r["size_bytes"] == len(data)
    assert (r["width"], r["height"], r["format"], r["seed"], r["skipped_existing"]) == (20, 15, "png", 42, False)
    assert r["input_sha256"] == hashlib.sha256(source_png()).hexdigest()
    assert r["ops_applied"][0] == {"resize": {"width": 20, "filter": "auto"}}
    from PIL import Image

    with Image.open(src / "out" / "styled.png") as im:
        assert im.size == (20, 15)
        recipe = json.loads(im.text["nika"])
    assert recipe["contract"] == "image_fx/v1" and recipe["seed"] == 42 and recipe["input_sha256"] == r["input_sha256"]
    assert recipe["ops"] == r["ops_applied"] and b"tIME" not in data
    assert [e["sha256"] for e in events if e["type"] == "artifact"] == [r["sha256"]]
    again = await call("nika:image_fx", {"input": "in.png", "out": "out/styled.png", "ops": ops, "seed": 42}, ctx)
    assert again["skipped_existing"] is True and again["sha256"] == r["sha256"]


async def test_the_seed_is_the_style(src):
    ctx, _ = make_ctx(src)
    args = {"input": "in.png", "ops": CHAINS["grain"]}
    a = await call("nika:image_fx", {**args, "out": "a.png", "seed": 1}, ctx)
    b = await call("nika:image_fx", {**args, "out": "b.png", "seed": 2}, ctx)
    c = await call("nika:image_fx", {**args, "out": "c.png", "seed": 1}, ctx)
    assert a["sha256"] == c["sha256"] != b["sha256"]


@pytest.mark.parametrize("emit, ext", [("text", "txt"), ("ansi", "ans")])
async def test_ascii_text_emits(src, emit, ext):
    ctx, _ = make_ctx(src)
    r = await call(
        "nika:image_fx", {"input": "in.png", "out": f"a.{ext}", "ops": [{"ascii": {"cols": 10, "emit": emit}}]}, ctx
    )
    text = (src / f"a.{ext}").read_text()
    assert (r["width"], r["height"], r["format"]) == (0, 0, ext)
    assert len(text.splitlines()) == 3 and (("\x1b[38;2;" in text) is (emit == "ansi"))


def _ihdr(width: int, height: int, depth: int = 8, colour: int = 2, interlace: int = 0) -> bytes:
    body = b"IHDR" + struct.pack(">IIBBBBB", width, height, depth, colour, 0, 0, interlace)
    return png.SIGNATURE + struct.pack(">I", 13) + body + struct.pack(">I", zlib.crc32(body))


@pytest.mark.parametrize(
    "data, code",
    [
        (b"GIF89a not a png", "003"),
        (_ihdr(4, 4, depth=16), "003"),
        (_ihdr(4, 4, interlace=1), "003"),
        (_ihdr(4, 4, colour=3), "003"),
        (_ihdr(16384, 16384), "005"),  # 2^28 pixels: refused from the header, nothing inflated
        (_ihdr(20000, 2), "005"),
        (source_png()[:200], "004"),  # truncated
        (source_png()[:30] + b"\x00" + source_png()[31:], "004"),  # header CRC broken
    ],
)
async def test_bad_inputs_get_their_codes_and_leave_nothing(tmp_path, data, code):
    (tmp_path / "in.png").write_bytes(data)
    ctx, _ = make_ctx(tmp_path)
    e = await fails("nika:image_fx", {"input": "in.png", "out": "o.png", "ops": [{"grayscale": None}]}, ctx)
    assert e.code == f"NIKA-BUILTIN-IMAGE_FX-{code}", e.message
    assert not (tmp_path / "o.png").exists()


async def test_a_corrupt_pixel_stream_is_004(tmp_path):
    data = bytearray(source_png())
    at = data.index(b"IDAT") + 200
    data[at] ^= 0xFF  # the IDAT CRC no longer matches
    (tmp_path / "in.png").write_bytes(bytes(data))
    ctx, _ = make_ctx(tmp_path)
    e = await fails("nika:image_fx", {"input": "in.png", "out": "o.png", "ops": [{"grayscale": None}]}, ctx)
    assert e.code == "NIKA-BUILTIN-IMAGE_FX-004"


@pytest.mark.parametrize(
    "out, ops, words",
    [
        ("o.txt", [{"grayscale": None}], "must end in `.png`"),
        ("o.png", [{"ascii": {"emit": "text"}}], "must end in `.txt`"),
        ("o.png", [{"crop": {"x": 35, "y": 0, "width": 10, "height": 5}}], "does not fit"),
        ("o.png", [{"glitch": {}}], "at least one above 0"),
        ("o.png", [{"duotone": {"dark": "#000000"}}], "both"),
        ("o.png", [{"duotone": {"dark": "#00000", "light": "#ffffff"}}], "not a colour"),
    ],
)
async def test_argument_refusals_are_001(src, out, ops, words):
    ctx, _ = make_ctx(src)
    e = await fails("nika:image_fx", {"input": "in.png", "out": out, "ops": ops}, ctx)
    assert e.code == "NIKA-BUILTIN-IMAGE_FX-001" and words in e.message, e.message


def test_the_blue_noise_tile_is_a_permutation_of_ranks():
    """Void-and-cluster ranks every cell of the 32x32 tile exactly once, and a 25% threshold
    leaves no two lit cells side by side more often than a white-noise pattern would."""
    from runtime.media.fx_dither import blue_noise

    tile = blue_noise()
    assert sorted(tile.ravel().tolist()) == list(range(1024))
    lit = tile < 256
    touching = (lit & np.roll(lit, 1, axis=0)).sum() + (lit & np.roll(lit, 1, axis=1)).sum()
    assert touching < 0.25 * 0.25 * 2 * 1024 / 2  # well under half of white noise's expectation


async def test_paths_outside_the_grants_are_refused_before_io(tmp_path):
    inside = tmp_path / "in"
    inside.mkdir()
    (tmp_path / "src.png").write_bytes(source_png())
    (inside / "ok.png").write_bytes(source_png())
    ctx, _ = make_ctx(inside)
    e = await fails("nika:image_fx", {"input": "../src.png", "out": "o.png", "ops": [{"grayscale": None}]}, ctx)
    assert e.code == "NIKA-SEC-004" and not (inside / "o.png").exists()
    e = await fails("nika:image_fx", {"input": "ok.png", "out": "../o.png", "ops": [{"grayscale": None}]}, ctx)
    assert e.code == "NIKA-SEC-004" and not (tmp_path / "o.png").exists()


async def test_an_op_that_would_pass_the_pixel_budget_is_005(src):
    ctx, _ = make_ctx(src)
    e = await fails(
        "nika:image_fx",
        {"input": "in.png", "out": "o.png", "ops": [{"resize": {"width": 16384, "height": 16384}}]},
        ctx,
    )
    assert e.code == "NIKA-BUILTIN-IMAGE_FX-005" and not (src / "o.png").exists()


async def test_error_diffusion_past_its_pixel_limit_says_resize_first(src, monkeypatch):
    from runtime.media import fx_dither

    monkeypatch.setattr(fx_dither, "DIFFUSION_PIXELS", 100)
    ctx, _ = make_ctx(src)
    e = await fails("nika:image_fx", {"input": "in.png", "out": "o.png", "ops": [{"dither": None}]}, ctx)
    assert e.code == "NIKA-BUILTIN-IMAGE_FX-001" and "`resize` first" in e.message
