"""The plan: the graph's waves, the width (most tasks in one wave) and a critical path (a longest
chain of scheduling edges, counted in tasks)."""

from __future__ import annotations

from typing import Any, NamedTuple

from checker.model.graph import Graph
from checker.model.workflow import Workflow


class Plan(NamedTuple):
    tasks: int
    waves: tuple[tuple[str, ...], ...]
    width: int
    critical_path: tuple[str, ...]
    unscheduled: tuple[str, ...]  # tasks on (or behind) a cycle: no wave

    def to_json(self) -> dict[str, Any]:
        return {
            "tasks": self.tasks,
            "waves": [list(w) for w in self.waves],
            "width": self.width,
            "critical_path": list(self.critical_path),
            "unscheduled": list(self.unscheduled),
        }


def plan_of(wf: Workflow, graph: Graph) -> Plan:
    waves = graph.waves
    scheduled = [t for w in waves for t in w]
    wave_of = {t: i for i, w in enumerate(waves) for t in w}
    length: dict[str, int] = {}
    prev: dict[str, str | None] = {}
    for t in scheduled:  # wave order is a topological order
        best: str | None = None
        for e in graph.incoming(t):
            p = e.producer
            if p in length and (best is None or length[p] > length[best]):
                best = p
        length[t] = 1 + (length[best] if best is not None else 0)
        prev[t] = best
    path: list[str] = []
    if scheduled:
        pos = {t: i for i, t in enumerate(scheduled)}
        end = max(scheduled, key=lambda t: (length[t], -pos[t]))
        cur: str | None = end
        while cur is not None:
            path.append(cur)
            cur = prev[cur]
        path.reverse()
    return Plan(
        tasks=len(wf.tasks),
        waves=waves,
        width=max((len(w) for w in waves), default=0),
        critical_path=tuple(path),
        unscheduled=tuple(t for t in graph.nodes if t not in wave_of),
    )
