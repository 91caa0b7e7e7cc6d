"""The Gemini image wire: ``generateContent`` with an IMAGE response modality; source images of an
edit ride as inline parts; SAFETY-class finish reasons and prompt blocks are ``-005``."""

from __future__ import annotations

import base64
from typing import Any

from runtime.errors import TaskError
from runtime.media import image_fold as fold
from runtime.media.image_common import PLANE, POLICY_FINISH, Render, b64, clamp
from runtime.media.media_http import json_body, post


async def gemini(http, url, target, key, model, args, n, warnings, host, sources=()) -> Render:
    """One ``generateContent`` call per image (the API returns one image per candidate)."""
    config: dict[str, Any] = {"responseModalities": ["IMAGE", "TEXT"]}
    if args.get("aspect_ratio"):
        config["imageConfig"] = {"aspectRatio": args["aspect_ratio"]}
    if args.get("size"):
        warnings.append("gemini_size_class: gemini renders size classes; `size` is not sent")
    if args.get("seed") is not None:
        config["seed"] = args["seed"]
    opts = fold.options("gemini", args, warnings)
    if "thinking_level" in opts:
        config["thinkingConfig"] = {"thinkingLevel": opts["thinking_level"]}
    if "image_size" in opts:
        config.setdefault("imageConfig", {})["imageSize"] = opts["image_size"]
    parts: list[dict[str, Any]] = [
        {"inlineData": {"mimeType": s.mime, "data": base64.b64encode(s.data).decode()}} for s in sources
    ]
    parts.append({"text": args["prompt"]})
    body = {"contents": [{"role": "user", "parts": parts}], "generationConfig": config}
    payloads, texts, usage, reply = [], [], {}, None
    for _ in range(n):  # gemini returns one image per call: n is met by sequential calls
        data, _ = await post(http, url, target, headers={"x-goog-api-key": key or ""}, body=body)
        reply = json_body(data, target)
        cands = reply.get("candidates") if isinstance(reply, dict) else None
        if not isinstance(cands, list) or not cands:
            block = (reply.get("promptFeedback") or {}).get("blockReason") if isinstance(reply, dict) else None
            if block:
                raise TaskError(f"{PLANE}-005", f"gemini blocked the prompt: {block}", details={"finish_reason": block})
            raise TaskError(f"{PLANE}-004", "gemini answered without a candidate")
        finish = cands[0].get("finishReason")
        if finish in POLICY_FINISH:
            raise TaskError(
                f"{PLANE}-005", f"gemini stopped on content policy ({finish})", details={"finish_reason": finish}
            )
        for part in (cands[0].get("content") or {}).get("parts") or []:
            inline = part.get("inlineData") or part.get("inline_data") if isinstance(part, dict) else None
            if isinstance(inline, dict) and isinstance(inline.get("data"), str):
                payloads.append((b64(inline["data"], "gemini"), None))
            elif isinstance(part, dict) and isinstance(part.get("text"), str):
                texts.append(part["text"])
        usage = reply.get("usageMetadata") or {}
    if not payloads:
        raise TaskError(f"{PLANE}-004", "gemini answered without any image")
    if len(payloads) < n:
        warnings.append(f"count_shortfall: asked for {n} images, got {len(payloads)}")
    out = Render(payloads, host, clamp("\n".join(texts), "provider_text", warnings), warnings=warnings)
    out.raw = fold.stripped(reply)
    axes = {
        "input_tokens": "promptTokenCount",
        "output_tokens": "candidatesTokenCount",
        "total_tokens": "totalTokenCount",
        "thoughts_tokens": "thoughtsTokenCount",
    }
    out.usage = {a: usage.get(k) if type(usage.get(k)) is int else None for a, k in axes.items()}
    return out
