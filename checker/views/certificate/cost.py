"""The worst-case spend of a workflow: one :class:`Spend` per part that may cost money (a model
task's verb or cleanup step, a child workflow, a builtin that reports ``cost_usd``), and the
:class:`Cost` they add up to (a ceiling, a floor, or unknown)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, NamedTuple

from checker.model.workflow import Agent, Infer, Invoke, Task, Workflow
from checker.views.certificate.prices import FREE_PROVIDERS, Price, PriceTable
from checker.views.certificate.static_values import attempts_of, item_count, literal_text, parts_of, static_int
from checker.views.certificate.words import format_usd, name_list


class Spend(NamedTuple):
    """One part of a task that may spend money: its verb, or one ``on_finally`` step.

    ``status`` is ``ceiling`` (``usd`` is the worst case), ``unbounded`` (priced, but no token
    cap or no static item count) or ``unpriced`` (no price is known). ``tokens`` is the cap of one
    run (``max_tokens``, or an agent's ``max_tokens_total``); ``items`` is ``None`` when only the
    run knows how many ``for_each`` items there are; ``capped`` holds whatever the price: the
    spend has a limit (a token cap, or a free model)."""

    task: str
    part: str | None
    kind: str  # infer | agent | tool | workflow
    model: str | None
    status: str
    usd: float | None
    tokens: int | None
    attempts: int
    items: int | None
    turns: int | None
    capped: bool
    reason: str | None

    def to_json(self) -> dict[str, Any]:
        return {
            "task": self.task,
            "part": self.part,
            "kind": self.kind,
            "model": self.model,
            "status": self.status,
            "usd": _round(self.usd),
            "max_tokens": self.tokens,
            "attempts": self.attempts,
            "items": self.items,
            "max_turns": self.turns,
            "reason": self.reason,
        }


def _round(usd: float | None) -> float | None:
    return None if usd is None else round(usd, 10)


class Cost(NamedTuple):
    """``kind``: ``none`` (nothing spends), ``ceiling`` (``usd`` bounds the spend), ``floor`` (some
    priced part is unbounded: the worst case is at least ``usd``), ``unknown`` (some part is
    unpriced; ``bounded_usd`` is what the priced, bounded parts can spend at most)."""

    kind: str
    usd: float | None
    bounded_usd: float
    spends: tuple[Spend, ...]
    prices: PriceTable

    def of_task(self, tid: str) -> tuple[Spend, ...]:
        return tuple(s for s in self.spends if s.task == tid)

    def to_json(self) -> dict[str, Any]:
        models = sorted({s.model for s in self.spends if s.model and s.kind in ("infer", "agent")})
        rows = []
        for m in models:
            p = self.prices.get(m)
            rows.append(
                {
                    "model": m,
                    "input_per_million": p.input_per_million if p else None,
                    "output_per_million": p.output_per_million if p else None,
                    "source": (p.source or self.prices.source) if p else None,
                }
            )
        return {
            "currency": "USD",
            "total": {"kind": self.kind, "usd": _round(self.usd)},
            "bounded_usd": _round(self.bounded_usd),
            "unbounded": tasks_with(self.spends, "unbounded"),
            "unpriced": tasks_with(self.spends, "unpriced"),
            "tasks": [s.to_json() for s in self.spends],
            "pricing": {"source": self.prices.source, "error": self.prices.error, "models": rows},
        }

    def headline(self) -> str:
        """The total in words: ``≤ $0.0040``, ``at least $0.0040 …``, ``unknown …``, ``$0 …``."""
        if self.kind == "none":
            return "$0 (no model calls)"
        if self.kind == "ceiling":
            return f"≤ {format_usd(self.usd)}" if self.usd else "$0 (no model call is billed)"
        unbounded = tasks_with(self.spends, "unbounded")
        if self.kind == "floor":
            return f"at least {format_usd(self.bounded_usd, up=False)}: no limit on {name_list(unbounded)}"
        unpriced = tasks_with(self.spends, "unpriced")
        known = f"; priced parts ≤ {format_usd(self.bounded_usd)}" if self.bounded_usd else ""
        more = f"; no limit on {name_list(unbounded)}" if unbounded else ""
        return f"unknown: no price for {name_list(unpriced)}{more}{known}"


def tasks_with(spends: tuple[Spend, ...], status: str) -> list[str]:
    out: list[str] = []
    for s in spends:
        if s.status == status and s.task not in out:
            out.append(s.task)
    return out


def _model_spend(
    task: Task, part: str | None, verb: Infer | Agent, consts: Mapping[str, Any], prices: PriceTable, once: bool
) -> Spend:
    model = literal_text(verb.effective_model)
    attempts = 1 if once else attempts_of(task)
    items = 1 if once else item_count(consts, task)
    if isinstance(verb, Infer):
        cap_field, cap, turns = "max_tokens", verb.max_tokens, None
    else:
        cap_field, cap, turns = "max_tokens_total", verb.max_tokens_total, verb.turn_budget
    tokens = static_int(consts, task, cap)
    provider = model.partition("/")[0] if model and "/" in model else None
    price = prices.get(model) if model else None
    mock = price is None and provider in FREE_PROVIDERS
    if mock:
        price = Price(0.0, 0.0)
    free = price is not None and price.free

    def spend(status: str, usd: float | None, reason: str | None) -> Spend:
        return Spend(
            task.id,
            part,
            verb.kind,
            model,
            status,
            usd,
            tokens,
            attempts,
            items,
            turns,
            tokens is not None or free,
            reason,
        )

    if price is None:
        if model is None:
            why = "the model is only known at run time" if verb.effective_model is not None else "no model is named"
        elif provider is not None and _is_local(provider):
            why = f"`{model}` runs on local hardware: no price"
        else:
            why = f"no price for `{model}`"
        return spend("unpriced", None, why)
    if free:
        return spend("ceiling", 0.0, "the mock provider calls no model" if mock else None)
    if tokens is None:
        why = f"no `{cap_field}`" if cap is None else f"`{cap_field}` is only known at run time"
        return spend("unbounded", None, why)
    if items is None:
        return spend("unbounded", None, "fans out over a list only the run knows")
    # an agent's budget counts every token of the loop, read and written
    rate = (
        price.output_per_million if isinstance(verb, Infer) else max(price.input_per_million, price.output_per_million)
    )
    return spend("ceiling", tokens * rate / 1_000_000 * attempts * items, None)


def _is_local(provider: str) -> bool:
    from checker.contracts import tables as contracts

    p = contracts.providers().get(provider)
    return p is not None and p.kind == "local"


def _reports_spend(tool: str) -> bool:
    """A builtin whose output carries ``cost_usd``: it spends money the check cannot price."""
    from checker.contracts import tables as contracts

    c = contracts.contract(tool)
    return c is not None and "cost_usd" in c.output


def _other_spend(task: Task, part: str | None, verb: Invoke, consts: Mapping[str, Any], once: bool) -> Spend | None:
    """A child workflow, or a builtin that reports a real spend: never priced here."""
    attempts = 1 if once else attempts_of(task)
    items = 1 if once else item_count(consts, task)

    def spend(kind: str, status: str, usd: float | None, reason: str) -> Spend:
        return Spend(task.id, part, kind, None, status, usd, None, attempts, items, None, True, reason)

    if verb.workflow is not None:
        return spend("workflow", "unpriced", None, "a child workflow: its own spend is not folded in")
    if verb.tool is None or not _reports_spend(verb.tool):
        return None
    provider = verb.args.get("provider") if verb.args is not None else None
    if literal_text(provider) == "mock":
        return spend("tool", "ceiling", 0.0, "the mock provider")
    return spend("tool", "unpriced", None, f"`{verb.tool}` reports its spend only after the call")


def cost_of(wf: Workflow, consts: Mapping[str, Any], prices: PriceTable) -> Cost:
    spends: list[Spend] = []
    for task in wf.tasks.values():
        for part, verb, once in parts_of(task):
            s: Spend | None = None
            if isinstance(verb, Infer | Agent):
                s = _model_spend(task, part, verb, consts, prices, once)
            elif isinstance(verb, Invoke):
                s = _other_spend(task, part, verb, consts, once)
            if s is not None:
                spends.append(s)
    bounded = sum((s.usd for s in spends if s.status == "ceiling" and s.usd is not None), 0.0)
    statuses = {s.status for s in spends}
    if not spends:
        kind, usd = "none", 0.0
    elif "unpriced" in statuses:
        kind, usd = "unknown", None
    elif "unbounded" in statuses:
        kind, usd = "floor", bounded
    else:
        kind, usd = "ceiling", bounded
    return Cost(kind, usd, bounded, tuple(spends), prices)
