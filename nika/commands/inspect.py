"""``nika inspect FILE``: the workflow's canonical projection (spec 16), as JSON or as text.

``--format json`` prints the canonical bytes of :func:`checker.views.projection.project` and one
newline: the same bytes the language server's ``nika/semanticDocument`` carries under ``graph``
and the MCP ``nika_inspect`` tool returns. ``--format text`` (the default) is the same document
for a person. The findings that decide whether there is a projection are the ones ``nika check``
prints for the file (its suppressions and configuration applied).

Exit status: 0 printed; 1 the file cannot be read (or bad usage); 2 there is no projection (the
text is not a workflow, or ``nika check`` finds an error): stderr names the one-word reason.
"""

from __future__ import annotations

import argparse
import contextlib
import sys
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from checker.model.workflow import CompiledWorkflow
    from checker.views.projection import Projection

INSPECT_FORMATS = ("text", "json")


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    p = sub.add_parser(
        "inspect",
        help="print a workflow's canonical projection (spec 16: the graph the editor and MCP serve)",
        description=(
            "Print the canonical projection of one workflow (graph_format 2): its tasks in wave order with "
            "the permits, cost interval and policy each declares, and the derived edges. --format json prints "
            "the canonical bytes (RFC 8785) the language server and the MCP server serve."
        ),
        epilog="exit status: 0 printed; 1 the file cannot be read; 2 no projection (not a workflow, or check errors)",
    )
    p.add_argument("file", metavar="FILE", help="a workflow file, or - for stdin")
    p.add_argument("--format", choices=INSPECT_FORMATS, default="text", help="output format (default: text)")


def run(args: argparse.Namespace) -> int:
    from checker.project.files import compile_path

    compiled, why = compile_path(args.file)
    if compiled is None:
        print(f"nika inspect: {args.file}: {why}", file=sys.stderr)
        return 1
    return print_projection("nika inspect", args.file, compiled, args.format)


def projection_of(compiled: CompiledWorkflow, path: str | None) -> Projection:
    """The projection every surface serves for ``compiled`` read from ``path`` (``None``: unsaved)."""
    from checker.project.admission import configured
    from checker.views.projection import project

    return project(configured(compiled, path))


def print_projection(prog: str, path: str, compiled: CompiledWorkflow, fmt: str = "json") -> int:
    """Print the projection of ``compiled`` (read from ``path``) in ``fmt``; 2 without one."""
    p = projection_of(compiled, path)
    text = p.canonical()
    if text is None:
        print(f"{prog}: {path}: no projection ({p.reason}): {_why(p, path)}", file=sys.stderr)
        return 2
    if fmt == "text":
        import json

        from nika.output.inspect_text import render_text

        text = render_text(json.loads(text)).rstrip("\n")
    with contextlib.suppress(BrokenPipeError):
        sys.stdout.write(text + "\n")
        sys.stdout.flush()
    return 0


def _why(p: Projection, path: str) -> str:
    if p.reason == "parse":
        return f"the text is not a workflow; `nika check {path}` says why"
    return f"the workflow has check errors; `nika check {path}` shows them"
