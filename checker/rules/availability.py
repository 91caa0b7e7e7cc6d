"""Features this build does not implement yet (``build/unavailable``): a builtin the runtime has
no implementation for, or a secret source it cannot resolve, fails every run with NIKA-IMPL-002.
The check warns ahead, naming the feature. What is built is read from the runtime's own
registry as data (:mod:`checker.contracts.built_features`), so a warning disappears when the feature lands.
"""

from __future__ import annotations

from collections.abc import Iterator

from checker.contracts import tables as contracts
from checker.contracts.built_features import built
from checker.core.codes import lint
from checker.core.diagnostics import Diagnostic
from checker.model.workflow import Agent, Invoke
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
    if not calls and not uses:
        return
    have = built()
    if have is None:
        return  # the runtime's sources are not installed beside the checker: nothing is known
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
