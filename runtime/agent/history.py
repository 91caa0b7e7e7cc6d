"""The conversation as the next request carries it, and the input-token estimate of that request.

A tool call's arguments longer than ``limits.RESEND_ARGS_CHARS`` go to the provider once, in the
reply that proposed them; every later request carries their fingerprint instead, so a 2 MB draft
is not re-sent (and re-paid) on every turn.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence

from runtime.guard import limits
from runtime.providers.base import Message, ToolCall, ToolSpec


def elided(call: ToolCall) -> ToolCall:
    """``call`` with oversized arguments replaced by their fingerprint (others unchanged)."""
    raw = call.raw or json.dumps(call.arguments, ensure_ascii=False, sort_keys=True)
    if len(raw) <= limits.RESEND_ARGS_CHARS:
        return call
    stub = {"elided": "sha256:" + hashlib.sha256(raw.encode("utf-8")).hexdigest(), "chars": len(raw)}
    return ToolCall(call.id, call.name, stub, json.dumps(stub))


def wire_messages(messages: Sequence[Message]) -> tuple[Message, ...]:
    """The conversation to send: earlier assistant turns with oversized arguments elided."""
    out = []
    for m in messages:
        if m.role == "assistant" and m.tool_calls:
            calls = tuple(elided(c) for c in m.tool_calls)
            if calls != m.tool_calls:
                m = Message(m.role, m.content, calls, m.tool_call_id, m.name)
        out.append(m)
    return tuple(out)


def body_bytes(system: str | None, messages: Sequence[Message], tools: Sequence[ToolSpec]) -> int:
    """The UTF-8 size of the request, shaped like a chat-completions body so the wire's keys count."""
    body = json.dumps(
        {
            "messages": [{"role": "system", "content": system}]
            + [
                {
                    "role": m.role,
                    "content": m.content,
                    "tool_calls": [
                        {"id": c.id, "type": "function", "function": {"name": c.name, "arguments": c.raw}}
                        for c in m.tool_calls
                    ],
                    "tool_call_id": m.tool_call_id,
                }
                for m in messages
            ],
            "tools": [
                {
                    "type": "function",
                    "function": {"name": t.name, "description": t.description, "parameters": t.parameters},
                }
                for t in tools
            ],
        },
        ensure_ascii=False,
        default=str,
    )
    return len(body.encode("utf-8"))


def estimate_in(size: int, reported: tuple[int, int] | None) -> tuple[int, str]:
    """The input tokens of a request of ``size`` bytes, and the basis of the figure.

    With the provider's own count of the previous request (``reported``: its tokens, our bytes of
    it), the estimate is that count plus the estimator's figure for what was added since; without
    one, the estimator alone (``limits.ESTIMATE_BYTES_PER_TOKEN``, a labelled heuristic)."""
    per = limits.ESTIMATE_BYTES_PER_TOKEN
    if reported is not None and reported[0] > 0:
        tokens, then = reported
        return tokens + -(-max(0, size - then) // per), "provider"
    return -(-size // per), "heuristic"
