"""Why the run stops: an acyclic graph, and a bound on every repetition (``for_each`` items, retry
attempts, agent turns); processes and MCP calls without ``timeout:`` are named."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, NamedTuple

from checker.model.graph import Graph
from checker.model.workflow import Agent, Exec, Invoke, Verb, Workflow
from checker.views.certificate.static_values import attempts_of, item_count
from checker.views.certificate.words import name_list


class Loop(NamedTuple):
    """One repetition the run bounds: ``for_each`` items, retry attempts or agent turns."""

    task: str
    kind: str  # for_each | retry | agent
    bound: int | None  # None: fixed at run time

    def to_json(self) -> dict[str, Any]:
        return {"task": self.task, "kind": self.kind, "bound": self.bound}


class Termination(NamedTuple):
    """``verdict``: ``bounded`` (every repetition has a bound the check knows), ``run-time``
    (some bound is fixed when the run starts: still finite) or ``cyclic`` (no run: a cycle)."""

    verdict: str
    cycle: tuple[str, ...]
    loops: tuple[Loop, ...]
    untimed: tuple[str, ...]
    statement: str

    def to_json(self) -> dict[str, Any]:
        return {
            "verdict": self.verdict,
            "acyclic": not self.cycle,
            "cycle": list(self.cycle),
            "loops": [lp.to_json() for lp in self.loops],
            "untimed": list(self.untimed),
            "statement": self.statement,
        }


def termination_of(wf: Workflow, graph: Graph, consts: Mapping[str, Any]) -> Termination:
    loops: list[Loop] = []
    untimed: list[str] = []
    for task in wf.tasks.values():
        if task.for_each is not None:
            loops.append(Loop(task.id, "for_each", item_count(consts, task)))
        if task.retry is not None and attempts_of(task) > 1:
            loops.append(Loop(task.id, "retry", attempts_of(task)))
        if isinstance(task.verb, Agent):
            loops.append(Loop(task.id, "agent", task.verb.turn_budget))
        if task.timeout is None and _waits_outside(task.verb):
            untimed.append(task.id)
    cycle_edges = graph.find_cycle()
    cycle: tuple[str, ...] = ()
    if cycle_edges:
        cycle = (*(e.producer for e in cycle_edges), cycle_edges[-1].consumer)
    if cycle:
        verdict = "cyclic"
        statement = f"No run: {' → '.join(f'`{t}`' for t in cycle)} form a cycle (NIKA-DAG-001)."
    else:
        late = [lp for lp in loops if lp.bound is None]
        verdict = "run-time" if late else "bounded"
        n = len(graph.waves)
        parts = [f"the graph is acyclic ({n} wave{'s' if n != 1 else ''})"]
        parts += [_loop_text(lp) for lp in loops]
        lead = "Ends" if not late else "Ends; some bounds are fixed when the run starts"
        statement = f"{lead}: {'; '.join(parts)}."
    if untimed:
        statement += (
            f" {name_list(untimed)} wait{'s' if len(untimed) == 1 else ''} on a process or MCP server with no "
            "`timeout:`: only that program bounds the wait."
        )
    return Termination(verdict, cycle, tuple(loops), tuple(untimed), statement)


def _loop_text(lp: Loop) -> str:
    if lp.kind == "for_each":
        if lp.bound is None:
            return f"`{lp.task}` runs once per item of a list the run computes (finite, evaluated once)"
        return f"`{lp.task}` runs for {lp.bound} item{'s' if lp.bound != 1 else ''}"
    if lp.kind == "retry":
        return f"`{lp.task}` makes at most {lp.bound} attempts"
    if lp.bound is None:
        return f"agent `{lp.task}` stops at a turn budget set at run time"
    return f"agent `{lp.task}` stops after at most {lp.bound} turns"


def _waits_outside(verb: Verb | None) -> bool:
    if isinstance(verb, Exec):
        return True
    return isinstance(verb, Invoke) and verb.tool is not None and verb.tool.startswith("mcp:")
