"""Where a secret may go (01 §secrets/§egress, spec 10 §secret flow).

* NIKA-SEC-006 — a ``secrets.<name>`` value reaches an ``exec:`` payload, an ``invoke:``
  payload or an ``infer:``/``agent:`` prompt with no ``egress:`` rule sanctioning that sink;
* NIKA-SEC-007 — a secret-carrying value reaches ``outputs:`` without ``egress: [{to: outputs}]``.

Each finding carries the taint path, source first, as related spans. A sanctioned send still
taints the task's result (the tool may echo the secret); an ``infer:``/``agent:`` result never
carries its prompt's secrets.
"""

from __future__ import annotations

from collections.abc import Iterator

from checker.contracts import effects
from checker.contracts.effects import boundary_of
from checker.core.codes import report
from checker.core.diagnostics import Diagnostic, Label
from checker.model.workflow import Agent, Egress, Exec, Infer, Invoke, Secret, Task, Verb
from checker.parse.values import ScalarValue, TemplateValue, Value
from checker.rules.support.context import RuleContext, task_verbs
from checker.rules.support.flow import SecretFlow, Witness, arg_values, template_refs


def _sinks(verb: Verb) -> Iterator[tuple[str, Value]]:
    """(sink id, payload) for one verb."""
    if isinstance(verb, Exec):
        yield "exec", verb.value
    elif isinstance(verb, Invoke):
        if verb.tool and verb.args is not None and verb.workflow is None:
            yield verb.tool, verb.args
    elif isinstance(verb, Infer | Agent):
        for f in (verb.prompt, verb.system):
            if f is not None:
                yield verb.kind, f


def _destination(verb: Verb) -> Value | None:
    """The argument naming a network sink's destination (``url`` of fetch, ``target`` of notify)."""
    if not isinstance(verb, Invoke) or not verb.tool:
        return None
    for t in effects.tool_effects(verb.tool).targets:
        if t.plane == "net":
            for v in arg_values(verb.args, t.steps):
                return v
    return None


def _sanctioned(ctx: RuleContext, secret: Secret, sink: str, verb: Verb, carried: dict[str, Witness]) -> bool:
    rules = [e for e in secret.egress if e.to == sink]
    if not rules:
        return False
    dest = _destination(verb)
    return any(_rule_holds(ctx, secret, r, dest, carried) for r in rules)


def _rule_holds(
    ctx: RuleContext, secret: Secret, rule: Egress, dest: Value | None, carried: dict[str, Witness]
) -> bool:
    if dest is None:
        return True  # no addressable destination: `to:` alone decides
    literal = dest.value if isinstance(dest, ScalarValue) and not isinstance(dest, TemplateValue) else None
    dest_host = effects.url_host(literal) if isinstance(literal, str) else None
    host: str | None = None
    if rule.host is not None:
        if dest_host is None:
            return True  # a computed destination: the host is checked at run time
        if not effects.egress_admits(rule.to, str(rule.host), False, str(rule.to), dest_host):
            return False
        host = dest_host
    elif rule.host_from_self:
        if not (isinstance(dest, TemplateValue) and dest.is_single_island):
            return False
        refs = [ref for ref, _ in template_refs(dest)]
        if len(refs) != 1 or refs[0].root != "secrets" or refs[0].path[:1] != (secret.name,):
            return False
        return not any(name != secret.name for name in carried)
    else:
        host = dest_host
    p = ctx.workflow.permits
    if p is not None and host is not None:
        bound = boundary_of(p)
        if bound.check("net", host) is not None:
            return False  # egress narrows the capability boundary, never widens it
    return True


def check_secret_flow(ctx: RuleContext) -> Iterator[Diagnostic]:
    wf = ctx.workflow
    if not wf.secrets:
        return
    secrets = {s.name: s for s in wf.secrets}
    flow = SecretFlow(ctx)
    for task in wf.tasks.values():
        for verb in task_verbs(task):
            for sink, payload in _sinks(verb):
                carried = flow.carried(task, payload)
                for name, witness in carried.items():
                    secret = secrets[name]
                    if _sanctioned(ctx, secret, sink, verb, carried):
                        continue
                    yield _leak(task, sink, secret, witness)
    for out in wf.outputs:
        for name, witness in flow.carried(None, out.value).items():
            secret = secrets[name]
            if any(e.to == "outputs" for e in secret.egress):
                continue
            primary = witness[-1].span if witness else out.key.span
            yield report(
                "NIKA-SEC-007",
                primary,
                f"output `{out.name}` carries a value derived from secret `{name}`, and `outputs:` is where "
                "results leave the run",
                f"Return something that does not derive from the secret, or, if the result may leave, add "
                f'`{{ to: "outputs" }}` to the `egress:` of `secrets.{name}`.',
                related=(*witness[:-1], Label(out.key.span, f"output `{out.name}`")),
            )
    if flow.budget.exhausted:
        yield _bound(ctx)


def _leak(task: Task, sink: str, secret: Secret, witness: Witness) -> Diagnostic:
    primary = witness[-1].span if witness else task.key.span
    where = {
        "exec": "the `exec:` payload",
        "infer": "an `infer:` prompt (it goes to the model provider)",
        "agent": "an `agent:` prompt (it goes to the model provider)",
    }.get(sink, f"the arguments of `{sink}`")
    path = " → ".join(_names(witness))
    return report(
        "NIKA-SEC-006",
        primary,
        f"secret `{secret.name}` reaches {where} in task `{task.id}` with no egress rule allowing it ({path})",
        f'Keep the secret out of this sink, or sanction it: `egress: [{{ to: "{sink}" }}]` on `secrets.{secret.name}`.',
        related=witness[:-1],
        task=task.id,
    )


def _names(witness: Witness) -> list[str]:
    out = []
    for label in witness:
        m = label.message
        if "`" in m:
            out.append(m.split("`")[1])
    return out


def _bound(ctx: RuleContext) -> Diagnostic:
    from checker.core.diagnostics import Diagnostic as D
    from checker.core.diagnostics import Severity
    from checker.core.source import Span

    return D(
        code=None,
        namespace="NIKA-IMPL",
        category="internal_error",
        severity=Severity.WARNING,
        message="the secret-flow analysis stopped at its work bound; flows past that point were not followed",
        span=Span(0, 0),
        help="Split the workflow, or check it with fewer secrets per value; the run still enforces every flow.",
        rule="taint-bound",
    )


__all__ = ["check_secret_flow"]
