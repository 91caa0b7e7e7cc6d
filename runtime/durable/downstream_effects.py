"""What a human gate unleashes: the tasks downstream of it, their effect classes, and the identity
of the gated actions (NEP-0013 §1 renders both into what the ticket binds)."""

from __future__ import annotations

from checker.model.workflow import Agent, CompiledWorkflow, Exec, Infer, Invoke, Task


def effect_classes(task: Task) -> set[str]:
    """The effect classes of one task's verb (none for a pure one)."""
    from checker.contracts import tables as contracts

    verb = task.verb
    if isinstance(verb, Exec):
        return {"exec"}
    if isinstance(verb, Infer):
        return {"infer"}
    if isinstance(verb, Agent):
        return {"agent"}
    if isinstance(verb, Invoke):
        if verb.workflow is not None:
            return {"workflow"}
        if verb.tool and verb.tool.startswith("mcp:"):
            return {"mcp"}
        if verb.tool and (c := contracts.contract(verb.tool)) is not None:
            return set(c.effects)
    return set()


def effects_after(compiled: CompiledWorkflow, tid: str) -> list[str]:
    from runtime.durable.resume_index import descendants

    wf = compiled.workflow
    assert wf is not None
    found: set[str] = set()
    for t in descendants(compiled, tid) - {tid}:
        found |= effect_classes(wf.tasks[t])
    return sorted(found)


def gated_actions(compiled: CompiledWorkflow, tid: str, model: str | None) -> dict[str, str]:
    """The gated action's identity: the definition hash (``runtime.journal.task_hash``: the body as
    compiled, unresolved templates as written) of every task downstream of the gate with an effect.
    Editing one after the pause changes what the ticket binds: the answer then meets
    ``approval.content_mismatch`` instead of running the edited action under the old "yes"."""
    from runtime.durable.resume_index import descendants
    from runtime.journal.task_hash import definition_hash

    wf = compiled.workflow
    assert wf is not None
    out: dict[str, str] = {}
    for t in sorted(descendants(compiled, tid) - {tid}):
        if effect_classes(wf.tasks[t]):
            out[t] = definition_hash(wf.tasks[t], model)
    return out


def action_identity(compiled: CompiledWorkflow, tid: str, model: str | None) -> dict[str, str]:
    """What the ticket binds as the gated action's identity (NEP-0013 §1): the definition hash of
    every gated action (:func:`gated_actions`) and of every task it reads from, transitively, but
    the gate itself (what it shows is bound as rendered). A pure task that shapes a gated action's
    arguments (a ``nika:jq`` between the gate and the ``exec``, a preparation beside the gate) is
    part of what runs under the answer: editing it re-asks, too."""
    from runtime.journal.task_hash import definition_hash

    wf, graph = compiled.workflow, compiled.graph
    assert wf is not None and graph is not None
    gated = gated_actions(compiled, tid, model)
    seen, todo = set(gated), list(gated)
    while todo:
        for e in graph.incoming(todo.pop()):
            if e.producer not in seen and e.producer != tid and e.producer in wf.tasks:
                seen.add(e.producer)
                todo.append(e.producer)
    return {t: gated[t] if t in gated else definition_hash(wf.tasks[t], model) for t in sorted(seen)}
