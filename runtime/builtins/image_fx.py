"""``nika:image_fx``: an ordered chain of deterministic pixel effects on a PNG (stdlib §Media).

Pure transform: no provider, no network, no clock. ``out:`` is judged by ``permits.fs.write`` and
``input:`` by ``permits.fs.read`` before either is touched; the PNG header is judged before any
decompression (-003 unsupported, -005 over the pixel budget), the pixels are decoded by Pillow
(-004 when corrupt) and transformed with numpy in integer arithmetic (:mod:`runtime.media.fx_ops`),
and the result is written by our own PNG writer with the recipe (``image_fx/v1``, input sha256,
seed, ops with their defaults) in a ``nika`` tEXt chunk. The same ``(input bytes, args)`` give the
same bytes; identical bytes already at ``out:`` are not rewritten (``skipped_existing``).
Measured: the goldens of tests/runtime/test_image_fx.py are equal under CPython 3.11.7 with numpy
2.4 / Pillow 13, 3.12.1 with numpy 1.26 / Pillow 10.4, and 3.13.0 with numpy 2.2.
"""

from __future__ import annotations

import asyncio
import functools
import json
from typing import Any

from checker.contracts import tables as contracts
from runtime.builtins import BuiltinContext, builtin
from runtime.builtins._artifacts import emit_artifact, judge_write, read_input, save, sha256_hex
from runtime.errors import TaskError

IMAGE_FX = "nika:image_fx"
CONTRACT_TAG = "image_fx/v1"
MAX_INPUT = 256 * 1024 * 1024
PNG_KINDS = {"format": "003", "decode": "004", "budget": "005"}


def _code(n: str) -> str:
    return f"NIKA-BUILTIN-IMAGE_FX-{n}"


@functools.cache
def _defaults() -> dict[str, dict[str, Any]]:
    """Each op's parameter defaults, read from the shared contract (the defaults are the wire)."""
    contract = contracts.contract(IMAGE_FX)
    assert contract is not None and contract.arg("ops") is not None
    items = contract.arg("ops").items
    assert items is not None
    return {op.name: {f.name: f.default for f in op.fields if f.has_default} for op in items.fields}


def _normalise(ops: list[Any]) -> list[tuple[str, dict[str, Any]]]:
    known = _defaults()
    out = []
    for i, op in enumerate(ops):
        if not isinstance(op, dict) or len(op) != 1:
            raise TaskError(_code("001"), f"`ops[{i}]` is a one-key map such as `grain: {{intensity: 32}}`")
        ((name, params),) = op.items()
        if name not in known:
            raise TaskError(_code("001"), f"`ops[{i}]`: `{name}` is not an image_fx op ({', '.join(known)})")
        if params is not None and not isinstance(params, dict):
            raise TaskError(_code("001"), f"`ops[{i}].{name}` takes a map of parameters")
        if name == "ascii" and i != len(ops) - 1:
            raise TaskError(_code("001"), "`ascii` must be the last op: it turns the image into text")
        out.append((name, {**known[name], **(params or {})}))
    return out


def _extension(ops: list[tuple[str, dict[str, Any]]]) -> str:
    if ops and ops[-1][0] == "ascii":
        return {"png": ".png", "text": ".txt", "ansi": ".ans"}[ops[-1][1]["emit"]]
    return ".png"


@builtin(IMAGE_FX)
async def image_fx(args: dict[str, Any], ctx: BuiltinContext) -> dict[str, Any]:
    from runtime.media import png
    from runtime.media.fx_ops import FxBudget, FxError

    src, out, seed = args["input"], args["out"], args.get("seed") or 0
    ops = _normalise(args["ops"])
    ext = _extension(ops)
    if not out.lower().endswith(ext):
        raise TaskError(_code("001"), f"`out:` must end in `{ext}` for this pipeline, not {out!r}")
    target = judge_write(ctx, out)
    data = read_input(ctx, src, _code("002"), limit=MAX_INPUT)
    input_sha = sha256_hex(data)
    recipe = {"contract": CONTRACT_TAG, "input_sha256": input_sha, "seed": seed, "ops": [{n: p} for n, p in ops]}
    try:
        # off the event loop: a big image takes seconds of numpy, and the run's deadlines must still fire
        artifact, width, height = await asyncio.to_thread(_decode_and_run, data, ops, seed, recipe)
    except png.PngError as e:
        raise TaskError(_code(PNG_KINDS[e.kind]), f"{src}: {e}", details={"path": src}) from None
    except FxError as e:
        raise TaskError(_code("001"), str(e)) from None
    except FxBudget as e:
        raise TaskError(_code("005"), str(e)) from None
    wrote = save(target, artifact, _code("006"), out)
    emit_artifact(ctx, IMAGE_FX, out, artifact, wrote)
    return {
        "input": src,
        "input_sha256": input_sha,
        "path": out,
        "sha256": sha256_hex(artifact),
        "size_bytes": len(artifact),
        "width": width,
        "height": height,
        "format": ext.lstrip("."),
        "ops_applied": recipe["ops"],
        "seed": seed,
        "skipped_existing": not wrote,
    }


def _decode_and_run(
    data: bytes, ops: list[tuple[str, dict[str, Any]]], seed: int, recipe: dict[str, Any]
) -> tuple[bytes, int, int]:
    from runtime.media import png

    pixels = png.decode(data).astype("int32")  # 4 bytes a channel: a 2^26-pixel input stays ~1 GiB
    return _run(pixels, ops, seed, recipe)


def _run(
    pixels: Any, ops: list[tuple[str, dict[str, Any]]], seed: int, recipe: dict[str, Any]
) -> tuple[bytes, int, int]:
    import numpy as np

    from runtime.media import fx_dither, fx_ops, png

    table = {name: getattr(fx_ops, name, None) or getattr(fx_dither, name) for name in _defaults() if name != "ascii"}
    for salt, (name, params) in enumerate(ops):
        if name == "ascii":
            image, text = fx_dither.ascii_art(pixels, params)
            if text is not None:
                return text, 0, 0
            pixels = image
            break
        pixels = table[name](pixels, params, seed=seed, salt=salt)
    text = json.dumps(recipe, sort_keys=True, separators=(",", ":"), ensure_ascii=True)
    h, w = pixels.shape[:2]
    return png.encode(np.clip(pixels, 0, 255).astype(np.uint8), text), w, h
