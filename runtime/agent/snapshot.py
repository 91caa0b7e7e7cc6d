"""The self-model: one short system-side section, fresh every turn, with what the agent has left
and the tools wired right now (seed "self-model": a stale snapshot is how agents promise what they
cannot do). Deterministic: it is built from the ledger and the envelope only, and the time left is
stated coarsely (``limits.SNAPSHOT_MINUTES_FROM_S``), so a fast ``mock/echo`` run sends the same
text every time."""

from __future__ import annotations

import math
from collections.abc import Sequence

from runtime.agent.ledger import Envelope, Ledger
from runtime.guard import limits
from runtime.providers.base import ToolSpec

HEADING = "## Your budget this turn"


def time_text(seconds: float) -> str:
    if seconds >= limits.SNAPSHOT_MINUTES_FROM_S:
        return f"about {math.ceil(seconds / 60)} min"
    return f"about {max(0, math.ceil(seconds))} s"


def snapshot(led: Ledger, envelope: Envelope, tools: Sequence[ToolSpec], priced: bool, time_left: float) -> str:
    """The section for the call about to be made (this call counts as one of the turns left)."""
    lines = [
        HEADING,
        "",
        f"- turns left: {led.max_turns - led.turns} of {led.max_turns} (this reply is one)",
        f"- tokens left: {max(0, led.max_tokens_total - led.tokens)} of {led.max_tokens_total} (input and output)",
        f"- time left: {time_text(time_left)}",
    ]
    if priced and envelope.max_cost_usd is not None:
        left = max(0.0, envelope.max_cost_usd - led.cost_usd)
        lines.append(f"- cost left: ${left:.4f} of ${envelope.max_cost_usd:.4f}")
    wired = ", ".join(t.tool_id for t in tools) if tools else "none"
    lines.append(f"- tools wired now: {wired}")
    lines.append(f"- at most {limits.MAX_CALLS_PER_REPLY} tool calls per reply")
    lines.append("")
    lines.append("Finish inside these limits: answer (or call `nika:done` when wired) before they run out.")
    return "\n".join(lines)


def with_snapshot(system: str | None, section: str) -> str:
    """The authored system prompt (and skills) followed by the snapshot."""
    return f"{system}\n\n{section}" if system else section
