"""The verbs ``exec``, ``infer`` and ``invoke`` (``agent``, the tool-calling loop, is :mod:`runtime.agent`),
and :data:`VERBS`, the table a run dispatches through (:class:`runtime.engine.context.VerbTable`): the
engine never imports a verb, the caller that starts a run hands it this table. Each entry imports its
verb's module on first use, so a run loads only the verbs its workflow binds."""

from __future__ import annotations

from typing import Any

from runtime.engine.context import VerbContext, VerbTable


async def _exec(ctx: VerbContext, verb: Any) -> Any:
    from runtime.verbs.exec import run_exec_verb

    return await run_exec_verb(ctx, verb)


async def _infer(ctx: VerbContext, verb: Any) -> Any:
    from runtime.verbs.infer import run_infer

    return await run_infer(ctx, verb)


async def _invoke(ctx: VerbContext, verb: Any) -> Any:
    from runtime.verbs.invoke import run_invoke

    return await run_invoke(ctx, verb)


async def _agent(ctx: VerbContext, verb: Any) -> Any:
    from runtime.agent import run_agent

    return await run_agent(ctx, verb)


async def _tool_call(ctx: VerbContext, tool: str, args: dict[str, Any]) -> Any:
    from runtime.verbs.invoke import call_tool

    return await call_tool(ctx, tool, args)


VERBS = VerbTable({"exec": _exec, "infer": _infer, "invoke": _invoke, "agent": _agent}, tool_call=_tool_call)
