"""The task graph: NIKA-DAG-001 (cycle), -002 (unknown producer), -004 (recovery deadlock),
-006 (statically dead task) and -007 (status literal outside the vocabulary) (03)."""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Mapping

from checker.core.codes import report
from checker.core.diagnostics import Diagnostic, Edit, Fix, Label
from checker.core.memo import same
from checker.core.suggest import did_you_mean
from checker.core.vocab import ALL_STATES, OnErrorAction, Status, Where
from checker.expr import Island
from checker.expr.refs import Ref, is_status_ref, status_comparisons
from checker.model.graph import Edge, Graph
from checker.model.workflow import STATUSES, ExprSite, Task
from checker.parse.values import Literal
from checker.rules.support.context import RuleContext


def check_after_targets(ctx: RuleContext) -> Iterator[Diagnostic]:
    tasks = ctx.workflow.tasks
    for task in tasks.values():
        for a in task.after:
            if a.producer in tasks:
                continue
            guess = did_you_mean(a.producer, [t for t in tasks if t != task.id])
            yield report(
                "NIKA-DAG-002",
                a.key.span,
                f"`after:` names `{a.producer}`, which is not a task",
                f"Did you mean `{guess}`?" if guess else "Name a task declared under `tasks:`.",
                task=task.id,
                fixes=(Fix(f"Change to `{guess}`", (Edit(a.key.span, guess),)),) if guess else (),
            )


def check_cycles(ctx: RuleContext) -> Iterator[Diagnostic]:
    """Report every independent cycle once, each starting at its earliest edge in the file."""
    g = ctx.graph
    for _ in range(50):  # each round removes at least one edge; bounded for pathological graphs
        cycle = g.find_cycle()
        if not cycle:
            return
        k = min(range(len(cycle)), key=lambda i: (cycle[i].span.start, cycle[i].span.end))
        cycle = cycle[k:] + cycle[:k]
        yield _cycle_finding(cycle)
        drop = set(map(id, cycle))
        g = Graph(g.nodes, tuple(e for e in g.edges if id(e) not in drop))


def _cycle_finding(cycle: list[Edge]) -> Diagnostic:
    first = cycle[0]
    if len(cycle) == 1:
        return report(
            "NIKA-DAG-001",
            first.span,
            f"task `{first.consumer}` depends on itself",
            "Remove the self-reference; a task cannot wait for its own result.",
            task=first.consumer,
        )
    names = [e.producer for e in cycle] + [cycle[-1].consumer]
    return report(
        "NIKA-DAG-001",
        first.span,
        "the tasks form a cycle: " + " -> ".join(f"`{n}`" for n in names),
        "Break the cycle by removing one of these edges (a `with:` reference or an `after:` entry).",
        task=first.consumer,
        related=tuple(Label(e.span, f"`{e.consumer}` waits for `{e.producer}` ({_edge_text(e)})") for e in cycle[1:]),
    )


def _edge_text(e: Edge) -> str:
    if e.kind == "control":
        return f"after: {e.label}"
    return f"reads .{e.label}" if e.label else "data edge"


def check_recovery(ctx: RuleContext) -> Iterator[Diagnostic]:
    g = ctx.graph
    for e in g.recovery_edges():
        if e.producer not in ctx.workflow.tasks:
            continue
        if e.producer == e.consumer or e.consumer in g.upstream(e.producer):
            yield report(
                "NIKA-DAG-004",
                e.span,
                f"`{e.consumer}` recovers with `{e.producer}`, which runs after `{e.consumer}`",
                f"Recover from a task that does not depend on `{e.consumer}`, or use a literal value.",
                task=e.consumer,
            )


def reachable_states(task: Task) -> frozenset[str]:
    """States a task can settle in, judged statically (03 §static liveness)."""
    states = {Status.CANCELLED}
    literal_false = isinstance(task.when, Literal) and task.when.value is False
    if not literal_false:
        states |= {Status.SUCCESS, Status.FAILURE}
    skips = task.on_error is not None and task.on_error.action is OnErrorAction.SKIP
    if task.when is not None or task.for_each is not None or skips:
        states.add(Status.SKIPPED)
    return frozenset(states)


