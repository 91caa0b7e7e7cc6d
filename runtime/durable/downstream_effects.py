"""The effect classes a human gate unleashes: those of the tasks downstream of it (NEP-0013 §1
renders them into what the ticket binds)."""

from __future__ import annotations

from checker.model.workflow import Agent, CompiledWorkflow, Exec, Infer, Invoke


def effects_after(compiled: CompiledWorkflow, tid: str) -> list[str]:
    from checker.contracts import tables as contracts
    from runtime.durable.resume_index import descendants

    wf = compiled.workflow
    assert wf is not None
    found: set[str] = set()
    for t in descendants(compiled, tid) - {tid}:
        verb = wf.tasks[t].verb
        if isinstance(verb, Exec):
            found.add("exec")
        elif isinstance(verb, Infer):
            found.add("infer")
        elif isinstance(verb, Agent):
            found.add("agent")
        elif isinstance(verb, Invoke):
            if verb.workflow is not None:
                found.add("workflow")
            elif verb.tool and verb.tool.startswith("mcp:"):
                found.add("mcp")
            elif verb.tool and (c := contracts.contract(verb.tool)) is not None:
                found.update(c.effects)
    return sorted(found)
