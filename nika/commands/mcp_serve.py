"""``nika mcp serve``: the checker as an MCP server, so coding agents check workflows as they write.

Tools (each takes the workflow as ``text`` or a ``path``; see :mod:`nika.commands.mcp_tools`): ``check``
(the JSON report), ``explain`` (a code's teaching text), ``nika_inspect`` (the canonical projection,
read-only), ``schema`` (the workflow JSON Schema), ``fix`` (the diff; writes only with ``write: true``)
and ``run_dry`` (the plan of a run, nothing executed). Resources: ``nika://codes`` (the code registry) and
``nika://codes/{code}`` (one code explained). Transports: stdio (default) and streamable HTTP
(``--http HOST:PORT``, loopback unless told otherwise). Built on the ``mcp`` SDK's ``MCPServer``.
"""

from __future__ import annotations

import json
import sys
from typing import Any

INSTRUCTIONS = (
    "Check Nika workflow files (nika: v1) while you write them: call `check` with the file's text, fix "
    "every error it reports (`explain` teaches a code; `fix` returns the safe fixes as a diff), "
    "call `nika_inspect` for the task graph (each task's permits, cost and policy; the derived edges) and "
    "`run_dry` to see the plan and the effects a run would need. Nothing here runs a workflow."
)


def _annotations() -> dict[str, Any]:
    """What each tool does to the world, for the client (MCP tool annotations): every tool but
    ``fix`` only reads; ``fix`` rewrites the file it was given when asked (``write: true``); none
    reaches outside the server's tree (closed world)."""
    from mcp.types import ToolAnnotations

    def ro(title: str) -> Any:
        return ToolAnnotations(
            title=title, read_only_hint=True, destructive_hint=False, idempotent_hint=True, open_world_hint=False
        )

    return {
        "check": ro("Check a workflow"),
        "explain": ro("Explain a code"),
        "nika_inspect": ro("Inspect a workflow's projection"),
        "schema": ro("The workflow JSON Schema"),
        "run_dry": ro("What a run would do"),
        "fix": ToolAnnotations(
            title="Fix a workflow",
            read_only_hint=False,
            destructive_hint=True,
            idempotent_hint=True,
            open_world_hint=False,
        ),
    }


def __getattr__(name: str) -> Any:  # ANNOTATIONS loads the SDK's types only when asked for
    if name == "ANNOTATIONS":
        return _annotations()
    raise AttributeError(name)


async def client_roots(ctx: Any) -> tuple[str, ...] | None:
    """The folders the client announced (``roots/list``), as absolute paths; ``None`` when it
    announces none (the server's tree applies). A client that says it has roots but does not
    answer gets an empty tuple: nothing is read from a path then (fail-closed)."""
    import warnings
    from urllib.parse import unquote, urlparse

    import anyio

    caps = getattr(ctx, "client_capabilities", None)
    if caps is None or getattr(caps, "roots", None) is None:
        return None
    try:
        with warnings.catch_warnings(), anyio.fail_after(ROOTS_TIMEOUT_S):
            warnings.simplefilter("ignore")
            listed = await ctx.session.list_roots()
    except Exception:  # no answer, an error, no back channel: read no path
        return ()
    out = []
    for root in listed.roots:
        uri = urlparse(str(root.uri))
        if uri.scheme == "file" and uri.netloc in ("", "localhost"):
            out.append(unquote(uri.path))
    return tuple(out)


# How long a client may take to answer `roots/list`.
ROOTS_TIMEOUT_S = 10.0


def build() -> Any:
    """The server with its tools and resources registered (not started)."""
    import anyio
    from mcp.server.mcpserver import Context, MCPServer
    from mcp.server.mcpserver.exceptions import ToolError as McpToolError

    from nika.commands import mcp_tools as t

    globals()["Context"] = Context  # the SDK reads the tools' (string) annotations in this module
    srv = MCPServer("nika", instructions=INSTRUCTIONS, version=_version(), log_level="WARNING")
    notes = _annotations()

    async def guarded(ctx: Context | None, fn: Any, *args: Any, **kwargs: Any) -> Any:
        """``fn`` in a worker thread (a slow file never stalls the server), confined to the
        server's tree narrowed by the client's roots."""
        if ctx is not None:
            kwargs["roots"] = t.server_roots(await client_roots(ctx))
        try:
            return await anyio.to_thread.run_sync(lambda: fn(*args, **kwargs))
        except t.ToolError as exc:
            raise McpToolError(str(exc)) from None

    _tools(srv, guarded, notes)
    _resources(srv)
    return srv


