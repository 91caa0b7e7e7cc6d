"""``nika mcp serve``: the checker as an MCP server, so coding agents check workflows as they write.

Tools (each takes the workflow as ``text`` or a ``path``; see :mod:`nika.commands.mcp_tools`): ``check``
(the JSON report), ``explain`` (a code's teaching text), ``graph`` (the plan), ``schema`` (the
workflow JSON Schema), ``fix`` (the diff; writes only with ``write: true``) and ``run_dry`` (the
plan of a run, nothing executed). Resources: ``nika://codes`` (the code registry) and
``nika://codes/{code}`` (one code explained). Transports: stdio (default) and streamable HTTP
(``--http HOST:PORT``, loopback unless told otherwise). Built on the ``mcp`` SDK's ``MCPServer``.
"""

from __future__ import annotations

import json
import sys
from typing import Any

INSTRUCTIONS = (
    "Check Nika workflow files (nika: v1) while you write them: call `check` with the file's text, fix "
    "every error it reports (`explain` teaches a code; `fix` returns the safe fixes as a diff), and "
    "call `run_dry` to see the plan and the effects a run would need. Nothing here runs a workflow."
)


def build() -> Any:
    """The server with its tools and resources registered (not started)."""
    from mcp.server.mcpserver import MCPServer
    from mcp.server.mcpserver.exceptions import ToolError as McpToolError

    from nika.commands import mcp_tools as t

    srv = MCPServer("nika", instructions=INSTRUCTIONS, version=_version(), log_level="WARNING")

    def guarded(fn: Any, *args: Any, **kwargs: Any) -> Any:
        try:
            return fn(*args, **kwargs)
        except t.ToolError as exc:
            raise McpToolError(str(exc)) from None

    @srv.tool()
    def check(text: str | None = None, path: str | None = None) -> dict[str, Any]:
        """Check one workflow statically (no network, no tokens): the `nika check --output-format json`
        report, findings with code, severity, message, position, help and fixes. Pass the file's
        `text` (and optionally its `path`, for the configuration that applies), or only a `path`."""
        return guarded(t.check, text, path)

    @srv.tool()
    def explain(code: str) -> str:
        """Explain a NIKA code (e.g. NIKA-DAG-001 or DAG-001) or a lint rule (native-first/001)."""
        return guarded(t.explain, code)

    @srv.tool()
    def graph(text: str | None = None, path: str | None = None) -> dict[str, Any]:
        """The workflow's plan: tasks in waves, edges by role, dead tasks, tasks on a cycle."""
        return guarded(t.graph, text, path)

    @srv.tool()
    def schema() -> dict[str, Any]:
        """The JSON Schema (draft 2020-12) of the nika: v1 workflow format."""
        return t.schema()

    @srv.tool()
    def fix(
        text: str | None = None, path: str | None = None, unsafe: bool = False, write: bool = False
    ) -> dict[str, Any]:
        """Apply the safe fixes (`unsafe`: also those that need review) and return the unified diff and
        the fixed text. The file at `path` is rewritten only when `write` is true."""
        return guarded(t.fix, text, path, unsafe, write)

    @srv.tool()
    def run_dry(text: str | None = None, path: str | None = None, model: str | None = None) -> dict[str, Any]:
        """What a run would do, without running: waves, edges, the effects each task needs and the
        permits, or the refusal with `nika check`'s findings."""
        return guarded(t.run_dry, text, path, model)

    @srv.resource("nika://codes", mime_type="application/json", description="Every NIKA code and lint rule.")
    def codes() -> str:
        return json.dumps(t.codes())

    @srv.resource("nika://codes/{code}", mime_type="text/plain", description="One code or lint rule, explained.")
    def code(code: str) -> str:
        return guarded(t.explain, code)

    return srv


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("nika-tools")
    except PackageNotFoundError:
        return "0+checkout"


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
