"""Workflow law: the hard ``policy:`` rules (spec 10 §policy, NEP-0013/0014/0017).

* NIKA-POLICY-001 — ``require.human_gate_before``, ``forbid.exec_after``, ``allow.providers``,
  ``limits.max_tasks``; each finding names the rule, the task and the witness (the missing gate,
  the path, the offending literal, the count);
* NIKA-SEC-013 — the endorsement mode: a human gate under a ``policy:`` that names no mode, or
  ``endorsement: solo`` with more than one gate.

The soft families (``prefer``, ``optimize``) are recorded and never judged. Everything is read
off the derived graph (data and control edges alike).
"""

from __future__ import annotations

from collections import deque
from collections.abc import Collection, Iterator

from checker.contracts import effects
from checker.core.codes import report
from checker.core.diagnostics import Diagnostic, Label
from checker.core.source import Span
from checker.model.graph import Edge
from checker.model.workflow import Agent, Exec, Infer, Invoke, Policy, Task
from checker.parse.values import ScalarValue, TemplateValue
from checker.rules.authority import needs_of
from checker.rules.support.context import RuleContext, task_verbs

GATE_TOOL = "nika:prompt"


def effect_classes(task: Task) -> set[str]:
    """The policy effect classes a task carries: ``exec``, ``write``, ``net``, ``tools``."""
    out: set[str] = set()
    for verb in task_verbs(task):
        if isinstance(verb, Exec):
            out.add("exec")
        elif isinstance(verb, Invoke) and verb.tool and not effects.tool_effects(verb.tool).pure:
            out.add("tools")
    for n in needs_of(task):
        if n.plane == "fs.write":
            out.add("write")
        elif n.plane == "net":
            out.add("net")
        elif n.plane == "exec":
            out.add("exec")
    return out


def is_gate(task: Task) -> bool:
    """A ``nika:prompt`` task: it is shaped as a gate (endorsement counts every one)."""
    return isinstance(task.verb, Invoke) and task.verb.tool == GATE_TOOL


def answers_itself(task: Task) -> bool:
    """Whether the gate's ``default:`` can stand in for a human's consent (spec 10 §policy: the
    pause is the consent). An unattended run answers with ``default:``, so a confirm prompt whose
    default is anything but the literal refusal ``false``, or an input/choice prompt with any
    default, is answered by the file, not by a human."""
    verb = task.verb
    args = verb.args if isinstance(verb, Invoke) else None
    if args is None or not hasattr(args, "get"):
        return False
    default = args.get("default")
    if default is None:
        return False
    mode = args.get("mode")
    confirm = mode is None or (isinstance(mode, ScalarValue) and mode.value == "confirm")
    literal_false = (
        isinstance(default, ScalarValue) and not isinstance(default, TemplateValue) and default.value is False
    )
    return not (confirm and literal_false)


def is_human_gate(task: Task) -> bool:
    """A gate that only a human can pass: a ``nika:prompt`` that cannot answer itself with consent."""
    return is_gate(task) and not answers_itself(task)


def provider_verdict(model: str | None, allowed: Collection[str]) -> str | None:
    """The one judge of ``allow.providers`` (spec 10 §policy), on plain data: ``model`` is the
    resolved ``provider/name`` (``None`` when it cannot be determined). Returns why the model is
    refused, or ``None`` when its provider is in the allowlist. Undeterminable is refused
    (fail-closed). The checker calls it with the literal, the runtime with the model it is about
    to call."""
    if model is None or "/" not in model:
        return "has no determinable provider, so it cannot be checked against the allowlist"
    provider = model.split("/", 1)[0]
    if provider in allowed:
        return None
    return f"uses provider `{provider}`, which is not in the allowlist ({', '.join(sorted(allowed)) or 'empty'})"


def path_between(ctx: RuleContext, src: str, dst: str) -> list[Edge]:
    """One shortest chain of scheduling edges from ``src`` to ``dst`` (empty when none)."""
    g = ctx.graph
    prev: dict[str, Edge] = {}
    seen = {src}
    queue = deque([src])
    while queue:
        node = queue.popleft()
        if node == dst:
            break
        for e in g.outgoing(node):
            if e.consumer not in seen:
                seen.add(e.consumer)
                prev[e.consumer] = e
                queue.append(e.consumer)
    if dst not in prev:
        return []
    chain = []
    cur = dst
    while cur != src:
        e = prev[cur]
        chain.append(e)
        cur = e.producer
    return chain[::-1]