def check_dead_edges(ctx: RuleContext) -> Iterator[Diagnostic]:
    tasks = ctx.workflow.tasks
    g = ctx.graph
    memo = ctx.memo
    prev, cur = memo.tables("dag.dead") if memo is not None else ({}, {})
    reach_of: dict[str, frozenset[str]] = {}
    for task in tasks.values():
        incoming = g.incoming(task.id)
        if not incoming:
            continue
        # A task's incoming edges come from its own fields; what it finds depends on them and on
        # each producer: with the language server's memo, a clean task whose producers are the
        # very same objects is not judged again.
        hit = prev.get(id(task))
        if hit is not None and hit[0] is task and len(hit[1]) == len(incoming):
            deps = hit[1]
            one = len(deps) == 1
            if (deps[0] is tasks.get(incoming[0].producer)) if one else same(deps, _producers(incoming, tasks)):
                cur[id(task)] = hit
                continue
        found = tuple(_dead_edges(task, incoming, tasks, reach_of))
        if memo is not None and not found:
            cur[id(task)] = (task, _producers(incoming, tasks), found)
        yield from found


def _producers(incoming: list[Edge], tasks: Mapping[str, Task]) -> tuple[Task | None, ...]:
    return tuple([tasks.get(e.producer) for e in incoming])


def _dead_edges(
    task: Task, incoming: list[Edge], tasks: Mapping[str, Task], reach_of: dict[str, frozenset[str]]
) -> Iterator[Diagnostic]:
    by_producer: dict[str, list[Edge]] = {}
    for e in incoming:
        if e.producer in tasks and e.producer != task.id:
            by_producer.setdefault(e.producer, []).append(e)
    for producer, edges in by_producer.items():
        allowed = set(ALL_STATES)
        for e in edges:
            allowed &= e.passes
        reach = reach_of.get(producer)
        if reach is None:
            reach = reach_of[producer] = reachable_states(tasks[producer])
        if allowed & reach:
            continue
        e = next((x for x in edges if x.kind == "control"), edges[0])
        can = ", ".join(s for s in STATUSES if s in reach)
        yield report(
            "NIKA-DAG-006",
            e.span,
            f"task `{task.id}` can never run: its edges from `{producer}` only pass on "
            f"{_states(allowed)}, but `{producer}` can only end {can}",
            _dead_help(producer, allowed),
            task=task.id,
            related=(Label(tasks[producer].key.span, f"`{producer}` declared here"),),
            tags=("unnecessary",),
        )


def _states(states: set[str]) -> str:
    if not states:
        return "no state at all (the edges contradict each other)"
    return " or ".join(s for s in STATUSES if s in states)


def _dead_help(producer: str, allowed: set[str]) -> str:
    if allowed == {"skipped"}:
        return (
            f"Give `{producer}` a way to be skipped (`when:` or `on_error: {{skip: true}}`), or change the predicate."
        )
    if allowed == {"failure"}:
        return f"`{producer}` never runs its verb; change the predicate or the producer's `when:`."
    return "Change the `after:` predicate (or the fields read) so the edge can pass."


# A status comparison needs `==`, `!=` or `in`: islands without one are not walked at all.
_COMPARES = re.compile(r"[=!]=|\bin\b")


def check_status_literals(ctx: RuleContext) -> Iterator[Diagnostic]:
    memo = ctx.memo
    if memo is None:
        status_bindings = _status_bindings(ctx)
        for site in ctx.sites:
            yield from _site_status_literals(site, status_bindings.get(site.task or "", set()))
        return
    # A site's findings depend on it and on its task's status bindings, which its task's own
    # sites make: with the language server's memo, an unchanged task's sites are not judged again.
    tasks = ctx.workflow.tasks
    prev, cur = memo.tables("dag.status")
    bindings: dict[str, set[str]] = {}
    by_task: dict[str, list[ExprSite]] | None = None
    for site in ctx.sites:
        task = tasks.get(site.task) if site.task else None
        hit = prev.get(id(site))
        if task is not None and hit is not None and hit[0] is site and hit[1][0] is task:
            cur[id(site)] = hit
            yield from hit[2]
            continue
        tid = site.task or ""
        if tid not in bindings:  # only the tasks that changed are looked at again
            if by_task is None:
                by_task = _with_sites(ctx.sites)
            bindings[tid] = _status_bindings(ctx, by_task.get(tid, ())).get(tid, set())
        found = tuple(_site_status_literals(site, bindings[tid]))
        if task is not None:
            cur[id(site)] = (site, (task,), found)
        yield from found


