"""The OpenAI-compatible chat wire (`/v1/chat/completions`): OpenAI, the compatible clouds, local servers."""

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

# The reasoning text some OpenAI-compatible servers stream beside the answer (DeepSeek, OpenRouter).
_REASONING_DELTAS = ("reasoning_content", "reasoning")


class OpenAIChat(WireProvider):
    async def complete(self, name: str, request: Request) -> Response:
        self._need_key()
        messages: list[dict[str, Any]] = []
        if request.system:
            messages.append({"role": "system", "content": request.system})
        for m in request.conversation():
            messages.append(_openai_message(m))
        body: dict[str, Any] = {"model": name, "messages": messages}
        model = f"{self.id}/{name}"
        if request.temperature is not None and models.takes_temperature(model):
            body["temperature"] = request.temperature
        if request.max_tokens is not None:  # the field is the model's own (the catalog's output_param)
            body[models.output_param(model)] = request.max_tokens
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
        sink = stream.sink()
        if sink is not None:  # a live listener: the same reply, as it arrives (runtime.providers.stream)
            body["stream"] = True
            body["stream_options"] = {"include_usage": True}
            doc = await self._post_stream(self.endpoint.url, headers, body, request, _Fold(self, sink))
        else:
            doc = await self._post(self.endpoint.url, headers, body, request)
        return self.read_reply(request, doc)

    def _reply(self, request: Request, doc: Any) -> Response:
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


def _name_piece(have: str, piece: Any) -> str:
    """A tool call's name as the chunks build it: OpenAI sends it once, some compatible servers
    repeat the whole name in every chunk (kept once) or send it growing (the longest kept)."""
    if piece is None or piece == "":
        return have
    if not isinstance(piece, str):
        raise TypeError("a tool call name that is not a string")
    if not have or piece == have or piece.startswith(have):
        return piece
    return have + piece


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


class _Fold:
    """Chat-completions chunks (``choices[0].delta``, a last chunk with ``usage`` when asked by
    ``stream_options.include_usage``, then ``[DONE]``) folded back into one completion document."""

    def __init__(self, wire: OpenAIChat, sink: stream.ChunkSink) -> None:
        self.wire = wire
        self.sink = sink
        self.done = False
        self.text: list[str] = []
        self.calls: dict[int, dict[str, Any]] = {}
        self.finish: Any = None
        self.usage: dict[str, Any] | None = None

    def event(self, name: str, data: str) -> None:
        if data.strip() == "[DONE]":
            self.done = True
            return
        chunk = self.wire.stream_chunk(data)
        if chunk is None:
            return
        if isinstance(chunk.get("usage"), dict):
            self.usage = chunk["usage"]
        choices = chunk.get("choices")
        if not isinstance(choices, list) or not choices or not isinstance(choices[0], dict):
            return
        choice = choices[0]
        delta = choice.get("delta") if isinstance(choice.get("delta"), dict) else {}
        piece = delta.get("content")
        if isinstance(piece, str) and piece:
            self.text.append(piece)
            self.sink.piece(stream.TEXT, piece)
        for key in _REASONING_DELTAS:  # a server that sends both names sends the same text twice
            if isinstance(delta.get(key), str):
                self.sink.piece(stream.THINKING, delta[key])
                break
        for c in delta.get("tool_calls") or []:
            if not isinstance(c, dict):
                continue
            slot = self.calls.setdefault(self._index(c), {"id": None, "name": "", "arguments": ""})
            slot["id"] = c.get("id") or slot["id"]
            fn = c.get("function") if isinstance(c.get("function"), dict) else {}
            slot["name"] = _name_piece(slot["name"], fn.get("name"))
            slot["arguments"] += fn.get("arguments") or ""
        if choice.get("finish_reason") is not None:
            self.finish = choice["finish_reason"]

    def _index(self, c: dict[str, Any]) -> int:
        """The call a chunk continues. OpenAI numbers them (``index``); a compatible server that
        omits it starts a new call with a new ``id`` and continues the last one without."""
        i = c.get("index")
        if i is not None:
            return int(i)  # a member of the wrong type is the provider's malformed stream
        if not self.calls:
            return 0
        last = max(self.calls)
        fresh = c.get("id")
        return last + 1 if fresh and self.calls[last]["id"] not in (None, fresh) else last

    def whole_at_end(self) -> bool:
        # Some OpenAI-compatible servers (llama.cpp forks, older web UIs) close the stream after
        # the chunk that carries `finish_reason` and never send `[DONE]`: the reply is whole.
        return self.finish is not None

    def document(self) -> dict[str, Any]:
        message: dict[str, Any] = {"role": "assistant", "content": "".join(self.text)}
        if self.calls:
            message["tool_calls"] = [
                {"id": c["id"], "type": "function", "function": {"name": c["name"], "arguments": c["arguments"]}}
                for _, c in sorted(self.calls.items())
            ]
        return {"choices": [{"message": message, "finish_reason": self.finish}], "usage": self.usage or {}}
