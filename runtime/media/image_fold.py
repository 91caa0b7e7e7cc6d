"""What each image provider honours of the optional arguments, and the warning (or refusal) for the
rest: silent degradation is non-conformant (stdlib §image_generate, warnings). ``stripped`` is the
sanitised echo ``debug:`` shows: every long string (a base64 payload, a flood of text) is cut out.
"""

from __future__ import annotations

from typing import Any

from runtime.errors import TaskError

PLANE = "NIKA-BUILTIN-IMAGE_GENERATE"
OPTIONS = {"openai": ("moderation", "user"), "gemini": ("thinking_level", "image_size"), "xai": ("user", "resolution")}
LONG = 200


def common(pid: str, args: dict[str, Any], warnings: list[str]) -> None:
    """Quality, compression and background outside the providers that take them."""
    if args.get("background") == "transparent" and pid not in ("openai", "mock"):
        raise TaskError(
            f"{PLANE}-001",
            f"`background: transparent` needs a provider that renders alpha (openai); `{pid}` does not",
        )
    if pid == "openai" or pid == "mock":
        if args.get("compression") is not None and (args.get("format") or "png") == "png":
            warnings.append("compression_ignored: `compression` applies to jpeg and webp, not png")
        return
    if args.get("quality"):
        warnings.append(f"quality_folded: `{pid}` has no quality knob; `quality: {args['quality']}` was not sent")
    if args.get("compression") is not None:
        warnings.append(f"compression_ignored: `{pid}` takes no compression level")
    if args.get("background") not in (None, "auto"):
        warnings.append(f"background_ignored: `{pid}` takes no background setting")


def options(pid: str, args: dict[str, Any], warnings: list[str]) -> dict[str, Any]:
    """The vetted ``provider_options`` for ``pid``; every other key is a warning, never sent."""
    allowed = OPTIONS.get(pid, ())
    out = {}
    for key, value in (args.get("provider_options") or {}).items():
        if key in allowed:
            out[key] = value
        else:
            warnings.append(f"provider_option_unknown: `{key}` is not passed to `{pid}`")
    return out


def stripped(value: Any) -> Any:
    if isinstance(value, str):
        return value if len(value) <= LONG else f"«{len(value)} characters stripped»"
    if isinstance(value, list):
        return [stripped(v) for v in value]
    if isinstance(value, dict):
        return {k: stripped(v) for k, v in value.items()}
    return value
