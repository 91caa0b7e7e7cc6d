"""The POST of the media providers, with their error ladder (stdlib §image_generate/§tts_generate):
``-003`` request failed (transient for 5xx/408/429, timeouts and connection failures, with
``details.status_code``), ``-005`` a content-policy refusal (never transient). The reply is read
under one deadline and a size cap, through the one bounded decoder; a key is scrubbed from any body
quoted back. A declared secret in the request goes only where its ``egress:`` sanctions the tool
(the egress judge, :mod:`runtime.net.egress`)."""

from __future__ import annotations

import asyncio
import json
from dataclasses import dataclass
from typing import Any

from runtime.errors import TaskError

MAX_REPLY = 64 * 1024 * 1024
POLICY_WORDS = ("content_policy", "moderation", "safety", "policy_violation", "prohibited")


@dataclass(frozen=True)
class Target:
    """One provider call site: its code plane (``NIKA-BUILTIN-…``), provider id and deadline."""

    plane: str
    provider: str
    timeout_s: float
    secret: str | None = None


def _scrub(text: str, secret: str | None) -> str:
    text = text[:300]
    return text.replace(secret, "«redacted»") if secret else text


async def post(
    http: Any,
    url: str,
    t: Target,
    *,
    headers: dict[str, str],
    body: Any,
    params: dict | None = None,
    files: list[tuple[str, tuple[str, bytes, str]]] | None = None,
) -> tuple[bytes, str]:
    """(reply bytes, content type) of a 2xx reply; a typed failure otherwise. With ``files`` the
    request is multipart (``body`` becomes its form fields), else ``body`` is sent as JSON."""
    import httpx

    from runtime.net import egress
    from runtime.net.decode import BodyRefused, decoded

    payload: dict[str, Any] = {"data": body, "files": files} if files is not None else {"json": body}
    egress.judge_request(url, headers, json.dumps(body, ensure_ascii=False, default=str), "media")
    try:
        async with asyncio.timeout(t.timeout_s):
            async with http.stream(
                "POST", url, headers=headers, params=params, timeout=t.timeout_s, **payload
            ) as reply:
                chunks = []
                try:
                    async for chunk in decoded(reply, MAX_REPLY):  # the one bounded decoder
                        chunks.append(chunk)
                except BodyRefused as e:
                    why = f"sent more than {MAX_REPLY} bytes" if e.limit is not None else e.why
                    raise TaskError(f"{t.plane}-004", f"`{t.provider}` {why}") from None
                data = b"".join(chunks)
                status, kind = reply.status_code, reply.headers.get("content-type", "")
    except TimeoutError:
        raise TaskError(
            f"{t.plane}-003",
            f"`{t.provider}` did not answer within {t.timeout_s:g} s",
            transient=True,
            details={"status_code": None},
        ) from None
    except httpx.HTTPError as e:
        raise TaskError(
            f"{t.plane}-003",
            f"cannot reach `{t.provider}`: {type(e).__name__}",
            transient=True,
            details={"status_code": None},
        ) from None
    if status >= 400:
        raise _refused(t, status, _scrub(data.decode("utf-8", "replace"), t.secret))
    return data, kind


def _refused(t: Target, status: int, text: str) -> TaskError:
    """An HTTP error reply: a content-policy refusal, or a failure (transient for 5xx, 408 and 429)."""
    if status in (400, 403) and any(w in text.lower() for w in POLICY_WORDS):
        return TaskError(
            f"{t.plane}-005",
            f"`{t.provider}` refused the request on content policy: {text}",
            details={"status_code": status},
        )
    transient = status >= 500 or status in (408, 429)
    return TaskError(
        f"{t.plane}-003",
        f"`{t.provider}` answered HTTP {status}: {text}",
        transient=transient,
        details={"status_code": status},
    )


def json_body(data: bytes, t: Target) -> Any:
    import json

    try:
        return json.loads(data)
    except (ValueError, UnicodeDecodeError):
        raise TaskError(f"{t.plane}-004", f"`{t.provider}` answered with something that is not JSON") from None