def path_witness(ctx: RuleContext, src: str, dst: str) -> tuple[str, tuple[Label, ...]]:
    """The chain from ``src`` to ``dst`` as a message names it (``a → b → c``), with a label on
    each of its edges."""
    chain = path_between(ctx, src, dst)
    names = " → ".join([src, *(e.consumer for e in chain)])
    return names, tuple(Label(e.span, f"`{e.producer}` → `{e.consumer}`") for e in chain)


def check_policy(ctx: RuleContext) -> Iterator[Diagnostic]:
    """Every hard rule of the workflow's ``policy:`` block, one judge each, in the spec's order."""
    pol = ctx.workflow.policy
    if pol is None:
        return
    classes = {tid: effect_classes(t) for tid, t in ctx.workflow.tasks.items()}
    yield from _human_gate_before(ctx, pol, classes)
    yield from _exec_after(ctx, pol, classes)
    yield from _allow_providers(ctx, pol)
    yield from _max_tasks(ctx, pol)
    yield from _endorsement(ctx, pol)


def _human_gate_before(ctx: RuleContext, pol: Policy, classes: dict[str, set[str]]) -> Iterator[Diagnostic]:
    """``require.human_gate_before``: each task carrying the class waits for a gate only a human passes."""
    wf = ctx.workflow
    for rule in pol.human_gate_before:
        cls = rule.value
        for tid, task in wf.tasks.items():
            if cls not in classes[tid] or is_gate(task):
                continue
            ancestors = [wf.tasks[a] for a in ctx.graph.upstream(tid) if a in wf.tasks]
            if any(is_human_gate(a) for a in ancestors):
                continue
            self_answering = [a for a in ancestors if is_gate(a)]
            why = (
                f"its only `{GATE_TOOL}` gate `{self_answering[0].id}` answers itself through `default:`, "
                "so an unattended run would consent without a human"
                if self_answering
                else f"no `{GATE_TOOL}` task comes before it"
            )
            yield report(
                "NIKA-POLICY-001",
                task.key.span,
                f"`require.human_gate_before: [{cls}]`: task `{tid}` carries a `{cls}` effect and {why}",
                f"Add a `{GATE_TOOL}` task without a consenting `default:` (omit it, or `default: false`) "
                f"and make `{tid}` wait for it (`after:` or a `with:` read of its answer).",
                related=(Label(rule.span, "the rule"), *(Label(a.key.span, "answers itself") for a in self_answering)),
                task=tid,
            )


def _exec_after(ctx: RuleContext, pol: Policy, classes: dict[str, set[str]]) -> Iterator[Diagnostic]:
    """``forbid.exec_after``: no ``exec:`` task runs downstream of a task carrying the class."""
    wf = ctx.workflow
    order = {tid: i for i, tid in enumerate(wf.tasks)}
    for rule in pol.exec_after:
        cls = rule.value
        for tid, task in wf.tasks.items():
            if not isinstance(task.verb, Exec):
                continue
            for src in sorted(ctx.graph.upstream(tid), key=lambda x: order.get(x, 0)):
                if src not in wf.tasks or cls not in classes[src]:
                    continue
                names, edges = path_witness(ctx, src, tid)
                yield report(
                    "NIKA-POLICY-001",
                    task.key.span,
                    f"`forbid.exec_after: [{cls}]`: `exec:` task `{tid}` runs downstream of `{src}`, which carries "
                    f"a `{cls}` effect ({names})",
                    f"Cut the dependency of `{tid}` on `{src}`, or move the work out of `exec:`.",
                    related=(
                        Label(rule.span, "the rule"),
                        Label(wf.tasks[src].key.span, f"`{src}` carries the `{cls}` effect"),
                        *edges,
                    ),
                    task=tid,
                )
                break


