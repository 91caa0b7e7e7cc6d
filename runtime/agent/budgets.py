"""Budgets first (seed "one turn, precisely"): every envelope is checked *before* a model call,
and the call itself is fitted so that it cannot overshoot one.

:func:`fit_call` estimates the call's input tokens (:func:`runtime.agent.history.estimate_in`: the
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
from runtime.providers.models import output_ceiling

if TYPE_CHECKING:
    from runtime.engine.services import Services


def check_before(led: Ledger, envelope: Envelope) -> None:
    """Before every model call (and every provider retry): the first spent envelope stops the loop."""
    if led.turns >= led.max_turns:
        raise stops.max_turns(led.max_turns)
    if led.tokens >= led.max_tokens_total:
        raise stops.token_budget(led.tokens, led.max_tokens_total)
    if envelope.max_cost_usd is not None and led.cost_usd >= envelope.max_cost_usd:
        raise stops.cost_budget(led.cost_usd, envelope.max_cost_usd, envelope.cost_source)
    if envelope.time_left() <= limits.MIN_CALL_WINDOW_S:
        raise stops.deadline(envelope.deadline_source)


# what set an admitted call's output cap
BY_TOKENS, BY_COST, BY_MODEL = "token-budget", "cost-budget", "model-limit"


@dataclass(frozen=True)
class CallBudget:
    """What one call may spend: its output cap, its input estimate and the basis of it
    (``provider`` or ``heuristic``), and its HTTP timeout (the time left, less a margin)."""

    max_tokens: int
    input_estimate: int
    input_basis: str
    timeout_s: float
    capped_by: str = BY_MODEL

    def frame(self) -> dict[str, object]:
        return {
            "max_tokens": self.max_tokens,
            "capped_by": self.capped_by,
            "input_estimate": self.input_estimate,
            "input_basis": self.input_basis,
        }


def fit_call(led: Ledger, envelope: Envelope, services: Services, model: str, est: tuple[int, str]) -> CallBudget:
    """The call's budget, or the stop (before sending) when no useful call fits."""
    est_in, basis = est
    room, ceiling = led.max_tokens_total - led.tokens - est_in, output_ceiling(model)
    cap, by = (room, BY_TOKENS) if room < ceiling else (ceiling, BY_MODEL)
    if cap < limits.MIN_USEFUL_OUTPUT_TOKENS:
        raise stops.token_budget(led.tokens, led.max_tokens_total, est_in)
    if envelope.max_cost_usd is not None and services.is_priced(model):
        left = envelope.max_cost_usd - led.cost_usd - services.cost_of(model, est_in, 0)
        per_out = (services.cost_of(model, est_in, 1_000_000) - services.cost_of(model, est_in, 0)) / 1_000_000
        afford = (int(left / per_out) if left > 0 else 0) if per_out > 0 else (cap if left >= 0 else 0)
        if afford < cap:
            cap, by = afford, BY_COST
        if cap < limits.MIN_USEFUL_OUTPUT_TOKENS:
            raise stops.cost_budget(led.cost_usd, envelope.max_cost_usd, envelope.cost_source, next_call=True)
    left_s = envelope.time_left()
    expected = led.last_call_s if led.last_call_s is not None else limits.FIRST_CALL_EXPECTED_S
    if expected > left_s - limits.DEADLINE_MARGIN_S:
        raise stops.deadline(envelope.deadline_source, expected=(expected, left_s))
    # end the call a little before the deadline, so the loop (not the task clock) records why it stopped
    timeout = max(limits.MIN_CALL_WINDOW_S, left_s - limits.DEADLINE_MARGIN_S)
    return CallBudget(cap, est_in, basis, timeout, by)
