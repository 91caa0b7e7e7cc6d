"""What ``nika serve`` serves: the roots, the bind, the bounds, and the schedules and webhooks of the
engine configuration (the ``serve`` table of ``nika.toml`` or ``[tool.nika]``; never the workflow:
spec 08 keeps workflows schedule-agnostic)."""

from __future__ import annotations

import ipaddress
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

WORKFLOW_SUFFIXES = (".nika.yaml", ".nika.yml")
MAX_BODY_BYTES = 256 * 1024
MAX_RUNS = 4


class ConfigError(Exception):
    """A one-line reason the serve configuration cannot be used."""


@dataclass(frozen=True)
class Schedule:
    name: str
    cron: str
    workflow: str  # absolute, judged under the roots
    inputs: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Webhook:
    name: str
    workflow: str  # absolute, judged under the roots
    secret_env: str  # the environment variable holding the HMAC secret
    input: str | None = None  # the whole body as this one input; None: the body's members are the inputs


@dataclass
class ServeConfig:
    roots: tuple[str, ...]  # resolved absolute folders
    host: str = "127.0.0.1"
    port: int = 8765
    token: str = ""
    state_dir: Path = Path(".nika/serve")
    max_body: int = MAX_BODY_BYTES
    max_runs: int = MAX_RUNS
    allowed_hosts: tuple[str, ...] = ()
    schedules: tuple[Schedule, ...] = ()
    webhooks: tuple[Webhook, ...] = ()
    python: str = ""  # the interpreter each run's `nika run` subprocess starts with

    def hosts(self) -> list[str]:
        """The ``Host`` names a request may carry (DNS rebinding onto loopback is refused)."""
        names = {"127.0.0.1", "localhost", "::1", "[::1]", *self.allowed_hosts}
        if not is_loopback(self.host) and self.host not in ("0.0.0.0", "::"):
            names.add(self.host)
        return sorted(names)


def is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def roots_of(paths: list[str]) -> tuple[str, ...]:
    """The served roots: each PATH's folder (a file serves its folder), resolved."""
    out: list[str] = []
    for p in paths or ["."]:
        real = os.path.realpath(p)
        if not os.path.exists(real):
            raise ConfigError(f"{p}: no such file or folder")
        folder = real if os.path.isdir(real) else os.path.dirname(real)
        if folder not in out:
            out.append(folder)
    return tuple(out)


def root_of(path: str, roots: tuple[str, ...]) -> str | None:
    """The served root ``path`` lives under (the deepest), judged by the path-under-roots judge."""
    from checker.core.paths import under_roots

    inside = [r for r in roots if under_roots(path, (r,))]
    return max(inside, key=len) if inside else None


def workflow_path(name: str, roots: tuple[str, ...]) -> str:
    """The absolute workflow file ``name`` names (relative: to the first root), or :class:`ConfigError`:
    outside the served roots (the MCP server's path-under-roots judge), not a workflow file, or missing."""
    from checker.core.paths import under_roots

    if not isinstance(name, str) or not name or "\x00" in name:
        raise ConfigError("`workflow` must be a path to a served workflow file")
    full = os.path.normpath(name if os.path.isabs(name) else os.path.join(roots[0], name))
    if not under_roots(full, roots):
        raise ConfigError(f"{name}: outside the folders this server serves")
    if not full.endswith(WORKFLOW_SUFFIXES):
        raise ConfigError(f"{name}: not a workflow file (*.nika.yaml or *.nika.yml)")
    if not os.path.isfile(full):
        raise ConfigError(f"{name}: no such workflow file")
    return full


def served_workflows(roots: tuple[str, ...], limit: int = 500) -> list[str]:
    """The workflow files under the roots (hidden folders left out), relative to the first root when inside it."""
    out: list[str] = []
    for root in roots:
        for folder, dirs, files in os.walk(root):
            dirs[:] = sorted(d for d in dirs if not d.startswith(".") and d not in ("node_modules", "__pycache__"))
            for f in sorted(files):
                if f.endswith(WORKFLOW_SUFFIXES):
                    out.append(os.path.join(folder, f))
                    if len(out) >= limit:
                        return out
    return out


def engine_table(root: str) -> dict[str, Any]:
    """The ``serve`` table of the engine configuration that applies to ``root`` (``{}``: none)."""
    import tomllib

    from checker.project.config_files import config_file_for

    found = config_file_for(os.path.join(root, "serve.nika.yaml"))
    if found is None:
        return {}
    path, is_pyproject = found
    try:
        data = tomllib.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise ConfigError(f"{path}: cannot read the serve configuration ({exc})") from None
    table = data.get("tool", {}).get("nika", {}) if is_pyproject or "tool" in data else data
    serve = table.get("serve", {}) if isinstance(table, dict) else {}
    if not isinstance(serve, dict):
        raise ConfigError(f"{path}: `serve` must be a table")
    return {"__file__": path, **serve}


def triggers(table: dict[str, Any], roots: tuple[str, ...]) -> tuple[tuple[Schedule, ...], tuple[Webhook, ...]]:
    """The schedules and webhooks of a ``serve`` table, each workflow judged under the roots."""
    where = table.get("__file__", "the configuration")
    known = {"__file__", "schedules", "webhooks"}
    for key in table:
        if key not in known:
            raise ConfigError(f"{where}: serve.{key}: unknown setting; known: schedules, webhooks")
    schedules: list[Schedule] = []
    for name, s in _tables(table, "schedules", where):
        cron, wf, inputs = s.get("cron"), s.get("workflow"), s.get("inputs", {})
        if not isinstance(cron, str) or not isinstance(inputs, dict):
            raise ConfigError(
                f'{where}: serve.schedules.{name}: needs `cron = "…"`, `workflow = "…"`, optional `inputs = {{…}}`'
            )
        schedules.append(Schedule(name, cron, _workflow(wf, roots, where, f"schedules.{name}"), dict(inputs)))
    hooks: list[Webhook] = []
    for name, h in _tables(table, "webhooks", where):
        secret_env, inp = h.get("secret_env"), h.get("input")
        if not isinstance(secret_env, str) or not secret_env or (inp is not None and not isinstance(inp, str)):
            raise ConfigError(
                f'{where}: serve.webhooks.{name}: needs `workflow = "…"` and `secret_env = "VAR"` '
                '(the environment variable holding the HMAC secret), optional `input = "NAME"`'
            )
        hooks.append(Webhook(name, _workflow(h.get("workflow"), roots, where, f"webhooks.{name}"), secret_env, inp))
    return tuple(schedules), tuple(hooks)


def _tables(table: dict[str, Any], key: str, where: str) -> list[tuple[str, dict[str, Any]]]:
    sub = table.get(key, {})
    if not isinstance(sub, dict) or not all(isinstance(v, dict) for v in sub.values()):
        raise ConfigError(f"{where}: serve.{key} must be a table of tables")
    return list(sub.items())


def _workflow(value: Any, roots: tuple[str, ...], where: str, key: str) -> str:
    try:
        return workflow_path(value, roots)
    except ConfigError as exc:
        raise ConfigError(f"{where}: serve.{key}.workflow: {exc}") from None
