"""The agent's audit frames: one ``verb_invoked`` (phase ``model_call``) per model request, one
``tool_invoked`` (phase ``agent``) per proposed tool call, each with what was done and what it cost.
A model call cut by a deadline or a cancellation still gets its frame, marked ``cut``."""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from runtime.agent.ledger import Ledger
from runtime.determinism import elapsed_ms
from runtime.guard import limits
from runtime.providers.base import Response, ToolCall
from runtime.values import plain

if TYPE_CHECKING:
    from runtime.engine.context import VerbContext


def fingerprint(tool: str, args: Any) -> str:
    """The canonical form of a call: sorted keys, compact JSON (reordered arguments collide)."""
    return json.dumps([tool, plain(args)], sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str)


def digest(canonical: str) -> str:
    return "sha256:" + hashlib.sha256(canonical.encode("utf-8")).hexdigest()


def summary(result: str) -> str:
    cut = result[: limits.TOOL_SUMMARY_CHARS]
    return cut + ("…" if len(result) > len(cut) else "")


def _ms(clock: Any, t0: float) -> float:
    """Milliseconds since ``t0`` on the run's clock (:mod:`runtime.determinism`)."""
    return elapsed_ms(clock, t0) if t0 else 0.0


@dataclass
class Audit:
    ctx: VerbContext
    ledger: Ledger
    by_wire: dict[str, str]

    def model(self, model: str, t0: float, reply: Response | None, code: str | None, fitted: dict[str, Any]) -> None:
        """One model request: its tokens and proposals, or the error (``cut``: the call never returned)."""
        led = self.ledger
        fields: list[tuple[str, Any]] = [
            ("task", self.ctx.task_id),
            ("phase", "model_call"),
            ("provider", model.partition("/")[0]),
            ("model", model),
            ("turn", led.turns + (0 if reply is not None else 1)),
            ("duration_ms", _ms(self.ctx.events.clock, t0)),
            *fitted.items(),
        ]
        if reply is not None:
            fields += [
                ("tokens_in", reply.tokens_in),
                ("tokens_out", reply.tokens_out),
                ("tokens_total", led.tokens),
                ("max_turns", led.max_turns),
                ("finish_reason", reply.finish_reason),
                ("tool_calls", [self.by_wire.get(c.name, c.name) for c in reply.tool_calls]),
            ]
        if code is not None:
            fields.append(("error_code", code))
        self.ctx.emit("verb_invoked", fields)

    def cut(self, model: str, t0: float, code: str, fitted: dict[str, Any]) -> None:
        """A model call in flight when the deadline hit (or the run was cancelled)."""
        self.model(model, t0, None, code, {**fitted, "cut": True})

    def tool(
        self, call: ToolCall, tool_id: str, status: str, code: str | None, t0: float, result: str | None = None
    ) -> None:
        canonical = fingerprint(tool_id, call.arguments) if call.arguments is not None else call.raw
        fields: list[tuple[str, Any]] = [
            ("task", self.ctx.task_id),
            ("phase", "agent"),
            ("tool", tool_id),
            ("turn", self.ledger.turns),
            ("status", status),
            ("duration_ms", _ms(self.ctx.events.clock, t0)),
            ("fingerprint", digest(canonical)),
            ("cost_usd", 0.0),  # builtin and MCP calls are unmetered; the model calls carry the spend
        ]
        if result is not None:
            fields.append(("result_summary", summary(result)))
        if code is not None:
            fields.append(("error_code", code))
        self.ctx.emit("tool_invoked", fields)

    def nudge(self, why: str) -> None:
        self.ctx.emit("agent_nudge", [("task", self.ctx.task_id), ("why", why), ("turn", self.ledger.turns)])
