"""The task graph, derived from the model: never declared, always computed (03 §four graphs).

Each ``tasks.X.<field>`` reference inside a ``with:`` value is one data edge X -> task whose
role follows the field (value, terminal-observation, failure-observation); each ``after:``
entry is one control edge. Recovery references (``on_error.recover``) are recorded separately:
they are not scheduling edges. The precedence graph (data ∪ control) must be acyclic.
"""

from __future__ import annotations

from functools import cached_property, lru_cache

from checker.core.memo import RuleMemo, memoised
from checker.core.records import field, record
from checker.core.source import Span
from checker.core.vocab import ALL_STATES, OBSERVATION_FIELDS, EdgeRole, Predicate, Status, Where
from checker.model.workflow import ExprSite, Task, Workflow

VALUE_PASS = frozenset({Status.SUCCESS, Status.SKIPPED})
FAILURE_PASS = frozenset({Status.FAILURE, Status.SKIPPED})


def edge_kind(field_name: str | None) -> EdgeRole:
    """The role of a data edge created by reading ``tasks.X.<field_name>``."""
    if field_name in OBSERVATION_FIELDS:
        return EdgeRole.TERMINAL_OBSERVATION
    if field_name == "error":
        return EdgeRole.FAILURE_OBSERVATION
    return EdgeRole.VALUE


@lru_cache(maxsize=64)
def pass_set(kind: str, predicate: str | None = None) -> frozenset[str]:
    """Producer states that let an edge of this kind through (gate algebra v2)."""
    if kind == EdgeRole.CONTROL:
        return ALL_STATES if predicate == Predicate.TERMINAL else frozenset({predicate or ""})
    if kind in (EdgeRole.TERMINAL_OBSERVATION, EdgeRole.RECOVERY):
        return ALL_STATES
    if kind == EdgeRole.FAILURE_OBSERVATION:
        return FAILURE_PASS
    return VALUE_PASS


@record
class Edge:
    """``producer -> consumer``; ``label`` is the field read (data edges) or the predicate (control)."""

    producer: str
    consumer: str
    kind: EdgeRole
    label: str | None
    span: Span
    binding: str | None = None

    @property
    def schedules(self) -> bool:
        return self.kind != EdgeRole.RECOVERY

    @property
    def passes(self) -> frozenset[str]:
        return pass_set(self.kind, self.label)


