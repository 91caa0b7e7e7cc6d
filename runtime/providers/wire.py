"""The three wire formats, hand-written on one ``httpx.AsyncClient``: OpenAI Chat Completions,
Anthropic Messages and Gemini ``generateContent``.

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
from runtime.providers import wire_parts
from runtime.providers.base import Message, Provider, Request, Response, ToolCall

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
                value = json.loads(_unfence(text))
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


def _unfence(text: str) -> str:
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


class OpenAIChat(WireProvider):
    async def complete(self, name: str, request: Request) -> Response:
        self._need_key()
        messages: list[dict[str, Any]] = []
        if request.system:
            messages.append({"role": "system", "content": request.system})
        for m in request.conversation():
            messages.append(_openai_message(m))
        body: dict[str, Any] = {"model": name, "messages": messages}
        if request.temperature is not None:
            body["temperature"] = request.temperature
        if request.max_tokens is not None:
            body["max_tokens"] = request.max_tokens
        if request.tools:
            body["tools"] = [
                {
                    "type": "function",
                    "function": {"name": t.name, "description": t.description, "parameters": t.parameters},
                }
                for t in request.tools
            ]
        wire_parts.openai_thinking(self.endpoint.thinking, body, request)
        if request.schema is not None:
            body["response_format"] = {
                "type": "json_schema",
                "json_schema": {"name": "output", "schema": request.schema},
            }
        headers = {"content-type": "application/json"}
        if self.endpoint.key:
            headers["authorization"] = f"Bearer {self.endpoint.key}"
        doc = await self._post(self.endpoint.url, headers, body, request)
        choices = doc.get("choices") if isinstance(doc, dict) else None
        if not isinstance(choices, list) or not choices or not isinstance(choices[0], dict):
            raise TaskError(REFUSED, f"`{self.id}` answered with no choices", details={"provider": self.id})
        msg = choices[0].get("message") or {}
        text = msg.get("content") or ""
        if isinstance(text, list):  # some servers send content parts
            text = "".join(p.get("text", "") for p in text if isinstance(p, dict))
        calls = []
        for i, c in enumerate(msg.get("tool_calls") or []):
            fn = c.get("function") or {}
            args, raw = _decode_args(fn.get("arguments"))
            calls.append(ToolCall(str(c.get("id") or f"call_{i}"), str(fn.get("name", "")), args, raw))
        usage = doc.get("usage") or {}
        return self._shape(
            request,
            str(text),
            tuple(calls),
            int(usage.get("prompt_tokens") or 0),
            int(usage.get("completion_tokens") or 0),
            choices[0].get("finish_reason"),
            wire_parts.openai_reasoning_tokens(usage),
        )


def _openai_message(m: Message) -> dict[str, Any]:
    if m.role == "tool":
        return {"role": "tool", "tool_call_id": m.tool_call_id, "content": m.content}
    if m.role == "assistant" and m.tool_calls:
        return {
            "role": "assistant",
            "content": m.content or None,
            "tool_calls": [
                {
                    "id": c.id,
                    "type": "function",
                    "function": {"name": c.name, "arguments": c.raw or json.dumps(c.arguments)},
                }
                for c in m.tool_calls
            ],
        }
    if m.role == "user":
        return wire_parts.openai_user(m)
    return {"role": m.role, "content": m.content}


# -- Anthropic Messages ----------------------------------------------------------------------------


class AnthropicMessages(WireProvider):
    VERSION = "2023-06-01"

    async def complete(self, name: str, request: Request) -> Response:
        self._need_key()
        system = request.system or ""
        if request.schema is not None:  # no native JSON mode: instructed, then validated
            system = (system + "\n\n" if system else "") + _schema_instruction(request.schema)
        body: dict[str, Any] = {
            "model": name,
            "max_tokens": request.max_tokens or limits.DEFAULT_MAX_OUTPUT_TOKENS,
            "messages": _anthropic_messages(request.conversation()),
        }
        if system:
            body["system"] = system
        if request.temperature is not None:
            body["temperature"] = min(1.0, float(request.temperature))  # Anthropic's scale ends at 1
        wire_parts.anthropic_thinking(body, request)
        if request.tools:
            body["tools"] = [
                {"name": t.name, "description": t.description, "input_schema": t.parameters} for t in request.tools
            ]
        headers = {"content-type": "application/json", "anthropic-version": self.VERSION}
        if self.endpoint.key:
            headers["x-api-key"] = self.endpoint.key
        doc = await self._post(self.endpoint.url, headers, body, request)
        blocks = doc.get("content") if isinstance(doc, dict) else None
        if not isinstance(blocks, list):
            raise TaskError(REFUSED, f"`{self.id}` answered with no content", details={"provider": self.id})
        text = "".join(b.get("text", "") for b in blocks if isinstance(b, dict) and b.get("type") == "text")
        calls = []
        for b in blocks:
            if isinstance(b, dict) and b.get("type") == "tool_use":
                args, raw = _decode_args(b.get("input"))
                calls.append(ToolCall(str(b.get("id")), str(b.get("name", "")), args, raw))
        usage = doc.get("usage") or {}
        return self._shape(
            request,
            text,
            tuple(calls),
            int(usage.get("input_tokens") or 0),
            int(usage.get("output_tokens") or 0),
            doc.get("stop_reason"),
        )


def _anthropic_messages(conv: tuple[Message, ...]) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for m in conv:
        if m.role == "tool":
            block = {"type": "tool_result", "tool_use_id": m.tool_call_id, "content": m.content}
            if out and out[-1]["role"] == "user" and isinstance(out[-1]["content"], list):
                out[-1]["content"].append(block)
            else:
                out.append({"role": "user", "content": [block]})
        elif m.role == "assistant":
            content: list[dict[str, Any]] = [{"type": "text", "text": m.content}] if m.content else []
            content += [
                {"type": "tool_use", "id": c.id, "name": c.name, "input": c.arguments or {}} for c in m.tool_calls
            ]
            out.append({"role": "assistant", "content": content or [{"type": "text", "text": ""}]})
        else:
            out.append(wire_parts.anthropic_user(m))
    return out


# -- Gemini generateContent ------------------------------------------------------------------------


class GeminiGenerate(WireProvider):
    async def complete(self, name: str, request: Request) -> Response:
        self._need_key()
        body: dict[str, Any] = {"contents": _gemini_contents(request.conversation())}
        if request.system:
            body["systemInstruction"] = {"parts": [{"text": request.system}]}
        gen: dict[str, Any] = {}
        if request.temperature is not None:
            gen["temperature"] = request.temperature
        if request.max_tokens is not None:
            gen["maxOutputTokens"] = request.max_tokens
        if request.schema is not None and not request.tools:
            gen["responseMimeType"] = "application/json"
            gen["responseJsonSchema"] = request.schema
        wire_parts.gemini_thinking(gen, request)
        if gen:
            body["generationConfig"] = gen
        if request.tools:
            body["tools"] = [
                {
                    "functionDeclarations": [
                        {"name": t.name, "description": t.description, "parameters": t.parameters}
                        for t in request.tools
                    ]
                }
            ]
        headers = {"content-type": "application/json"}
        if self.endpoint.key:
            headers["x-goog-api-key"] = self.endpoint.key
        url = self.endpoint.url.replace("{model}", name)
        doc = await self._post(url, headers, body, request)
        cands = doc.get("candidates") if isinstance(doc, dict) else None
        if not isinstance(cands, list) or not cands or not isinstance(cands[0], dict):
            raise TaskError(REFUSED, f"`{self.id}` answered with no candidates", details={"provider": self.id})
        got = (cands[0].get("content") or {}).get("parts") or []
        text = "".join(p.get("text", "") for p in got if isinstance(p, dict) and "text" in p and not p.get("thought"))
        calls = []
        for i, p in enumerate(got):
            if isinstance(p, dict) and isinstance(p.get("functionCall"), dict):
                fc = p["functionCall"]
                args, raw = _decode_args(fc.get("args", {}))
                calls.append(ToolCall(str(fc.get("id") or f"{fc.get('name')}#{i}"), str(fc.get("name", "")), args, raw))
        usage = doc.get("usageMetadata") or {}
        thoughts = usage.get("thoughtsTokenCount")
        thoughts = int(thoughts) if isinstance(thoughts, int) else None
        return self._shape(
            request,
            text,
            tuple(calls),
            int(usage.get("promptTokenCount") or 0),
            int(usage.get("candidatesTokenCount") or 0) + (thoughts or 0),  # Gemini bills thoughts as output
            cands[0].get("finishReason"),
            thoughts,
        )


def _gemini_contents(conv: tuple[Message, ...]) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for m in conv:
        if m.role == "tool":
            try:
                result: Any = json.loads(m.content)
            except ValueError:
                result = m.content
            part = {"functionResponse": {"name": m.name, "response": {"content": result}}}
            if out and out[-1]["role"] == "user" and "functionResponse" in out[-1]["parts"][0]:
                out[-1]["parts"].append(part)
            else:
                out.append({"role": "user", "parts": [part]})
        elif m.role == "assistant":
            parts: list[dict[str, Any]] = [{"text": m.content}] if m.content else []
            parts += [{"functionCall": {"name": c.name, "args": c.arguments or {}}} for c in m.tool_calls]
            out.append({"role": "model", "parts": parts or [{"text": ""}]})
        else:
            out.append(wire_parts.gemini_user(m))
    return out
