"""``nika doctor``: what this machine and working directory give a run, one line per fact.

Each line is ``ok``, ``warn`` (a run may still work, something is worth a look) or ``broken``
(a run that needs it will fail), with a one-sentence repair. Nothing is started and nothing is
sent: MCP stdio servers are only looked up on ``PATH``, provider keys are only tested for
presence, and no value of any environment variable is ever printed. Exit 0 unless a line is
broken (then 1).

Only the standard library is imported at module level; the provider table and the MCP
configuration reader are imported when the command runs.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import sys
import tempfile
from collections.abc import Mapping
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from nika.cli_formats import add_output_format

OK, WARN, BROKEN = "ok", "warn", "broken"
# The distributions a run or a check leans on (pyproject.toml's dependencies); the optional extras
# are reported from checker/contracts/extras.toml (:func:`_extras`).
KEY_PACKAGES = ("ruamel.yaml", "jsonschema", "jq", "blake3", "pygls", "lsprotocol", "bashlex", "httpx", "mcp", "regex")


@dataclass(frozen=True)
class Line:
    status: str  # ok | warn | broken
    topic: str  # python | package | extras | provider | config | mcp | traces | retention | otel
    message: str
    repair: str = ""


def _versions() -> list[Line]:
    from importlib.metadata import PackageNotFoundError, version

    v = sys.version_info
    here = f"Python {v.major}.{v.minor}.{v.micro} ({sys.executable})"
    if v >= (3, 11):
        out = [Line(OK, "python", here)]
    else:
        out = [Line(BROKEN, "python", here, "Install Python 3.11 or newer and reinstall nika-tools in it.")]
    try:
        out.append(Line(OK, "package", f"nika-tools {version('nika-tools')}"))
    except PackageNotFoundError:
        out.append(
            Line(
                WARN,
                "package",
                "nika-tools is not installed (running from a checkout)",
                "Run `pip install -e .` in the checkout to get the `nika` command on PATH.",
            )
        )
    for name in KEY_PACKAGES:
        try:
            out.append(Line(OK, "package", f"{name} {version(name)}"))
        except PackageNotFoundError:
            out.append(
                Line(BROKEN, "package", f"{name} is missing", f"Run `pip install '{name}'` (or reinstall nika-tools).")
            )
    return out


def _extras(cwd: Path, env: Mapping[str, str]) -> list[Line]:
    """Which optional extras are installed (with their versions), and each workflow under ``cwd``
    with a task that needs one that is not."""
    from importlib.metadata import PackageNotFoundError, version

    from checker.contracts.extras import extras
    from nika.commands.extras import installed_extras, project_lines

    out: list[Line] = []
    have = installed_extras()
    for name, x in extras().items():
        if name not in have:
            continue  # no run needs it (the docs site)
        if not have[name]:
            got = []
            for pkg in x.packages:
                try:
                    got.append(f"{pkg} {version(pkg)}")
                except PackageNotFoundError:
                    got.append(pkg)
            out.append(Line(OK, "extras", f"{name} installed: {', '.join(got)}"))
        else:
            missing = ", ".join(have[name])
            out.append(Line(OK, "extras", f"{name} not installed ({missing}): needed by {x.summary}", x.install))
    for status, message, install in project_lines(cwd, env):
        out.append(Line(BROKEN if status == "broken" else WARN, "extras", message, install))
    return out


def _providers(env: Mapping[str, str]) -> list[Line]:
    """Which key variables are set; the names only, never a value."""
    from checker.contracts import tables as contracts

    out: list[Line] = []
    unset: list[str] = []
    for pid, prov in contracts.providers().items():
        if prov.kind != "cloud":
            continue
        names = list(dict.fromkeys([f"NIKA_{pid.upper()}_API_KEY", *prov.env_vars]))
        found = [n for n in names if env.get(n)]
        if found:
            out.append(Line(OK, "provider", f"{pid}: key set in {', '.join(found)}"))
        else:
            unset.append(f"{pid} ({' or '.join(names)})")
    if unset:
        # local servers and `mock` need no key, so a missing key is only worth a warning when none is set
        out.append(
            Line(
                OK if out else WARN,
                "provider",
                f"no key set for: {', '.join(unset)}",
                "Export the named variable before a run that uses that provider (local ones and `mock` need none).",
            )
        )
    return out


def _config(cwd: Path, env: Mapping[str, str]) -> list[Line]:
    out: list[Line] = []
    folder = cwd / ".nika"
    if folder.is_dir():
        out.append(Line(OK, "config", f"engine configuration folder {folder} found"))
    else:
        out.append(
            Line(
                WARN,
                "config",
                f"no .nika/ folder in {cwd}",
                "Create .nika/ here (it holds mcp.json and traces/) if your workflows use MCP servers.",
            )
        )
    from runtime.errors import TaskError
    from runtime.tools.mcp_config import load_config

    try:
        servers, path = load_config(cwd)
    except TaskError as exc:
        out.append(Line(BROKEN, "mcp", exc.message, "Fix .nika/mcp.json: an object `mcpServers` of named servers."))
        return out
    if path is None:
        out.append(Line(OK, "mcp", "no .nika/mcp.json: no MCP servers declared"))
        return out
    out.append(Line(OK, "mcp", f"{path} parsed: {len(servers)} server(s) declared"))
    search = env.get("PATH", os.defpath)
    for name, cfg in servers.items():
        if cfg.url:
            out.append(Line(OK, "mcp", f"server `{name}`: streamable HTTP at {cfg.url} (not contacted)"))
            continue
        cmd = cfg.command or ""
        found = shutil.which(cmd, path=search) if os.sep not in cmd else (cmd if os.access(cmd, os.X_OK) else None)
        if found is None and os.sep in cmd and cfg.cwd is None:
            alt = cwd / cmd
            found = str(alt) if os.access(alt, os.X_OK) else None
        if found:
            out.append(Line(OK, "mcp", f"server `{name}`: stdio command `{cmd}` found at {found} (not started)"))
        else:
            out.append(
                Line(
                    BROKEN,
                    "mcp",
                    f"server `{name}`: stdio command `{cmd}` is not on PATH",
                    f"Install `{cmd}` or give its full path as `command` in {path}.",
                )
            )
    return out


def _traces(cwd: Path) -> list[Line]:
    folder = cwd / ".nika" / "traces"
    if not folder.exists():
        return [Line(OK, "traces", f"no trace folder yet ({folder}); the first `nika run` creates it")]
    if not folder.is_dir():
        return [Line(BROKEN, "traces", f"{folder} is not a folder", f"Move {folder} aside so runs can write traces.")]
    count = sum(1 for p in folder.iterdir() if p.is_file())
    try:
        with tempfile.TemporaryFile(dir=folder):
            pass
    except OSError:
        return [
            Line(
                BROKEN,
                "traces",
                f"{folder} is not writable ({count} trace file(s))",
                f"Give yourself write access to {folder} or pass `--trace-dir` to `nika run`.",
            )
        ]
    return [Line(OK, "traces", f"{folder} writable, {count} trace file(s)")]


def _retention(env: Mapping[str, str]) -> list[Line]:
    """ADR-100 D4: the retention knobs in force."""
    from runtime.journal.retention import Policy, PolicyError, human_size

    try:
        p = Policy.from_env(env)
    except PolicyError as exc:
        return [Line(BROKEN, "retention", str(exc), "Fix the variable or unset it for the default.")]
    days = p.max_age_s / 86_400
    age = f"{days:g}d" if days >= 1 else f"{p.max_age_s / 3600:g}h"
    text = f"keep {p.keep} finished runs per workflow · {age} · {human_size(p.max_size)} (paused runs always kept)"
    return [Line(OK, "retention", text)]


def _telemetry(env: Mapping[str, str]) -> list[Line]:
    """OpenTelemetry export: off, on (where to), or asked for in a way this build cannot honour."""
    import importlib.util

    from runtime.telemetry.otel_sink import OtelConfigError, export_timeout, otel_endpoint

    try:
        url = otel_endpoint(env)
        timeout = export_timeout(env)
    except OtelConfigError as exc:
        return [Line(WARN, "otel", f"export off: {exc}", "Use OTLP over http/protobuf (port 4318).")]
    if url is None:
        return [Line(OK, "otel", "export off (set OTEL_EXPORTER_OTLP_ENDPOINT to send runs as traces)")]
    try:
        has_sdk = importlib.util.find_spec("opentelemetry.sdk") is not None
    except ModuleNotFoundError:  # not even the opentelemetry namespace
        has_sdk = False
    if not has_sdk:
        from checker.contracts.extras import extra

        return [Line(WARN, "otel", f"export asked for ({url}) but the SDK is not installed", extra("otel").install)]
    return [Line(OK, "otel", f"export on: OTLP/HTTP to {url} (bound {timeout:g} s)")]


def diagnose(cwd: Path | None = None, env: Mapping[str, str] | None = None) -> list[Line]:
    cwd = cwd if cwd is not None else Path.cwd()
    env = env if env is not None else os.environ
    return [
        *_versions(),
        *_extras(cwd, env),
        *_providers(env),
        *_config(cwd, env),
        *_traces(cwd),
        *_retention(env),
        *_telemetry(env),
    ]


def render(lines: list[Line], output_format: str = "text") -> str:
    if output_format == "json":
        import json

        doc = {"ok": all(x.status != BROKEN for x in lines), "checks": [asdict(x) for x in lines]}
        return json.dumps(doc, indent=2) + "\n"
    width = max(len(s) for s in (OK, WARN, BROKEN))
    text = []
    for x in lines:
        tail = f" — {x.repair}" if x.repair else ""
        text.append(f"{x.status:<{width}}  {x.topic:<8} {x.message}{tail}\n")
    counts = {s: sum(1 for x in lines if x.status == s) for s in (OK, WARN, BROKEN)}
    text.append(f"{counts[OK]} ok, {counts[WARN]} warn, {counts[BROKEN]} broken\n")
    return "".join(text)


def register(sub: Any) -> None:
    doc = sub.add_parser(
        "doctor",
        help="report what this machine gives a run: versions, provider keys, MCP servers, traces",
        description=(
            "Report, one ok/warn/broken line each with a repair: Python and package versions, which provider "
            "key variables are set (names only, never values), the .nika/ engine configuration and its MCP "
            "servers (stdio commands looked up on PATH, nothing started or contacted), and the trace folder."
        ),
        epilog="exit status: 0 nothing is broken (warnings allowed); 1 at least one line is broken",
    )
    add_output_format(doc)


def run(args: Any) -> int:
    return doctor(args.output_format)


def doctor(output_format: str = "text") -> int:
    lines = diagnose()
    with contextlib.suppress(BrokenPipeError):
        sys.stdout.write(render(lines, output_format))
        sys.stdout.flush()
    return 1 if any(x.status == BROKEN for x in lines) else 0
