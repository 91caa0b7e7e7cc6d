"""``nika serve [PATH…]``: the per-workflow run API, schedules, webhooks and the run dashboard over
the workflows under PATH (docs/serve.md). Starlette on uvicorn, both already installed with the MCP
SDK; the cron library of schedules is the ``serve`` extra. Each run is a subprocess ``nika run`` in
its served root (:mod:`nika.serve.runs` says why), admitted first by ``nika run``'s own :func:`admit`.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any


def register(sub: Any) -> None:
    p = sub.add_parser(
        "serve",
        help="serve a run API, schedules, webhooks and a run dashboard for the workflows under PATH",
        description=(
            "Serve the workflows under PATH (default: the working directory): POST /runs, GET /runs/{id}, "
            "its events (SSE), cancel, answers for paused gates, the schedules and webhooks of nika.toml's "
            "[serve] table, and a dashboard at /. Loopback only unless --host says otherwise; every request "
            "needs the token (NIKA_SERVE_TOKEN, or one generated and stored 0600). See docs/serve.md."
        ),
    )
    p.add_argument("paths", nargs="*", metavar="PATH", help="served folders (a file serves its folder)")
    p.add_argument("--host", default="127.0.0.1", help="bind address (default 127.0.0.1: loopback only)")
    p.add_argument("--port", type=int, default=8765, help="port (default 8765; 0: any free port)")
    p.add_argument("--max-runs", type=int, default=4, metavar="N", help="runs running at once (default 4)")
    p.add_argument("--max-body", type=int, default=256 * 1024, metavar="BYTES", help="request body bound")
    p.add_argument("--allowed-host", action="append", default=[], metavar="NAME", help="another Host name to answer to")


def admit_like_run(file: str, inputs: dict[str, Any]) -> str | None:
    """``nika run``'s own admission (its :func:`nika.commands.run.admit`): a refusal line, or ``None``."""
    import json

    from nika.commands.run import Refused, admit

    try:
        admit(file, [f"{k}={json.dumps(v)}" for k, v in inputs.items()], None)
    except Refused as why:
        if why.verdict is None:
            return why.message
        from checker.project.report import CheckRun
        from nika.output import render as render_check

        found = json.loads(render_check(CheckRun((why.verdict.report,)), "json"))["reports"][0]["findings"]
        first = next((f for f in found if f.get("severity") == "error"), found[0] if found else {})
        return f"`nika check` refuses it: {first.get('code')} {first.get('message')}"
    return None


def build(args: argparse.Namespace, log: Any = None) -> tuple[Any, Any]:
    """The configuration and the application for ``args``; raises ``ConfigError``."""
    from pathlib import Path

    from nika.serve.app import create_app
    from nika.serve.config import ConfigError, ServeConfig, engine_table, roots_of, triggers
    from nika.serve.guard import load_token

    roots = roots_of(args.paths)
    schedules, hooks = triggers(engine_table(roots[0]), roots)
    if schedules:
        from datetime import UTC, datetime

        from nika.serve.schedule import _cron

        for s in schedules:  # the extra and every expression, judged at start
            _cron(s.cron, datetime.now(UTC))
    token, where = load_token()  # always one: a non-loopback bind is never open
    if args.max_runs < 1 or args.max_body < 1024:
        raise ConfigError("--max-runs must be at least 1 and --max-body at least 1024")
    cfg = ServeConfig(
        roots=roots,
        host=args.host,
        port=args.port,
        token=token,
        state_dir=Path(roots[0]) / ".nika" / "serve",
        max_body=args.max_body,
        max_runs=args.max_runs,
        allowed_hosts=tuple(args.allowed_host),
        schedules=schedules,
        webhooks=hooks,
        python=sys.executable,
    )
    return cfg, (where, create_app(cfg, admit_like_run, log=log or (lambda line: print(line, file=sys.stderr))))


def run(args: argparse.Namespace) -> int:
    try:
        import uvicorn
    except ImportError:
        print(
            "nika serve: needs uvicorn and starlette (the mcp SDK brings both): pip install nika-tools",
            file=sys.stderr,
        )
        return 1
    from nika.serve.config import ConfigError, is_loopback

    try:
        cfg, (where, app) = build(args)
    except ConfigError as exc:
        print(f"nika serve: {exc}", file=sys.stderr)
        return 1
    if not is_loopback(cfg.host):
        print(f"nika serve: note: bound to {cfg.host}, beyond loopback: every request needs the token", file=sys.stderr)
    print(f"nika serve: serving {', '.join(cfg.roots)} on http://{cfg.host}:{cfg.port}/", file=sys.stderr)
    print(f"nika serve: token from {where}", file=sys.stderr)
    print(f"nika serve: {len(cfg.schedules)} schedule(s), {len(cfg.webhooks)} webhook(s)", file=sys.stderr)
    config = uvicorn.Config(
        app,
        host=cfg.host,
        port=cfg.port,
        log_level="warning",
        limit_concurrency=64,  # connections at once; runs are bounded by --max-runs
        h11_max_incomplete_event_size=16 * 1024,  # header bytes
        timeout_keep_alive=5,
        server_header=False,
        proxy_headers=False,
    )
    server = uvicorn.Server(config)
    server.run()
    return 0