def _site_status_literals(site: ExprSite, bound: set[str]) -> Iterator[Diagnostic]:
    def is_status(ref: Ref) -> bool:
        if is_status_ref(ref):
            return True
        return ref.root == "with" and len(ref.path) == 1 and ref.path[0] in bound

    for island in site.template.islands:
        text = island.text
        if island.expr is None or not (("=" in text or "in" in text) and _COMPARES.search(text)):
            continue
        for _ref, lit, start, end in status_comparisons(island.expr, is_status):
            if lit in STATUSES:
                continue
            yield _bad_literal(site, island, lit, start, end)


def _bad_literal(site: ExprSite, island: Island, lit: object, start: int, end: int) -> Diagnostic:
    text = str(lit)
    spelled = did_you_mean(text, STATUSES)
    guess = {
        "failed": "failure",
        "succeeded": "success",
        "ok": "success",
        "done": "success",
        "passed": "success",
        "error": "failure",
        "skip": "skipped",
        "canceled": "cancelled",
        "completed": "success",
    }.get(text.lower()) or spelled
    span = site.span_of(island.expr_start + start, island.expr_start + end)
    fixes: tuple[Fix, ...] = ()
    whole = site.value.value if isinstance(site.value.value, str) else ""
    written = whole[island.expr_start + start : island.expr_start + end]
    exact = span.end - span.start == len(written)  # the source holds exactly this text (no escapes)
    if (
        guess
        and exact
        and len(written) >= 2
        and written[0] in "'\""
        and written[-1] == written[0]
        and written[1:-1] == text
    ):
        # a respelling is safe; a synonym (`failed` -> `failure`) is a guess that needs review
        safety = "safe" if guess == spelled else "maybe-incorrect"
        fixes = (
            Fix(
                f"Change to `{written[0]}{guess}{written[0]}`",
                (Edit(span, f"{written[0]}{guess}{written[0]}"),),
                safety,
            ),
        )
    return report(
        "NIKA-DAG-007",
        span,
        f"a task status is never `{text}`: this comparison can never match",
        (f"Did you mean `'{guess}'`? " if guess else "") + "A status is one of success, failure, skipped or cancelled.",
        task=site.task,
        fixes=fixes,
    )


def _with_sites(sites: Iterable[ExprSite]) -> dict[str, list[ExprSite]]:
    """The ``with:`` sites that are one island, by task (what :func:`_status_bindings` reads)."""
    out: dict[str, list[ExprSite]] = {}
    for site in sites:
        if site.where == Where.WITH and site.task is not None and site.template.is_single_island:
            out.setdefault(site.task, []).append(site)
    return out


def _status_bindings(ctx: RuleContext, sites: Iterable[ExprSite] | None = None) -> dict[str, set[str]]:
    """Per task, the ``with:`` bindings that are exactly one ``${{ tasks.X.status }}`` (among
    ``sites``, every site of the workflow by default)."""
    out: dict[str, set[str]] = {}
    for site in ctx.sites if sites is None else sites:
        if site.where != Where.WITH or site.task is None or not site.template.is_single_island:
            continue
        refs = site.references()  # memoised on the site: every ref of its one island
        if len(refs) != 1 or not is_status_ref(refs[0][1]):
            continue
        task = ctx.workflow.tasks.get(site.task)
        for b in task.with_ if task else ():
            if b.value is site.value:
                out.setdefault(site.task, set()).add(b.name)
    return out
