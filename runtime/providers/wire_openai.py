"""The OpenAI-compatible chat wire (`/v1/chat/completions`): OpenAI, the compatible clouds, local servers."""

from __future__ import annotations

import json
from typing import Any

from runtime.errors import TaskError
from runtime.providers import wire_parts
from runtime.providers.base import Message, Request, Response, ToolCall
from runtime.providers.wire import (
    REFUSED,
    WireProvider,
    _decode_args,
)


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
