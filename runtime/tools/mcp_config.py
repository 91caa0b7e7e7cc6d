"""Which MCP servers a run may start: engine configuration, read once, never writable by the workflow.

The table comes from the file ``NIKA_MCP_CONFIG`` names in the engine's environment, else
``.nika/mcp.json`` in the working directory, in the common shape::

    {"mcpServers": {
        "files": {"command": "python3", "args": ["server.py"], "env": {"ROOT": "/data"}},
        "search": {"url": "http://127.0.0.1:8765/mcp"}}}

It is read exactly once, when the root run is set up and before its first task, and child
workflows use the root's snapshot: a task that writes the file mid-run changes nothing. A file
the workflow itself could write is engine configuration in name only (a run granted
``./.nika/**`` could add a server for the next call or the next run), so a snapshot whose file
lies inside any ``permits.fs.write`` grant of the run (or a caller's) is refused at the first MCP
use with NIKA-MCP-001, naming the file and the way out.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from checker.core.records import field, record
from runtime.errors import TaskError

UNAVAILABLE = "NIKA-MCP-001"
CONFIG_FILE = Path(".nika") / "mcp.json"
ENV_VAR = "NIKA_MCP_CONFIG"
MAX_STARTUP_S = 600  # the longest `startupTimeout` a server may ask for


@record(frozen=False, slots=False)
class ServerConfig:
    name: str
    command: str | None = None
    args: list[str] = field(default_factory=list)
    env: dict[str, str] = field(default_factory=dict)
    cwd: str | None = None
    url: str | None = None
    headers: dict[str, str] = field(default_factory=dict)
    # `startupTimeout` (seconds): how long the server may take to start and answer `initialize`
    # (default ``limits.MCP_INIT_TIMEOUT_S``): a server fetched by `npx`/`uvx` on first use needs more
    startup_timeout_s: float | None = None


@record(slots=False)
class McpConfig:
    """One snapshot of the engine's MCP table: the servers, the file (``None``: none found) and,
    when the file could not be used, why (raised at the first MCP use, never before)."""

    servers: dict[str, ServerConfig]
    source: str | None = None
    error: str | None = None

    def usable(self) -> dict[str, ServerConfig]:
        if self.error is not None:
            raise TaskError(UNAVAILABLE, self.error)
        return self.servers


# Ours: the largest MCP configuration file read (a table of servers, never a blob).
MAX_CONFIG_BYTES = 1024 * 1024


def config_path(workdir: Path, engine_env: Mapping[str, str]) -> Path | None:
    """The file the engine reads its MCP servers from, ``None`` when there is none."""
    named = engine_env.get(ENV_VAR)
    if named:
        path = Path(named)
        return path if path.is_absolute() else workdir / path
    for base in (workdir, Path.cwd()):
        candidate = base / CONFIG_FILE
        if candidate.is_file():
            return candidate
    return None


def snapshot(workdir: Path, engine_env: Mapping[str, str]) -> McpConfig:
    """Read the table once (an unreadable file is recorded, not raised: a run without MCP calls
    does not fail on it)."""
    path = config_path(workdir, engine_env)
    if path is None:
        return McpConfig({})
    try:
        return McpConfig(parse(path), os.path.realpath(path))
    except TaskError as exc:
        return McpConfig({}, os.path.realpath(path), exc.message)


def load_config(
    workdir: Path, engine_env: Mapping[str, str] | None = None
) -> tuple[dict[str, ServerConfig], str | None]:
    """The declared servers and their file, raising NIKA-MCP-001 on a broken file (``nika doctor``)."""
    path = config_path(workdir, os.environ if engine_env is None else engine_env)
    if path is None:
        return {}, None
    return parse(path), str(path)


def parse(path: Path) -> dict[str, ServerConfig]:
    if not path.is_file():
        raise TaskError(UNAVAILABLE, f"{path} (the MCP configuration) is not a regular file")
    from checker.core.reader import FileReadError, read_file

    try:  # the one bounded reader (regular file, 1 MiB, never blocking)
        doc = json.loads(read_file(str(path), MAX_CONFIG_BYTES).decode("utf-8"))
    except FileReadError as exc:
        raise TaskError(UNAVAILABLE, f"{path} (the MCP configuration) cannot be read: {exc.reason}") from None
    except (OSError, ValueError) as exc:
        raise TaskError(UNAVAILABLE, f"{path} cannot be read as JSON: {exc}") from None
    table = doc.get("mcpServers", doc.get("servers", {})) if isinstance(doc, dict) else None
    if not isinstance(table, dict):
        raise TaskError(UNAVAILABLE, f"{path} must hold an object `mcpServers` mapping names to servers")
    return {str(name): _server(path, str(name), row) for name, row in table.items()}


def _server(path: Path, name: str, row: Any) -> ServerConfig:
    if not isinstance(row, dict) or not (isinstance(row.get("command"), str) or isinstance(row.get("url"), str)):
        raise TaskError(UNAVAILABLE, f"{path}: server `{name}` needs a `command` (stdio) or a `url` (HTTP)")
    args, env, headers = row.get("args", []), row.get("env") or {}, row.get("headers") or {}
    if not isinstance(args, list) or not isinstance(env, dict) or not isinstance(headers, dict):
        raise TaskError(UNAVAILABLE, f"{path}: server `{name}`: `args` must be a list, `env`/`headers` objects")
    startup = row.get("startupTimeout")
    if startup is not None and (
        isinstance(startup, bool) or not isinstance(startup, (int, float)) or not 0 < startup <= MAX_STARTUP_S
    ):
        raise TaskError(
            UNAVAILABLE,
            f"{path}: server `{name}`: `startupTimeout` must be a number of seconds in (0, {MAX_STARTUP_S}]",
        )
    return ServerConfig(
        name,
        row.get("command"),
        [str(a) for a in args],
        {str(k): str(v) for k, v in env.items()},
        row.get("cwd"),
        row.get("url"),
        {str(k): str(v) for k, v in headers.items()},
        float(startup) if startup is not None else None,
    )


def refuse_if_writable(config: McpConfig, boundary: Any) -> None:
    """NIKA-MCP-001 when the run (or a caller) may write the file the servers came from."""
    if config.source is None:
        return
    grant = boundary.write_grant_covering(config.source)
    if grant is not None:
        raise TaskError(
            UNAVAILABLE,
            f"the MCP configuration {config.source} lies inside `permits.fs.write` ({grant}), so the workflow "
            f"could rewrite which servers it starts; keep it outside every writable tree (point {ENV_VAR} at "
            "a file elsewhere) or narrow the grant",
            details={"config": config.source, "grant": grant},
        )
