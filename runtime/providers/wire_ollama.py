"""Ollama's native chat wire (``POST /api/chat`` on the daemon, ``localhost:11434``).

The native endpoint is the one that takes Ollama's own settings: ``think`` (a thinking model's
reasoning on or off, ``infer.thinking:``), ``options.num_predict`` (the output cap) and
``options.temperature``, ``format`` (a JSON Schema for structured output) and tools in the
OpenAI function shape. Images travel as base64 strings beside the user text. The reply is one
JSON document (``stream: false``): ``message`` (``content``, ``thinking``, ``tool_calls`` whose
``arguments`` are objects), ``done_reason`` (``stop`` or ``length``), ``prompt_eval_count`` and
``eval_count``. Streaming is not used on this wire: Ollama streams newline-delimited JSON, not
Server-Sent Events, so a live listener sees the whole reply when it arrives.

``NIKA_OLLAMA_BASE_URL`` is the complete endpoint, verbatim; one that ends in
``/chat/completions`` is Ollama's OpenAI-compatible API and is spoken to with the OpenAI wire.
"""

from __future__ import annotations

import json
from typing import Any

from runtime.errors import TaskError
from runtime.providers import models
from runtime.providers.base import Message, Request, Response, ToolCall
from runtime.providers.wire import REFUSED, WireProvider, _decode_args

NATIVE_PATH = "/api/chat"


class OllamaChat(WireProvider):
    async def complete(self, name: str, request: Request) -> Response:
        messages: list[dict[str, Any]] = []
        if request.system:
            messages.append({"role": "system", "content": request.system})
        messages += [_message(m) for m in request.conversation()]
        body: dict[str, Any] = {"model": name, "messages": messages, "stream": False}
        options: dict[str, Any] = {}
        if request.temperature is not None and models.takes_temperature(f"{self.id}/{name}"):
            options["temperature"] = request.temperature
        if request.max_tokens is not None:
            options["num_predict"] = request.max_tokens
        if options:
            body["options"] = options
        if request.tools:
            body["tools"] = [
                {
                    "type": "function",
                    "function": {"name": t.name, "description": t.description, "parameters": t.parameters},
                }
                for t in request.tools
            ]
        if request.schema is not None and not request.tools:
            body["format"] = request.schema
        if request.thinking is not None:
            body["think"] = bool(request.thinking.enabled)
        headers = {"content-type": "application/json"}
        if self.endpoint.key:
            headers["authorization"] = f"Bearer {self.endpoint.key}"
        doc = await self._post(self.endpoint.url, headers, body, request)
        return self.read_reply(request, doc)

    def _reply(self, request: Request, doc: Any) -> Response:
        msg = doc.get("message") if isinstance(doc, dict) else None
        if not isinstance(msg, dict):
            raise TaskError(REFUSED, f"`{self.id}` answered with no message", details={"provider": self.id})
        calls = []
        for i, c in enumerate(msg.get("tool_calls") or []):
            fn = c.get("function") or {}
            args, raw = _decode_args(fn.get("arguments"))
            calls.append(ToolCall(str(c.get("id") or f"call_{i}"), str(fn.get("name", "")), args, raw))
        return self._shape(
            request,
            str(msg.get("content") or ""),
            tuple(calls),
            int(doc.get("prompt_eval_count") or 0),
            int(doc.get("eval_count") or 0),
            doc.get("done_reason"),
        )


def _message(m: Message) -> dict[str, Any]:
    if m.role == "tool":
        return {"role": "tool", "content": m.content, **({"tool_name": m.name} if m.name else {})}
    out: dict[str, Any] = {"role": m.role, "content": m.content}
    if m.images:
        out["images"] = [i.data for i in m.images]
    if m.role == "assistant" and m.tool_calls:
        out["tool_calls"] = [
            {"function": {"name": c.name, "arguments": c.arguments if c.arguments is not None else _raw(c.raw)}}
            for c in m.tool_calls
        ]
    return out


def _raw(raw: str) -> Any:
    try:
        return json.loads(raw)
    except ValueError:
        return {}
