"""What the three wire formats share, hand-written on one ``httpx.AsyncClient`` (the formats: OpenAI Chat
Completions in :mod:`.wire_openai`, Anthropic Messages in :mod:`.wire_anthropic`, Gemini in :mod:`.wire_gemini`).

Errors are classified once, in :func:`_post`: 401/403 name the key variable to set or fix (never
the key, never a JSON dump); 429, 5xx, connection failures and malformed bodies are transient
(NIKA-PROVIDER-001, ``retry:`` may retry them, ``Retry-After`` rides in ``details``); other 4xx
are the provider refusing the call (NIKA-INFER-001). A reply is read under one overall deadline
and a size cap, so a server that trickles bytes or sends megabytes cannot hang the run.
"""

from __future__ import annotations

import asyncio
import email.utils
import json
import time
from dataclasses import dataclass
from typing import Any

from runtime import limits
from runtime.errors import TaskError
from runtime.providers.base import Provider, Request, Response, ToolCall

TRANSIENT = "NIKA-PROVIDER-001"
REFUSED = "NIKA-INFER-001"
SCHEMA_CODE = "NIKA-INFER-002"
TIMEOUT_CODE = "NIKA-TIMEOUT-001"


@dataclass(frozen=True)
class Endpoint:
    """Where and how to reach one provider (``key`` is never logged or shown)."""

    provider: str
    url: str
    key: str | None
    key_vars: tuple[str, ...]
    local: bool
    thinking: str | None = None  # how this provider takes `infer.thinking:` (registry.THINKING), if at all


