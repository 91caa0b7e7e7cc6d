"""Flows over the graph: the lethal trifecta (NIKA-SEC-009, NEP-0002) and unordered shared writes
(NIKA-SEC-012, NEP-0014 law 1).

The trifecta is judged on the declared boundary and the realized flow (NEP-0002 v2.0): ①
``fs.read`` grants something; ② a task brings outside content in (``nika:fetch``, an ``mcp:`` tool,
an agent whose whitelist admits one); ③ the boundary can carry data out (``net.http``, an
``fs.write`` glob leaving the workspace — ``../``, absolute or ``~``-anchored — or ``exec``). When
all three hold, every egress-capable task (per the one effect table: a network or MCP call, a
process, every builtin that writes files, an agent that may call one; the legs decide whether the
workflow can send at all) whose effect surface the outside content reaches is refused unless it
waits, directly or transitively, on a blocking human gate (``nika:prompt`` without ``default:``):
the action cannot fire before a human has answered.

What reaches an effect surface: a ``with:`` binding the task's body or ``for_each`` reads (a
model's output carries what its prompt saw). What does not: a binding read only by ``when:`` (a
gate, not a transmission), a binding nothing in the task reads, and an ``on_error.recover`` read —
the recovered value replaces the task's output, so it flows on to the task's readers but never
into the task's own effect. The check over-approximates otherwise, and the finding names which
disjunct armed each leg.
"""

from __future__ import annotations

from collections.abc import Iterator

from checker.contracts import effects
from checker.contracts.effects import Boundary, boundary_of
from checker.core.codes import report
from checker.core.diagnostics import Diagnostic, Label
from checker.core.globs import canonical_path, match_tool
from checker.core.vocab import EdgeRole, Where
from checker.model.workflow import Agent, Exec, Invoke, Task
from checker.parse.values import TemplateValue
from checker.rules.authority import needs_of
from checker.rules.support.context import RuleContext
from checker.rules.workflow_policy import path_witness

_CONTENT_EDGES = frozenset({EdgeRole.VALUE, EdgeRole.RECOVERY, EdgeRole.FAILURE_OBSERVATION})


def _agent_admits(agent: Agent, pred) -> bool:  # type: ignore[no-untyped-def]
    for entry in agent.tools:
        pat = entry.value
        if not isinstance(pat, str) or isinstance(entry, TemplateValue) or pat.startswith("!"):
            continue
        if pat.startswith("mcp:"):
            return True
        if any(pred(tid) and match_tool(pat, tid) for tid in _builtin_ids()):
            return True
    return False


def _builtin_ids() -> list[str]:
    from checker.contracts import tables as contracts

    return list(contracts.tool_ids())


def _ingress(task: Task) -> bool:
    v = task.verb
    if isinstance(v, Invoke) and v.tool:
        return effects.tool_effects(v.tool).ingress
    if isinstance(v, Agent):
        return _agent_admits(v, lambda t: effects.tool_effects(t).ingress)
    return False


def _egress_capable(tool: str) -> bool:
    """A tool that can carry data out, per the effect table: it reaches the network, is opaque
    (MCP), or writes files (the boundary's legs decide whether a written file can leave)."""
    needs = effects.tool_effects(tool).needs
    return "net" in needs or "fs.write" in needs or tool.startswith("mcp:")


def _egress(task: Task) -> bool:
    v = task.verb
    if isinstance(v, Exec):
        return True
    if isinstance(v, Invoke) and v.tool:
        return _egress_capable(v.tool)
    if isinstance(v, Agent):
        return _agent_admits(v, _egress_capable)
    return False


