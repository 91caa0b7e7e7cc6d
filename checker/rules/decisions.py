"""Decision bundles (11): a ``nika:decide`` call whose bundle is static has its laws judged now.

A literal ``bundle:`` path is read the way composition reads a child workflow (relative to the
workflow's directory, bounded, only the file the workflow names); an inline bundle with no
template in it is judged as written. A bundle breaking its own laws is NIKA-DECIDE-001 on the
``bundle:`` value, an error: spec 11 refuses such a bundle "at publication", before any evaluation.
When ``evidence:`` is static too, a snapshot the schema refuses is NIKA-DECIDE-002 on it, a warning:
the evidence is the evaluation's input, and its refusal happens when the kernel runs. A file that
cannot be found or read is left to the run.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from checker.core.codes import report, run_failure
from checker.core.diagnostics import Diagnostic
from checker.core.paths import resolve_named
from checker.model.workflow import Invoke
from checker.parse.values import ScalarValue, TemplateValue, Value, templates
from checker.rules.support.context import RuleContext, task_verbs
from checker.rules.support.workspace import outside_workspace

TOOL = "nika:decide"


def check_decisions(ctx: RuleContext) -> Iterator[Diagnostic]:
    for task in ctx.workflow.tasks.values():
        for verb in task_verbs(task):
            if not isinstance(verb, Invoke) or verb.tool != TOOL or verb.args is None:
                continue
            bundle_value = verb.args.get("bundle")
            if bundle_value is None:
                continue
            from checker.decide import DecideError, evaluate, validate_bundle

            if _outside(bundle_value, ctx):
                yield outside_workspace(bundle_value.span, str(bundle_value.to_python()), "decision bundle", task.id)
                continue
            try:
                bundle = _static_bundle(bundle_value, ctx.base_dir)
                if bundle is None:
                    continue
                validate_bundle(bundle)
            except DecideError as e:
                yield report(e.code, bundle_value.span, f"the decision bundle is refused: {e}", _HELP_001, task=task.id)
                continue
            evidence_value = verb.args.get("evidence")
            if evidence_value is None or any(True for _ in templates(evidence_value)):
                continue
            try:
                evaluate(bundle, evidence_value.to_python())
            except DecideError as e:
                yield run_failure(e.code, evidence_value.span, f"the evidence is refused: {e}", _HELP_002, task=task.id)


_HELP_001 = "Fix the bundle so it satisfies its own laws; `nika explain NIKA-DECIDE-001` lists them."
_HELP_002 = "Emit exactly the keys, types, sources and integrity the bundle's evidence schema declares."


def _outside(v: Value, ctx: RuleContext) -> bool:
    """A literal bundle path outside the language server's workspace (never read there)."""
    if ctx.roots is None or isinstance(v, TemplateValue) or not isinstance(v, ScalarValue):
        return False
    return isinstance(v.value, str) and bool(v.value.strip()) and ctx.locate(v.value, beside=False) is None


def _static_bundle(v: Value, base: str | None) -> Any:
    """The bundle as data when it is known now (a readable literal path, or a template-free
    object), else None; a file that is there but not strict JSON raises NIKA-DECIDE-001."""
    if isinstance(v, TemplateValue) or any(True for _ in templates(v)):
        return None
    if not isinstance(v, ScalarValue):
        return v.to_python()
    if not isinstance(v.value, str) or base is None or not v.value.strip():
        return None
    from checker.decide import BUNDLE_CODE
    from checker.decide.load import load_json
    from checker.parse.nodes import MAX_DOCUMENT_BYTES
    from checker.parse.referenced import read_referenced

    path = resolve_named(v.value, base)  # read at run by `nika:decide` under permits.fs: the cwd only
    try:
        data = read_referenced(path)
    except OSError:
        return None
    if len(data) > MAX_DOCUMENT_BYTES:
        return None  # too big to judge here; the run reads it whole
    return load_json(data, BUNDLE_CODE, f"the bundle {v.value}")
