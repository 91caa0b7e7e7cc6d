"""``policy:`` re-judged at run on the values the check could not see (spec 10 §policy).

The check judges the literal models; ``nika run --model`` replaces them at run time, so the
model about to be called is judged again, by the checker's own judge, before any prompt leaves.
"""

from __future__ import annotations

from typing import Any

from checker.rules.workflow_policy import effect_classes, is_gate, provider_verdict
from runtime.errors import TaskError

CODE = "NIKA-POLICY-001"


def judge_provider(workflow: Any, tid: str, model: Any) -> None:
    """Raise ``NIKA-POLICY-001`` when ``allow.providers`` forbids the resolved ``model``."""
    pol = workflow.policy
    if pol is None or pol.allow_providers is None:
        return
    allowed = {str(p.value) for p in pol.allow_providers}
    why = provider_verdict(model if isinstance(model, str) else None, allowed)
    if why is not None:
        raise TaskError(
            CODE,
            f"`allow.providers`: the model `{model}` of task `{tid}` {why}",
            details={"rule": "allow.providers", "model": model, "allowed": sorted(allowed)},
        )


def judge_human_gate(workflow: Any, graph: Any, task: Any, answered_by: dict[str, str]) -> None:
    """Raise ``NIKA-POLICY-001`` when ``task`` is about to perform an effect of a class that
    ``require.human_gate_before`` lists and no gate above it was answered by a human. The check
    proved a gate is there; a gate answered by its ``default:`` (an unattended run) is no pause,
    so it is no consent (spec 10 §policy)."""
    pol = workflow.policy
    if pol is None or not pol.human_gate_before or is_gate(task):
        return
    gated = [r.value for r in pol.human_gate_before if r.value in effect_classes(task)]
    if not gated:
        return
    gates = sorted(a for a in graph.upstream(task.id) if a in workflow.tasks and is_gate(workflow.tasks[a]))
    if any(answered_by.get(g) == "human" for g in gates):
        return
    how = ", ".join(f"`{g}` ({answered_by.get(g, 'unanswered')})" for g in gates) or "none"
    raise TaskError(
        CODE,
        f"`require.human_gate_before: [{gated[0]}]`: task `{task.id}` would perform a `{gated[0]}` effect, "
        f"but no human answered a gate before it (gates: {how}); a `default:` answer is not consent",
        details={
            "rule": "require.human_gate_before",
            "class": gated[0],
            "gates": {g: answered_by.get(g) for g in gates},
        },
    )
