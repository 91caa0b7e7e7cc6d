"""The provider interface: one model call in, one reply out.

``infer:`` sends a :class:`Request` with a prompt; the agent loop sends the whole conversation in
``messages`` and the tools it may call in ``tools``. A provider answers with a :class:`Response`:
the text (or the structured value when the request carried a schema), the tool calls the model
proposed, and the token usage it reported. The runtime never knows which provider answers beyond
this interface.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import Any

from checker.core.records import field, record


@record
class ToolSpec:
    """A tool offered to the model: ``name`` is the wire-safe name, ``tool_id`` the Nika id."""

    name: str
    tool_id: str
    description: str
    parameters: dict[str, Any]


@record
class ToolCall:
    """A call the model proposed. ``arguments`` is the decoded object, or ``None`` when the model's
    arguments were not a JSON object (``raw`` then holds what it sent)."""

    id: str
    name: str
    arguments: dict[str, Any] | None
    raw: str = ""


@record
class Image:
    """An image sent with a user turn (``infer.vision``): its media type and its bytes, base64.
    The engine has already read it (a file through ``permits.fs.read``, a URL through
    ``permits.net`` and the SSRF floor); every wire sends these bytes inline, never a URL."""

    media_type: str
    data: str  # base64 of the image bytes
    source: str = ""  # the path or URL it came from (for messages only)


@record
class Thinking:
    """``infer.thinking``: extended reasoning on or off, and its token budget (drawn from
    ``max_tokens``: the wire adapters send the budget in the provider's own parameter)."""

    enabled: bool = True
    budget_tokens: int | None = None


@record
class Message:
    """One conversation turn: ``user``, ``assistant`` (text and/or tool calls) or ``tool`` (a result)."""

    role: str
    content: str = ""
    tool_calls: tuple[ToolCall, ...] = ()
    tool_call_id: str | None = None
    name: str | None = None
    images: tuple[Image, ...] = ()


@record
class Request:
    """What a model call asks (``schema`` a JSON Schema; ``timeout_s`` the call's deadline)."""

    model: str
    prompt: str
    system: str | None = None
    temperature: float | None = None
    max_tokens: int | None = None
    schema: dict[str, Any] | None = None
    extra: dict[str, Any] = field(default_factory=dict)
    messages: tuple[Message, ...] = ()
    tools: tuple[ToolSpec, ...] = ()
    timeout_s: float | None = None
    images: tuple[Image, ...] = ()
    thinking: Thinking | None = None

    def conversation(self) -> tuple[Message, ...]:
        """The messages to send: the explicit conversation, else the prompt (and its images) as one user turn."""
        return self.messages or (Message("user", self.prompt, images=self.images),)


@record
class Response:
    """The reply. ``value`` is the text, or the decoded value when the request carried a schema."""

    value: Any
    tokens: int = 0
    cost_note: str | None = None
    tokens_in: int = 0
    tokens_out: int = 0
    tool_calls: tuple[ToolCall, ...] = ()
    text: str = ""
    finish_reason: str | None = None
    usage_reported: bool = True
    thinking_tokens: int | None = None  # reasoning tokens, when the provider reports them (within tokens_out)

    def record(self) -> dict[str, Any]:
        """The whole reply as plain data (what an agent turn's model effect answers across the
        executor seam, which carries plain records only)."""
        return {
            "value": self.value,
            "text": self.text,
            "tokens": self.tokens,
            "tokens_in": self.tokens_in,
            "tokens_out": self.tokens_out,
            "tool_calls": [
                {"id": c.id, "name": c.name, "arguments": c.arguments, "raw": c.raw} for c in self.tool_calls
            ],
            "finish_reason": self.finish_reason,
            "usage_reported": self.usage_reported,
            "thinking_tokens": self.thinking_tokens,
        }

    @classmethod
    def from_record(cls, rec: Any) -> Response:
        """The reply back from :meth:`record`. Anything else is an executor that broke the seam's
        contract for an agent turn (it would drop the tool calls): a clear internal error."""
        if not isinstance(rec, dict) or not isinstance(rec.get("tool_calls"), list):
            from runtime.errors import INTERNAL, TaskError

            raise TaskError(
                INTERNAL,
                "the executor answered an agent turn without the reply record (ModelEffect.turn asks for "
                f"Response.record()); it answered {type(rec).__name__}",
            )
        calls = tuple(
            ToolCall(str(c.get("id", "")), str(c.get("name", "")), c.get("arguments"), str(c.get("raw", "")))
            for c in rec["tool_calls"]
        )
        return cls(
            rec.get("value"),
            int(rec.get("tokens", 0)),
            None,
            int(rec.get("tokens_in", 0)),
            int(rec.get("tokens_out", 0)),
            calls,
            str(rec.get("text", "")),
            rec.get("finish_reason"),
            bool(rec.get("usage_reported", True)),
            rec.get("thinking_tokens") if isinstance(rec.get("thinking_tokens"), int) else None,
        )


class Provider(ABC):
    """A model provider. ``complete`` raises :class:`~runtime.errors.TaskError` on failure
    (NIKA-PROVIDER-001 transient for network trouble, NIKA-INFER-* for the call itself)."""

    id: str = ""

    @abstractmethod
    async def complete(self, name: str, request: Request) -> Response: ...
