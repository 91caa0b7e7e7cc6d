"""``infer.vision`` and ``infer.thinking`` resolved for one call (02 §infer, stdlib/providers).

Images are loaded by the engine before the model call, under the run's authority: a ``file``
image is judged by ``permits.fs.read`` (the one judge, through :class:`runtime.guard.permits.Boundary`,
on the canonical path), a ``url`` image by ``permits.net.http`` and then fetched through the
SSRF floor (:mod:`runtime.net.client`: one DNS lookup, the judged address connected to, every
redirect hop re-judged). Only PNG, JPEG, GIF and WebP bytes are sent, recognised by their
signature, never by a name or a server's word. The provider receives the bytes inline.

``thinking:`` becomes a :class:`~runtime.providers.base.Thinking`; a provider whose adapter does
not send it (:data:`runtime.providers.registry.THINKING`) is refused before any effect, naming the
provider and the field, and a budget that leaves nothing of ``max_tokens`` for the answer too.
"""

from __future__ import annotations

import base64
from typing import TYPE_CHECKING, Any

from runtime.errors import TaskError, not_built
from runtime.guard import limits
from runtime.providers.base import Image, Thinking
from runtime.values import materialise

if TYPE_CHECKING:
    from checker.model.workflow import Infer
    from runtime.engine.context import VerbContext

MISFIT = "NIKA-VAR-006"
REFUSED = "NIKA-INFER-001"
SIGNATURES = (
    (b"\x89PNG\r\n\x1a\n", "image/png"),
    (b"\xff\xd8\xff", "image/jpeg"),
    (b"GIF87a", "image/gif"),
    (b"GIF89a", "image/gif"),
)


def media_type(data: bytes) -> str | None:
    """The image type the bytes' signature names (WebP: ``RIFF····WEBP``), or ``None``."""
    if data[:4] == b"RIFF" and data[8:12] == b"WEBP":
        return "image/webp"
    return next((kind for sig, kind in SIGNATURES if data.startswith(sig)), None)


def thinking_of(ctx: VerbContext, verb: Infer, provider: str, max_tokens: Any) -> Thinking | None:
    """The call's reasoning settings, or ``None`` when the task has no ``thinking:``."""
    from runtime.providers.registry import THINKING

    if verb.thinking is None:
        return None
    raw = materialise(verb.thinking, ctx.scope, "`thinking:`")
    if not isinstance(raw, dict):
        raise TaskError(MISFIT, f"`thinking:` must be a mapping `{{enabled, budget_tokens}}`, got {type(raw).__name__}")
    enabled, budget = raw.get("enabled", True), raw.get("budget_tokens")
    if not isinstance(enabled, bool):
        raise TaskError(MISFIT, "`thinking.enabled:` must be `true` or `false`")
    if budget is not None and (isinstance(budget, bool) or not isinstance(budget, int) or budget < 1):
        raise TaskError(MISFIT, f"`thinking.budget_tokens:` must be a positive integer, got {budget!r}")
    if provider not in THINKING:
        takers = ", ".join(f"`{p}`" for p in sorted(THINKING) if p != "mock")
        raise not_built(
            "thinking",
            f"`{provider}` does not take `infer.thinking:` in this build of nika (its adapter sends no reasoning "
            f"parameter; {takers} do): remove `thinking:` or pick one of those providers",
            provider=provider,
            field="thinking",
        )
    if enabled and budget is not None and isinstance(max_tokens, int) and budget >= max_tokens:
        raise TaskError(
            REFUSED,
            f"`thinking.budget_tokens: {budget}` leaves nothing of `max_tokens: {max_tokens}` for the answer "
            "(the reasoning is drawn from `max_tokens`): raise `max_tokens` above the budget",
            details={"provider": provider, "budget_tokens": budget, "max_tokens": max_tokens},
        )
    return Thinking(enabled, budget)


