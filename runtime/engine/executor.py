"""The executor seam: where a task's effect runs.

A verb decides *what* to do; an executor *does* it. The verb (in the driver) evaluates its
fields, asks the permit judge, and builds the effect as plain data, an :data:`EffectCall`:

* :class:`ExecEffect`: a resolved process (argv or shell line, cwd, composed environment, the
  engine-resolved executable, stdin, capture and decode);
* :class:`ToolEffect`: an effectful ``nika:*`` builtin with its resolved arguments;
* :class:`ModelEffect`: one model call (``provider/name`` and the wire-neutral request);
* :class:`McpEffect`: one MCP tool call.

:meth:`Executor.perform` runs it and answers with an :class:`EffectResult`: a plain record of
the output or the error (code, message, transient, details), the permit witnesses recorded
while performing it, the timing and the tokens. ``perform`` never raises a task failure (a
cancellation still propagates); :meth:`EffectResult.value` turns the record back into the
value or the :class:`~runtime.errors.TaskError` on the driver's side.

What stays in the driver, whatever the executor: the gate (GATE-v2), ``with:``/``when:``,
the permit decisions taken before the effect, ``retry:`` and its backoff, ``timeout:``,
budgets, ``on_error:``, ``output:``, the trace and its witnesses. An executor only performs.

:class:`LocalExecutor` (``Options.executor = "local"``, the default) performs in this process
on this event loop. It shares the run's :class:`ExecutorHost`: the judge re-decides what only
the effect can see (a builtin's paths after symlink resolution, each redirect hop of a fetch)
through the run's own boundary, so its witnesses are journaled as they happen and
``EffectResult.witness`` stays empty. An executor out of process receives the grant as data,
judges with the same checker judge there, and returns those witnesses in ``witness``; the
driver journals them on receipt (:func:`journal_witness`, called by ``VerbContext.perform``).

What is per run rather than per call reaches an executor once, through the
:class:`ExecutorHost` it is built with (``Options.executor`` names a factory of one): the grant
(``boundary``: this workflow's ``permits:`` and its callers'), the engine environment the
provider keys and the SSRF allowance are read from, the working directory. Per call, the
effect carries everything else already resolved: an exec call its composed environment (the
secrets it was given included), a model call its request.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from checker.core.records import field, record
from runtime.determinism import elapsed_ms, iso
from runtime.engine.events import EventSink
from runtime.engine.records import now_iso
from runtime.engine.services import Services
from runtime.errors import TaskError
from runtime.guard.permits import Boundary
from runtime.net import egress

if TYPE_CHECKING:
    from runtime.providers.base import Request
    from runtime.tools.process_runner import ExecCall


@record
class ExecEffect:
    task_id: str
    call: ExecCall


@record
class ToolEffect:
    task_id: str
    tool: str
    args: Mapping[str, Any]
    computed: bool = False  # the arguments come from expressions (a misfit is NIKA-VAR-006)
    interactive: bool = False  # a human may answer `nika:prompt`
    net: bool = False  # the tool reaches the network (gets the HTTP client and the URL judge)
    inert: bool = False  # the task is `inert:` (fetched content is never executable)
    trusted: tuple[str, ...] = ()  # the arguments trusted in spec 10's sense (literal, const, secrets)


@record
class ModelEffect:
    task_id: str
    model: str  # `provider/name`
    request: Request
    turn: bool = False  # an agent turn: the output is the whole reply as plain data (Response.record())


@record
class McpEffect:
    task_id: str
    tool: str  # `mcp:server/name`
    args: Mapping[str, Any]
    timeout_s: float | None = None  # what is left of the task's time (None: the MCP default)


EffectCall = ExecEffect | ToolEffect | ModelEffect | McpEffect
Usage = tuple[int | None, int | None, str | None, int | None]  # tokens in, out, finish reason, thinking


@record
class EffectResult:
    output: Any = None
    error: dict[str, Any] | None = None  # {code, message, transient, details}
    witness: tuple[dict[str, Any], ...] = ()  # {task, plane, gate, ok, why} decided while performing
    started_at: str = ""
    duration_ms: float = 0.0
    tokens_in: int | None = None
    tokens_out: int | None = None
    finish_reason: str | None = None
    thinking_tokens: int | None = None  # of tokens_out, when the provider reports its reasoning
    events: tuple[dict[str, Any], ...] = ()  # `{"type": …}` events a builtin reported while performing
    worker: str | None = None  # where an out-of-process executor performed it

    def value(self) -> Any:
        """The output, or the task failure the effect ended with."""
        if self.error is not None:
            e = self.error
            raise TaskError(e["code"], e["message"], bool(e.get("transient")), dict(e.get("details") or {}))
        return self.output


class Executor(Protocol):
    """Where effects run. ``perform`` receives plain data and answers a plain record."""

    name: str

    async def perform(self, call: EffectCall) -> EffectResult: ...


@record
class ExecutorHost:
    """What an executor in this process may use: the run's judge adapter (for the re-judgements
    inside an effect), its services (providers, HTTP client, MCP servers) and its event sink."""

    workdir: Path
    boundary: Boundary
    services: Services
    events: EventSink
    engine_env: Mapping[str, str] = field(default_factory=dict)
    gate: Any = None  # the run's human gate (runtime.durable.gate), handed to `nika:prompt`
    inspect: Callable[[str], dict[str, Any]] | None = None  # the run's own state by view, for `nika:inspect`
    determinism: Any = None  # the run's runtime.determinism.Determinism: the builtins' clock and entropy


ExecutorFactory = Callable[[ExecutorHost], Executor]


def journal_witness(events: EventSink, result: EffectResult) -> None:
    """Journal the witnesses and builtin events an out-of-process executor returned (the local
    one journals them as they happen and returns none)."""
    for w in result.witness:
        events.witness(w["task"], w["plane"], w["gate"], bool(w["ok"]), w["why"])
    for e in result.events:
        events.tool_event(str(e.get("task") or ""), e)


class LocalExecutor:
    """Today's executor: every effect on this process's event loop."""

    name = "local"

    def __init__(self, host: ExecutorHost) -> None:
        self.host = host

    async def perform(self, call: EffectCall) -> EffectResult:
        clock = self.host.events.clock
        started, t0 = (iso(clock.now_ns()) if clock.virtual else now_iso()), clock.monotonic()
        usage: Usage = (None, None, None, None)
        try:
            output, usage = await self._perform(call)
        except TaskError as err:
            error = {"code": err.code, "message": err.message, "transient": err.transient, "details": err.details}
            return EffectResult(None, error, (), started, elapsed_ms(clock, t0))
        return EffectResult(output, None, (), started, elapsed_ms(clock, t0), *usage)

    async def _perform(self, call: EffectCall) -> tuple[Any, Usage]:
        none: Usage = (None, None, None, None)
        if isinstance(call, ExecEffect):
            from runtime.tools.process_runner import run_process

            return await run_process(call.call), none
        if isinstance(call, ModelEffect | ToolEffect):  # the egress judge of every request it sends
            host = self.host
            judge = partial(host.boundary.check_egress, call.task_id)
            carrier = egress.Carrier(effect_sink(call), tuple(host.services.held.values()), judge)
            token = egress.CURRENT.set(carrier)
            try:
                return await self._perform_carried(call)
            finally:
                egress.CURRENT.reset(token)
        if isinstance(call, McpEffect):
            from runtime.tools.mcp_client import call_mcp_tool

            return await call_mcp_tool(self.host, call.task_id, call.tool, dict(call.args), call.timeout_s), none
        raise TypeError(f"not an effect: {type(call).__name__}")

    async def _perform_carried(self, call: ModelEffect | ToolEffect) -> tuple[Any, Usage]:
        if isinstance(call, ModelEffect):
            provider, name = self.host.services.provider_for(call.model)
            response = await self._complete(provider, name, call)
            output = response.record() if call.turn else response.value
            usage = (response.tokens_in, response.tokens_out, response.finish_reason, response.thinking_tokens)
            return output, usage
        return await self._builtin(call), (None, None, None, None)

    async def _complete(self, provider: Any, name: str, call: ModelEffect) -> Any:
        """One model call; streamed, its pieces as ``infer_chunk`` events, when the run has a live
        listener (runtime.providers.stream)."""
        if self.host.events.on_event is None:
            return await provider.complete(name, call.request)
        from runtime.providers import stream

        sink = stream.for_call(self.host.events, call.task_id, call.model)
        token = stream.SINK.set(sink)
        try:
            return await provider.complete(name, call.request)
        finally:
            stream.SINK.reset(token)
            sink.flush()

    async def _builtin(self, call: ToolEffect) -> Any:
        from checker.contracts import tables as contracts
        from runtime import builtins

        host, tid = self.host, call.task_id
        c = contracts.contract(call.tool)
        transport = c.transport if c is not None else "in_process"  # what the builtin is handed (builtins.toml)
        extra: dict[str, Any] = {}
        if call.net:  # the run's one HTTP client, the SSRF allowance, the judge for every redirect hop
            extra = {
                "http": host.services.http(),
                "env": host.engine_env,
                "judge_url": lambda url: host.boundary.check_url(tid, url, inert=call.inert),
                "trusted": call.trusted,
            }
        if transport == "human" and host.gate is not None:  # a person asked through the run's gate
            extra["gate"] = host.gate
        if transport == "run" and host.inspect is not None:  # the run's own state: it never leaves the driver
            extra["inspect"] = host.inspect
        if transport == "provider":  # a model provider is engine transport, like `infer:`, never permits.net
            extra["services"] = host.services
        det = host.determinism
        if det is not None:  # NEP-0010: the declared clock and entropy reach the builtins that read them
            if det.clock.virtual:
                extra["clock"] = det.clock
            if det.entropy.seeded:
                extra["rng"] = det.entropy.stream("builtin", tid)
        ctx = builtins.BuiltinContext(
            workdir=host.workdir,
            resolve_read=lambda p: host.boundary.resolve(tid, p, "read"),
            resolve_write=lambda p: host.boundary.resolve(tid, p, "write"),
            emit=lambda event: host.events.tool_event(tid, event),
            task_id=tid,
            interactive=call.interactive,
            extra=extra,
        )
        return await builtins.call(call.tool, dict(call.args), ctx, computed=call.computed)


def effect_sink(call: ModelEffect | ToolEffect) -> str:
    """The sink id an effect's requests go to, as ``egress[].to:`` names it (01 §egress): the tool
    id, or the provider-egress sink of a model call (``agent`` for an agent's turn)."""
    if isinstance(call, ModelEffect):
        return "agent" if call.turn else "infer"
    return call.tool


EXECUTORS: dict[str, ExecutorFactory] = {"local": LocalExecutor}


def make_executor(choice: str | ExecutorFactory, host: ExecutorHost) -> Executor:
    """The executor ``Options.executor`` names (or builds), for one run."""
    if callable(choice):
        return choice(host)
    factory = EXECUTORS.get(choice)
    if factory is None:
        known = ", ".join(sorted(EXECUTORS))
        raise ValueError(f"executor `{choice}` is not available in this build of nika (known: {known})")
    return factory(host)
