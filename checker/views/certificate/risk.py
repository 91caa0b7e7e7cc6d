"""The one risk grade (``low`` · ``supervised`` · ``high`` · ``unbounded``) and its reasons."""

from __future__ import annotations

from typing import Any, NamedTuple

from checker.model.graph import Graph
from checker.model.workflow import Invoke, Workflow
from checker.views.certificate.cost import Cost
from checker.views.certificate.needs import Effects
from checker.views.certificate.termination import Termination

HUMAN_GATE = "nika:prompt"
#: the risk grades, mildest first
GRADES = ("low", "supervised", "high", "unbounded")


class Risk(NamedTuple):
    grade: str
    reasons: tuple[str, ...]

    def to_json(self) -> dict[str, Any]:
        return {"grade": self.grade, "reasons": list(self.reasons)}


def risk_of(wf: Workflow, graph: Graph, cost: Cost, term: Termination, fx: Effects) -> Risk:
    unbounded: list[str] = []
    if term.cycle:
        unbounded.append("the graph has a cycle")
    for s in cost.spends:
        if s.kind not in ("infer", "agent"):
            continue
        if not s.capped:
            field_name = "max_tokens" if s.kind == "infer" else "max_tokens_total"
            unbounded.append(f"`{s.task}` has no `{field_name}` known before the run")
        elif s.items is None:
            unbounded.append(f"`{s.task}` calls a model once per item of a list only the run knows")
    if unbounded:
        return Risk("unbounded", tuple(dict.fromkeys(unbounded)))
    gates = {t.id for t in wf.tasks.values() if isinstance(t.verb, Invoke) and t.verb.tool == HUMAN_GATE}
    open_: list[str] = []
    gated: list[str] = []
    for tid, what in fx.outward.items():
        line = f"`{tid}` {', '.join(what)}"
        if gates and graph.upstream(tid) & gates:
            gated.append(line + " after a human gate")
        else:
            open_.append(line)
    if fx.escapes:
        open_.append(
            f"{fx.escapes} need{'s' if fx.escapes != 1 else ''} fall{'s' if fx.escapes == 1 else ''} outside `permits:`"
        )
    if open_:
        return Risk("high", tuple(open_))
    if gated:
        return Risk("supervised", tuple(gated))
    return Risk("low", ("only reads, pure tools and model calls",))