def _tools(srv: Any, guarded: Any, notes: dict[str, Any]) -> None:
    """The tools, each run by ``guarded`` (a worker thread, confined to the server's tree)."""
    from mcp.server.mcpserver import Context
    from mcp.types import CallToolResult, TextContent

    from nika.commands import mcp_tools as t

    @srv.tool(annotations=notes["check"])
    async def check(ctx: Context, text: str | None = None, path: str | None = None) -> dict[str, Any]:
        """Check one workflow statically (no network, no tokens): the `nika check --output-format json`
        report, findings with code, severity, message, position, help and fixes. Pass the file's
        `text` (and optionally its `path`, for the configuration that applies), or only a `path`
        (inside the server's working tree)."""
        return await guarded(ctx, t.check, text, path)  # type: ignore[no-any-return]

    @srv.tool(annotations=notes["explain"])
    async def explain(code: str) -> str:
        """Explain a NIKA code (e.g. NIKA-DAG-001 or DAG-001) or a lint rule (native-first/001)."""
        return await guarded(None, t.explain, code)  # type: ignore[no-any-return]

    @srv.tool(
        annotations=notes["nika_inspect"],
        structured_output=False,  # the result is built here: the canonical text, and the same document as data
    )
    async def nika_inspect(ctx: Context, text: str | None = None, path: str | None = None) -> Any:
        """The workflow's canonical projection (spec 16, graph_format 2): tasks in wave order with
        the permits, cost interval and policy each declares, and the derived edges (value,
        observation, control, recovery). The text is the canonical JSON `nika inspect --format json`
        prints, byte for byte. Errors with `parse` or `findings` when there is no projection."""
        doc = await guarded(ctx, t.nika_inspect, text, path)
        return CallToolResult(content=[TextContent(type="text", text=doc)], structured_content=json.loads(doc))

    @srv.tool(annotations=notes["schema"])
    def schema() -> dict[str, Any]:
        """The JSON Schema (draft 2020-12) of the nika: v1 workflow format."""
        return t.schema()

    @srv.tool(annotations=notes["fix"])
    async def fix(
        ctx: Context, text: str | None = None, path: str | None = None, unsafe: bool = False, write: bool = False
    ) -> dict[str, Any]:
        """Apply the safe fixes (`unsafe`: also those that need review) and return the unified diff and
        the fixed text. The file at `path` (a workflow inside the server's working tree) is rewritten
        only when `write` is true."""
        return await guarded(ctx, t.fix, text, path, unsafe, write)  # type: ignore[no-any-return]

    @srv.tool(annotations=notes["run_dry"])
    async def run_dry(
        ctx: Context,
        text: str | None = None,
        path: str | None = None,
        model: str | None = None,
        tasks: list[str] | None = None,
        with_dependents: bool = False,
    ) -> dict[str, Any]:
        """What a run would do, without running: waves, edges, the effects each task needs and the
        permits, or the refusal with `nika check`'s findings. With `tasks` (and `with_dependents`):
        the selection `nika run --task ID` would make — what runs, what is reused from the latest
        run history when recorded, which gates ask again."""
        return await guarded(ctx, t.run_dry, text, path, model, tasks=tasks, with_dependents=with_dependents)  # type: ignore[no-any-return]


def _resources(srv: Any) -> None:
    """The read-only resources: the code registry and one code explained."""
    from mcp.server.mcpserver.exceptions import ToolError as McpToolError

    from nika.commands import mcp_tools as t

    @srv.resource("nika://codes", mime_type="application/json", description="Every NIKA code and lint rule.")
    def codes() -> str:
        return json.dumps(t.codes())

    @srv.resource("nika://codes/{code}", mime_type="text/plain", description="One code or lint rule, explained.")
    def code(code: str) -> str:
        try:
            return t.explain(code)
        except t.ToolError as exc:
            raise McpToolError(str(exc)) from None


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("nika-tools")
    except PackageNotFoundError:
        return "0+checkout"


def register(sub: Any) -> None:
    m = sub.add_parser("mcp", help="serve the checker to coding agents over MCP: nika mcp serve")
    msub = m.add_subparsers(dest="mcp_command", metavar="SUBCOMMAND")
    ms = msub.add_parser(
        "serve",
        help="an MCP server (stdio) with the tools check, explain, graph, schema, fix, run_dry",
        description=(
            "Serve the checker over the Model Context Protocol, so a coding agent can check workflows as it "
            "writes them. Tools: check (the JSON report), explain, graph, schema, fix (returns the diff; writes "
            "only with write: true), run_dry (the plan; nothing runs). Resources: nika://codes, "
            "nika://codes/{code}. Relative paths resolve from the working directory."
        ),
    )
    ms.add_argument("--http", metavar="HOST:PORT", help="serve streamable HTTP on HOST:PORT instead of stdio")


def run(args: Any) -> int:
    if args.mcp_command != "serve":
        print("nika mcp: give a subcommand: serve [--http HOST:PORT]", file=sys.stderr)
        return 1
    return serve(args.http)


def serve(http: str | None = None) -> int:
    address = None
    if http is not None:  # a bad address is refused before the SDK loads
        from nika_lsp.transport import parse_tcp

        try:
            address = parse_tcp(http)
        except ValueError as exc:
            print(f"nika mcp serve: {str(exc).replace('--tcp', '--http')}", file=sys.stderr)
            return 1
    try:
        srv = build()
    except ImportError as exc:
        print(f"nika mcp serve: needs the `mcp` package ({exc.name} is missing)", file=sys.stderr)
        return 1
    if address is None:
        srv.run("stdio")
        return 0
    try:
        srv.run("streamable-http", host=address[0], port=address[1])
    except OSError as exc:
        print(f"nika mcp serve: cannot listen on {http}: {(exc.strerror or str(exc)).lower()}", file=sys.stderr)
        return 1
    return 0
