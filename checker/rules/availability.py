"""Features this build does not implement yet (``build/unavailable``), as an informational note.

The one list of what the build lacks is the runtime's own registries read as data (a builtin with
no implementation, a secret source it cannot resolve, ``infer.thinking:`` on a provider whose
adapter sends no reasoning parameter, a ``mock/`` model it does not answer, a ``nika:fetch``
extract mode with no extractor) and the declared entries of ``runtime/unbuilt.toml`` (registry
workflows, declared determinism, xai image edits), both read by
:mod:`checker.contracts.built_features`. A use of one fails every run (or every call) with
NIKA-IMPL-002 naming the feature; the check says so ahead, as information: the workflow is not
wrong, so the verdict never changes. ``nika run --dry-run`` lists the same notes and
``nika explain NIKA-IMPL-002`` the same list; a note disappears when its feature lands.
"""

from __future__ import annotations

from collections.abc import Iterator

from checker.contracts import tables as contracts
from checker.contracts.built_features import Built, built
from checker.core.codes import lint
from checker.core.diagnostics import Diagnostic
from checker.core.source import Span
from checker.model.workflow import Agent, Infer, Invoke, Workflow
from checker.parse.values import ScalarValue, TemplateValue, Value
from checker.rules.support.context import RuleContext

RULE = "build/unavailable"


def check_unavailable(ctx: RuleContext) -> Iterator[Diagnostic]:
    wf = ctx.workflow
    if not _may_use_anything_unbuilt(ctx):
        return
    have = built()
    if have is None:
        return  # the runtime's sources are not installed beside the checker: nothing is known
    yield from _builtins(ctx, have)
    yield from _secret_sources(wf, have)
    yield from _thinking(ctx, have.thinking_providers)
    yield from _mock_models(ctx, have)
    yield from _extract_modes(ctx, have)
    yield from _declared(ctx, have)


def _may_use_anything_unbuilt(ctx: RuleContext) -> bool:
    """A cheap look first: a workflow that calls no builtin, reads no secret, runs no model and
    declares no `run:` block uses nothing the lists could name (the runtime's sources stay unread)."""
    wf = ctx.workflow
    return bool(wf.secrets) or wf.run is not None or any(isinstance(v, (Invoke, Agent, Infer)) for _, v in ctx.verbs())


def _note(span: Span, what: str, then: str, help: str, task: str | None = None) -> Diagnostic:
    return lint(
        RULE,
        span,
        f"this build of nika does not implement {what} yet: {then} with NIKA-IMPL-002",
        help,
        task=task,
    )


def _calls(ctx: RuleContext) -> Iterator[tuple[str, str, Span, str]]:
    """Each builtin a task calls or an agent may call: ``(task, tool, span, what then happens)``."""
    for tid, verb in ctx.verbs():
        if isinstance(verb, Invoke) and verb.tool is not None and verb.tool_value is not None:
            yield tid, verb.tool, verb.tool_value.span, "every run of this task fails"
        elif isinstance(verb, Agent):
            for item in verb.tools:
                yield tid, str(item.value), item.span, "a call of it by the agent fails"


def _builtins(ctx: RuleContext, have: Built) -> Iterator[Diagnostic]:
    for tid, tool, span, then in _calls(ctx):
        if not tool.startswith("nika:") or contracts.contract(tool) is None:
            continue
        if tool not in have.tools:
            yield _note(span, f"`{tool}`", then, _ELSEWHERE, tid)


_ELSEWHERE = "Keep it if you run the workflow elsewhere; with this build, do the step another way."


def _secret_sources(wf: Workflow, have: Built) -> Iterator[Diagnostic]:
    for s in wf.secrets:
        if s.source is None or s.source in have.secret_sources:
            continue
        at = s.value.get("source")
        yield _note(
            at.span if at is not None else s.key.span,
            f"secret source `{s.source}`",
            f"a run that reads `secrets.{s.name}` fails",
            "Use `source: env` with this build.",
        )


