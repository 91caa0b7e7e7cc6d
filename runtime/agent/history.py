"""The conversation as the next request carries it, and the input-token estimate of that request.

A tool call's arguments longer than ``limits.RESEND_ARGS_CHARS`` go to the provider once, in the
reply that proposed them; every later request carries their fingerprint instead, so a 2 MB draft
is not re-sent (and re-paid) on every turn.
"""

from __future__ import annotations

import hashlib
import json
import math
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


def body_bytes(system: str | None, messages: Sequence[Message], tools: Sequence[ToolSpec]) -> tuple[int, int]:
    """The UTF-8 size of the request, shaped like a chat-completions body so the wire's keys
    count, and how many messages it holds (the system prompt is one)."""
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
    return len(body.encode("utf-8")), len(messages) + 1


def estimate_in(size: tuple[int, int], reported: tuple[int, int, int] | None) -> tuple[int, str]:
    """An upper bound of the input tokens of a request (``size``: its bytes and messages), and its basis.

    Without a report: the bytes at ``limits.ESTIMATE_BYTES_PER_TOKEN`` plus the chat format's own
    tokens for every message (``limits.ESTIMATE_TOKENS_PER_MESSAGE``, and the reply's priming).
    With the provider's count of the previous request (``reported``: its tokens, our bytes and
    messages of it): that count, plus what was added since at the denser of the estimator's rate
    and the rate the provider's own count showed, plus the format's tokens of the new messages.
    A provider whose tokenizer runs denser than the heuristic is so corrected from the second call on."""
    per = limits.ESTIMATE_BYTES_PER_TOKEN
    per_msg = limits.ESTIMATE_TOKENS_PER_MESSAGE
    nbytes, nmsgs = size
    if reported is not None and reported[0] > 0 and reported[1] > 0:
        tokens, then, then_msgs = reported
        rate = max(1 / per, tokens / then)
        added = math.ceil(max(0, nbytes - then) * rate)
        return tokens + added + per_msg * max(0, nmsgs - then_msgs), "provider"
    return -(-nbytes // per) + per_msg * nmsgs + limits.ESTIMATE_REPLY_PRIMING_TOKENS, "heuristic"
