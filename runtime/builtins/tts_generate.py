"""``nika:tts_generate``: text → one audio file through a provider (:mod:`runtime.media.tts_wires`).

The image family's contract applied to audio: the payload is sniffed (WAV ``RIFF…WAVE`` or MP3;
anything else is ``-007``, nothing is ``-004``), its extension follows the bytes, the file is named
``{stem}-{provider}-{model}-{sha8}.{ext}``, judged by ``permits.fs.write`` on its final path and
written atomically, and a provenance manifest lands beside it. Audio bytes never ride the output,
the events or the trace. WAV duration is header arithmetic; MP3 duration is ``null``.
"""

from __future__ import annotations

from typing import Any

from runtime.builtins import BuiltinContext, builtin
from runtime.builtins._artifacts import emit_artifact, sha256_hex
from runtime.builtins._support import clock
from runtime.errors import TaskError

TTS_GENERATE = "nika:tts_generate"
PLANE = "NIKA-BUILTIN-TTS_GENERATE"


@builtin(TTS_GENERATE)
async def tts_generate(args: dict[str, Any], ctx: BuiltinContext) -> dict[str, Any]:
    from runtime.builtins import _assets as assets
    from runtime.media import sniff, tts_wires

    pid = tts_wires.provider_of(args)
    model = args.get("model") or tts_wires.DEFAULT_MODELS[pid]
    voice = args.get("voice") or tts_wires.DEFAULT_VOICES[pid]
    out_dir = args["output_dir"]
    ctx.resolve_write(out_dir)  # the boundary before any provider call
    services = ctx.extra.get("services")
    if services is None and pid != "mock":
        raise TaskError(
            f"{PLANE}-002", f"`{pid}` is unavailable here: the speech plane has no provider transport in this context"
        )
    timeout_s = (args.get("timeout_ms") or (300_000 if pid == "local" else 120_000)) / 1000
    env = services.env if services is not None else {}
    http = services.http() if services is not None and pid != "mock" else None
    remember = services.remember_secret if services is not None else (lambda _k: None)
    data, host, warnings = await tts_wires.speak(pid, model, voice, args, env, http, remember, timeout_s)
    if not data:
        raise TaskError(f"{PLANE}-004", f"`{pid}` returned no audio")
    try:
        fmt, mime, duration = sniff.audio(data)
    except sniff.NotMedia as e:
        raise TaskError(f"{PLANE}-007", f"`{pid}`: {e}") from None
    want = args.get("format") or "auto"
    if want != "auto" and want != fmt:
        warnings.append(f"format_mismatch: asked for {want}, the provider sent {fmt}")
    sha = sha256_hex(data)
    stem = assets.stem(args, "speech")
    name = f"{stem}-{pid}-{assets.slug(model)}-{sha[:8]}.{fmt}"
    shown, filename, wrote = assets.place(out_dir, name, data, ctx.resolve_write, f"{PLANE}-006")
    emit_artifact(ctx, TTS_GENERATE, shown, data, wrote)
    output: dict[str, Any] = {
        "provider": pid,
        "model": model,
        "voice": voice,
        "created_at": clock(ctx).now().isoformat(),
        "endpoint_host": host,
        "audio": {
            "path": shown,
            "filename": filename,
            "format": fmt,
            "mime_type": mime,
            "size_bytes": len(data),
            "sha256": sha,
            "duration_ms": duration,
        },
        "cost_usd": None,
        "warnings": warnings,
        "manifest_path": None,
        "output_dir": out_dir,
        "metadata": args.get("metadata") or {},
    }
    if args.get("manifest", True):
        manifest = {"manifest_version": 1, "request": {**args, "provider": pid, "model": model, "voice": voice}}
        manifest |= {k: v for k, v in output.items() if k != "manifest_path"}
        name = f"{stem}-{pid}-{assets.slug(model)}-{sha[:8]}.manifest.json"
        output["manifest_path"] = assets.write_manifest(out_dir, name, manifest, ctx.resolve_write, f"{PLANE}-006")
    return output
