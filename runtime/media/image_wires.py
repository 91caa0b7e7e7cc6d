"""The image providers of ``nika:image_generate``: ``mock`` (a deterministic PNG, offline), and the
wires ``local``/``openai``/``xai`` (OpenAI Images ``/v1/images/generations``, ``b64_json``) and
``gemini`` (``generateContent`` with an IMAGE response modality). Endpoints are engine constants
(or engine config: ``NIKA_IMAGE_LOCAL_URL``, ``NIKA_<ID>_IMAGE_URL``), never workflow data; keys
come from the engine environment. A provider without a key is ``-002`` naming the variable.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from runtime.errors import TaskError, not_built, unbuilt_what
from runtime.media import image_fold as fold
from runtime.media.image_common import PLANE, USAGE_AXES, Render, b64, clamp
from runtime.media.media_http import Target, json_body, post

DEFAULT_MODELS = {
    "local": "stablediffusion",
    "openai": "gpt-image-2",
    "gemini": "gemini-3.1-flash-image",
    "xai": "grok-imagine-image",
    "mock": "mock-image-1",
}
INFER = (("gpt-image", "openai"), ("gemini-", "gemini"), ("grok", "xai"), ("mock", "mock"))
ENDPOINTS = {
    "openai": "https://api.openai.com/v1/images/generations",
    "xai": "https://api.x.ai/v1/images/generations",
    "gemini": "https://generativelanguage.googleapis.com/v1beta/models/{model}:generateContent",
}
LOCAL_DEFAULT = "http://localhost:8080"
MOCK_SIZES = {"1:1": (64, 64), "16:9": (96, 54), "9:16": (54, 96), "4:3": (64, 48), "3:4": (48, 64),
              "3:2": (72, 48), "2:3": (48, 72), "21:9": (105, 45)}  # fmt: skip
OPENAI_SIZES = {"1:1": "1024x1024", "3:2": "1536x1024", "2:3": "1024x1536"}


@dataclass(frozen=True)
class Source:
    """A source image (or mask) for ``mode: edit``, already read through ``permits.fs.read``."""

    name: str
    data: bytes
    mime: str


def provider_of(args: dict[str, Any]) -> str:
    if args.get("provider"):
        return args["provider"]
    model = str(args.get("model") or "")
    for prefix, pid in INFER:
        if model.lower().startswith(prefix):
            return pid
    raise TaskError(
        f"{PLANE}-001",
        f"cannot tell the provider from `model: {model}`; name it with `provider:` (`local` is never inferred)",
    )


def mock_png(prompt: str, seed: int, index: int, size: tuple[int, int], model: str) -> bytes:
    """A real PNG whose pixels are a function of (prompt, seed, index) alone: red runs along each
    row, green down the rows, blue fixed (no numpy: the mock runs on the base install)."""
    from runtime.media import png

    w, h = size
    d = hashlib.sha256(f"{prompt}\x00{seed}\x00{index}".encode()).digest()
    row = bytearray(w * 4)
    row[0::4] = bytes((d[0] + x * 255 // max(1, w - 1)) % 256 for x in range(w))
    row[2::4] = bytes([d[2]]) * w
    row[3::4] = b"\xff" * w
    rows = bytearray()
    for y in range(h):
        row[1::4] = bytes([(d[1] + y * 255 // max(1, h - 1)) % 256]) * w
        rows += row
    return png.encode_rows(bytes(rows), w, h, 4, f'{{"provider":"mock","model":"{model}","seed":{seed}}}')


def _mock(args: dict[str, Any], model: str, n: int, warnings: list[str]) -> Render:
    size = MOCK_SIZES[args.get("aspect_ratio") or "1:1"]
    if args.get("size") and args["size"] != "auto":
        w, h = (int(v) for v in args["size"].split("x"))
        if 1 <= w <= 1024 and 1 <= h <= 1024:
            size = (w, h)
        else:
            warnings.append(f"size_conflict: the mock renders at most 1024x1024, not {args['size']}")
    seed = args.get("seed") or 0
    return Render([(mock_png(args["prompt"], seed, i, size, model), None) for i in range(n)], "mock", warnings=warnings)


def _key(pid: str, env: dict[str, str]) -> str:
    from runtime.providers.registry import endpoint_for

    ep = endpoint_for(pid, env)
    if not ep.key:
        names = " or ".join(f"`{v}`" for v in dict.fromkeys([f"NIKA_{pid.upper()}_API_KEY", *ep.key_vars]))
        raise TaskError(
            f"{PLANE}-002",
            f"`{pid}` image generation needs an API key: export {names} in the engine's environment",
            details={"provider": pid},
        )
    return ep.key


async def render(
    pid: str,
    model: str,
    args: dict[str, Any],
    env: dict[str, str],
    http: Any,
    remember: Any,
    timeout_s: float,
    sources: Sequence[Source] = (),
    mask: Source | None = None,
) -> Render:
    """Ask ``pid`` for the images; with ``sources`` it is an edit of those images."""
    n, warnings = args.get("n") or 1, []
    fold.common(pid, args, warnings)
    if args.get("size") and args.get("size") != "auto" and args.get("aspect_ratio"):
        warnings.append(f"size_conflict: `size: {args['size']}` wins over `aspect_ratio: {args['aspect_ratio']}`")
    if sources and pid == "xai":
        raise not_built("image-edit-xai", f"this build of nika does not implement {unbuilt_what('image-edit-xai')} yet")
    if pid == "mock":
        if sources:  # an edit of the mock is a function of the instruction and the sources' bytes
            digest = hashlib.sha256(b"".join(hashlib.sha256(s.data).digest() for s in sources)).hexdigest()
            args = {**args, "prompt": f"{args['prompt']}\x00{digest}"}
        fold.options("mock", args, warnings)
        return _mock(args, model, n, warnings)
    if pid == "local":
        url = env.get("NIKA_IMAGE_LOCAL_URL", LOCAL_DEFAULT).rstrip("/") + "/v1/images/generations"
        key = env.get("NIKA_IMAGE_LOCAL_API_KEY") or None
    else:
        url = env.get(f"NIKA_{pid.upper()}_IMAGE_URL") or ENDPOINTS[pid]
        key = _key(pid, env)
    if key:
        remember(key)
    target = Target(PLANE, pid, timeout_s, key)
    import httpx

    host = httpx.URL(url).host or pid
    if pid == "gemini":
        from runtime.media.image_gemini import gemini

        url = url.replace("{model}", model)
        return await gemini(http, url, target, key, model, args, n, warnings, host, list(sources))
    files = None
    if sources:  # the edits endpoint sits beside the generations one, multipart
        url = url[: -len("generations")] + "edits" if url.endswith("generations") else url
        files = [("image[]", (s.name, s.data, s.mime)) for s in sources]
        files += [("mask", (mask.name, mask.data, mask.mime))] if mask is not None else []
    return await _openai_like(http, url, target, key, pid, model, args, n, warnings, host, files)


def _openai_body(pid: str, model: str, args: dict[str, Any], n: int, warnings: list[str]) -> dict[str, Any]:
    body: dict[str, Any] = {"model": model, "prompt": args["prompt"], "n": n}
    if not (pid == "openai" and model.startswith("gpt-image")):
        body["response_format"] = "b64_json"  # a result URL is never fetched
    size, aspect = args.get("size"), args.get("aspect_ratio")
    if pid == "xai":
        if size or aspect:
            warnings.append("xai_size_class: xai renders its own size class; `size`/`aspect_ratio` are not sent")
    elif size:
        body["size"] = size
    elif aspect:
        body["size"] = OPENAI_SIZES.get(aspect) or ("1536x1024" if aspect in ("16:9", "4:3", "21:9") else "1024x1536")
        if aspect not in OPENAI_SIZES:
            warnings.append(f"aspect_remapped: `{aspect}` is rendered as {body['size']}")
    quality = args.get("quality")
    if quality and pid == "openai":
        body["quality"] = "high" if quality == "ultra" else quality
        if quality == "ultra":
            warnings.append("quality_folded: `ultra` is rendered as `high`")
    if pid == "openai":
        if args.get("format", "png") != "png":
            body["output_format"] = args["format"]
        if args.get("compression") is not None and args.get("format", "png") != "png":
            body["output_compression"] = args["compression"]
        if args.get("background"):
            body["background"] = args["background"]
    if args.get("seed") is not None:
        warnings.append(f"seed_unsupported: `{pid}` takes no seed; it was not sent")
    return body | fold.options(pid, args, warnings)


async def _openai_like(http, url, target, key, pid, model, args, n, warnings, host, files=None) -> Render:
    headers = {"Authorization": f"Bearer {key}"} if key else {}
    body = _openai_body(pid, model, args, n, warnings)
    if files is not None:
        body = {k: str(v) for k, v in body.items()}
    data, _ = await post(http, url, target, headers=headers, body=body, files=files)
    reply = json_body(data, target)
    items = reply.get("data") if isinstance(reply, dict) else None
    if not isinstance(items, list) or not items:
        raise TaskError(f"{PLANE}-004", f"`{pid}` answered without any image")
    payloads = []
    for item in items:
        if not isinstance(item, dict) or not isinstance(item.get("b64_json"), str):
            if isinstance(item, dict) and item.get("url"):
                raise TaskError(
                    f"{PLANE}-004",
                    f"`{pid}` answered with a result URL only; result URLs are never fetched"
                    " (the server must honour `response_format: b64_json`)",
                )
            raise TaskError(f"{PLANE}-004", f"`{pid}` answered an item without image data")
        payloads.append((b64(item["b64_json"], pid), clamp(item.get("revised_prompt"), "revised_prompt", warnings)))
    if len(payloads) < n:
        warnings.append(f"count_shortfall: asked for {n} images, got {len(payloads)}")
    usage = reply.get("usage") if isinstance(reply.get("usage"), dict) else {}
    out = Render(payloads, host, warnings=warnings, raw=fold.stripped(reply))
    out.usage = {a: usage.get(a) if type(usage.get(a)) is int else None for a in USAGE_AXES}
    ticks = usage.get("cost_in_usd_ticks", reply.get("cost_in_usd_ticks"))
    if pid == "xai" and type(ticks) is int:
        out.cost_usd = ticks / 10**10  # 1 cent = 10^8 ticks
    return out
