"""What a run spends on models, and the cap on it (``nika run --max-cost-usd``).

One price table: the certificate's (:mod:`checker.views.certificate.prices`: a ``NIKA_PRICES`` row,
else the model catalog's list price; the ``mock`` provider is free). Every model call of a run, from ``infer:`` or an
agent's turn, goes through the provider :meth:`CostMeter.wrap` returns, so the meter sees each
call twice:

* **before** it is sent, under a cap: the call's worst case (the request's bytes as input
  tokens, its ``max_tokens`` or the model's output ceiling as output) must fit what is left, and
  a model the table cannot price is refused, since its cost cannot be bounded. The refusal is a
  budget error (``NIKA-AGENT-002``, ``details.budget = "run.max_cost_usd"``) and nothing is sent;
* **after**: its price rides the call's own model-call frame (``verb_invoked``, ``phase:
  model_call``) as ``cost_usd`` (``null`` when unpriced, never ``0``; :meth:`CostMeter.annotate`,
  whoever emits the frame), and is summed per task and per run. A call and its frame follow each
  other with no ``await`` between, so the price is the frame's own.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from contextvars import ContextVar
from typing import Any

from checker.views.certificate.prices import FREE_PROVIDERS, PriceTable, prices_from_env
from runtime.errors import TaskError
from runtime.guard import limits
from runtime.providers.base import Provider, Request, Response

BUDGET_CODE = "NIKA-AGENT-002"  # the spec's budget_error; the run cap is told apart by details.budget
CURRENT_TASK: ContextVar[str | None] = ContextVar("nika_current_task", default=None)


class CostMeter:
    def __init__(
        self,
        table: PriceTable,
        cap: float | None,
        parent: CostMeter | None = None,
    ) -> None:
        self.table, self.cap = table, cap
        # a child workflow's meter: its calls also count against (and are bounded by) the caller's run
        self.parent, self.parent_task = parent, CURRENT_TASK.get() if parent is not None else None
        self.spent = 0.0
        self.by_task: dict[str, float] = {}
        self.unknown: set[str] = set()  # tasks with a call the table could not price
        self.by_provider: dict[str, float] = {}
        self.unknown_providers: set[str] = set()  # providers with a call the table could not price
        self.calls = 0
        self._unframed: dict[str, list[float | None]] = {}  # priced calls whose frame is not out yet
        self._wrapped: dict[str, MeteredProvider] = {}  # by prefix: one wrapper per provider (two look-ups a call)

    @classmethod
    def for_run(cls, env: Mapping[str, str], cap: float | None, parent: CostMeter | None) -> CostMeter:
        return cls(prices_from_env(env), cap, parent)

    def usd(self, model: str, tokens_in: int, tokens_out: int) -> float | None:
        """The price of a call; ``None`` when the table has no row for ``model``."""
        if model.partition("/")[0] in FREE_PROVIDERS:
            return 0.0
        p = self.table.get(model)
        if p is None:
            return None
        return p.usd(tokens_in, tokens_out)

    def ensure_fits(self, model: str, request: Request) -> None:
        """Refuse the call before it is sent when the cap cannot be kept."""
        if self.parent is not None:
            self.parent.ensure_fits(model, request)
        if self.cap is None:
            return
        worst = self.usd(model, _estimate_in(request), _max_out(model, request))
        where = {"budget": "run.max_cost_usd", "max_cost_usd": self.cap, "spent_usd": round(self.spent, 6)}
        if worst is None:
            raise TaskError(
                BUDGET_CODE,
                f"the run has a ${self.cap:g} cost cap and `{model}` has no price, neither in the model catalog "
                "(`nika catalog`) nor in NIKA_PRICES, so the cost of this call cannot be bounded and it was not "
                f'sent: give its price (NIKA_PRICES=\'{{"{model}": {{"input": USD, "output": USD}}}}\', per million '
                "tokens) or remove the cap",
                details={**where, "model": model},
            )
        if self.spent + worst > self.cap:
            raise TaskError(
                BUDGET_CODE,
                f"the run spent ${self.spent:.6f} of its ${self.cap:g} cost cap; the next `{model}` call could cost "
                f"up to ${worst:.6f}, so it was not sent"
                + ("" if request.max_tokens else " (a `max_tokens:` on the task bounds a call)"),
                details={**where, "model": model, "worst_case_usd": round(worst, 6)},
            )

    def record(self, model: str, reply: Response) -> None:
        tid = CURRENT_TASK.get() or "?"
        cost = self.usd(model, reply.tokens_in, reply.tokens_out)
        provider = model.partition("/")[0]
        if self.parent is not None:
            self.parent.add(self.parent_task or "?", cost, provider)
        self.calls += 1
        self._count(tid, cost, provider)
        self._unframed.setdefault(tid, []).append(round(cost, 9) if cost is not None else None)

    def annotate(self, kind: str, fields: list[tuple[str, Any]]) -> list[tuple[str, Any]]:
        """A model-call frame gets its call's ``cost_usd`` (and the run's spend so far)."""
        if kind != "verb_invoked" or ("phase", "model_call") not in fields or any(k == "cost_usd" for k, _ in fields):
            return fields
        tid = next((v for k, v in fields if k == "task"), None)
        pending = self._unframed.get(tid) if isinstance(tid, str) else None
        if not pending:
            return fields
        return [*fields, ("cost_usd", pending.pop(0)), ("run_cost_usd", round(self.spent, 9))]

    def add(self, tid: str, cost: float | None, provider: str | None = None) -> None:
        """A child workflow's call, counted here (journaled in the child's own trace)."""
        if self.parent is not None:
            self.parent.add(self.parent_task or "?", cost, provider)
        self._count(tid, cost, provider)

    def _count(self, tid: str, cost: float | None, provider: str | None) -> None:
        if cost is None:
            self.unknown.add(tid)
            if provider is not None:
                self.unknown_providers.add(provider)
            return
        self.spent += cost
        self.by_task[tid] = self.by_task.get(tid, 0.0) + cost
        if provider is not None:
            self.by_provider[provider] = self.by_provider.get(provider, 0.0) + cost

    def left(self) -> float | None:
        """What the cap leaves, the callers' caps included (``None`` without any cap)."""
        mine = None if self.cap is None else max(0.0, self.cap - self.spent)
        up = self.parent.left() if self.parent is not None else None
        return up if mine is None else (mine if up is None else min(mine, up))

    def task_cost(self, tid: str) -> tuple[float | None, bool]:
        """``(usd, known)``: ``None`` when the task made no priced call; ``known`` false when one was unpriced."""
        usd = self.by_task.get(tid)
        return (round(usd, 9) if usd is not None else None), tid not in self.unknown

    def total(self) -> float | None:
        """The run's spend; ``None`` when a call could not be priced (unknown, never 0)."""
        return None if self.unknown else round(self.spent, 9)

    def wrap(self, provider: Provider, model_prefix: str) -> Provider:
        """``provider`` bounded and priced by this meter (the wrapper holds no state of its own, so
        one per provider serves every call)."""
        found = self._wrapped.get(model_prefix)
        if found is None or found.inner is not provider:
            found = self._wrapped[model_prefix] = MeteredProvider(provider, self, model_prefix)
        return found


