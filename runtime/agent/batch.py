"""One reply's tool calls, as a batch (seed "up to 3 independent free calls as a batch").

The whole reply is vetted before any call runs: every call against the whitelist (one call
outside it fails the task and nothing of the reply runs; a name the whitelist grants but no tool
answers to is fed back as a failed call, "no such tool"), then each call against its contract
(the builtin's argument contract, an MCP tool's input schema), the duplicate gate and the batch
bound (``limits.MAX_CALLS_PER_REPLY``; the calls after it are answered "not run"). Then the
calls run in order, consecutive read-only calls (``checker.contracts.effects``: nothing written,
nothing leaving the run) concurrently, and their outcomes are settled in the reply's order.

The reply is one step of the loop: its outcomes are gathered in a :class:`~runtime.agent.outcomes.Step`
and the stop rules judge it once they are all settled (:meth:`Outcomes.judge`). A stop that ends
the loop in the middle of a reply (a security error a tool raised, ``nika:done``, the deadline)
leaves a ``not-run`` frame for every call of the reply that never ran.
"""

from __future__ import annotations

import asyncio
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
REPEAT, EXCESS, MALFORMED, MISSING = "repeat", "excess", "malformed", "missing"
UNKNOWN_TOOL = "NIKA-INVOKE-001"


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
    settled: bool = False
    started: float | None = None  # when it started running (the run's clock), None before


def wire_candidates(name: str) -> list[str]:
    """The tool ids a name the model sent may stand for: the id itself (``nika:read``), or a
    wire-safe spelling of one (``nika_read``; ``mcp_srv_nope`` is ``mcp:srv/nope`` or, when the
    server's name holds ``_``, ``mcp:srv_x/…``)."""
    if ":" in name:
        return [name]
    if name.startswith("nika_"):
        return ["nika:" + name[len("nika_") :]]
    if name.startswith("mcp_"):
        rest = name[len("mcp_") :]
        return [f"mcp:{rest[:i]}/{rest[i + 1 :]}" for i, ch in enumerate(rest) if ch == "_" and 0 < i < len(rest) - 1]
    return [name]


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
        ids: list[str] = []
        missing: set[int] = set()
        for i, call in enumerate(calls):
            tool_id = self.by_wire.get(call.name)
            if tool_id is None:  # not a name we offered: inside the whitelist, or outside it?
                cands = wire_candidates(call.name)
                exact = [c for c in cands if c in granted]  # the model wrote the id, not the wire name
                inside = [c for c in cands if tool_allowed(self.rules, c)]
                tool_id = (exact or inside or cands or [call.name])[0]
                if inside and not exact:
                    missing.add(i)
            ids.append(tool_id)
            if i not in missing and (tool_id not in granted or not tool_allowed(self.rules, tool_id)):
                self.ledger.tool_calls += 1
                self.audit.tool(call, tool_id, "refused", stops.SEC_CODE, 0.0)
                raise stops.not_granted(tool_id)
        specs = {t.tool_id: t for t in self.tools}
        items: list[Item] = []
        seen: set[str] = set()
        for i, (call, tool_id) in enumerate(zip(calls, ids, strict=True)):
            if i >= limits.MAX_CALLS_PER_REPLY:
                items.append(Item(call, tool_id, EXCESS))
            elif i in missing:
                wired = ", ".join(t.tool_id for t in self.tools) or "none"
                why = f"no such tool `{tool_id}`; the tools are: {wired}"
                err = TaskError(UNKNOWN_TOOL, why, details={"tool": tool_id})
                items.append(Item(call, tool_id, MISSING, error=err))
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
        """Vet the reply, then run and settle its calls in order (read-only neighbours at once),
        then judge the reply as one step."""
        items = self.vet(calls)
        self.begin_step()
        self._items = items
        bad = [it for it in items if it.kind == MALFORMED]
        for it in bad:
            it.settled = True
            self.answer(it.call, {"error": "the arguments were not a JSON object; send them as one"})
        if bad:  # one malformed reply is one strike, however many calls it holds
            self.malformed(f"the arguments of your `{bad[0].call.name}` call were not a JSON object")
        else:
            self.ledger.malformed_in_a_row = 0
        serial = self.ctx.settings.serial  # a deterministic run: one call at a time, in order (NEP-0010)
        try:
            i = 0
            while i < len(items):
                n = 1  # consecutive read-only calls run at once; any other call runs alone
                while not serial and items[i].read_only and i + n < len(items) and items[i + n].read_only:
                    n += 1
                await self._run_group(items[i : i + n])
                i += n
        except stops.Stop:
            self.leave_unrun()
            raise
        self._items = []
        self.judge()

    def leave_unrun(self, cut: bool = False) -> None:
        """The calls of the reply the loop ended before: what ran is audited as it ended, what was
        running when the deadline cut it is ``cut``, what never ran gets a ``not-run`` frame."""
        for it in getattr(self, "_items", []):
            if it.settled:
                continue
            it.settled = True
            if it.outcome is not None:
                err, t0 = it.outcome[1], it.outcome[2]
                self.audit.tool(it.call, it.tool_id, "error" if err else "ok", err and err.code, t0)
            elif cut and it.started is not None:
                self.audit.tool(it.call, it.tool_id, "cut", "NIKA-TIMEOUT-001", it.started)
            else:
                self.audit.tool(it.call, it.tool_id, "not-run", None, 0.0)
        self._items = []

    async def _run_group(self, group: list[Item]) -> None:
        runs = [it for it in group if it.kind == RUN]
        for it, outcome in zip(runs, await asyncio.gather(*(self.perform(it) for it in runs)), strict=True):
            it.outcome = outcome
        for it in group:
            it.settled = True
            self.settle(it)

    async def perform(self, it: Item) -> tuple[Any, TaskError | None, float]:
        self.ledger.tool_calls += 1
        t0 = it.started = self.ctx.events.clock.monotonic()  # the run's clock (virtual in a deterministic run)
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
        elif it.kind in (INVALID, MISSING):
            assert it.error is not None
            self.ledger.tool_calls += 1
            self.failed(call, tool_id, it.error)
        elif it.kind == DUPLICATE:  # a call an earlier reply ran: the model is told (and it counts)
            self.duplicate(call, tool_id, it.fp, told=True)
        elif it.kind == REPEAT and it.fp in self.ledger.executed:  # this reply ran it once already
            self.duplicate(call, tool_id, it.fp, told=False)
        elif it.kind == REPEAT:
            self.not_run(call, tool_id, "the same call as an earlier one of this reply, which failed")
        elif it.kind == EXCESS:
            self.not_run(call, tool_id, f"at most {limits.MAX_CALLS_PER_REPLY} tool calls run per reply; send it again")