async def load_images(ctx: VerbContext, verb: Infer) -> tuple[Image, ...]:
    """Every ``vision:`` image, judged and read, in the order written."""
    if verb.vision is None:
        return ()
    items = materialise(verb.vision, ctx.scope, "`vision:`")
    if not isinstance(items, list):
        raise TaskError(MISFIT, f"`vision:` must be a list of images, got {type(items).__name__}")
    if len(items) > limits.MAX_IMAGES:
        raise TaskError(REFUSED, f"`vision:` lists {len(items)} images; a call takes at most {limits.MAX_IMAGES}")
    out = []
    for i, item in enumerate(items):
        where = f"`vision[{i}]`"
        if not isinstance(item, dict):
            raise TaskError(MISFIT, f"{where} must be a mapping `{{source, path|url}}`, got {type(item).__name__}")
        source = item.get("source") or ("url" if "url" in item else "file")
        key = "url" if source == "url" else "path"
        target = item.get(key)
        if source not in ("file", "url") or not isinstance(target, str) or not target:
            raise TaskError(MISFIT, f"{where} needs `source: file` with a `path:` or `source: url` with a `url:`")
        data = await (_read_file(ctx, target) if source == "file" else _fetch(ctx, target))
        kind = media_type(data)
        if kind is None:
            raise TaskError(
                REFUSED,
                f"{where} (`{target}`) is not a PNG, JPEG, GIF or WebP image; it was not sent",
                details={"source": source},
            )
        out.append(Image(kind, base64.b64encode(data).decode("ascii"), target))
    return tuple(out)


def _too_big(target: str) -> TaskError:
    cap = limits.MAX_IMAGE_BYTES // (1024 * 1024)
    return TaskError(REFUSED, f"the image `{target}` is larger than the {cap} MiB image cap; it was not sent")


async def _read_file(ctx: VerbContext, path: str) -> bytes:
    from checker.core.reader import FileReadError, read_file_async

    real = ctx.boundary.resolve(ctx.task_id, path, "read")  # permits.fs.read, on the canonical path

    try:  # the one bounded reader: a regular file, capped, off the event loop
        data = await read_file_async(str(real), limits.MAX_IMAGE_BYTES, truncate=True)
    except FileReadError as exc:
        raise TaskError(REFUSED, f"the image `{path}` cannot be read: {exc.reason}") from None
    except OSError as exc:
        raise TaskError(REFUSED, f"the image `{path}` cannot be read: {exc.strerror or exc}") from None
    if len(data) > limits.MAX_IMAGE_BYTES:
        raise _too_big(path)
    return data


async def _fetch(ctx: VerbContext, url: str) -> bytes:
    from runtime.net import client

    tid = ctx.task_id
    ctx.boundary.check_url(tid, url)  # permits.net.http (and the data-as-code sink)
    from runtime.net import egress

    extra = {
        "http": ctx.services.http(),
        "env": ctx.engine_env,
        "judge_url": lambda hop: ctx.boundary.check_url(tid, hop),
        "egress": egress.Carrier(
            "infer", tuple(ctx.services.held.values()), lambda hop: ctx.boundary.check_egress(tid, hop)
        ),
    }
    try:
        resp = await client.request(extra, "GET", url, {"accept": "image/*"}, {}, max_bytes=limits.MAX_IMAGE_BYTES)
    except TaskError as err:
        if err.code != client.CODE:
            raise  # the SSRF floor and the permits keep their own code
        if "limit_bytes" in err.details:
            raise _too_big(url) from None
        raise TaskError(REFUSED, f"the image `{url}`: {err.message}", err.transient, {"url": url}) from None
    if not 200 <= resp.status < 300:
        transient = resp.status >= 500 or resp.status in (408, 429)
        raise TaskError(
            REFUSED, f"the image `{url}` answered HTTP {resp.status}", transient, {"url": url, "status": resp.status}
        )
    return resp.body
