"""``nika:image_generate``: text → image through a provider, saved as files, never inline.

The provider wires are :mod:`runtime.media.image_wires`. Every payload is validated from its header
alone (:mod:`runtime.media.sniff`: the magic bytes decide the format; a non-image is ``-007``),
named by the normative grammar with its content hash, judged by ``permits.fs.write`` on its final
path and written atomically (:mod:`runtime.builtins._assets`); a provenance manifest lands beside the
images. Bytes never ride the output, the events or the trace: only paths, sizes and sha256.
PNG renders without content credentials carry the provenance core in a ``nika`` tEXt chunk;
a payload that carries C2PA credentials is left byte-for-byte as the provider signed it.
"""

from __future__ import annotations

import hashlib
import json
import struct
import zlib
from typing import Any

from runtime.builtins import BuiltinContext, builtin
from runtime.builtins._artifacts import emit_artifact, sha256_hex
from runtime.builtins._support import clock
from runtime.errors import TaskError

IMAGE_GENERATE = "nika:image_generate"
PLANE = "NIKA-BUILTIN-IMAGE_GENERATE"
PROMPT_IN_FILE = 500


def credentials(data: bytes, fmt: str) -> str | None:
    """A detection label (never "verified"): C2PA carriage seen in the payload."""
    marks = {"png": (b"caBX",), "jpeg": (b"jumb", b"c2pa"), "webp": (b"C2PA",)}.get(fmt, ())
    return "c2pa_detected" if any(m in data for m in marks) else None


def with_provenance(data: bytes, core: dict[str, Any]) -> bytes:
    """The PNG with a ``nika`` tEXt chunk right after IHDR (no timestamp: bytes stay a function of input)."""
    text = b"nika\x00" + json.dumps(core, sort_keys=True, separators=(",", ":"), ensure_ascii=True).encode("latin-1")
    chunk = struct.pack(">I", len(text)) + b"tEXt" + text + struct.pack(">I", zlib.crc32(b"tEXt" + text))
    return data[:33] + chunk + data[33:]


def _prepare(data: bytes, pid: str, model: str, args: dict[str, Any], warnings: list[str]) -> tuple:
    """(bytes to save, format, mime, width, height, credentials) of one payload, judged from its header."""
    from runtime.media import sniff

    if not data:
        raise TaskError(f"{PLANE}-004", f"`{pid}` returned an empty image payload")
    try:
        fmt, mime, width, height = sniff.image(data)
    except sniff.NotMedia as e:
        raise TaskError(f"{PLANE}-007", f"`{pid}`: {e}") from None
    if fmt != (args.get("format") or "png"):
        warnings.append(f"format_mismatch: asked for {args.get('format') or 'png'}, the provider sent {fmt}")
    creds = credentials(data, fmt)
    if fmt == "png" and creds is None:
        core = {"tool": IMAGE_GENERATE, "provider": pid, "model": model, "prompt": args["prompt"][:PROMPT_IN_FILE]}
        data = with_provenance(data, core | {"seed": args.get("seed")})
    return data, fmt, mime, width, height, creds


def _services(ctx: BuiltinContext, pid: str) -> Any:
    services = ctx.extra.get("services")
    if services is None and pid != "mock":
        raise TaskError(
            f"{PLANE}-002", f"`{pid}` is unavailable here: the image plane has no provider transport in this context"
        )
    return services


