"""The turn loop: check every budget, fit the call to them, call the model once (through the run's
executor), act on its reply; until one named stop (:mod:`runtime.agent.stops`)."""

from __future__ import annotations

import asyncio
import contextlib
import json
import time
from typing import TYPE_CHECKING, Any

from checker.expr import render_string
from runtime.agent import budgets, history, stops
from runtime.agent.answers import extract
from runtime.agent.audit import Audit
from runtime.agent.batch import Batch
from runtime.agent.catalogue import catalogue, compose_system
from runtime.agent.ledger import Envelope, Ledger, resolve_envelope
from runtime.agent.snapshot import snapshot, with_snapshot
from runtime.agent.stops import SUCCESS_REASONS, TIMEOUT_CODE, Stop, StopReason
from runtime.errors import TaskError
from runtime.guard import limits
from runtime.guard.policy import judge_provider
from runtime.providers.base import Message, Request, Response, ToolSpec
from runtime.tools.deadline import TOOL_DEADLINE
from runtime.values import materialise

if TYPE_CHECKING:
    from checker.model.workflow import Agent as AgentVerb
    from runtime.agent.budgets import CallBudget
    from runtime.engine.context import VerbContext


class AgentLoop(Batch):
    def __init__(self, ctx: VerbContext, verb: Any) -> None:
        self.ctx = ctx
        self.tid = ctx.task_id
        self.verb = verb
        self.messages: list[Message] = []
        self.tools: list[ToolSpec] = []
        self.by_wire: dict[str, str] = {}
        self.rules: list[str] = [str(t.value) for t in verb.tools]
        self.schema: dict[str, Any] | None = None
        self.system: str | None = None
        self._in_flight: tuple[str, float, dict[str, Any]] | None = None
        self._real_t0 = 0.0

    def _value(self, node: Any, what: str) -> Any:
        return materialise(node, self.ctx.scope, what) if node is not None else None

    def _prepare(self) -> Request:
        """The model, the prompt, the schema, the budgets: everything fixed before the first turn."""
        verb, ctx = self.verb, self.ctx
        model = ctx.settings.model or self._value(verb.effective_model, "`model:`")
        if not isinstance(model, str) or "/" not in model:
            raise TaskError(
                "NIKA-PROVIDER-002",
                "the agent has no model: set `model: provider/name` on the workflow or the task, or pass `--model`",
            )
        judge_provider(ctx.workflow, self.tid, model)
        prompt = self._value(verb.prompt, "`prompt:`")
        prompt = prompt if isinstance(prompt, str) else render_string(prompt)
        system = self._value(verb.system, "`system:`")
        schema = self._value(verb.schema, "`schema:`")
        self.schema = schema if isinstance(schema, dict) else None
        if verb.schema is None:
            from runtime.tools.returns_schema import returns_schema

            self.schema = returns_schema(ctx.workflow, self.tid)  # `returns:`: the same contract as a Nika type
        max_turns = verb.turn_budget if verb.turn_budget is not None else self._value(verb.max_turns, "`max_turns:`")
        max_tokens = self._value(verb.max_tokens_total, "`max_tokens_total:`")
        self.envelope: Envelope = resolve_envelope(ctx, model, ctx.engine_env)
        self.ledger = Ledger(
            int(max_turns) if isinstance(max_turns, int) else limits.DEFAULT_MAX_TURNS,
            int(max_tokens) if isinstance(max_tokens, int) else limits.DEFAULT_MAX_TOKENS_TOTAL,
            self.envelope.max_cost_usd,
        )
        if ctx.agent_spent is not None:  # a task `retry:` attempt: the budgets are the task's, one ledger
            self.ledger.carry(ctx.agent_spent(ctx.scope.get("index") if self._iterated() else None))
        skills = [str(s.value) for s in verb.skills]
        authored = system if isinstance(system, str) else None
        self.system = compose_system(authored, skills, str(ctx.workdir), ctx.source_path)
        self.messages = [Message("user", prompt)]
        temperature = self._value(verb.temperature, "`temperature:`")
        return Request(model, prompt, self.system, temperature, None, self.schema)

    async def run_loop(self) -> Any:
        base = self._prepare()
        ctx = self.ctx
        self.audit = Audit(ctx, self.ledger, self.by_wire)
        TOOL_DEADLINE.set(self.envelope.deadline)  # every tool call of this loop is bounded by the time left
        try:
            clock = asyncio.timeout(self.envelope.time_left()) if self.envelope.own_clock else contextlib.nullcontext()
            try:
                async with clock:
                    await self._offer(base)
                    await self._turns(base)
            except TimeoutError:  # the loop's own wall clock (no task `timeout:` to do it)
                if not (isinstance(clock, asyncio.Timeout) and clock.expired()):
                    raise
                self._cut(TIMEOUT_CODE)
                self.leave_unrun(cut=True)
                raise stops.deadline(self.envelope.deadline_source) from None
        except Stop as stop:
            return self._finish(stop)
        except asyncio.CancelledError:
            left = self.envelope.time_left()
            self._cut(TIMEOUT_CODE if left <= 0 else "NIKA-CANCEL-001")
            self.leave_unrun(cut=True)  # the tool calls the deadline (or the cancel) cut, and the unrun
            self.ledger.stop_reason = StopReason.DEADLINE if left <= 0 else StopReason.CANCELLED
            record = self.ledger.record()
            self._record(record)
            self.ctx.emit("agent_budget_checkpoint", [("task", self.tid), *record.items()])
            raise
        raise AssertionError("the turn loop ends only by a stop")  # pragma: no cover

    async def _offer(self, base: Request) -> None:
        """The tools the whitelist grants (an MCP server's listing included), offered and witnessed."""
        ctx = self.ctx
        self.tools = await catalogue(ctx, self.tid, self.rules, self.schema)
        self.by_wire.update({t.name: t.tool_id for t in self.tools})
        why = "the agent may call only what its `tools:` whitelist grants" if self.rules else "no `tools:`: no tools"
        ctx.events.witness(self.tid, "tool", "agent:tools", True, why)
        tools = [("tools", [t.tool_id for t in self.tools])]
        ctx.emit("agent_tools_selected", [("task", self.tid), ("model", base.model), *tools])

    def _cut(self, code: str) -> None:
        if self._in_flight is not None:  # a model call cut by the deadline or a cancel is journaled
            model, t0, fitted = self._in_flight
            self._in_flight = None
            self.audit.cut(model, t0, code, fitted)

    def _iterated(self) -> bool:
        task = self.ctx.task
        return task is not None and task.for_each is not None and "index" in self.ctx.scope

    def _record(self, record: dict[str, Any]) -> None:
        if self._iterated():
            record = {**record, "index": self.ctx.scope["index"]}
        self.ctx.record_agent(record)

    def _finish(self, stop: Stop) -> Any:
        led = self.ledger
        led.stop_reason = stop.reason
        record = led.record()
        self._record(record)
        self.ctx.emit("agent_budget_checkpoint", [("task", self.tid), *record.items()])
        if stop.reason in SUCCESS_REASONS and stop.error is None:
            return stop.output
        err = stop.error or TaskError("NIKA-IMPL-001", f"the agent stopped ({stop.reason}) without an error")
        details = {**err.details, **record, "partial_output": led.last_text or extract(led)}
        raise TaskError(err.code, err.message, err.transient, details)

    async def _turns(self, base: Request) -> None:
        led = self.ledger
        while True:
            budgets.check_before(led, self.envelope)
            reply, fitted = await self._call(base)
            cut = reply.finish_reason in limits.TRUNCATED_FINISH and not reply.tool_calls
            text = led.cut_text + reply.text if led.cut_text and not reply.tool_calls else reply.text
            led.cut_text = ""
            if text:
                led.last_text = text
            self.messages.append(Message("assistant", reply.text, reply.tool_calls))
            if cut:  # never an answer: one request to continue, then the stop
                if led.continued:
                    raise stops.truncated(fitted.capped_by, fitted.max_tokens, again=True)
                led.continued, led.cut_text = True, text
                self.audit.nudge("answer cut by the output limit")
                self.messages.append(Message("user", limits.CONTINUE_NUDGE))
                try:
                    budgets.check_before(led, self.envelope)
                except Stop as stop:
                    if stop.reason in (StopReason.TOKEN_BUDGET, StopReason.COST_BUDGET, StopReason.MAX_TURNS):
                        raise stops.truncated(fitted.capped_by, fitted.max_tokens, again=False) from None
                    raise
            elif reply.tool_calls:
                await self.act(reply.tool_calls)
            else:
                self.final(text)

    def _request(self, base: Request) -> tuple[Request, CallBudget, tuple[int, int]]:
        """The next request: the snapshot in the system prompt, the conversation as sent, its budget fitted."""
        led, envelope, services = self.ledger, self.envelope, self.ctx.services
        priced = services.is_priced(base.model)
        system = with_snapshot(self.system, snapshot(led, envelope, self.tools, priced, envelope.time_left()))
        messages = history.wire_messages(self.messages)
        size = history.body_bytes(system, messages, self.tools)
        fitted = budgets.fit_call(led, envelope, services, base.model, history.estimate_in(size, led.reported_in))
        req = Request(
            base.model,
            base.prompt,
            system,
            base.temperature,
            fitted.max_tokens,
            base.schema,
            messages=messages,
            tools=tuple(self.tools),
            timeout_s=fitted.timeout_s,
        )
        return req, fitted, size

    async def _call(self, base: Request) -> tuple[Response, CallBudget]:
        """One model call through the run's executor: fitted first (budgets bound it), transient
        failures retried a bounded number of times inside the same turn (an attempt, not a turn)."""
        from runtime.engine.executor import ModelEffect

        attempt = 0
        while True:
            req, fitted, size = self._request(base)
            t0 = self.ctx.events.clock.monotonic()  # the run's clock: what the audit's durations read
            self._real_t0 = time.monotonic()  # the real clock: what the deadline's expected call length reads
            self._in_flight = (base.model, t0, fitted.frame())
            result = await self.ctx.perform(ModelEffect(self.tid, base.model, req, turn=True))
            self._in_flight = None
            self.ledger.provider_attempts += 1
            try:
                output = result.value()
            except TaskError as err:
                attempt += 1
                if err.code == TIMEOUT_CODE:  # the call's timeout is the time left: the deadline cut it
                    self.audit.cut(base.model, t0, err.code, fitted.frame())
                else:
                    self.audit.model(base.model, t0, None, err.code, fitted.frame())
                await self._after_failure(err, attempt)
                continue
            reply = Response.from_record(output)
            return self._account(base.model, reply, t0, fitted, size), fitted

    async def _after_failure(self, err: TaskError, attempt: int) -> None:
        """A failed model call: the stop it is, or the wait before the next attempt of the turn."""
        led = self.ledger
        if err.code == TIMEOUT_CODE:
            led.turns += 1
            raise stops.deadline(self.envelope.deadline_source, err)
        if not err.transient:
            led.turns += 1
            raise Stop(StopReason.PROVIDER_ERROR, err)
        delay = retry_delay_s(err, attempt)
        if attempt > limits.PROVIDER_RETRIES_IN_LOOP or delay >= self.envelope.time_left():
            led.turns += 1
            raise Stop(StopReason.PROVIDER_UNREACHABLE, err)
        await asyncio.sleep(delay)
        budgets.check_before(led, self.envelope)

    def _account(self, model: str, reply: Response, t0: float, fitted: CallBudget, size: tuple[int, int]) -> Response:
        """Count one answered call: a turn, its tokens (reported, else estimated) and its cost."""
        led, services = self.ledger, self.ctx.services
        led.turns += 1
        led.last_call_s = time.monotonic() - self._real_t0  # real seconds, even on a virtual clock (NEP-0010)
        if not reply.usage_reported and services.is_priced(model):
            self.audit.model(model, t0, reply, "NIKA-AGENT-005", fitted.frame())
            raise stops.unpriced_usage(model)
        if not reply.usage_reported and not reply.tokens:
            # the token budget is never blind: an unreported turn counts its estimate
            out = json.dumps([reply.text, [[c.name, c.raw] for c in reply.tool_calls]], ensure_ascii=False)
            led.tokens_in += fitted.input_estimate
            led.tokens_out += -(-len(out.encode("utf-8")) // limits.ESTIMATE_BYTES_PER_TOKEN)
            led.estimated_turns += 1
        led.tokens_in += reply.tokens_in
        led.tokens_out += reply.tokens_out
        if reply.tokens_in == 0 and reply.tokens_out == 0 and reply.tokens:
            led.tokens_out += reply.tokens
        led.reported_in = (reply.tokens_in, *size) if reply.usage_reported and reply.tokens_in > 0 else None
        led.cost_usd += services.cost_of(model, reply.tokens_in, reply.tokens_out)
        self.audit.model(model, t0, reply, None, fitted.frame())
        return reply


def retry_delay_s(err: TaskError, attempt: int) -> float:
    """How long to wait before retrying a transient provider error: ``Retry-After`` when the
    provider sent one (capped), else a short exponential backoff."""
    ms = err.details.get("retry_after_ms")
    if isinstance(ms, int | float) and ms >= 0:
        return min(ms / 1000, limits.MAX_RETRY_AFTER_S)
    return 0.1 * 2 ** (attempt - 1)


async def run_agent(ctx: VerbContext, verb: AgentVerb) -> Any:
    """The agent loop of one ``agent:`` task, given what its task may read and do."""
    return await AgentLoop(ctx, verb).run_loop()
