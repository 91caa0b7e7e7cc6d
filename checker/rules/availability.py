"""Features this build does not implement yet (``build/unavailable``): a builtin the runtime has
no implementation for, a secret source it cannot resolve, or ``infer.thinking:`` on a literal
model whose provider's adapter sends no reasoning parameter, fails every run with NIKA-IMPL-002.
The check warns ahead, naming the feature. What is built is read from the runtime's own
registry as data (:mod:`checker.contracts.built_features`), so a warning disappears when the feature lands.
"""

from __future__ import annotations

from collections.abc import Iterator

from checker.contracts import tables as contracts
from checker.contracts.built_features import built
from checker.core.codes import lint
from checker.core.diagnostics import Diagnostic
from checker.model.workflow import Agent, Infer, Invoke
from checker.parse.values import ScalarValue, TemplateValue
from checker.rules.support.context import RuleContext

RULE = "build/unavailable"


def check_unavailable(ctx: RuleContext) -> Iterator[Diagnostic]:
    wf = ctx.workflow
    uses = [s for s in wf.secrets if s.source is not None]
    calls = []
    for tid, verb in ctx.verbs():
        if isinstance(verb, Invoke) and verb.tool is not None and verb.tool_value is not None:
            calls.append((tid, verb.tool, verb.tool_value.span, "every run of this task fails"))
        elif isinstance(verb, Agent):
            then = "a call of it by the agent fails"
            calls += [(tid, str(item.value), item.span, then) for item in verb.tools]
    calls = [c for c in calls if c[1].startswith("nika:") and contracts.contract(c[1]) is not None]
    thinks = [(tid, v) for tid, v in ctx.verbs() if isinstance(v, Infer) and v.thinking is not None]
    if not calls and not uses and not thinks:
        return
    have = built()
    if have is None:
        return  # the runtime's sources are not installed beside the checker: nothing is known
    yield from _thinking(thinks, have.thinking_providers)
    for tid, tool, span, then in calls:
        if tool not in have.tools:
            yield lint(
                RULE,
                span,
                f"`{tool}` is not available in this build of nika yet: {then} with NIKA-IMPL-002",
                "Keep it if you run the workflow elsewhere; with this build, do the step another way.",
                task=tid,
            )
    for s in uses:
        if s.source not in have.secret_sources:
            at = s.value.get("source")
            yield lint(
                RULE,
                at.span if at is not None else s.key.span,
                f"secret source `{s.source}` is not available in this build of nika yet: a run that reads "
                f"`secrets.{s.name}` fails with NIKA-IMPL-002",
                "Use `source: env` with this build.",
            )


def _thinking(thinks: list[tuple[str, Infer]], takers: frozenset[str] | None) -> Iterator[Diagnostic]:
    if takers is None:
        return
    for tid, verb in thinks:
        model = verb.effective_model
        if not isinstance(model, ScalarValue) or isinstance(model, TemplateValue) or not isinstance(model.value, str):
            continue  # a computed model is judged when the task runs
        prefix = model.value.partition("/")[0]
        if prefix in takers or contracts.provider_of(model.value) is None:
            continue
        assert verb.thinking is not None
        names = ", ".join(f"`{p}`" for p in sorted(takers) if p != "mock")
        yield lint(
            RULE,
            verb.thinking.span,
            f"`thinking:` on `{prefix}` is not available in this build of nika: its adapter sends no reasoning "
            "parameter, so every run of this task fails with NIKA-IMPL-002",
            f"Remove `thinking:`, or use a provider whose adapter sends it ({names}).",
            task=tid,
        )