@builtin(IMAGE_GENERATE)
async def image_generate(args: dict[str, Any], ctx: BuiltinContext) -> dict[str, Any]:
    from runtime.builtins import _assets as assets
    from runtime.media import image_wires

    pid = image_wires.provider_of(args)
    model = args.get("model") or image_wires.DEFAULT_MODELS[pid]
    out_dir = args["output_dir"]
    ctx.resolve_write(out_dir)  # the boundary first: nothing is asked of a provider for a refused directory
    services = _services(ctx, pid)
    timeout_s = (args.get("timeout_ms") or (300_000 if pid == "local" else 180_000)) / 1000
    env = services.env if services is not None else {}
    http = services.http() if services is not None and pid != "mock" else None
    remember = services.remember_secret if services is not None else (lambda _k: None)
    sources, mask = _sources(args, ctx, pid) if (args.get("mode") or "generate") == "edit" else ([], None)
    result = await image_wires.render(pid, model, args, env, http, remember, timeout_s, sources, mask)
    stem, warnings, images = assets.stem(args, "image"), list(result.warnings), []
    mslug, seed = assets.slug(model), args.get("seed")
    ready = [_prepare(data, pid, model, args, warnings) for data, _ in result.payloads]  # all valid before any write
    for index, ((data, fmt, mime, width, height, creds), (_, revised)) in enumerate(
        zip(ready, result.payloads, strict=True)
    ):
        sha = sha256_hex(data)
        name = f"{stem}-{pid}-{mslug}-{index}-{sha[:8]}.{'jpg' if fmt == 'jpeg' else fmt}"
        shown, filename, wrote = assets.place(out_dir, name, data, ctx.resolve_write, f"{PLANE}-006")
        emit_artifact(ctx, IMAGE_GENERATE, shown, data, wrote)
        images.append(
            {
                "index": index, "path": shown, "filename": filename, "mime_type": mime, "format": fmt,
                "width": width, "height": height, "size_bytes": len(data), "sha256": sha, "provider": pid,
                "model": model, "seed": seed, "variant_id": f"{index}-{sha[:8]}", "warnings": [],
                "metadata": args.get("metadata") or {}, "content_credentials": creds, "revised_prompt": revised,
            }
        )  # fmt: skip
    output = {
        "provider": pid, "model": model, "mode": args.get("mode") or "generate", "prompt": args["prompt"],
        "revised_prompt": next((i["revised_prompt"] for i in images if i["revised_prompt"]), None),
        "provider_text": result.provider_text, "created_at": clock(ctx).now().isoformat(), "count": len(images),
        "images": images, "usage": result.usage, "cost_usd": result.cost_usd, "warnings": warnings,
        "manifest_path": None, "output_dir": out_dir, "endpoint_host": result.endpoint_host,
    }  # fmt: skip
    if args.get("debug"):
        output["debug"] = result.raw  # long strings (the base64 payloads) already cut out
    if args.get("manifest", True):
        batch = hashlib.sha256("".join(i["sha256"] for i in images).encode()).hexdigest()[:8]
        manifest = {
            "manifest_version": 1,
            "request": _echo(args, pid, model),
            **{k: v for k, v in output.items() if k != "manifest_path"},
        }
        name = f"{stem}-{pid}-{mslug}-{batch}.manifest.json"
        output["manifest_path"] = assets.write_manifest(out_dir, name, manifest, ctx.resolve_write, f"{PLANE}-006")
    return output


EDIT_CAPS = {"openai": 16, "local": 16, "gemini": 14, "xai": 3, "mock": 16}
MAX_SOURCE = 50 * 1024 * 1024


def _sources(args: dict[str, Any], ctx: BuiltinContext, pid: str) -> tuple[list[Any], Any]:
    """The edit's source images (and mask), each read through ``permits.fs.read`` and checked to be an image."""
    from runtime.builtins._artifacts import read_input
    from runtime.media import sniff
    from runtime.media.image_wires import Source

    paths = [args["image"]] if args.get("image") else list(args.get("images") or [])
    if not paths:
        raise TaskError(f"{PLANE}-001", "`mode: edit` needs the picture to edit in `image:` (or several in `images:`)")
    if len(paths) > EDIT_CAPS[pid]:
        raise TaskError(f"{PLANE}-001", f"`{pid}` edits at most {EDIT_CAPS[pid]} source images, not {len(paths)}")

    def load(path: str, what: str) -> Any:
        data = read_input(ctx, path, f"{PLANE}-001", limit=MAX_SOURCE)
        try:
            fmt, mime, _, _ = sniff.image(data)
        except sniff.NotMedia as e:
            raise TaskError(f"{PLANE}-001", f"the {what} {path} is not usable: {e}", details={"path": path}) from None
        return Source(f"{what}-{len(data)}.{'jpg' if fmt == 'jpeg' else fmt}", data, mime)

    sources = [load(p, "image") for p in paths]
    return sources, load(args["mask"], "mask") if args.get("mask") else None


def _echo(args: dict[str, Any], pid: str, model: str) -> dict[str, Any]:
    """The resolved request (no key ever reaches args: keys are engine configuration)."""
    return {k: v for k, v in args.items() if k != "debug"} | {"provider": pid, "model": model}