def _binding_reads(ctx: RuleContext) -> dict[str, dict[str, str] | None]:
    """For each task, how each of its ``with:`` bindings is read: ``"effect"`` (the body or
    ``for_each``: the value reaches what the task does), ``"output"`` (only ``on_error.recover``:
    the value may become the task's output), ``"gate"`` (only ``when:``). A binding that is not
    listed is read by nothing. ``None`` for a task whose body reads the whole ``with`` object (every
    binding reaches its effect)."""
    rank = {"gate": 0, "output": 1, "effect": 2}
    out: dict[str, dict[str, str] | None] = {}
    for site in ctx.sites:
        if site.task is None or out.get(site.task, {}) is None:
            continue
        how = {Where.WHEN: "gate", Where.RECOVER: "output", Where.BODY: "effect", Where.FOR_EACH: "effect"}.get(
            site.where  # type: ignore[arg-type]
        )
        if how is None:
            continue
        for _island, ref, _span in site.references():
            if ref.root != "with":
                continue
            name = ref.path[0] if ref.path and isinstance(ref.path[0], str) else None
            if name is None:
                if how == "effect":
                    out[site.task] = None
                    break
                continue
            reads = out.setdefault(site.task, {})
            assert reads is not None
            prev = reads.get(name)
            if prev is None or rank[how] > rank[prev]:
                reads[name] = how
    return out


def _is_blocking_gate(task: Task) -> bool:
    v = task.verb
    return isinstance(v, Invoke) and v.tool == "nika:prompt" and (v.args is None or "default" not in v.args)


def check_trifecta(ctx: RuleContext) -> Iterator[Diagnostic]:
    """NIKA-SEC-009: the boundary grants private reads and a way out, and outside content reaches a
    task that can send it out with no blocking gate before it."""
    wf = ctx.workflow
    if wf.permits is None:
        return
    bound = boundary_of(wf.permits)
    if not bound.fs_read:
        return
    escaping = [g for g in bound.fs_write if _escapes(g)]
    leg3 = _ways_out(bound, escaping)
    if not leg3:
        return
    sources = [t for t in wf.tasks.values() if _ingress(t)]
    if not sources:
        return
    order = [t for wave in ctx.graph.waves for t in wave]
    tainted = _tainted(ctx, sources, order)
    gated = _gated(ctx, order)
    for tid in order:
        task = wf.tasks[tid]
        if tid not in tainted or gated[tid] or not _egress(task):
            continue
        src = tainted[tid]
        names, edges = path_witness(ctx, src, tid)
        yield report(
            "NIKA-SEC-009",
            task.key.span,
            f"lethal trifecta: task `{tid}` can send data out and outside content reaches it ({names}), while "
            f"the workflow also reads private files (`fs.read`) and {leg3[0]}",
            "Put a `nika:prompt` gate (without `default:`) before this task, or drop one leg: the `fs.read` grant, "
            "the outside source, or the way out.",
            related=(
                Label(wf.tasks[src].key.span, f"`{src}` brings outside content in"),
                *edges,
                Label(wf.permits.span, "the boundary that grants all three legs"),
            ),
            task=tid,
        )


def _ways_out(bound: Boundary, escaping: list[str]) -> list[str]:
    """The third leg, as the message names it: what the boundary grants that carries data out."""
    leg3 = []
    if bound.net_http:
        leg3.append("`net.http` grants hosts")
    if escaping:
        leg3.append(f"`fs.write` reaches outside the workspace (`{escaping[0]}`)")
    if bound.grants("exec"):
        leg3.append("`exec` is granted")
    return leg3


def _escapes(glob: str) -> bool:
    """An ``fs.write`` glob that leaves the workspace: absolute, ``../`` or ``~``-anchored."""
    g = glob.strip()
    return g.startswith("~") or canonical_path(g).startswith(("/", ".."))