class MeteredProvider(Provider):
    """A provider whose every call the meter bounds first (:meth:`CostMeter.ensure_fits`) and prices after."""

    def __init__(self, inner: Provider, meter: CostMeter, prefix: str) -> None:
        self.inner, self.meter, self.prefix = inner, meter, prefix
        self.id = inner.id

    async def complete(self, name: str, request: Request) -> Response:
        model = f"{self.prefix}/{name}"
        self.meter.ensure_fits(model, request)
        reply = await self.inner.complete(name, request)
        self.meter.record(model, reply)
        return reply

    def __getattr__(self, attr: str) -> Any:
        return getattr(self.inner, attr)


def _estimate_in(request: Request) -> int:
    body = json.dumps(
        [request.system, request.prompt, [repr(m) for m in request.messages], [repr(t) for t in request.tools]],
        ensure_ascii=False,
        default=str,
    )
    return -(-len(body.encode("utf-8")) // limits.ESTIMATE_BYTES_PER_TOKEN)


def _max_out(model: str, request: Request) -> int:
    if isinstance(request.max_tokens, int) and request.max_tokens > 0:
        return request.max_tokens
    from runtime.providers.models import output_ceiling

    return output_ceiling(model)


def static_bound(compiled: Any, env: Mapping[str, str]) -> dict[str, Any] | None:
    """The certificate's worst-case spend of the workflow (shown beside what the run spent)."""
    from checker.views.certificate.cost import cost_of
    from checker.views.certificate.static_values import const_scope

    wf = compiled.workflow
    if wf is None:
        return None
    cost = cost_of(wf, const_scope(wf), prices_from_env(env))
    return {"kind": cost.kind, "usd": cost.usd, "headline": cost.headline()}
