"""Budgets first (seed "one turn, precisely"): every envelope is checked *before* a model call,
and the call itself is admitted so that it cannot overshoot one.

Admission estimates the call's input tokens (:func:`runtime.agent.history.estimate_in`: the
provider's own count when it gave one, else the estimator) and caps its output so that tokens
spent + input + output cap stays inside ``max_tokens_total``, priced the same way against the cost
ceiling, never above the model's documented output maximum. When no useful call fits, the loop
stops with the budget's reason and sends nothing."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from runtime.agent import stops
from runtime.agent.ledger import Envelope, Ledger
from runtime.guard import limits

if TYPE_CHECKING:
    from runtime.services import Services


def check_before(led: Ledger, env: Envelope) -> None:
    """Before every model call (and every provider retry): the first spent envelope stops the loop."""
    if led.turns >= led.max_turns:
        raise stops.max_turns(led.max_turns)
    if led.tokens >= led.max_tokens_total:
        raise stops.token_budget(led.tokens, led.max_tokens_total)
    if env.max_cost_usd is not None and led.cost_usd >= env.max_cost_usd:
        raise stops.cost_budget(led.cost_usd, env.max_cost_usd, env.cost_source)
    if env.time_left() <= limits.MIN_CALL_WINDOW_S:
        raise stops.deadline(env.deadline_source)


@dataclass(frozen=True)
class Admission:
    """What one admitted call may spend: its output cap, its input estimate and the basis of it
    (``provider`` or ``heuristic``), and its HTTP timeout (the time left, less a margin)."""

    max_tokens: int
    input_estimate: int
    input_basis: str
    timeout_s: float

    def frame(self) -> dict[str, object]:
        return {"max_tokens": self.max_tokens, "input_estimate": self.input_estimate, "input_basis": self.input_basis}


def output_ceiling(model: str) -> int:
    return limits.MODEL_MAX_OUTPUT_TOKENS.get(model, limits.DEFAULT_MAX_OUTPUT_TOKENS)


def admit(led: Ledger, env: Envelope, services: Services, model: str, est: tuple[int, str]) -> Admission:
    """The call's budget, or the stop (before sending) when no useful call fits."""
    est_in, basis = est
    cap = min(led.max_tokens_total - led.tokens - est_in, output_ceiling(model))
    if cap < limits.MIN_USEFUL_OUTPUT_TOKENS:
        raise stops.token_budget(led.tokens, led.max_tokens_total, est_in)
    if env.max_cost_usd is not None and services.is_priced(model):
        room = env.max_cost_usd - led.cost_usd - services.cost_of(model, est_in, 0)
        per_out = services.cost_of(model, 0, 1_000_000) / 1_000_000
        if per_out > 0:
            cap = min(cap, int(room / per_out)) if room > 0 else 0
        elif room < 0:
            cap = 0
        if cap < limits.MIN_USEFUL_OUTPUT_TOKENS:
            raise stops.cost_budget(led.cost_usd, env.max_cost_usd, env.cost_source, next_call=True)
    # end the call a little before the deadline, so the loop (not the task clock) records why it stopped
    timeout = max(limits.MIN_CALL_WINDOW_S, env.time_left() - limits.DEADLINE_MARGIN_S)
    return Admission(cap, est_in, basis, timeout)
