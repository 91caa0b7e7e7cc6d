"""MCP tools (``mcp:<server>/<tool>``): placeholder until the client lands."""

from __future__ import annotations

from typing import Any

from runtime.errors import NOT_BUILT, TaskError


async def call_mcp_tool(run: Any, tid: str, tool: str, args: dict[str, Any]) -> Any:
    raise TaskError(
        NOT_BUILT, f"MCP tools (`{tool}`) are not available in this build of nika yet", details={"tool": tool}
    )


async def list_mcp_tools(run: Any, tid: str, rules: list[str]) -> list[tuple[str, str, dict[str, Any]]]:
    return []
