"""``agent:`` — the one agent loop (02 §agent, §Loop semantics).

A turn is: check every budget, then call the model once, then act on its reply. Budgets are
checked *before* a call and never after it, so a limit that has been reached never buys one more
call. The loop ends for exactly one named :class:`StopReason`, which the task record carries with
the turns, tokens and tool calls spent:

* the model finishes: it calls ``nika:done`` (``result:`` becomes ``.output``) or answers with no
  tool call (the answer is ``.output``); with ``schema:`` the output must validate;
* a budget runs out: ``max_turns``, ``max_tokens_total``, the task ``timeout:``, a cost ceiling;
* the loop stops making progress: three tool failures in a row, a successful call proposed again
  after being refused, two malformed replies in a row, a provider that stays unreachable;
* a security error: a call to a tool outside the whitelist (or unknown) fails the task at once.

Tool errors other than security errors go back to the model as the tool's result; invalid
arguments are answered with the tool contract's own message so the model can repair them. Only
*successful* calls enter the duplicate gate (a canonical fingerprint of tool and arguments), so a
failed call stays retryable.
"""

from __future__ import annotations

import asyncio
import json
import re
import time
from dataclasses import dataclass, field
from enum import StrEnum
from typing import TYPE_CHECKING, Any

from checker.expr import render_string
from runtime import limits
from runtime.errors import TaskError
from runtime.policy import judge_provider
from runtime.providers.base import Message, Request, Response, ToolCall, ToolSpec
from runtime.values import materialise, plain

if TYPE_CHECKING:
    from checker.model.workflow import Agent as AgentVerb
    from runtime.engine.context import VerbContext

DONE = "nika:done"
COMPOSE = "nika:compose"
# The tools the loop answers itself instead of through the builtin registry. Read as data by
# checker/contracts/built_features.py: keep it a literal set of the names above.
LOOP_TOOLS = frozenset({DONE, COMPOSE})
SEC_CODE = "NIKA-SEC-002"
TIMEOUT_CODE = "NIKA-TIMEOUT-001"
SCHEMA_CODE = "NIKA-INFER-002"


class StopReason(StrEnum):
    DONE = "done"  # the model called nika:done
    FINAL_MESSAGE = "final-message"  # the model answered without a tool call
    MAX_TURNS = "max-turns"  # NIKA-AGENT-001
    TOKEN_BUDGET = "token-budget"  # NIKA-AGENT-002
    COST_BUDGET = "cost-budget"  # NIKA-AGENT-002 (a budget_error; the reason tells it apart)
    DEADLINE = "deadline"  # NIKA-TIMEOUT-001: the task timeout left no room for another call
    FAILURE_BUDGET = "failure-budget"  # the last tool error's own code
    EXECUTED_DUPLICATE = "executed-duplicate"  # NIKA-AGENT-001: a stuck loop, stopped early
    NO_NOVELTY = "no-novelty"  # NIKA-AGENT-001: consecutive identical observations
    STREAK_EXHAUSTED = "streak-exhausted"  # NIKA-AGENT-001: the same tool succeeding over and over
    PROPOSAL_LOST = "proposal-lost"  # NIKA-INFER-002: two malformed replies in a row
    EMPTY_ANSWER = "empty-answer"  # NIKA-INFER-002: the final message stayed empty after one nudge
    PROVIDER_UNREACHABLE = "provider-unreachable"  # NIKA-PROVIDER-001 (transient)
    PROVIDER_ERROR = "provider-error"  # the provider refused the call (key, request): its code
    SECURITY = "security"  # NIKA-SEC-002, or the security error a tool raised
    CANCELLED = "cancelled"  # the run was cancelled, or the task timeout fired mid-call


SUCCESS_REASONS = frozenset({StopReason.DONE, StopReason.FINAL_MESSAGE})