@record(slots=False)
class Graph:
    """Nodes in declaration order plus every edge (scheduling and recovery)."""

    nodes: tuple[str, ...]
    edges: tuple[Edge, ...]
    _succ: dict[str, list[Edge]] = field(default_factory=dict, repr=False)
    _pred: dict[str, list[Edge]] = field(default_factory=dict, repr=False)

    def __post_init__(self) -> None:
        succ, pred = self._succ, self._pred
        for n in self.nodes:
            succ.setdefault(n, [])
            pred.setdefault(n, [])
        recovery = EdgeRole.RECOVERY
        for e in self.edges:
            if e.kind != recovery:  # (Edge.schedules)
                out, into = succ.get(e.producer), pred.get(e.consumer)
                if out is not None and into is not None:
                    out.append(e)
                    into.append(e)

    def incoming(self, task: str) -> list[Edge]:
        """Scheduling edges into ``task``."""
        return self._pred.get(task, [])

    def outgoing(self, task: str) -> list[Edge]:
        return self._succ.get(task, [])

    def recovery_edges(self) -> list[Edge]:
        return [e for e in self.edges if e.kind == EdgeRole.RECOVERY]

    def upstream(self, task: str) -> set[str]:
        """Every task ``task`` transitively waits for."""
        return self._reach(task, forward=False)

    def downstream(self, task: str) -> set[str]:
        """Every task that transitively waits for ``task``."""
        return self._reach(task, forward=True)

    def _reach(self, task: str, *, forward: bool) -> set[str]:
        seen: set[str] = set()
        stack = [task]
        while stack:
            node = stack.pop()
            for e in self.outgoing(node) if forward else self.incoming(node):
                nxt = e.consumer if forward else e.producer
                if nxt not in seen:
                    seen.add(nxt)
                    stack.append(nxt)
        return seen

    def find_cycle(self) -> list[Edge] | None:
        """One cycle of scheduling edges, as the list of its edges, starting at the earliest node.

        Deterministic: nodes and edges are explored in declaration order.
        """
        color: dict[str, int] = dict.fromkeys(self.nodes, 0)
        for root in self.nodes:
            if color[root]:
                continue
            path: list[Edge] = []
            stack: list[tuple[str, int]] = [(root, 0)]
            color[root] = 1
            while stack:
                node, i = stack[-1]
                out = self._succ[node]
                if i < len(out):
                    stack[-1] = (node, i + 1)
                    e = out[i]
                    c = color.get(e.consumer, 2)
                    if c == 1:
                        # cycle: from e.consumer along the current path back to node, then e
                        start = next((k for k, pe in enumerate(path) if pe.producer == e.consumer), len(path))
                        return [*path[start:], e]
                    if c == 0:
                        color[e.consumer] = 1
                        path.append(e)
                        stack.append((e.consumer, 0))
                else:
                    color[node] = 2
                    stack.pop()
                    if path:
                        path.pop()
        return None

    @cached_property
    def waves(self) -> tuple[tuple[str, ...], ...]:
        """Kahn levels over the scheduling edges; tasks on a cycle are left out."""
        indeg = {n: len(self.incoming(n)) for n in self.nodes}
        order = {n: i for i, n in enumerate(self.nodes)}  # declaration order inside a wave
        level = [n for n in self.nodes if indeg[n] == 0]
        out: list[tuple[str, ...]] = []
        while level:
            out.append(tuple(level))
            nxt: set[str] = set()
            for n in level:
                for e in self.outgoing(n):
                    indeg[e.consumer] -= 1
                    if indeg[e.consumer] == 0:
                        nxt.add(e.consumer)
            level = sorted(nxt, key=order.__getitem__)
        return tuple(out)

    @cached_property
    def _wave_index(self) -> dict[str, int]:
        return {task: i for i, wave in enumerate(self.waves) for task in wave}

    def wave_of(self, task: str) -> int | None:
        return self._wave_index.get(task)


def build_graph(wf: Workflow, sites: tuple[ExprSite, ...] | list[ExprSite], memo: RuleMemo | None = None) -> Graph:
    """Derive every edge of the workflow from its ``with:`` references, ``after:`` and ``recover``.

    A site's edges, and a task's ``after:`` edges, depend on that object alone: with a ``memo``
    (the language server's) an unchanged one gives back the very edges it gave last time.
    """
    edges: list[Edge] = []
    if memo is None:
        for site in sites:
            if site.task is not None and site.where in _EDGE_SITES:
                edges.extend(_site_edges(site))
        for task in wf.tasks.values():
            if task.after:
                edges.extend(_after_edges(task))
    else:
        prev, cur = memo.tables("graph.site")
        for site in sites:
            if site.task is not None and site.where in _EDGE_SITES:
                hit = prev.get(id(site))
                if hit is None or hit[0] is not site:
                    hit = (site, (), _site_edges(site))
                cur[id(site)] = hit
                edges.extend(hit[2])
        for task in wf.tasks.values():
            if task.after:
                edges.extend(memoised(memo, "graph.after", task, lambda t=task: _after_edges(t)))
    return Graph(tuple(wf.tasks), tuple(edges))


_EDGE_SITES = (Where.WITH, Where.RECOVER)


def _site_edges(site: ExprSite) -> tuple[Edge, ...]:
    task = site.task
    assert task is not None
    binding = site.binding
    recovery = site.where == Where.RECOVER
    out = []
    for _island, ref, span in site.references():
        path = ref.path
        if ref.root != "tasks" or not path or not isinstance(path[0], str):
            continue
        fld = path[1] if len(path) > 1 and isinstance(path[1], str) else None
        kind = EdgeRole.RECOVERY if recovery else edge_kind(fld)
        out.append(Edge(path[0], task, kind, fld, span, binding))
    return tuple(out)


def _after_edges(task: Task) -> tuple[Edge, ...]:
    return tuple(
        Edge(a.producer, task.id, EdgeRole.CONTROL, a.predicate, a.key.span)
        for a in task.after
        if a.predicate is not None
    )
