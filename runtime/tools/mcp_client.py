"""MCP tools (``mcp:<server>/<tool>``) on the official ``mcp`` SDK (2.x).

Servers are declared in engine configuration, never in the workflow (:mod:`runtime.tools.mcp_config`:
read once before the first task, refused when the workflow could write it). Starting a stdio
server is an ``exec`` effect of the calling task: its ``command`` is judged by ``permits.exec``
and the exec blocklist like an ``exec: { command: [...] }`` and witnessed in the journal, so under
``permits: {}`` (or any block without an ``exec`` grant for it) no server process is started.

A stdio server is started on first use (in its own process group, so shutting it down takes its
children too), reused for the rest of the run and stopped when the run ends; a URL is reached over
streamable HTTP. Its environment is composed like ``exec:``'s (the runner floor, the names
``permits.env`` passes through, then the server's own ``env``), never inherited. ``tools/list`` is
read once per server per run. Arguments are validated against the tool's input schema before the
call; results become Nika values (structured content as is, text as strings, images as bytes).

Each connection lives in a task of its own that owns the SDK's context managers: calls from any
task go through it, and closing the run ends that task (the SDK's cancel scopes never cross tasks).
:class:`Sessions` holds a run's connections; under the Dask executor the same class holds them on
the worker each server is pinned to (:mod:`runtime.engine.dask_mcp`), which judges the spawn with
:func:`judge_spawn` and calls with :func:`call_on` as the local :class:`MCPPool` does.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import json
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from runtime.errors import TaskError
from runtime.guard import limits
from runtime.tools.mcp_config import CONFIG_FILE, McpConfig, ServerConfig, refuse_if_writable

if TYPE_CHECKING:
    from runtime.guard.permits import Boundary


class McpServices(Protocol):
    """What the MCP client reads of the run's services (:class:`runtime.engine.services.Services`):
    the server table, and the slot the run's one pool of connections lives in."""

    mcp_config: McpConfig
    mcp: Any


class McpEvents(Protocol):
    """Where the MCP client reports a spawn decision (:class:`runtime.engine.events.EventSink`)."""

    def tool_event(self, task: str, event: dict[str, Any]) -> None: ...


class McpHost(Protocol):
    """What the MCP client reads of its caller (a verb context, the executor's host)."""

    @property
    def workdir(self) -> Path: ...
    @property
    def boundary(self) -> Boundary: ...
    @property
    def services(self) -> McpServices: ...
    @property
    def engine_env(self) -> Mapping[str, str]: ...
    @property
    def events(self) -> McpEvents: ...


UNAVAILABLE = "NIKA-MCP-001"
TIMEOUT_CODE = "NIKA-TIMEOUT-001"
CALL_FAILED = "NIKA-MCP-002"


def split_tool(tool: str) -> tuple[str, str]:
    server, _, name = tool[len("mcp:") :].partition("/")
    return server, name


