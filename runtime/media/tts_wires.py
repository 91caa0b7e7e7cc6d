"""The speech providers of ``nika:tts_generate``: ``mock`` (a real deterministic WAV, offline),
``local``/``openai`` (OpenAI ``POST /v1/audio/speech`` → raw bytes) and ``elevenlabs``
(``POST /v1/text-to-speech/{voice_id}``). Endpoints are engine constants or engine config
(``NIKA_TTS_LOCAL_URL``, ``NIKA_<ID>_TTS_URL``); keys come from the engine environment only."""

from __future__ import annotations

import re
import struct
from typing import Any

from runtime.errors import TaskError
from runtime.media.media_http import Target, post

PLANE = "NIKA-BUILTIN-TTS_GENERATE"
DEFAULT_MODELS = {
    "local": "tts-1",
    "openai": "gpt-4o-mini-tts",
    "elevenlabs": "eleven_multilingual_v2",
    "mock": "mock-tts-1",
}
DEFAULT_VOICES = {"local": "alloy", "openai": "alloy", "elevenlabs": "21m00Tcm4TlvDq8ikWAM", "mock": "sine"}
INFER = (("eleven", "elevenlabs"), ("gpt-", "openai"), ("tts-", "openai"), ("mock", "mock"))
ENDPOINTS = {
    "openai": "https://api.openai.com/v1/audio/speech",
    "elevenlabs": "https://api.elevenlabs.io/v1/text-to-speech/{voice}",
}
KEYS = {
    "openai": ("NIKA_OPENAI_API_KEY", "OPENAI_API_KEY"),
    "elevenlabs": ("NIKA_ELEVENLABS_API_KEY", "ELEVENLABS_API_KEY"),
}
VOICE_ID = re.compile(r"[A-Za-z0-9]{1,64}")
RATE = 16_000


def provider_of(args: dict[str, Any]) -> str:
    if args.get("provider"):
        return args["provider"]
    model = str(args.get("model") or "").lower()
    for prefix, pid in INFER:
        if model.startswith(prefix):
            return pid
    raise TaskError(
        f"{PLANE}-001",
        f"cannot tell the provider from `model: {model}`; name it with `provider:` (`local` is never inferred)",
    )


def mock_wav(text: str, voice: str) -> bytes:
    """16 kHz mono 16-bit PCM: a tone whose pitch follows the voice name and whose length follows
    the text, made by an integer rotation (no trigonometry), so the bytes never vary."""
    freq = 220 + sum(voice.encode()) % 440
    samples = RATE * min(30_000, 200 + 50 * len(text)) // 1000
    k = 2 * 355 * freq * 65536 // (113 * RATE)  # 2πf/rate in 16.16 fixed point (π ≈ 355/113)
    x, y, out = 12000 << 8, 0, bytearray()
    for _ in range(samples):
        x -= (y * k) >> 16
        y += (x * k) >> 16
        out += struct.pack("<h", max(-32768, min(32767, y >> 8)))
    fmt = struct.pack("<HHIIHH", 1, 1, RATE, RATE * 2, 2, 16)
    body = b"WAVE" + b"fmt " + struct.pack("<I", len(fmt)) + fmt + b"data" + struct.pack("<I", len(out)) + bytes(out)
    return b"RIFF" + struct.pack("<I", len(body)) + body


def _key(pid: str, env: dict[str, str]) -> str:
    key = next((env[v] for v in KEYS[pid] if env.get(v)), None)
    if not key:
        names = " or ".join(f"`{v}`" for v in KEYS[pid])
        raise TaskError(
            f"{PLANE}-002",
            f"`{pid}` speech needs an API key: export {names} in the engine's environment",
            details={"provider": pid},
        )
    return key


async def speak(
    pid: str,
    model: str,
    voice: str,
    args: dict[str, Any],
    env: dict[str, str],
    http: Any,
    remember: Any,
    timeout_s: float,
) -> tuple[bytes, str, list[str]]:
    """(payload, endpoint host, warnings)."""
    warnings: list[str] = []
    want, speed = args.get("format") or "auto", args.get("speed")
    if pid == "mock":
        if speed is not None:
            warnings.append("speed_unsupported: the mock voice has no speed knob; it was not applied")
        return mock_wav(args["text"], voice), "mock", warnings
    import httpx

    if pid == "elevenlabs":
        if not VOICE_ID.fullmatch(voice):
            raise TaskError(f"{PLANE}-001", "an ElevenLabs `voice:` is a voice id of letters and digits")
        key = _key(pid, env)
        remember(key)
        url = (env.get("NIKA_ELEVENLABS_TTS_URL") or ENDPOINTS[pid]).replace("{voice}", voice)
        if speed is not None:
            warnings.append("speed_unsupported: the ElevenLabs wire has no speed knob; it was not sent")
        if want == "wav":
            warnings.append("format_mismatch: ElevenLabs is asked for mp3; wav is not on this wire")
        body = {"text": args["text"], "model_id": model}
        data, _ = await post(
            http,
            url,
            Target(PLANE, pid, timeout_s, key),
            headers={"xi-api-key": key},
            body=body,
            params={"output_format": "mp3_44100_128"},
        )
        return data, httpx.URL(url).host or pid, warnings
    if pid == "local":
        url = env.get("NIKA_TTS_LOCAL_URL", "http://localhost:8080").rstrip("/") + "/v1/audio/speech"
        key = env.get("NIKA_TTS_LOCAL_API_KEY") or None
    else:
        url = env.get("NIKA_OPENAI_TTS_URL") or ENDPOINTS["openai"]
        key = _key(pid, env)
    if key:
        remember(key)
    body: dict[str, Any] = {"model": model, "input": args["text"], "voice": voice}
    if want != "auto":
        body["response_format"] = want
    if speed is not None:
        body["speed"] = speed
    headers = {"Authorization": f"Bearer {key}"} if key else {}
    data, _ = await post(http, url, Target(PLANE, pid, timeout_s, key), headers=headers, body=body)
    return data, httpx.URL(url).host or pid, warnings
