"""The Anthropic Messages wire (``/v1/messages``)."""

from __future__ import annotations

import json
from typing import Any

from runtime.errors import TaskError
from runtime.guard import limits
from runtime.providers import models, stream, wire_parts
from runtime.providers.base import Message, Request, Response, ToolCall
from runtime.providers.wire import (
    REFUSED,
    WireProvider,
    _decode_args,
    _schema_instruction,
)


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
        if request.temperature is not None and models.takes_temperature(f"{self.id}/{name}"):
            body["temperature"] = min(1.0, float(request.temperature))  # Anthropic's scale ends at 1
        wire_parts.anthropic_thinking(body, request)
        if request.tools:
            body["tools"] = [
                {"name": t.name, "description": t.description, "input_schema": t.parameters} for t in request.tools
            ]
        headers = {"content-type": "application/json", "anthropic-version": self.VERSION}
        if self.endpoint.key:
            headers["x-api-key"] = self.endpoint.key
        sink = stream.sink()
        if sink is not None:  # a live listener: the same reply, as it arrives (runtime.providers.stream)
            body["stream"] = True
            doc = await self._post_stream(self.endpoint.url, headers, body, request, _Fold(self, sink))
        else:
            doc = await self._post(self.endpoint.url, headers, body, request)
        return self.read_reply(request, doc)

    def _reply(self, request: Request, doc: Any) -> Response:
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
    """The conversation as Messages turns. The API refuses an empty text block, so an assistant
    turn that said nothing (an empty answer, then the nudge) is left out, and the user turns on
    either side of it become one (the API wants the roles to alternate)."""
    out: list[dict[str, Any]] = []
    for m in conv:
        if m.role == "tool":
            block = {"type": "tool_result", "tool_use_id": m.tool_call_id, "content": m.content}
            _user(out, {"role": "user", "content": [block]})
        elif m.role == "assistant":
            content: list[dict[str, Any]] = [{"type": "text", "text": m.content}] if m.content else []
            content += [
                {"type": "tool_use", "id": c.id, "name": c.name, "input": c.arguments or {}} for c in m.tool_calls
            ]
            if content:
                out.append({"role": "assistant", "content": content})
        else:
            _user(out, wire_parts.anthropic_user(m))
    return out


def _blocks(content: Any) -> list[dict[str, Any]]:
    if isinstance(content, list):
        return content
    return [{"type": "text", "text": content}] if content else []


def _user(out: list[dict[str, Any]], turn: dict[str, Any]) -> None:
    """Append a user turn, joined to the previous one when that is a user turn too."""
    if out and out[-1]["role"] == "user":
        out[-1] = {"role": "user", "content": _blocks(out[-1]["content"]) + _blocks(turn["content"])}
    else:
        out.append(turn)


# -- Gemini generateContent ------------------------------------------------------------------------


# The stream error types that say the service, not the request, failed (retry may help).
_TRANSIENT_ERRORS = frozenset({"overloaded_error", "api_error", "rate_limit_error", "timeout_error"})


class _Fold:
    """Messages stream events (``message_start``, ``content_block_start/delta/stop`` for text,
    thinking and tool-use blocks, ``message_delta`` with the stop reason and output usage,
    ``message_stop``) folded back into one message document."""

    def __init__(self, wire: AnthropicMessages, sink: stream.ChunkSink) -> None:
        self.wire = wire
        self.sink = sink
        self.done = False
        self.doc: dict[str, Any] = {"content": [], "stop_reason": None, "usage": {}}
        self.blocks: dict[int, dict[str, Any]] = {}
        self.partial: dict[int, str] = {}

    def event(self, name: str, data: str) -> None:
        if name == "ping":
            return
        ev = self.wire.stream_chunk(data, error_member=False)  # its error is an event of its own
        if ev is None:
            return
        kind = ev.get("type", name)
        if kind == "error":
            err = ev.get("error") if isinstance(ev.get("error"), dict) else {}
            raise self.wire.stream_error(err.get("message") or err.get("type"), err.get("type") in _TRANSIENT_ERRORS)
        if kind == "message_start" and isinstance(ev.get("message"), dict):
            msg = ev["message"]
            self.doc["usage"] = dict(msg.get("usage") or {})
            self.doc["stop_reason"] = msg.get("stop_reason")
        elif kind == "content_block_start" and isinstance(ev.get("content_block"), dict):
            self.blocks[int(ev.get("index") or 0)] = dict(ev["content_block"])
        elif kind == "content_block_delta" and isinstance(ev.get("delta"), dict):
            self._delta(int(ev.get("index") or 0), ev["delta"])
        elif kind == "content_block_stop":
            i = int(ev.get("index") or 0)
            if i in self.partial and i in self.blocks:
                raw = self.partial.pop(i)
                try:
                    self.blocks[i]["input"] = json.loads(raw) if raw.strip() else {}
                except ValueError:
                    self.blocks[i]["input"] = raw  # the adapter's reader keeps malformed arguments raw
        elif kind == "message_delta":
            delta = ev.get("delta") if isinstance(ev.get("delta"), dict) else {}
            if "stop_reason" in delta:
                self.doc["stop_reason"] = delta["stop_reason"]
            if isinstance(ev.get("usage"), dict):
                self.doc["usage"].update({k: v for k, v in ev["usage"].items() if v is not None})
        elif kind == "message_stop":
            self.done = True

    def _delta(self, i: int, delta: dict[str, Any]) -> None:
        block = self.blocks.setdefault(i, {"type": "text", "text": ""})
        kind = delta.get("type")
        if kind == "text_delta" and isinstance(delta.get("text"), str):
            block["text"] = block.get("text", "") + delta["text"]
            self.sink.piece(stream.TEXT, delta["text"])
        elif kind == "thinking_delta" and isinstance(delta.get("thinking"), str):
            block["thinking"] = block.get("thinking", "") + delta["thinking"]
            self.sink.piece(stream.THINKING, delta["thinking"])
        elif kind == "signature_delta" and isinstance(delta.get("signature"), str):
            block["signature"] = block.get("signature", "") + delta["signature"]
        elif kind == "input_json_delta" and isinstance(delta.get("partial_json"), str):
            self.partial[i] = self.partial.get(i, "") + delta["partial_json"]

    def whole_at_end(self) -> bool:
        return False  # the reply is whole only at its end marker

    def document(self) -> dict[str, Any]:
        return {**self.doc, "content": [b for _, b in sorted(self.blocks.items())]}
