"""``nika dap``: the Debug Adapter Protocol server (:mod:`nika_dap`) over stdio: live runs with
breakpoints on task lines, and replays of a recorded journal (docs/debugging.md)."""

from __future__ import annotations

from typing import Any


def register(sub: Any) -> None:
    sub.add_parser(
        "dap",
        help="start the debug adapter (Debug Adapter Protocol over stdio)",
        description="Speak the Debug Adapter Protocol on stdin/stdout: launch a workflow with breakpoints "
        "on task lines, or replay a recorded trace (launch with `trace`). See docs/debugging.md.",
    )


def run(args: Any) -> int:
    from nika_dap.server import serve

    return serve()