def _tainted(ctx: RuleContext, sources: list[Task], order: list[str]) -> dict[str, str]:
    """Each task whose effect surface outside content reaches, with the ingress source it comes
    from: along content edges into what the task does, then through files to an ``exec:`` after a
    tainted writer. A task's output carries the content on when its effect saw it, or when a
    recovery read may put it there."""
    wf, g = ctx.workflow, ctx.graph
    reads = _binding_reads(ctx)
    effect_out: dict[str, list[str]] = {}  # producer -> consumers whose effect its content reaches
    output_out: dict[str, list[str]] = {}  # producer -> consumers whose output only it may become
    for e in g.edges:
        if e.kind not in _CONTENT_EDGES or e.consumer not in wf.tasks:
            continue
        if e.kind == EdgeRole.RECOVERY:
            output_out.setdefault(e.producer, []).append(e.consumer)
            continue
        table = reads.get(e.consumer, {})
        how = "effect" if table is None or e.binding is None else table.get(e.binding)
        if how == "effect":
            effect_out.setdefault(e.producer, []).append(e.consumer)
        elif how == "output":
            output_out.setdefault(e.producer, []).append(e.consumer)
    tainted: dict[str, str] = {}  # task -> the ingress source whose content reaches its effect
    carried: dict[str, str] = {s.id: s.id for s in sources}  # task -> source: its output carries it
    stack = [s.id for s in sources]
    while stack:
        node = stack.pop()
        src = carried[node]
        for nxt in effect_out.get(node, ()):
            tainted.setdefault(nxt, src)
        for nxt in (*effect_out.get(node, ()), *output_out.get(node, ())):
            if nxt not in carried:
                carried[nxt] = src
                stack.append(nxt)
    # the file-mediated channel: an exec after a tainted task that can write files
    writers = {
        tid
        for tid in tainted
        if isinstance(wf.tasks[tid].verb, Exec) or any(n.plane == "fs.write" for n in needs_of(wf.tasks[tid]))
    }
    if writers:
        for tid, task in wf.tasks.items():
            if isinstance(task.verb, Exec) and tid not in tainted:
                up = g.upstream(tid) & writers
                if not up:
                    continue
                first = next((u for u in order if u in up), None)
                if first is not None:
                    tainted[tid] = tainted[first]
    return tainted


def _gated(ctx: RuleContext, order: list[str]) -> dict[str, bool]:
    """Whether each task is a blocking gate or waits, through its predecessors, on one."""
    gated: dict[str, bool] = {}
    for tid in order:
        preds = [e.producer for e in ctx.graph.incoming(tid)]
        gated[tid] = _is_blocking_gate(ctx.workflow.tasks[tid]) or any(gated.get(p, False) for p in preds)
    return gated


# -- shared writes -----------------------------------------------------------------------------


def check_shared_writes(ctx: RuleContext) -> Iterator[Diagnostic]:
    wf = ctx.workflow
    by_path: dict[str, list[tuple[Task, object]]] = {}
    for task in wf.tasks.values():
        v = task.verb
        if not (isinstance(v, Invoke) and v.tool in ("nika:write", "nika:edit") and v.args is not None):
            continue
        p = v.args.get("path")
        if p is None or isinstance(p, TemplateValue) or not isinstance(getattr(p, "value", None), str):
            continue
        if task.for_each is not None and task.max_parallel != 1:
            yield report(
                "NIKA-SEC-012",
                p.span,
                f"every iteration of `for_each` task `{task.id}` writes the same path `{p.value}`, in parallel",
                "Put `${{ index }}` (or the item) in the path, or collect the results and write once.",
                task=task.id,
            )
            continue
        by_path.setdefault(canonical_path(p.value), []).append((task, p))
    g = ctx.graph
    for path, writers in by_path.items():
        if len(writers) < 2:
            continue
        for i, (task, p) in enumerate(writers):
            up = g.upstream(task.id)
            down = g.downstream(task.id)
            for other, op in writers[:i]:
                if other.id in up or other.id in down:
                    continue
                yield report(
                    "NIKA-SEC-012",
                    p.span,  # type: ignore[attr-defined]
                    f"tasks `{other.id}` and `{task.id}` both write `{path}` and nothing orders them",
                    f"Order them (`after: {{ {other.id}: success }}` on `{task.id}`), or give each its own path.",
                    related=(Label(op.span, f"`{other.id}` writes it too"),),  # type: ignore[attr-defined]
                    task=task.id,
                )
                break