class Connection:
    """One server, held open by its own task."""

    def __init__(self, cfg: ServerConfig, env: dict[str, str], workdir: Path) -> None:
        self.cfg = cfg
        self.env = env
        self.workdir = workdir
        self.client: Any = None
        self.tools: dict[str, Any] | None = None
        self._ready = asyncio.Event()
        self._stop = asyncio.Event()
        self._error: BaseException | None = None
        self._task: asyncio.Task[None] | None = None
        self.broken = False

    async def start(self) -> None:
        self._task = asyncio.get_running_loop().create_task(self._hold(), name=f"mcp:{self.cfg.name}")
        bound = self.cfg.startup_timeout_s or limits.MCP_INIT_TIMEOUT_S
        try:
            await asyncio.wait_for(asyncio.shield(self._ready.wait()), bound)
        except TimeoutError:
            await self.close()
            raise TaskError(
                UNAVAILABLE,
                f"MCP server `{self.cfg.name}` did not finish starting within {bound:g}s "
                "(`startupTimeout` in the MCP configuration gives a slow server more)",
                True,
                {"server": self.cfg.name},
            ) from None
        if self._error is not None:
            raise TaskError(
                UNAVAILABLE,
                f"MCP server `{self.cfg.name}` could not be started: {_why(self._error)}",
                True,
                {"server": self.cfg.name},
            )

    async def _hold(self) -> None:
        from mcp import Client, StdioServerParameters

        _compose_only()

        target: Any
        if self.cfg.url:
            target = self.cfg.url
        else:
            assert self.cfg.command is not None
            target = StdioServerParameters(
                command=self.cfg.command,
                args=self.cfg.args,
                env=self.env,
                cwd=self.cfg.cwd or str(self.workdir),
            )
        try:
            async with Client(target, mode="legacy", read_timeout_seconds=limits.MCP_CALL_TIMEOUT_S) as client:
                self.client = client
                self._ready.set()
                await self._stop.wait()
        except BaseException as exc:
            self._error = exc
            self._ready.set()
            if isinstance(exc, asyncio.CancelledError):
                raise
        finally:
            self.client = None

    async def list_tools(self) -> dict[str, Any]:
        if self.tools is None:
            client = self._live()
            try:
                result = await asyncio.wait_for(client.list_tools(), limits.MCP_CALL_TIMEOUT_S)
            except Exception as exc:
                raise TaskError(
                    UNAVAILABLE,
                    f"MCP server `{self.cfg.name}` failed to list its tools: {_why(exc)}",
                    True,
                    {"server": self.cfg.name},
                ) from None
            self.tools = {t.name: t for t in result.tools}
        return self.tools

    def exited(self) -> bool:
        """Whether the connection's holder has ended (the server exited, or the session broke)."""
        return self.broken or (self._task is not None and self._task.done())

    def _live(self) -> Any:
        if self.client is None:
            why = _why(self._error) if self._error is not None else "the connection is closed"
            raise TaskError(
                UNAVAILABLE, f"MCP server `{self.cfg.name}` is gone: {why}", True, {"server": self.cfg.name}
            )
        return self.client

    async def call(self, name: str, args: dict[str, Any], timeout_s: float) -> Any:
        client = self._live()
        call = asyncio.ensure_future(client.call_tool(name, args))
        gone = asyncio.ensure_future(self._task) if self._task is not None else None
        waiting = {call} | ({gone} if gone is not None else set())
        try:
            done, _ = await asyncio.wait(waiting, timeout=timeout_s, return_when=asyncio.FIRST_COMPLETED)
        except asyncio.CancelledError:  # the caller was cancelled: so is its request to the server
            call.cancel()
            raise
        if call not in done:
            call.cancel()
            with contextlib.suppress(BaseException):
                await call
            exited = gone is not None and gone in done
            why = "the server exited" if exited else f"no answer within {timeout_s:g}s"
            details = {"server": self.cfg.name, **({} if exited else {"timed_out": timeout_s})}
            raise TaskError(CALL_FAILED, f"`mcp:{self.cfg.name}/{name}` failed: {why}", True, details)
        try:
            return call.result()
        except Exception as exc:
            self.broken = True  # a transport or protocol failure (a tool's own error is a result): reconnect
            raise TaskError(
                CALL_FAILED, f"`mcp:{self.cfg.name}/{name}` failed: {_why(exc)}", True, {"server": self.cfg.name}
            ) from None

    async def close(self) -> None:
        self._stop.set()
        if self._task is not None:
            # a connection still starting is inside the SDK's `initialize`, where nothing reads the
            # stop: it is cancelled at once (the SDK's own stdio shutdown still ends the process);
            # a started one gets the grace to leave its session cleanly
            grace = limits.MCP_SHUTDOWN_GRACE_S * 3 if self._ready.is_set() else 0.0
            try:
                await asyncio.wait_for(asyncio.shield(self._task), grace)
            except (TimeoutError, Exception):
                self._task.cancel()
                with contextlib.suppress(BaseException):
                    await self._task


def _why(exc: BaseException) -> str:
    if isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        return _why(exc.exceptions[0])
    text = str(exc).strip()
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


class Sessions:
    """The open connections of one run, by server: each opened once (the first caller judges the
    spawn and composes the environment), reused by every later call."""

    def __init__(self, workdir: Path) -> None:
        self.workdir = workdir
        self.conns: dict[str, Connection] = {}
        self._locks: dict[str, asyncio.Lock] = {}
        self._restarted: dict[str, set[str | None]] = {}  # server -> the tasks it was restarted for

    async def open(
        self, cfg: ServerConfig, judge: Callable[[], None], env: Callable[[], dict[str, str]], tid: str | None = None
    ) -> Connection:
        """The server's open connection; a stdio server whose process died is started again, once
        per task (the spawn judged and witnessed again): a server that keeps crashing stays down."""
        lock = self._locks.setdefault(cfg.name, asyncio.Lock())
        async with lock:
            conn = self.conns.get(cfg.name)
            if conn is not None and conn.client is not None and not conn.exited():
                return conn
            if conn is not None and cfg.command is not None and not cfg.url:
                seen = self._restarted.setdefault(cfg.name, set())
                if tid in seen:
                    raise TaskError(
                        UNAVAILABLE,
                        f"MCP server `{cfg.name}` exited again after it was restarted for this task; it is not "
                        "restarted twice (fix the server, then run again)",
                        details={"server": cfg.name, "restarted": True},
                    )
                seen.add(tid)
                await conn.close()
            if cfg.command is not None and not cfg.url:
                judge()
            conn = Connection(cfg, env(), self.workdir)
            self.conns[cfg.name] = conn
            await conn.start()
            return conn

    async def aclose(self) -> None:
        conns, self.conns = list(self.conns.values()), {}
        await asyncio.gather(*(c.close() for c in conns), return_exceptions=True)


