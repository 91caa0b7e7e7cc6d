"""``nika graph FILE``: the canonical projection of one workflow (:mod:`checker.views.projection`),
drawn as Mermaid or Graphviz DOT (tasks in waves, edges by kind, dead tasks, tasks caught on a
cycle; a workflow with findings is drawn from the same projection built despite them) or printed as
JSON (the bytes ``nika inspect --format json`` prints). Exit 1 when the file cannot be read or is
not a YAML mapping; its errors are named on stderr, never drawn away."""

from __future__ import annotations

import contextlib
import os
import sys
from typing import Any

from nika.output import GRAPH_FORMATS


def register(sub: Any) -> None:
    g = sub.add_parser(
        "graph",
        help="print a workflow's task graph (Mermaid, Graphviz DOT or JSON)",
        description=(
            "Print the plan the checker derives from one workflow: tasks in waves (the columns of the "
            "drawing), edges by role (data, control, recovery), dead tasks and tasks caught on a cycle."
        ),
    )
    g.add_argument("file", metavar="FILE", help="a workflow file, or - for stdin")
    g.add_argument("--format", choices=GRAPH_FORMATS, default="mermaid", help="output format (default: mermaid)")


def run(args: Any) -> int:
    return graph(args.file, args.format)


def graph(path: str, fmt: str) -> int:
    """Draw one workflow's projection (or print it, ``--format json``); 1 when it cannot be read or
    is not a YAML mapping, 2 when ``--format json`` has no projection to print (findings)."""
    from checker.project.admission import configured
    from checker.project.files import compile_path
    from checker.views.plan import dead_tasks
    from checker.views.projection import project
    from nika.output.graph_formats import render_graph

    compiled, why = compile_path(path)
    if compiled is None:
        print(f"nika graph: {path}: {why}", file=sys.stderr)
        return 1
    if fmt == "json":
        from nika.commands.inspect import print_projection

        return print_projection("nika graph", path, compiled)
    checked = configured(compiled, path)
    p = project(checked)
    if p.draft is None:
        why = "no workflow to draw (the text is not a YAML mapping); `nika check` says more"
        print(f"nika graph: {path}: {why}", file=sys.stderr)
        return 1
    wf = compiled.workflow
    name = (wf.id if wf is not None else None) or os.path.basename(path)
    dead = dead_tasks(compiled, compiled.graph) if compiled.graph is not None else set()
    with contextlib.suppress(BrokenPipeError):
        sys.stdout.write(render_graph(p, fmt, name=name, dead=dead))
        sys.stdout.flush()
    errors = sum(1 for d in checked.diagnostics if d.is_error)
    if errors:
        noun = "error" if errors == 1 else "errors"
        print(f"nika graph: {path} has {errors} {noun}; `nika check {path}` shows them", file=sys.stderr)
    return 0
