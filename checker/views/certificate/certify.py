"""The certificate of one workflow: its five parts computed from the compiled model, one document."""

from __future__ import annotations

from typing import Any, NamedTuple

from checker.model.workflow import CompiledWorkflow
from checker.views.certificate.cost import Cost, cost_of
from checker.views.certificate.needs import Effects, effects_of
from checker.views.certificate.prices import PriceTable
from checker.views.certificate.resources import Resources, resources_of
from checker.views.certificate.risk import Risk, risk_of
from checker.views.certificate.static_values import const_scope
from checker.views.certificate.termination import Termination, termination_of
from checker.views.certificate.waves import Plan, plan_of

CERTIFICATE_VERSION = 1


class Certificate(NamedTuple):
    workflow: str | None
    plan: Plan
    cost: Cost
    resources: Resources
    termination: Termination
    effects: Effects
    risk: Risk

    def to_json(self) -> dict[str, Any]:
        return {
            "certificate_version": CERTIFICATE_VERSION,
            "workflow": self.workflow,
            "plan": self.plan.to_json(),
            "cost": self.cost.to_json(),
            "resources": self.resources.to_json(),
            "termination": self.termination.to_json(),
            "effects": self.effects.to_json(),
            "risk": self.risk.to_json(),
        }


def certify(compiled: CompiledWorkflow, prices: PriceTable | None = None) -> Certificate | None:
    """The certificate of ``compiled``; ``None`` when the text produced no workflow model."""
    wf, graph = compiled.workflow, compiled.graph
    if wf is None or graph is None:
        return None
    prices = prices if prices is not None else PriceTable()
    consts = const_scope(wf)
    plan = plan_of(wf, graph)
    cost = cost_of(wf, consts, prices)
    term = termination_of(wf, graph, consts)
    fx = effects_of(compiled, wf)
    return Certificate(
        workflow=wf.id,
        plan=plan,
        cost=cost,
        resources=resources_of(wf, consts),
        termination=term,
        effects=fx,
        risk=risk_of(wf, graph, cost, term, fx),
    )