def _allow_providers(ctx: RuleContext, pol: Policy) -> Iterator[Diagnostic]:
    """``allow.providers``: every model an ``infer:`` or ``agent:`` calls is a literal from an allowed provider."""
    if pol.allow_providers is None:
        return
    allowed = {p.value for p in pol.allow_providers}
    allow_span = pol.allow_providers[0].span if pol.allow_providers else pol.value.span
    for tid, task in ctx.workflow.tasks.items():
        for verb in task_verbs(task):
            if isinstance(verb, Infer | Agent):
                finding = _provider_finding(tid, task, verb, allowed, allow_span)
                if finding is not None:
                    yield finding


def _provider_finding(
    tid: str, task: Task, verb: Infer | Agent, allowed: set[str], allow_span: Span
) -> Diagnostic | None:
    """Why the model of one verb breaks ``allow.providers``, or None when its provider is allowed."""
    m = verb.effective_model
    if isinstance(m, TemplateValue):
        return report(
            "NIKA-POLICY-001",
            m.span,
            f"`allow.providers`: the model of task `{tid}` is computed at run time, so its provider "
            "cannot be checked against the allowlist",
            "Write the model as a literal `<provider>/<name>` from an allowed provider.",
            related=(Label(allow_span, "the allowlist"),),
            task=tid,
        )
    literal = str(m.value) if isinstance(m, ScalarValue) else None
    why = provider_verdict(literal, allowed)
    if why is None:
        return None
    if literal is None:
        return report(
            "NIKA-POLICY-001",
            task.key.span,
            f"`allow.providers`: task `{tid}` names no model and the workflow has no `model:`, so its "
            "provider cannot be checked against the allowlist",
            "Set `model:` to a literal `<provider>/<name>` from an allowed provider, on the task or the workflow.",
            related=(Label(allow_span, "the allowlist"),),
            task=tid,
        )
    return report(
        "NIKA-POLICY-001",
        m.span,
        f"`allow.providers`: task `{tid}` {why}",
        "Pick a model from an allowed provider, or add the provider to `allow.providers`.",
        related=(Label(allow_span, "the allowlist"),),
        task=tid,
    )


def _max_tasks(ctx: RuleContext, pol: Policy) -> Iterator[Diagnostic]:
    """``limits.max_tasks``: the workflow declares at most that many tasks."""
    wf = ctx.workflow
    if pol.max_tasks is not None and len(wf.tasks) > pol.max_tasks:
        limits = pol.value.get("limits")
        span = limits.get("max_tasks").span if limits is not None and hasattr(limits, "get") else pol.value.span
        extra = list(wf.tasks.values())[pol.max_tasks]
        yield report(
            "NIKA-POLICY-001",
            span,
            f"`limits.max_tasks: {pol.max_tasks}`: the workflow declares {len(wf.tasks)} tasks",
            "Merge or remove tasks, or raise the limit if the policy allows it.",
            related=(Label(extra.key.span, f"task number {pol.max_tasks + 1}"),),
            task=extra.id,
        )


def _endorsement(ctx: RuleContext, pol: Policy) -> Iterator[Diagnostic]:
    """NIKA-SEC-013: a human gate needs a declared endorsement mode, and ``solo`` allows one gate."""
    gates = [t for t in ctx.workflow.tasks.values() if is_gate(t)]
    if pol.endorsement is None:
        for g in gates:
            yield report(
                "NIKA-SEC-013",
                g.key.span,
                f"task `{g.id}` is a human gate, but `policy:` names no endorsement mode",
                "Declare the mode the gate runs under, e.g. `endorsement: solo` in `policy:`.",
                related=(Label(pol.value.span, "the policy"),),
                task=g.id,
            )
    elif pol.endorsement == "solo" and len(gates) > 1:
        for g in gates[1:]:
            yield report(
                "NIKA-SEC-013",
                g.key.span,
                f"`endorsement: solo` declares one endorser, but task `{g.id}` is human gate number "
                f"{gates.index(g) + 1}",
                "Keep a single `nika:prompt` gate under `endorsement: solo`.",
                related=(Label(gates[0].key.span, "the first gate"),),
                task=g.id,
            )
