"""The Gemini ``generateContent`` wire."""

from __future__ import annotations

import json
from typing import Any

from runtime.errors import TaskError
from runtime.providers import models, stream, wire_parts
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
        if request.temperature is not None and models.takes_temperature(f"{self.id}/{name}"):
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
        sink = stream.sink()
        streamed = _stream_url(url)
        if sink is not None and streamed is not None:  # a live listener: the same reply, as it arrives
            doc = await self._post_stream(streamed, headers, body, request, _Fold(self, sink))
        else:
            doc = await self._post(url, headers, body, request)
        return self.read_reply(request, doc)

    def _reply(self, request: Request, doc: Any) -> Response:
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


_UNARY = ":generateContent"


def _stream_url(url: str) -> str | None:
    """The streaming twin of a ``…:generateContent`` endpoint (``:streamGenerateContent`` with
    ``alt=sse``); ``None`` for an endpoint of another shape, which is then called unstreamed."""
    path, sep, query = url.partition("?")
    if not path.endswith(_UNARY):
        return None
    path = path[: -len(_UNARY)] + ":streamGenerateContent"
    return f"{path}?{query + '&' if sep and query else ''}alt=sse"


class _Fold:
    """``streamGenerateContent?alt=sse`` events (each a partial response: new parts, the usage so
    far, the finish reason on the last) folded back into one response document."""

    def __init__(self, wire: GeminiGenerate, sink: stream.ChunkSink) -> None:
        self.wire = wire
        self.sink = sink
        self.done = False
        self.parts: list[dict[str, Any]] = []
        self.finish: Any = None
        self.usage: dict[str, Any] = {}
        self.blocked: Any = None

    def event(self, name: str, data: str) -> None:
        chunk = self.wire.stream_chunk(data)
        if chunk is None:
            return
        if isinstance(chunk.get("usageMetadata"), dict):
            self.usage = chunk["usageMetadata"]
        feedback = chunk.get("promptFeedback")
        if isinstance(feedback, dict) and feedback.get("blockReason"):
            self.blocked = feedback
            self.done = True
        cands = chunk.get("candidates")
        if not isinstance(cands, list) or not cands or not isinstance(cands[0], dict):
            return
        for part in (cands[0].get("content") or {}).get("parts") or []:
            if isinstance(part, dict):
                self._part(part)
        if cands[0].get("finishReason"):
            self.finish = cands[0]["finishReason"]
            self.done = True

    def _part(self, part: dict[str, Any]) -> None:
        if isinstance(part.get("text"), str):
            thought = bool(part.get("thought"))
            self.sink.piece(stream.THINKING if thought else stream.TEXT, part["text"])
            last = self.parts[-1] if self.parts else None
            if last is not None and isinstance(last.get("text"), str) and bool(last.get("thought")) == thought:
                last["text"] += part["text"]
                return
        self.parts.append(dict(part))

    def whole_at_end(self) -> bool:
        return False  # the reply is whole only at its end marker

    def document(self) -> dict[str, Any]:
        doc: dict[str, Any] = {"usageMetadata": self.usage}
        if self.blocked is not None and not self.parts:
            doc["promptFeedback"] = self.blocked
            doc["candidates"] = []
            return doc
        doc["candidates"] = [{"content": {"role": "model", "parts": self.parts}, "finishReason": self.finish}]
        return doc