Listing = dict[str, tuple[str, dict[str, Any]]]  # tool name -> (description, input schema)


async def listing_of(conn: Connection) -> Listing:
    """A server's tools as plain data."""
    tools = await conn.list_tools()
    return {n: (t.description or "", dict(t.input_schema or {"type": "object"})) for n, t in tools.items()}


async def call_on(conn: Connection, tool: str, args: dict[str, Any], timeout_s: float | None = None) -> Any:
    """One call of ``tool`` (``mcp:server/name``) on an open connection: the tool looked up, its
    arguments checked against its input schema, the result as a Nika value. The call is bounded by
    ``timeout_s`` (what is left of the task's time) and never longer than ``limits.MCP_CALL_TIMEOUT_S``."""
    server, name = split_tool(tool)
    tools = await listing_of(conn)
    spec = tools.get(name)
    if spec is None:
        from checker.core.suggest import did_you_mean

        hint = did_you_mean(name, list(tools))
        raise TaskError(
            CALL_FAILED,
            f"MCP server `{server}` has no tool `{name}`" + (f"; did you mean `{hint}`?" if hint else ""),
            details={"server": server, "tool": name},
        )
    problem = _arg_problem(args, spec[1])
    if problem is not None:
        raise TaskError(CALL_FAILED, f"arguments of `{tool}` do not fit its input schema: {problem}", details={})
    bound = limits.MCP_CALL_TIMEOUT_S if timeout_s is None else max(0.0, min(timeout_s, limits.MCP_CALL_TIMEOUT_S))
    try:
        result = await conn.call(name, args, bound)
    except TaskError as err:
        if "timed_out" in err.details and bound < limits.MCP_CALL_TIMEOUT_S:  # the task's time ran out first
            raise TaskError(
                TIMEOUT_CODE,
                f"`{tool}` was cut at the task's deadline: no answer within the {bound:.2f}s left",
                details={"server": server, "tool": name, "cut": True},
            ) from None
        raise
    value = to_value(result)
    if getattr(result, "is_error", False):
        text = value if isinstance(value, str) else json.dumps(value, default=str)[:500]
        raise TaskError(CALL_FAILED, f"`{tool}` reported an error: {text}", details={"server": server, "tool": name})
    return value


class MCPPool:
    """The MCP servers one run has started, in this process (the local executor's)."""

    def __init__(self, host: McpHost) -> None:
        self.host = host
        self.config = host.services.mcp_config
        self.servers = self.config.servers
        self.source = self.config.source
        self.sessions = Sessions(host.workdir)

    def declared(self, server: str) -> ServerConfig:
        """The server's configuration, once the table is usable and the workflow cannot write it."""
        self.config.usable()
        refuse_if_writable(self.config, self.host.boundary)
        cfg = self.servers.get(server)
        if cfg is None:
            where = self.source or f"{CONFIG_FILE} (none found)"
            from checker.core.suggest import did_you_mean

            hint = did_you_mean(server, list(self.servers)) if self.servers else None
            raise TaskError(
                UNAVAILABLE,
                f"no MCP server `{server}` is declared in {where}" + (f"; did you mean `{hint}`?" if hint else ""),
                details={"server": server},
            )
        return cfg

    def env_for(self, tid: str, cfg: ServerConfig) -> dict[str, str]:
        """The server's environment, composed like ``exec:``'s, never inherited."""
        from runtime.guard.permits import compose_env

        return compose_env(self.host.boundary.env_passthrough(tid), cfg.env, self.host.engine_env)

    async def connection(self, tid: str, server: str) -> Connection:
        cfg = self.declared(server)
        host = self.host
        return await self.sessions.open(
            cfg,
            lambda: judge_spawn(host.boundary, lambda e: host.events.tool_event(tid, e), tid, cfg),
            lambda: self.env_for(tid, cfg),
            tid,
        )

    async def listing(self, tid: str, server: str) -> Listing:
        return await listing_of(await self.connection(tid, server))

    async def call(self, tid: str, tool: str, args: dict[str, Any], timeout_s: float | None = None) -> Any:
        return await call_on(await self.connection(tid, split_tool(tool)[0]), tool, args, timeout_s)

    async def aclose(self) -> None:
        await self.sessions.aclose()


