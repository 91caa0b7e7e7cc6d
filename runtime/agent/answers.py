"""Final answers: a reply without tool calls, ``nika:done``, and what a failed agent leaves.

An answer is never empty (seed "the finale guarantees a non-empty answer"): an empty final message
gets one nudge, then the loop fails as ``empty-answer`` with the deterministic extract of the last
observations as ``partial_output``. With ``schema:`` the answer must validate; a reply that does not
is a malformed reply (one short retry; the second in a row stops the loop)."""

from __future__ import annotations

import json
from typing import Any

from runtime.agent import stops
from runtime.agent.audit import Audit
from runtime.agent.catalogue import DONE
from runtime.agent.ledger import Ledger
from runtime.agent.stops import SCHEMA_CODE, Stop, StopReason
from runtime.errors import TaskError
from runtime.guard import limits
from runtime.providers.base import Message, ToolCall
from runtime.providers.wire import unfence


def schema_problem(value: Any, schema: dict[str, Any]) -> str | None:
    """Why an answer does not fit the task's ``schema:`` (``None`` when it fits)."""
    from runtime.tools.schema_validator import problem_at

    return problem_at(schema, value, subject="`schema:`", top="the top level")


def render(value: Any) -> str:
    """A tool result as the model reads it (bounded by ``limits.MAX_TOOL_RESULT_CHARS``)."""
    if isinstance(value, bytes | bytearray):
        text = f"<{len(value)} bytes>"
    elif isinstance(value, str):
        text = value
    else:
        text = json.dumps(value, ensure_ascii=False, default=str, sort_keys=True)
    if len(text) > limits.MAX_TOOL_RESULT_CHARS:
        cut = len(text) - limits.MAX_TOOL_RESULT_CHARS
        text = text[: limits.MAX_TOOL_RESULT_CHARS] + f"… [{cut} more characters cut]"
    return text


def extract(led: Ledger) -> str:
    """The deterministic backstop of a missing answer: the last observations, newest last."""
    last = led.observations[-limits.EXTRACT_OBSERVATIONS :]
    return "\n\n".join(o[: limits.EXTRACT_CHARS] for o in last)


class Answers:
    """The loop's answer handling (mixed into :class:`runtime.agent.loop.AgentLoop`)."""

    ledger: Ledger
    schema: dict[str, Any] | None
    messages: list[Message]
    audit: Audit

    def answer(self, call: ToolCall, content: Any) -> None:
        text = content if isinstance(content, str) else render(content)
        self.messages.append(Message("tool", text, tool_call_id=call.id, name=call.name))

    def final(self, text: str) -> None:
        """A reply without tool calls: the answer, once it is not empty and satisfies ``schema:``."""
        if self.schema is None:
            if text.strip():
                raise Stop(StopReason.FINAL_MESSAGE, output=text)
            if self.ledger.empty_nudged:
                raise stops.empty_answer()
            self.ledger.empty_nudged = True  # an empty answer is not success: ask for it once
            self.audit.nudge("empty final message")
            self.messages.append(Message("user", limits.EMPTY_ANSWER_NUDGE))
            return
        try:
            value = json.loads(unfence(text))
        except ValueError as exc:
            self.malformed(f"your reply must be only a JSON value matching the schema; it is not JSON ({exc})")
            return
        problem = schema_problem(value, self.schema)
        if problem is not None:
            self.malformed(f"your reply does not match the schema: {problem}. Reply with corrected JSON only.")
            return
        raise Stop(StopReason.FINAL_MESSAGE, output=value)

    def malformed(self, feedback: str) -> None:
        """One malformed reply: a short retry, or the stop when it is the second in a row."""
        led = self.ledger
        led.malformed_in_a_row += 1
        if led.malformed_in_a_row >= limits.MALFORMED_REPLIES:
            raise stops.proposal_lost(led.malformed_in_a_row, feedback)
        self.audit.nudge("malformed reply")
        self.messages.append(Message("user", feedback))

    def done(self, call: ToolCall, args: dict[str, Any]) -> TaskError | None:
        """``nika:done``: the stop, or the schema error to feed back as a failed call."""
        led = self.ledger
        if "result" in args:
            value = args["result"]
            problem = schema_problem(value, self.schema) if self.schema is not None else None
            if problem is not None:
                return TaskError(SCHEMA_CODE, f"`result` does not match the schema: {problem}")
            self.audit.tool(call, DONE, "ok", None, 0.0)
            raise Stop(StopReason.DONE, output=value)
        self.audit.tool(call, DONE, "ok", None, 0.0)
        if self.schema is None:
            raise Stop(StopReason.DONE, output=led.last_text)
        try:
            value = json.loads(unfence(led.last_text))
        except ValueError:
            value = None
        problem = schema_problem(value, self.schema)
        if problem is not None:
            why = f"the agent finished without a `result` matching `schema:`: {problem}"
            raise Stop(StopReason.DONE, TaskError(SCHEMA_CODE, why))
        raise Stop(StopReason.DONE, output=value)
