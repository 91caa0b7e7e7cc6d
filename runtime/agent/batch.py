"""One reply's tool calls, as a batch (seed "up to 3 independent free calls as a batch").

The whole reply is vetted before any call runs: every call against the whitelist (one call
outside it fails the task and nothing of the reply runs), then each call against its contract
(the builtin's argument contract, an MCP tool's input schema), the duplicate gate and the batch
bound (``limits.MAX_CALLS_PER_REPLY``; the calls after it are answered "not run"). Then the
calls run in order, consecutive read-only calls (``checker.contracts.effects``: nothing written,
nothing leaving the run) concurrently, and their outcomes are settled in the reply's order.
"""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from runtime.agent import stops
from runtime.agent.answers import schema_problem
from runtime.agent.audit import fingerprint
from runtime.agent.catalogue import COMPOSE, DONE
from runtime.agent.outcomes import Outcomes
from runtime.errors import TaskError
from runtime.guard import limits
from runtime.providers.base import ToolCall, ToolSpec

if TYPE_CHECKING:
    from runtime.engine.context import VerbContext

# what the vetting decided for one call of the reply
RUN, DONE_CALL, INVALID, DUPLICATE = "run", "done", "invalid", "duplicate"
REPEAT, EXCESS, MALFORMED = "repeat", "excess", "malformed"


@dataclass
class Item:
    """One call of the reply, as vetted: what to do with it (``kind``), and why."""

    call: ToolCall
    tool_id: str
    kind: str
    fp: str = ""
    error: TaskError | None = None
    read_only: bool = False
    outcome: tuple[Any, TaskError | None, float] | None = None


def contract_error(tool_id: str, args: dict[str, Any], tid: str, spec: ToolSpec | None) -> TaskError | None:
    """The call's misfit against its contract, judged before anything of the reply runs."""
    if tool_id.startswith("mcp:"):
        problem = schema_problem(args, spec.parameters) if spec is not None and spec.parameters else None
        return TaskError("NIKA-BUILTIN-001", f"the arguments of `{tool_id}` {problem}") if problem else None
    from runtime.builtins import arg_error

    return arg_error(tool_id, args, tid)


class Batch(Outcomes):
    ctx: VerbContext
    rules: list[str]
    by_wire: dict[str, str]
    tools: list[ToolSpec]

    def vet(self, calls: tuple[ToolCall, ...]) -> list[Item]:
        """Every call of the reply judged before any runs (security first, for all of them)."""
        from checker.contracts.effects import tool_effects
        from checker.core.globs import tool_allowed

        granted = set(self.by_wire.values())
        ids = [self.by_wire.get(c.name, c.name) for c in calls]
        for call, tool_id in zip(calls, ids, strict=True):
            if tool_id not in granted or not tool_allowed(self.rules, tool_id):
                self.ledger.tool_calls += 1
                self.audit.tool(call, tool_id, "refused", stops.SEC_CODE, 0.0)
                raise stops.not_granted(tool_id)
        specs = {t.tool_id: t for t in self.tools}
        items: list[Item] = []
        seen: set[str] = set()
        for i, (call, tool_id) in enumerate(zip(calls, ids, strict=True)):
            if i >= limits.MAX_CALLS_PER_REPLY:
                items.append(Item(call, tool_id, EXCESS))
            elif call.arguments is None:
                items.append(Item(call, tool_id, MALFORMED))
            elif tool_id == DONE:
                items.append(Item(call, tool_id, DONE_CALL))
            else:
                fp = fingerprint(tool_id, call.arguments)
                err = contract_error(tool_id, call.arguments, self.ctx.task_id, specs.get(tool_id))
                kind = INVALID if err else DUPLICATE if fp in self.ledger.executed else REPEAT if fp in seen else RUN
                seen.add(fp)
                items.append(Item(call, tool_id, kind, fp, err, kind == RUN and tool_effects(tool_id).read_only))
        return items

    async def act(self, calls: tuple[ToolCall, ...]) -> None:
        """Vet the reply, then run and settle its calls in order (read-only neighbours at once)."""
        items = self.vet(calls)
        bad = [it for it in items if it.kind == MALFORMED]
        for it in bad:
            self.answer(it.call, {"error": "the arguments were not a JSON object; send them as one"})
        if bad:  # one malformed reply is one strike, however many calls it holds
            self.malformed(f"the arguments of your `{bad[0].call.name}` call were not a JSON object")
        else:
            self.ledger.malformed_in_a_row = 0
        i = 0
        while i < len(items):
            n = 1  # consecutive read-only calls run at once; any other call runs alone
            while items[i].read_only and i + n < len(items) and items[i + n].read_only:
                n += 1
            await self._run_group(items[i : i + n])
            i += n

    async def _run_group(self, group: list[Item]) -> None:
        runs = [it for it in group if it.kind == RUN]
        for it, outcome in zip(runs, await asyncio.gather(*(self.perform(it) for it in runs)), strict=True):
            it.outcome = outcome
        for n, it in enumerate(group):
            try:
                self.settle(it)
            except stops.Stop:
                for rest in group[n + 1 :]:  # what already ran is audited even when the loop ends here
                    if rest.outcome is not None:
                        err, t0 = rest.outcome[1], rest.outcome[2]
                        self.audit.tool(rest.call, rest.tool_id, "error" if err else "ok", err and err.code, t0)
                raise

    async def perform(self, it: Item) -> tuple[Any, TaskError | None, float]:
        self.ledger.tool_calls += 1
        t0 = time.monotonic()
        args = it.call.arguments or {}
        try:
            result = self.compose(args) if it.tool_id == COMPOSE else await self.ctx.tool_call(it.tool_id, args)
        except TaskError as err:
            return None, err, t0
        return result, None, t0

    def settle(self, it: Item) -> None:
        call, tool_id = it.call, it.tool_id
        if it.kind == RUN:
            assert it.outcome is not None
            result, err, t0 = it.outcome
            if err is not None:
                self.failed(call, tool_id, err, t0)
            else:
                self.succeeded(call, tool_id, it.fp, result, t0)
        elif it.kind == DONE_CALL:
            self.ledger.tool_calls += 1
            err = self.done(call, call.arguments or {})
            if err is not None:
                self.failed(call, tool_id, err)
        elif it.kind == INVALID:
            assert it.error is not None
            self.ledger.tool_calls += 1
            self.failed(call, tool_id, it.error)
        elif it.kind in (DUPLICATE, REPEAT) and it.fp in self.ledger.executed:
            self.duplicate(call, tool_id, it.fp)
        elif it.kind == REPEAT:
            self.not_run(call, tool_id, "the same call as an earlier one of this reply, which failed")
        elif it.kind == EXCESS:
            self.not_run(call, tool_id, f"at most {limits.MAX_CALLS_PER_REPLY} tool calls run per reply; send it again")