@dataclass
class Ledger:
    """What the loop has spent; becomes the ``agent`` part of the task record."""

    max_turns: int
    max_tokens_total: int
    max_cost_usd: float | None = None
    turns: int = 0
    tokens_in: int = 0
    tokens_out: int = 0
    cost_usd: float = 0.0
    tool_calls: int = 0
    failed_tool_calls: int = 0
    duplicates_refused: int = 0
    failures_in_a_row: int = 0
    malformed_in_a_row: int = 0
    provider_attempts: int = 0
    estimated_turns: int = 0
    duplicates_in_a_row: dict[str, int] = field(default_factory=dict)
    last_text: str = ""
    empty_nudged: bool = False
    streak_tool: str = ""
    streak: int = 0
    same_observation: int = 0
    observations: list[str] = field(default_factory=list)
    stop_reason: StopReason | None = None
    executed: dict[str, str] = field(default_factory=dict)

    @property
    def tokens(self) -> int:
        return self.tokens_in + self.tokens_out

    def record(self) -> dict[str, Any]:
        return {
            "stop_reason": str(self.stop_reason) if self.stop_reason else None,
            "turns": self.turns,
            "max_turns": self.max_turns,
            "tokens_in": self.tokens_in,
            "tokens_out": self.tokens_out,
            "max_tokens_total": self.max_tokens_total,
            "tool_calls": self.tool_calls,
            "failed_tool_calls": self.failed_tool_calls,
            "duplicates_refused": self.duplicates_refused,
            **({"cost_usd": round(self.cost_usd, 6)} if self.max_cost_usd is not None else {}),
        }


class Stop(Exception):
    """Raised inside the loop to end it for ``reason`` (with ``error`` on a failing stop)."""

    def __init__(self, reason: StopReason, error: TaskError | None = None, output: Any = None) -> None:
        super().__init__(str(reason))
        self.reason = reason
        self.error = error
        self.output = output


def fingerprint(tool: str, args: Any) -> str:
    """The canonical form of a call: sorted keys, compact JSON (reordered arguments collide)."""
    return json.dumps([tool, plain(args)], sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str)


def wire_name(tool_id: str, taken: set[str]) -> str:
    """A name every provider accepts for a tool (``[A-Za-z0-9_-]``, at most 64 characters)."""
    base = re.sub(r"[^A-Za-z0-9_-]", "_", tool_id)[:60]
    name, n = base, 2
    while name in taken:
        name, n = f"{base[:56]}_{n}", n + 1
    taken.add(name)
    return name


# -- the tool catalogue -------------------------------------------------------------------------


def _arg_schema(spec: Any) -> dict[str, Any]:
    kinds: list[dict[str, Any]] = []
    for t in spec.types:
        if t == "any":
            kinds = []
            break
        if t == "enum":
            kinds.append({"enum": list(spec.values)} if spec.values else {"type": "string"})
        elif t == "duration":
            kinds.append({"type": "string", "description": "a Go duration such as 500ms, 30s or 1h30m"})
        elif t == "array":
            kinds.append({"type": "array", **({"items": _arg_schema(spec.items)} if spec.items else {})})
        elif t == "object":
            kinds.append(_object_schema(spec.fields, spec.open or not spec.fields))
        else:
            kinds.append({"type": t})
    out: dict[str, Any] = kinds[0] if len(kinds) == 1 else {"anyOf": kinds} if kinds else {}
    if spec.doc:
        out = {**out, "description": spec.doc}
    return out


def _object_schema(fields: Any, open_: bool) -> dict[str, Any]:
    out: dict[str, Any] = {"type": "object", "properties": {f.name: _arg_schema(f) for f in fields if not f.reserved}}
    required = [f.name for f in fields if f.required]
    if required:
        out["required"] = required
    if not open_:
        out["additionalProperties"] = False
    return out


def builtin_parameters(tool_id: str, output_schema: dict[str, Any] | None) -> dict[str, Any]:
    """The JSON Schema the model sees for a builtin's arguments (from the shared contracts)."""
    if tool_id == DONE:
        result: dict[str, Any] = dict(output_schema) if output_schema else {}
        result["description"] = "The task's result" + (" (must match the task schema)." if output_schema else ".")
        return {
            "type": "object",
            "properties": {"result": result},
            **({"required": ["result"]} if output_schema else {}),
        }
    from checker.contracts import tables as contracts

    c = contracts.contract(tool_id)
    if c is None:
        return {"type": "object"}
    return _object_schema(c.args, c.open_args)


async def catalogue(
    ctx: VerbContext, tid: str, rules: list[str], output_schema: dict[str, Any] | None
) -> list[ToolSpec]:
    """The tools a whitelist grants, offered to the model in whitelist order."""
    from checker.contracts import tables as contracts
    from checker.core.globs import expand_tools as expand

    known: dict[str, tuple[str, dict[str, Any]]] = {}
    for c in contracts.contracts():
        known[c.id] = (c.summary, {})
    if any(r.lstrip("!").startswith("mcp:") for r in rules):
        from runtime.mcp_client import list_mcp_tools

        for tool_id, description, schema in await list_mcp_tools(ctx, tid, rules):
            known[tool_id] = (description, schema)
    taken: set[str] = set()
    specs = []
    for tool_id in expand(rules, known):
        description, schema = known[tool_id]
        params = schema if tool_id.startswith("mcp:") else builtin_parameters(tool_id, output_schema)
        specs.append(ToolSpec(wire_name(tool_id, taken), tool_id, description, params))
    return specs