def _literal(v: Value | None) -> str | None:
    if isinstance(v, ScalarValue) and not isinstance(v, TemplateValue) and isinstance(v.value, str):
        return v.value
    return None  # a computed value is judged when the task runs


def _thinking(ctx: RuleContext, takers: frozenset[str] | None) -> Iterator[Diagnostic]:
    if takers is None:
        return
    for tid, verb in ctx.verbs():
        if not isinstance(verb, Infer) or verb.thinking is None:
            continue
        model = _literal(verb.effective_model)
        if model is None:
            continue
        prefix = model.partition("/")[0]
        if prefix in takers or contracts.provider_of(model) is None:
            continue
        names = ", ".join(f"`{p}`" for p in sorted(takers) if p != "mock")
        yield _note(
            verb.thinking.span,
            f"`thinking:` on `{prefix}` (its adapter sends no reasoning parameter)",
            "every run of this task fails",
            f"Remove `thinking:`, or use a provider whose adapter sends it ({names}).",
            tid,
        )


def _mock_models(ctx: RuleContext, have: Built) -> Iterator[Diagnostic]:
    if have.mock_models is None:
        return
    sites: list[tuple[str | None, Value]] = []
    if ctx.workflow.model is not None:
        sites.append((None, ctx.workflow.model))
    for tid, verb in ctx.verbs():
        if isinstance(verb, (Infer, Agent)) and verb.model is not None:
            sites.append((tid, verb.model))
    for tid, value in sites:
        model = _literal(value)
        if model is None or not model.startswith("mock/") or model[5:] in have.mock_models:
            continue
        known = ", ".join(f"`mock/{m}`" for m in sorted(have.mock_models))
        yield _note(value.span, f"`{model}`", "a model call with it fails", f"Use one of {known}.", tid)


def _extract_modes(ctx: RuleContext, have: Built) -> Iterator[Diagnostic]:
    if have.extract_modes is None:
        return
    for tid, verb in ctx.verbs():
        if not (isinstance(verb, Invoke) and verb.tool == "nika:fetch" and verb.args is not None):
            continue
        mode = verb.args.get("mode")
        name = _literal(mode)
        if mode is None or name is None or name in have.extract_modes or name not in _contract_modes():
            continue  # an unknown mode is the argument contract's finding, not this one's
        yield _note(
            mode.span,
            f"the `nika:fetch` extract mode `{name}`",
            "every run of this task fails",
            "Use one of " + ", ".join(f"`{m}`" for m in sorted(have.extract_modes)) + ".",
            tid,
        )


def _contract_modes() -> frozenset[str]:
    c = contracts.contract("nika:fetch")
    spec = next((a for a in c.args if a.name == "mode"), None) if c is not None else None
    return frozenset(spec.values) if spec is not None and spec.values else frozenset()


def _declared(ctx: RuleContext, have: Built) -> Iterator[Diagnostic]:
    """The entries of ``runtime/unbuilt.toml`` that no registry shows."""
    registry = have.lacks("registry-workflow")
    xai_edit = have.lacks("image-edit-xai")
    for tid, verb in ctx.verbs():
        if not isinstance(verb, Invoke):
            continue
        target = _literal(verb.workflow)
        if registry is not None and target is not None and target.startswith("registry:") and verb.workflow is not None:
            yield _note(verb.workflow.span, registry.what, "every run of this task fails", _ELSEWHERE, tid)
        if xai_edit is not None and verb.tool == "nika:image_generate" and verb.args is not None:
            provider, mode = _literal(verb.args.get("provider")), _literal(verb.args.get("mode"))
            if provider == "xai" and mode == "edit":
                at = verb.args.get("mode")
                assert at is not None
                yield _note(at.span, xai_edit.what, "every run of this task fails", "Edit with another provider.", tid)