class WireProvider(Provider):
    """Shared plumbing: the POST, the deadline, the error classification."""

    def __init__(self, endpoint: Endpoint, services: Any) -> None:
        self.endpoint = endpoint
        self.id = endpoint.provider
        self.services = services

    def _timeout(self, request: Request) -> float:
        if request.timeout_s is not None:
            return max(0.001, min(request.timeout_s, limits.SILENT_CONNECTION_CEILING_S))
        return limits.LOCAL_CALL_TIMEOUT_S if self.endpoint.local else limits.CLOUD_CALL_TIMEOUT_S

    def _key_help(self) -> str:
        names = [f"NIKA_{self.id.upper()}_API_KEY", *self.endpoint.key_vars]
        return " or ".join(f"`{n}`" for n in dict.fromkeys(names))

    def _need_key(self) -> None:
        if self.endpoint.key is None and not self.endpoint.local:
            raise TaskError(
                REFUSED,
                f"`{self.id}` needs an API key and none is set: export {self._key_help()} in the engine's environment",
                details={"provider": self.id, "status": None},
            )

    async def _post(self, url: str, headers: dict[str, str], body: dict[str, Any], request: Request) -> Any:
        import httpx

        client = self.services.http()
        timeout = self._timeout(request)
        host = httpx.URL(url).host or url
        started = time.monotonic()
        try:
            async with asyncio.timeout(timeout):
                async with client.stream(
                    "POST",
                    url,
                    json=body,
                    headers=headers,
                    timeout=httpx.Timeout(timeout, connect=min(timeout, limits.CONNECT_TIMEOUT_S)),
                ) as resp:
                    data = bytearray()
                    async for chunk in resp.aiter_bytes():
                        data += chunk
                        if len(data) > limits.MAX_REPLY_BYTES:
                            raise TaskError(
                                REFUSED,
                                f"`{self.id}` sent a reply larger than {limits.MAX_REPLY_BYTES // (1024 * 1024)} MiB; "
                                "it was not read",
                                details={"provider": self.id},
                            )
                    status = resp.status_code
                    retry_after = resp.headers.get("retry-after")
        except (TimeoutError, httpx.TimeoutException):
            took = time.monotonic() - started
            if request.timeout_s is not None:
                raise TaskError(
                    TIMEOUT_CODE,
                    f"`{self.id}` did not answer within the task's remaining time ({took:.1f}s)",
                    details={"provider": self.id},
                ) from None
            raise TaskError(
                TRANSIENT,
                f"`{self.id}` did not answer within {timeout:g}s",
                True,
                {"provider": self.id},
            ) from None
        except httpx.TransportError as exc:
            raise TaskError(
                TRANSIENT,
                f"cannot reach `{self.id}` at {host}: {type(exc).__name__}",
                True,
                {"provider": self.id, "host": host},
            ) from None
        return self._classify(status, bytes(data), retry_after)

    def _classify(self, status: int, data: bytes, retry_after: str | None) -> Any:
        details: dict[str, Any] = {"provider": self.id, "status": status}
        if status in (401, 403):
            what = "rejected the API key" if self.endpoint.key else "requires an API key and none was sent"
            raise TaskError(
                REFUSED,
                f"`{self.id}` {what} (HTTP {status}): check {self._key_help()} in the engine's environment",
                details=details,
            )
        if status == 429 or status >= 500:
            wait = _retry_after_ms(retry_after)
            if wait is not None:
                details["retry_after_ms"] = wait
            why = "is rate-limiting this key" if status == 429 else "failed on its side"
            raise TaskError(TRANSIENT, f"`{self.id}` {why} (HTTP {status})", True, details)
        if status >= 400:
            raise TaskError(
                REFUSED,
                f"`{self.id}` refused the request (HTTP {status}): {self._error_text(data)}",
                details=details,
            )
        try:
            return json.loads(data)
        except ValueError:
            raise TaskError(
                TRANSIENT,
                f"`{self.id}` sent a reply that is not JSON ({len(data)} bytes, likely cut off)",
                True,
                details,
            ) from None

    def _error_text(self, data: bytes) -> str:
        try:
            doc = json.loads(data)
        except ValueError:
            doc = None
        msg = None
        if isinstance(doc, dict):
            err = doc.get("error")
            msg = err.get("message") if isinstance(err, dict) else err if isinstance(err, str) else doc.get("message")
        text = str(msg) if msg else data[:200].decode("utf-8", "replace")
        key = self.endpoint.key
        if key:
            text = text.replace(key, "«redacted»")
        return text.strip()[:300] or "no details"

    def _shape(
        self,
        request: Request,
        text: str,
        calls: tuple[ToolCall, ...],
        t_in: int,
        t_out: int,
        finish: Any,
        thinking_tokens: int | None = None,
    ) -> Response:
        value: Any = text
        if request.schema is not None and not request.messages:
            try:
                value = json.loads(unfence(text))
            except ValueError:
                raise TaskError(
                    SCHEMA_CODE,
                    f"`{self.id}` was asked for JSON matching `schema:` and replied with text that is not JSON",
                    details={"provider": self.id},
                ) from None
        return Response(
            value,
            t_in + t_out,
            None,
            t_in,
            t_out,
            calls,
            text,
            None if finish is None else str(finish),
            usage_reported=bool(t_in or t_out),
            thinking_tokens=thinking_tokens,
        )


def unfence(text: str) -> str:
    """A JSON reply some models wrap in a Markdown code fence, unwrapped."""
    t = text.strip()
    if t.startswith("```"):
        t = t.split("\n", 1)[1] if "\n" in t else ""
        t = t.rstrip()
        if t.endswith("```"):
            t = t[:-3]
    return t


def _retry_after_ms(value: str | None) -> int | None:
    if not value:
        return None
    try:
        return max(0, int(float(value) * 1000))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0, int((when.timestamp() - time.time()) * 1000))


def _decode_args(raw: Any) -> tuple[dict[str, Any] | None, str]:
    if isinstance(raw, dict):
        return raw, json.dumps(raw)
    if isinstance(raw, str):
        try:
            value = json.loads(raw) if raw.strip() else {}
        except ValueError:
            return None, raw
        return (value if isinstance(value, dict) else None), raw
    return None, json.dumps(raw)


def _schema_instruction(schema: dict[str, Any]) -> str:
    return "Reply with only a JSON value (no prose, no code fence) that matches this JSON Schema:\n" + json.dumps(
        schema, sort_keys=True
    )


# -- OpenAI Chat Completions -----------------------------------------------------------------------
