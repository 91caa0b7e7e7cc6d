"""The Gemini ``generateContent`` wire."""

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
