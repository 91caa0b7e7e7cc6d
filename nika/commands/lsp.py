"""``nika lsp``: the language server (:mod:`nika_lsp`), over stdio or, for debugging, TCP."""

from __future__ import annotations

import sys
from typing import Any


def register(sub: Any) -> None:
    lsp = sub.add_parser("lsp", help="start the language server (stdio)")
    transport = lsp.add_mutually_exclusive_group()
    transport.add_argument("--stdio", action="store_true", help="speak LSP over stdin/stdout (the default)")
    transport.add_argument("--tcp", metavar="HOST:PORT", help="listen on TCP instead of stdio (for debugging)")
    lsp.add_argument(
        "--clientProcessId",
        type=int,
        metavar="PID",
        dest="client_pid",
        help="exit when the editor process PID ends (as generic LSP client recipes pass it)",
    )


def run(args: Any) -> int:
    from nika_lsp.transport import parse_tcp

    if args.tcp is not None:
        try:
            parse_tcp(args.tcp)
        except ValueError as exc:
            print(f"nika lsp: {exc}", file=sys.stderr)
            return 1
    try:
        from nika_lsp.server import serve
    except ImportError as exc:
        print(f"nika: the language server needs pygls and lsprotocol ({exc.name} is missing)", file=sys.stderr)
        return 1
    try:
        return int(serve(tcp=args.tcp, client_pid=args.client_pid) or 0)
    except OSError as exc:  # the address is taken, the host does not resolve, …
        print(f"nika lsp: cannot listen on {args.tcp}: {(exc.strerror or str(exc)).lower()}", file=sys.stderr)
        return 1
