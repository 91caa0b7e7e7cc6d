"""What a deterministic run cannot make deterministic (NEP-0010): said in its prologue
(``not_deterministic``) and in its report, never hidden.

The engine fixes the clock, the random draws and the order of a deterministic run; it cannot fix
what answers from outside: a real model (any provider but ``mock``), the network (a builtin whose
contract reaches ``net``), an MCP server. A model the run computes from a template is named as such
(which provider answers is known only when the task runs). A process (``exec:``) is as
deterministic as its command, and a child workflow's own prologue speaks for it.
"""

from __future__ import annotations

from typing import Any

from checker.model.workflow import Agent, CompiledWorkflow, Infer, Invoke, Task
from checker.parse.values import ScalarValue, TemplateValue

DETERMINISTIC_PROVIDERS = frozenset({"mock"})


def unreproducible(compiled: CompiledWorkflow, model_override: str | None = None) -> list[dict[str, str]]:
    """``[{"task", "why"}]``, in task order: each source of non-determinism a task's verbs reach."""
    wf = compiled.workflow
    assert wf is not None
    out = []
    for tid, task in wf.tasks.items():
        for why in _reasons(task, model_override):
            out.append({"task": tid, "why": why})
    return out


def _reasons(task: Task, model_override: str | None) -> list[str]:
    verbs = [task.verb, *(s.verb for s in task.on_finally)]
    out: list[str] = []
    for verb in verbs:
        if isinstance(verb, Infer | Agent):
            why = _model(verb.effective_model, model_override)
            if why is not None:
                out.append(why)
        tools: list[str] = []
        if isinstance(verb, Agent):
            tools = [str(t.value) for t in verb.tools if isinstance(t, ScalarValue)]
        elif isinstance(verb, Invoke) and verb.tool:
            tools = [verb.tool]
        out += [why for tool in tools if (why := _tool(tool)) is not None]
    return list(dict.fromkeys(out))


def _model(model: Any, override: str | None) -> str | None:
    if override is not None:
        literal: str | None = override
    elif isinstance(model, ScalarValue) and not isinstance(model, TemplateValue) and isinstance(model.value, str):
        literal = model.value
    else:
        return "a model chosen at run time (a real one is not deterministic)"
    assert literal is not None
    if literal.partition("/")[0] in DETERMINISTIC_PROVIDERS:
        return None
    return f"a real model ({literal})"


def _tool(tool: str) -> str | None:
    if tool.startswith("mcp:"):
        return f"an MCP server ({tool})"
    from checker.contracts import tables as contracts

    c = contracts.contract(tool)
    if c is not None and "net" in c.effects:
        return f"the network ({tool})"
    return None