def judge_spawn(boundary: Boundary, report: Callable[[dict[str, Any]], None], tid: str, cfg: ServerConfig) -> None:
    """A stdio server is a process the calling task starts: ``permits.exec`` and the blocklist
    judge its argv (NIKA-SEC-004 / NIKA-SEC-001) and the journal witnesses the spawn (``report``
    receives the event, in this process or on the Dask worker that starts it)."""
    from checker.contracts.blocklist import judge_words

    assert cfg.command is not None
    boundary.check_exec(tid, cfg.command, shell=False)
    why = judge_words([cfg.command, *cfg.args])
    if why is not None:
        raise TaskError(
            "NIKA-SEC-001",
            f"MCP server `{cfg.name}`: the command was refused by the exec blocklist: {why}",
            details={"server": cfg.name, "reason": why},
        )
    report({"type": "mcp_server_spawn", "server": cfg.name, "argv": [cfg.command, *cfg.args]})


class McpPool(Protocol):
    """What the run's MCP client answers (:class:`MCPPool` here, the Dask executor's on its workers)."""

    servers: dict[str, ServerConfig]

    async def listing(self, tid: str, server: str) -> Listing: ...
    async def call(self, tid: str, tool: str, args: dict[str, Any], timeout_s: float | None = None) -> Any: ...
    async def aclose(self) -> None: ...


def pool_of(host: McpHost) -> McpPool:
    if host.services.mcp is None:
        host.services.mcp = MCPPool(host)
    pool: McpPool = host.services.mcp
    return pool


async def list_mcp_tools(host: McpHost, tid: str, rules: list[str]) -> list[tuple[str, str, dict[str, Any]]]:
    """``(tool id, description, input schema)`` for every tool of the servers a whitelist can reach."""
    from checker.core.globs import match_tool as matches

    pool = pool_of(host)
    wanted = [
        s for s in pool.servers if any(matches(r.lstrip("!").split("/", 1)[0], f"mcp:{s}") for r in rules if "/" in r)
    ]
    out = []
    for server in wanted:
        for name, (description, schema) in (await pool.listing(tid, server)).items():
            out.append((f"mcp:{server}/{name}", description, schema))
    return out


async def call_mcp_tool(
    host: McpHost, tid: str, tool: str, args: dict[str, Any], timeout_s: float | None = None
) -> Any:
    """Perform one MCP tool call (the tool grant was judged by the caller, ``verbs/invoke``),
    bounded by ``timeout_s`` (the task's time left)."""
    return await pool_of(host).call(tid, tool, args, timeout_s)


def _arg_problem(args: dict[str, Any], schema: Any) -> str | None:
    """Why ``args`` do not fit a tool's input schema; a server's invalid schema is not held against the call."""
    if not isinstance(schema, dict):
        return None
    from runtime.tools.schema_validator import problem_at

    return problem_at(schema, args, subject="the tool's input schema", top="the arguments", strict=False)


def to_value(result: Any) -> Any:
    """A ``CallToolResult`` as a Nika value."""
    structured = getattr(result, "structured_content", None)
    if structured is not None:
        if isinstance(structured, dict) and set(structured) == {"result"}:
            return structured["result"]
        return structured
    parts = []
    for block in getattr(result, "content", []) or []:
        kind = getattr(block, "type", None)
        if kind == "text":
            parts.append(block.text)
        elif kind in ("image", "audio"):
            parts.append(base64.b64decode(block.data))
        elif kind == "resource":
            res = block.resource
            parts.append(getattr(res, "text", None) or base64.b64decode(getattr(res, "blob", "") or ""))
        else:
            parts.append(block.model_dump(mode="json") if hasattr(block, "model_dump") else str(block))
    if len(parts) == 1:
        return parts[0]
    return parts


def _no_inherited_environment() -> dict[str, str]:
    return {}


def _compose_only() -> None:
    """A stdio server gets exactly the environment the run composed for it (01 §environment:
    composed, never inherited). The MCP SDK's ``stdio_client`` merges its own pick of the engine
    process's variables (HOME, PATH, SHELL, TERM, USER, LOGNAME) under the one it is given, read
    through ``mcp.client.stdio.get_default_environment``: that lookup answers nothing here. Only
    the runtime spawns MCP servers in this process; ``tests/runtime/test_mcp_client.py`` holds the
    server's variables to the composed set, so an SDK that moves the merge fails there."""
    import mcp.client.stdio as sdk_stdio

    if getattr(sdk_stdio, "get_default_environment", None) is not _no_inherited_environment:
        sdk_stdio.get_default_environment = _no_inherited_environment
