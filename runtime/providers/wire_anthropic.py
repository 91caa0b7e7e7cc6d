"""The Anthropic Messages wire (``/v1/messages``)."""

from __future__ import annotations

from typing import Any

from runtime import limits
from runtime.errors import TaskError
from runtime.providers import wire_parts
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
