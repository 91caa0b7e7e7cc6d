"""What the image wires share: the error plane, a provider's render, and the reply helpers
(``image_wires`` for the OpenAI-style wires and the dispatch, ``image_gemini`` for Gemini)."""

from __future__ import annotations

import base64
import binascii
from dataclasses import dataclass, field
from typing import Any

from runtime.errors import TaskError

PLANE = "NIKA-BUILTIN-IMAGE_GENERATE"
POLICY_FINISH = {"SAFETY", "PROHIBITED_CONTENT", "IMAGE_SAFETY", "BLOCKLIST", "SPII", "IMAGE_PROHIBITED_CONTENT"}
TEXT_CAP = 2000
USAGE_AXES = ("input_tokens", "output_tokens", "total_tokens", "thoughts_tokens")


@dataclass
class Render:
    payloads: list[tuple[bytes, str | None]]
    endpoint_host: str
    provider_text: str | None = None
    usage: dict[str, int | None] = field(default_factory=lambda: dict.fromkeys(USAGE_AXES))
    cost_usd: float | None = None
    warnings: list[str] = field(default_factory=list)
    raw: Any = None  # the provider's reply with every long string (base64 payloads) stripped, for `debug:`


def clamp(text: Any, what: str, warnings: list[str]) -> str | None:
    if not isinstance(text, str) or not text:
        return None
    if len(text) > TEXT_CAP:
        warnings.append(f"{what}_clamped: {len(text)} characters cut to {TEXT_CAP}")
        return text[:TEXT_CAP]
    return text


def b64(text: str, pid: str) -> bytes:
    try:
        return base64.b64decode(text, validate=True)
    except (binascii.Error, ValueError):
        raise TaskError(f"{PLANE}-004", f"`{pid}` sent image data that is not base64") from None