# -- skills -------------------------------------------------------------------------------------


def compose_system(
    system: str | None, skill_paths: list[str], base_dir: str, document: str | None = None
) -> str | None:
    """The authored ``system:`` followed by the ``## Skills`` section (02 §Agent Skills)."""
    if not skill_paths:
        return system
    from checker.rules.support import skill_files as skills

    blocks = []
    for path in skill_paths:
        loaded = skills.load(path, base_dir, document)
        if isinstance(loaded, tuple):
            code, why = loaded
            raise TaskError(code, f"skill `{path}`: {why}", details={"skill": path})
        block = f"### {loaded.name}\n\n{loaded.description}"
        if loaded.body:
            block += f"\n\n{loaded.body}"
        blocks.append(block)
    section = "## Skills\n\n" + "\n\n".join(blocks)
    return f"{system}\n\n{section}" if system else section


# -- the loop -----------------------------------------------------------------------------------


class AgentLoop:
    def __init__(self, ctx: VerbContext, verb: Any) -> None:
        self.ctx = ctx
        self.tid = ctx.task_id
        self.verb = verb
        self.scope = ctx.scope
        self.task = ctx.task
        self.messages: list[Message] = []
        self.tools: list[ToolSpec] = []
        self.by_wire: dict[str, str] = {}
        self.rules: list[str] = [str(t.value) for t in verb.tools]
        self.schema: dict[str, Any] | None = None
        self.deadline: float | None = None
        self._in_flight: tuple[str, float] | None = None

    def _value(self, node: Any, what: str) -> Any:
        return materialise(node, self.scope, what) if node is not None else None

    async def run_loop(self) -> Any:
        verb, ctx = self.verb, self.ctx
        model = ctx.settings.model or self._value(verb.effective_model, "`model:`")
        if not isinstance(model, str) or "/" not in model:
            raise TaskError(
                "NIKA-PROVIDER-002",
                "the agent has no model: set `model: provider/name` on the workflow or the task, or pass `--model`",
            )
        judge_provider(ctx.workflow, self.tid, model)
        prompt = self._value(verb.prompt, "`prompt:`")
        if not isinstance(prompt, str):
            prompt = render_string(prompt)
        system = self._value(verb.system, "`system:`")
        schema = self._value(verb.schema, "`schema:`")
        self.schema = schema if isinstance(schema, dict) else None
        if verb.schema is None:
            from runtime.returns import returns_schema

            self.schema = returns_schema(ctx.workflow, self.tid)  # `returns:`: the same contract as a Nika type
        temperature = self._value(verb.temperature, "`temperature:`")
        max_turns = verb.turn_budget if verb.turn_budget is not None else self._value(verb.max_turns, "`max_turns:`")
        max_tokens = self._value(verb.max_tokens_total, "`max_tokens_total:`")
        ledger = Ledger(
            int(max_turns) if isinstance(max_turns, int) else limits.DEFAULT_MAX_TURNS,
            int(max_tokens) if isinstance(max_tokens, int) else limits.DEFAULT_MAX_TOKENS_TOTAL,
            ctx.services.max_cost_usd(),
        )
        self.ledger = ledger
        skill_paths = [str(s.value) for s in verb.skills]
        system = compose_system(
            system if isinstance(system, str) else None, skill_paths, str(ctx.workdir), ctx.source_path
        )
        if self.task is not None and self.task.timeout is not None and ctx.started_monotonic is not None:
            self.deadline = ctx.started_monotonic + self.task.timeout.ms / 1000
        provider, name = ctx.services.provider_for(model)
        self.tools = await catalogue(ctx, self.tid, self.rules, self.schema)
        self.by_wire = {t.name: t.tool_id for t in self.tools}
        ctx.events.witness(
            self.tid,
            "tool",
            "agent:tools",
            True,
            "the agent may call only what its `tools:` whitelist grants" if self.rules else "no `tools:`: no tools",
        )
        ctx.emit(
            "agent_tools_selected",
            [("task", self.tid), ("model", model), ("tools", [t.tool_id for t in self.tools])],
        )
        self.messages = [Message("user", prompt)]
        base = Request(model, prompt, system, temperature, None, self.schema)
        try:
            output = await self._turns(provider, name, base)
        except Stop as stop:
            return self._finish(stop)
        except asyncio.CancelledError:
            if self._in_flight is not None:  # a model call cut by the deadline or a cancel is journaled
                model, t0 = self._in_flight
                self._model_event(model, None, t0, "cut")
            left = self._remaining_s()
            ledger.stop_reason = StopReason.DEADLINE if left is not None and left <= 0 else StopReason.CANCELLED
            ctx.record_agent(ledger.record())
            raise
        return output  # pragma: no cover - _turns always stops

    def _finish(self, stop: Stop) -> Any:
        led = self.ledger
        led.stop_reason = stop.reason
        record = led.record()
        self.ctx.record_agent(record)
        self.ctx.emit(
            "agent_budget_checkpoint",
            [("task", self.tid), *record.items()],
        )
        if stop.reason in SUCCESS_REASONS and stop.error is None:
            return stop.output
        err = stop.error or TaskError("NIKA-IMPL-001", f"the agent stopped ({stop.reason}) without an error")
        details = {**err.details, **record, "partial_output": led.last_text or self._extract()}
        raise TaskError(err.code, err.message, err.transient, details)

    def _extract(self) -> str:
        """The deterministic backstop of a missing answer: the last observations, newest last."""
        last = self.ledger.observations[-limits.EXTRACT_OBSERVATIONS :]
        return "\n\n".join(o[: limits.EXTRACT_CHARS] for o in last)

    # -- budgets ----------------------------------------------------------------------------

    def _remaining_s(self) -> float | None:
        return None if self.deadline is None else self.deadline - time.monotonic()

    def check_budgets(self) -> None:
        """Before every model call: the first envelope that is spent stops the loop."""
        led = self.ledger
        if led.turns >= led.max_turns:
            raise Stop(
                StopReason.MAX_TURNS,
                TaskError(
                    "NIKA-AGENT-001",
                    f"the agent used all {led.max_turns} turns of `max_turns` without finishing",
                ),
            )
        if led.tokens >= led.max_tokens_total:
            raise Stop(
                StopReason.TOKEN_BUDGET,
                TaskError(
                    "NIKA-AGENT-002",
                    f"the agent spent {led.tokens} tokens of its {led.max_tokens_total}-token budget without finishing",
                ),
            )
        if led.max_cost_usd is not None and led.cost_usd >= led.max_cost_usd:
            raise Stop(
                StopReason.COST_BUDGET,
                TaskError(
                    "NIKA-AGENT-002",
                    f"the agent spent ${led.cost_usd:.4f} of its ${led.max_cost_usd:.4f} cost ceiling unfinished",
                ),
            )
        left = self._remaining_s()
        if left is not None and left <= limits.MIN_CALL_WINDOW_S:
            raise Stop(
                StopReason.DEADLINE,
                TaskError(TIMEOUT_CODE, "the task's `timeout:` left no time for another model call"),
            )

    # -- turns ------------------------------------------------------------------------------

    async def _turns(self, provider: Any, name: str, base: Request) -> Any:
        led = self.ledger
        while True:
            self.check_budgets()
            reply = await self._call(provider, name, base)
            if reply.text:
                led.last_text = reply.text
            self.messages.append(Message("assistant", reply.text, reply.tool_calls))
            if not reply.tool_calls:
                self._final(reply.text)
                continue
            await self._act(reply.tool_calls)

    def _estimate_in(self, system: str | None) -> int:
        """A conservative input-token estimate of the next call (limits.ESTIMATE_BYTES_PER_TOKEN)."""
        body = json.dumps(  # shaped like a chat-completions body, so the estimate covers the wire's keys
            {
                "messages": [{"role": "system", "content": system}]
                + [
                    {
                        "role": m.role,
                        "content": m.content,
                        "tool_calls": [
                            {"id": c.id, "type": "function", "function": {"name": c.name, "arguments": c.raw}}
                            for c in m.tool_calls
                        ],
                        "tool_call_id": m.tool_call_id,
                    }
                    for m in self.messages
                ],
                "tools": [
                    {
                        "type": "function",
                        "function": {"name": t.name, "description": t.description, "parameters": t.parameters},
                    }
                    for t in self.tools
                ],
            },
            ensure_ascii=False,
            default=str,
        )
        return -(-len(body.encode("utf-8")) // limits.ESTIMATE_BYTES_PER_TOKEN)

    def admit(self, model: str, system: str | None) -> int:
        """Pre-call admission: the output cap so that spent + input estimate + output cap stays
        inside the token budget and the cost cap; stops (before sending) when no useful call fits."""
        led = self.ledger
        est_in = self._estimate_in(system)
        cap = min(
            led.max_tokens_total - led.tokens - est_in,
            limits.MODEL_MAX_OUTPUT_TOKENS.get(model, limits.DEFAULT_MAX_OUTPUT_TOKENS),
        )
        if cap < limits.MIN_USEFUL_OUTPUT_TOKENS:
            raise Stop(
                StopReason.TOKEN_BUDGET,
                TaskError(
                    "NIKA-AGENT-002",
                    f"the agent spent {led.tokens} tokens of its {led.max_tokens_total}-token budget without "
                    f"finishing; the next call (about {est_in} tokens in) would overshoot it",
                ),
            )
        if led.max_cost_usd is not None and self.ctx.services.is_priced(model):
            left = led.max_cost_usd - led.cost_usd
            per_out = self.ctx.services.cost_of(model, 0, 1_000_000) / 1_000_000
            room = left - self.ctx.services.cost_of(model, est_in, 0)
            if per_out > 0:
                cap = min(cap, int(room / per_out)) if room > 0 else 0
            elif room < 0:
                cap = 0
            if cap < limits.MIN_USEFUL_OUTPUT_TOKENS:
                raise Stop(
                    StopReason.COST_BUDGET,
                    TaskError(
                        "NIKA-AGENT-002",
                        f"the agent spent ${led.cost_usd:.4f} of its ${led.max_cost_usd:.4f} cost ceiling; the next "
                        "call could overshoot it",
                    ),
                )
        self._est_in = est_in
        return cap

    async def _call(self, provider: Any, name: str, base: Request) -> Response:
        """One model call: admitted first (budgets bound it), transient failures retried a bounded
        number of times inside the same turn (a retry is an attempt, not a turn)."""
        led = self.ledger
        attempt = 0
        while True:
            cap = self.admit(base.model, base.system)
            left = self._remaining_s()
            if left is not None:  # end the call a little early so the loop, not the task clock, stops it
                left = max(limits.MIN_CALL_WINDOW_S, left - limits.DEADLINE_MARGIN_S)
            req = Request(
                base.model,
                base.prompt,
                base.system,
                base.temperature,
                cap,
                base.schema,
                messages=tuple(self.messages),
                tools=tuple(self.tools),
                timeout_s=left,
            )
            t0 = time.monotonic()
            self._in_flight = (base.model, t0)
            try:
                reply = await provider.complete(name, req)
            except TaskError as err:
                self._in_flight = None
                self._model_event(base.model, None, t0, err.code)
                led.provider_attempts += 1
                if err.code == TIMEOUT_CODE:
                    led.turns += 1
                    raise Stop(StopReason.DEADLINE, err) from None
                if not err.transient:
                    led.turns += 1
                    raise Stop(StopReason.PROVIDER_ERROR, err) from None
                attempt += 1
                if attempt > limits.PROVIDER_RETRIES_IN_LOOP:
                    led.turns += 1
                    raise Stop(StopReason.PROVIDER_UNREACHABLE, err) from None
                delay = retry_delay_s(err, attempt)
                left = self._remaining_s()
                if left is not None and delay >= left:
                    led.turns += 1
                    raise Stop(StopReason.PROVIDER_UNREACHABLE, err) from None
                await asyncio.sleep(delay)
                self.check_budgets()
                continue
            self._in_flight = None
            led.provider_attempts += 1
            led.turns += 1
            if not reply.usage_reported and self.ctx.services.is_priced(base.model):
                self._model_event(base.model, reply, t0, "NIKA-AGENT-005")
                raise Stop(
                    StopReason.PROVIDER_ERROR,
                    TaskError(
                        "NIKA-AGENT-005",
                        f"`{base.model}` is priced but reported no token usage, so no budget can count this turn",
                    ),
                )
            if not reply.usage_reported and not reply.tokens:
                # the token budget is never blind: an unreported turn counts its estimate
                out = json.dumps([reply.text, [[c.name, c.raw] for c in reply.tool_calls]], ensure_ascii=False)
                led.tokens_in += self._est_in
                led.tokens_out += -(-len(out.encode("utf-8")) // limits.ESTIMATE_BYTES_PER_TOKEN)
                led.estimated_turns += 1
            led.tokens_in += reply.tokens_in
            led.tokens_out += reply.tokens_out
            if reply.tokens_in == 0 and reply.tokens_out == 0 and reply.tokens:
                led.tokens_out += reply.tokens
            led.cost_usd += self.ctx.services.cost_of(base.model, reply.tokens_in, reply.tokens_out)
            self._model_event(base.model, reply, t0, None)
            return reply

    def _model_event(self, model: str, reply: Response | None, t0: float, code: str | None) -> None:
        led = self.ledger
        fields: list[tuple[str, Any]] = [
            ("task", self.tid),
            ("phase", "model_call"),
            ("provider", model.partition("/")[0]),
            ("model", model),
            ("turn", led.turns + (0 if reply is not None else 1)),
            ("duration_ms", round((time.monotonic() - t0) * 1000, 3)),
        ]
        if reply is not None:
            fields += [
                ("tokens_in", reply.tokens_in),
                ("tokens_out", reply.tokens_out),
                ("tokens_total", led.tokens),
                ("max_turns", led.max_turns),
                ("finish_reason", reply.finish_reason),
                ("tool_calls", [self.by_wire.get(c.name, c.name) for c in reply.tool_calls]),
            ]
        if code is not None:
            fields.append(("error_code", code))
        self.ctx.emit("verb_invoked", fields)

    # -- final answers ----------------------------------------------------------------------

    def _final(self, text: str) -> None:
        """A reply without tool calls: the answer, once it satisfies ``schema:``."""
        if self.schema is None:
            if text.strip():
                raise Stop(StopReason.FINAL_MESSAGE, output=text)
            led = self.ledger
            if not led.empty_nudged:  # an empty answer is not success: ask the model to synthesise once
                led.empty_nudged = True
                self.ctx.emit("agent_nudge", [("task", self.tid), ("why", "empty final message"), ("turn", led.turns)])
                self.messages.append(Message("user", limits.EMPTY_ANSWER_NUDGE))
                return
            raise Stop(
                StopReason.EMPTY_ANSWER,
                TaskError(
                    SCHEMA_CODE,
                    "the agent's final message was empty, also after being asked once to write its answer",
                ),
            )
        try:
            value = json.loads(_strip_fence(text))
        except ValueError as exc:
            self._malformed(f"your reply must be only a JSON value matching the schema; it is not JSON ({exc})")
            return
        problem = schema_problem(value, self.schema)
        if problem is not None:
            self._malformed(f"your reply does not match the schema: {problem}. Reply with corrected JSON only.")
            return
        raise Stop(StopReason.FINAL_MESSAGE, output=value)

    def _malformed(self, feedback: str) -> None:
        led = self.ledger
        led.malformed_in_a_row += 1
        if led.malformed_in_a_row >= limits.MALFORMED_REPLIES:
            raise Stop(
                StopReason.PROPOSAL_LOST,
                TaskError(
                    SCHEMA_CODE, f"the model sent {led.malformed_in_a_row} malformed replies in a row: {feedback}"
                ),
            )
        self.ctx.emit("agent_nudge", [("task", self.tid), ("why", "malformed reply"), ("turn", led.turns)])
        self.messages.append(Message("user", feedback))

    # -- tool calls -------------------------------------------------------------------------

    async def _act(self, calls: tuple[ToolCall, ...]) -> None:
        from checker.core.globs import tool_allowed as allowed

        led = self.ledger
        well_formed = all(c.arguments is not None for c in calls)
        if well_formed:
            led.malformed_in_a_row = 0
        malformed_counted = False
        for call in calls:
            tool_id = self.by_wire.get(call.name, call.name)
            if tool_id not in self.by_wire.values() or not allowed(self.rules, tool_id):
                led.tool_calls += 1
                self._tool_event(call, tool_id, "refused", SEC_CODE, 0.0)
                raise Stop(
                    StopReason.SECURITY,
                    TaskError(
                        SEC_CODE,
                        f"the model called `{tool_id}`, which the agent's `tools:` whitelist does not grant",
                        details={"tool": tool_id},
                    ),
                )
            if call.arguments is None:
                self._answer(call, {"error": "the arguments were not a JSON object; send them as one"})
                if not malformed_counted:  # one malformed reply is one strike, however many calls it holds
                    malformed_counted = True
                    self._malformed(f"the arguments of your `{call.name}` call were not a JSON object")
                continue
            args = call.arguments
            if tool_id == DONE:
                self._done(call, args)
                continue
            fp = fingerprint(tool_id, args)
            if fp in led.executed:
                led.duplicates_refused += 1
                in_a_row = led.duplicates_in_a_row[fp] = led.duplicates_in_a_row.get(fp, 0) + 1
                self._tool_event(call, tool_id, "duplicate", None, 0.0)
                if in_a_row >= limits.DUPLICATE_REFUSALS:
                    raise Stop(
                        StopReason.EXECUTED_DUPLICATE,
                        TaskError(
                            "NIKA-AGENT-001",
                            f"the model kept proposing a call that already succeeded (`{tool_id}` with the same "
                            "arguments); the loop was making no progress",
                            details={"tool": tool_id},
                        ),
                    )
                self._answer(
                    call,
                    {
                        "refused": "this exact call already succeeded; use its result instead of repeating it",
                        "result": led.executed[fp],
                    },
                )
                continue
            await self._execute(call, tool_id, args, fp)

    def _answer(self, call: ToolCall, content: Any) -> None:
        text = content if isinstance(content, str) else _render(content)
        self.messages.append(Message("tool", text, tool_call_id=call.id, name=call.name))

    def _done(self, call: ToolCall, args: dict[str, Any]) -> None:
        led = self.ledger
        led.tool_calls += 1
        if "result" in args:
            value = args["result"]
            if self.schema is not None:
                problem = schema_problem(value, self.schema)
                if problem is not None:
                    self._failed(call, DONE, TaskError(SCHEMA_CODE, f"`result` does not match the schema: {problem}"))
                    return
            self._tool_event(call, DONE, "ok", None, 0.0)
            raise Stop(StopReason.DONE, output=value)
        self._tool_event(call, DONE, "ok", None, 0.0)
        if self.schema is not None:
            try:
                value = json.loads(_strip_fence(led.last_text))
            except ValueError:
                value = None
            problem = schema_problem(value, self.schema)
            if problem is not None:
                raise Stop(
                    StopReason.DONE,
                    TaskError(SCHEMA_CODE, f"the agent finished without a `result` matching `schema:`: {problem}"),
                )
            raise Stop(StopReason.DONE, output=value)
        raise Stop(StopReason.DONE, output=led.last_text)

    async def _execute(self, call: ToolCall, tool_id: str, args: dict[str, Any], fp: str) -> None:
        led = self.ledger
        led.tool_calls += 1
        t0 = time.monotonic()
        try:
            if tool_id == COMPOSE:
                result = self._compose(args)
            else:
                result = await self.ctx.tool_call(tool_id, args)  # the run's seam (`nika test` answers it)
        except TaskError as err:
            if err.category == "security_error":
                self._tool_event(call, tool_id, "refused", err.code, t0)
                raise Stop(StopReason.SECURITY, err) from None
            self._failed(call, tool_id, err, t0)
            return
        led.failures_in_a_row = 0
        led.duplicates_in_a_row.clear()  # progress: a new successful call resets the "in a row" counts
        rendered = _render(plain(result))
        led.executed[fp] = rendered
        led.same_observation = led.same_observation + 1 if led.observations and led.observations[-1] == rendered else 1
        led.observations.append(rendered)
        led.streak = led.streak + 1 if led.streak_tool == tool_id else 1
        led.streak_tool = tool_id
        if led.same_observation >= limits.NO_NOVELTY_REPEATS:
            self._tool_event(call, tool_id, "ok", None, t0, rendered)
            raise Stop(
                StopReason.NO_NOVELTY,
                TaskError(
                    "NIKA-AGENT-001",
                    f"{led.same_observation} tool calls in a row returned the same observation; the loop was "
                    "learning nothing new",
                    details={"tool": tool_id},
                ),
            )
        if led.streak >= limits.STREAK_LIMIT:
            self._tool_event(call, tool_id, "ok", None, t0, rendered)
            raise Stop(
                StopReason.STREAK_EXHAUSTED,
                TaskError(
                    "NIKA-AGENT-001",
                    f"`{tool_id}` succeeded {led.streak} times in a row without the agent finishing",
                    details={"tool": tool_id},
                ),
            )
        self._tool_event(call, tool_id, "ok", None, t0, rendered)
        self._answer(call, rendered)

    def _failed(self, call: ToolCall, tool_id: str, err: TaskError, t0: float | None = None) -> None:
        led = self.ledger
        led.failed_tool_calls += 1
        led.failures_in_a_row += 1
        self._tool_event(call, tool_id, "error", err.code, t0 or time.monotonic())
        if led.failures_in_a_row >= limits.FAILURE_BUDGET:
            raise Stop(
                StopReason.FAILURE_BUDGET,
                TaskError(
                    err.code,
                    f"{led.failures_in_a_row} tool calls in a row failed; the last, `{tool_id}`: {err.message}",
                    details={"tool": tool_id},
                ),
            )
        self._answer(call, {"error": {"code": err.code, "message": err.message}})

    def _compose(self, args: dict[str, Any]) -> dict[str, Any]:
        draft = args.get("workflow_yaml")
        if not isinstance(draft, str):
            raise TaskError("NIKA-BUILTIN-001", "`nika:compose` needs `workflow_yaml`: the complete draft as a string")
        from checker.engine.pipeline import compile_text

        compiled = compile_text(draft, "<draft>", str(self.ctx.workdir))
        findings = [
            {
                "code": d.code,
                "severity": str(d.severity.name.lower() if hasattr(d.severity, "name") else d.severity),
                "message": d.full_message(),
            }
            for d in compiled.diagnostics
        ]
        valid = not any(d.is_error for d in compiled.diagnostics)
        self.ctx.emit(
            "agent_compose_checked",
            [("task", self.tid), ("valid", valid), ("errors", sum(1 for d in compiled.diagnostics if d.is_error))],
        )
        return {"valid": valid, "findings": findings}

    def _tool_event(
        self, call: ToolCall, tool_id: str, status: str, code: str | None, t0: float, result: str | None = None
    ) -> None:
        import hashlib

        canonical = fingerprint(tool_id, call.arguments) if call.arguments is not None else call.raw
        fields: list[tuple[str, Any]] = [
            ("task", self.tid),
            ("phase", "agent"),
            ("tool", tool_id),
            ("turn", self.ledger.turns),
            ("status", status),
            ("duration_ms", round((time.monotonic() - t0) * 1000, 3) if t0 else 0.0),
            ("fingerprint", "sha256:" + hashlib.sha256(canonical.encode("utf-8")).hexdigest()),
            ("cost_usd", 0.0),  # builtin and MCP calls are unmetered; the model calls carry the spend
        ]
        if result is not None:
            cut = result[: limits.TOOL_SUMMARY_CHARS]
            fields.append(("result_summary", cut + ("…" if len(result) > len(cut) else "")))
        if code is not None:
            fields.append(("error_code", code))
        self.ctx.emit("tool_invoked", fields)


def retry_delay_s(err: TaskError, attempt: int) -> float:
    """How long to wait before retrying a transient provider error: ``Retry-After`` when the
    provider sent one (capped), else a short exponential backoff."""
    ms = err.details.get("retry_after_ms")
    if isinstance(ms, int | float) and ms >= 0:
        return min(ms / 1000, limits.MAX_RETRY_AFTER_S)
    return 0.1 * 2 ** (attempt - 1)


def schema_problem(value: Any, schema: dict[str, Any]) -> str | None:
    import jsonschema

    from runtime.json_schema import SchemaEvalError, first_error

    try:
        exc = first_error(schema, value)
    except jsonschema.SchemaError as e:
        return f"`schema:` is not a valid JSON Schema: {e.message}"
    except SchemaEvalError as e:
        return f"`schema:` has a {e}"
    if exc is None:
        return None
    where = "/".join(str(p) for p in exc.absolute_path) or "the top level"
    return f"at {where}: {exc.message}"


def _strip_fence(text: str) -> str:
    """A JSON reply some models wrap in a Markdown code fence."""
    t = text.strip()
    if t.startswith("```"):
        t = t.split("\n", 1)[1] if "\n" in t else ""
        if t.rstrip().endswith("```"):
            t = t.rstrip()[:-3]
    return t


def _render(value: Any) -> str:
    if isinstance(value, bytes | bytearray):
        text = f"<{len(value)} bytes>"
    elif isinstance(value, str):
        text = value
    else:
        text = json.dumps(value, ensure_ascii=False, default=str, sort_keys=True)
    if len(text) > limits.MAX_TOOL_RESULT_CHARS:
        cut = len(text) - limits.MAX_TOOL_RESULT_CHARS
        text = text[: limits.MAX_TOOL_RESULT_CHARS] + f"… [{cut} more characters cut]"
    return text


async def run_agent(ctx: VerbContext, verb: AgentVerb) -> Any:
    """The agent loop of one ``agent:`` task, given what its task may read and do."""
    return await AgentLoop(ctx, verb).run_loop()
