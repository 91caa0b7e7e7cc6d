"""The ``nika`` command line: check | explain | graph | lsp | schema | run | catalog | decide | doctor | secrets |
trace | init | new | test | mcp.

Built on argparse rather than a heavier framework: ``nika check`` runs in pre-commit hooks and
on every editor save, and its whole cold start is budgeted at 100 ms. Each command imports what
it needs inside its handler, so ``nika check`` never loads the language server or the runtime.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import sys
from collections.abc import Sequence
from typing import NoReturn

from nika.cli_formats import CHECK_FORMATS, add_output_format
from nika.output import GRAPH_FORMATS


class _Parser(argparse.ArgumentParser):
    """Usage errors exit 1 (2 means "findings"), with the usage of the command that was misused."""

    def error(self, message: str) -> NoReturn:
        self.print_usage(sys.stderr)
        self.exit(1, f"{self.prog}: error: {message}\n")


def _parser(command: str | None = None) -> argparse.ArgumentParser:
    """The whole command line; with ``command="check"`` only the check command (its cold start)."""
    p = _Parser(
        prog="nika",
        description="Check, serve and run Nika workflows (nika: v1).",
    )
    p.add_argument("--version", action="store_true", help="print the version and exit")
    sub = p.add_subparsers(dest="command", metavar="COMMAND")

    c = sub.add_parser(
        "check",
        help="check workflow files statically (no network, no tokens)",
        description="Check workflow files statically: no network, no subprocess, no tokens spent.",
        epilog=(
            "exit status: 0 no finding is an error (warnings fail only with --strict or `strict = true`); "
            "2 at least one error (wins over 1); 1 nothing failed but something could not be checked "
            "(a missing or unreadable path, no workflow file found without --allow-empty, bad usage, "
            "a broken configuration file, an internal error), or --diff showed a change"
        ),
    )
    c.add_argument(
        "paths",
        nargs="*",
        metavar="PATH",
        help="files, directories (searched recursively for *.nika.yaml and *.nika.yml) or - for stdin",
    )
    add_output_format(c, CHECK_FORMATS, "print findings")
    c.add_argument(
        "--color", choices=("auto", "always", "never"), default="auto", help="colour the text/concise output"
    )
    c.add_argument(
        "--debug", action="store_true", help="print the traceback of an internal error (NIKA-IMPL-001) on stderr"
    )
    c.add_argument("--native-strict", action="store_true", help="native-first findings fail the check")
    c.add_argument(
        "--strict", action="store_true", help="warnings fail the check too (as the `strict = true` setting does)"
    )
    c.add_argument("--fix", action="store_true", help="apply safe fixes in place (stdin: print the fixed text)")
    c.add_argument(
        "--unsafe-fixes", action="store_true", help="with --fix or --diff, also apply fixes that need review"
    )
    c.add_argument("--diff", action="store_true", help="print the fixes as a unified diff instead of applying them")
    c.add_argument("--show-settings", metavar="FILE", help="print the configuration that applies to FILE and exit")
    c.add_argument("--allow-empty", action="store_true", help="exit 0 when the paths hold no workflow file")
    c.add_argument(
        "--certificate",
        action="store_true",
        help=(
            "after each file's findings, print its certificate: plan (waves, width, critical path), cost ceiling, "
            "termination, effects needed vs granted, risk grade (full/concise; json always carries it; prices "
            "from NIKA_PRICES)"
        ),
    )

    if command == "check":
        return p
    e = sub.add_parser("explain", help="explain a NIKA code or lint rule")
    e.add_argument("code", nargs="?", help="e.g. NIKA-DAG-001 (or DAG-001), native-first/001")
    e.add_argument("--list", nargs="?", const="", metavar="FILTER", help="list codes and rules (matching FILTER)")

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

    sub.add_parser(
        "schema",
        help="print the workflow JSON Schema (for a `# yaml-language-server: $schema=<file>` modeline)",
        description=(
            "Print a JSON Schema (draft 2020-12) of the nika: v1 workflow format, generated from the "
            "checker's own field and tool data. Save it to a file and point yaml-language-server at it "
            "with a first line `# yaml-language-server: $schema=<file>` (or its yaml.schemas setting) "
            "for completion and structural errors in any editor; `nika check` still judges the rest."
        ),
    )

    r = sub.add_parser(
        "run",
        help="run a workflow (refused with exit 2 when `nika check` finds an error)",
        description=(
            "Run a workflow. Exit 0 success, 1 failure, 2 refused before any effect, 3 cancelled, "
            "4 paused on a prompt (resume it with --resume TRACE --answer TASK=VALUE)."
        ),
    )
    r.add_argument("file", metavar="FILE", help="the workflow file (*.nika.yaml or *.nika.yml)")
    add_output_format(r)
    r.add_argument("--var", action="append", default=[], metavar="K=V", help="an input (JSON when it parses)")
    r.add_argument("--model", metavar="PROVIDER/NAME", help="answer every infer: with this model")
    r.add_argument("--dry-run", action="store_true", help="print the plan (waves, edges, effects) and stop")
    r.add_argument("--max-parallel", type=int, metavar="N", help="tasks running at once (default 64)")
    r.add_argument("--trace-dir", metavar="DIR", help="where the run journal goes (default .nika/traces)")
    r.add_argument(
        "--events",
        metavar="ndjson[:PATH|-]",
        help="stream every event as one JSON line as it happens, to PATH or standard output (docs/events.md)",
    )
    r.add_argument(
        "--executor",
        choices=("local", "dask"),
        default=None,
        help="where effects run: in this process (default, or $NIKA_EXECUTOR), or on Dask workers "
        "(pip install 'nika-tools[dask]')",
    )
    r.add_argument(
        "--scheduler",
        metavar="tcp://HOST:PORT",
        help="with --executor dask: join this Dask scheduler (default $DASK_SCHEDULER_ADDRESS, else a local cluster)",
    )
    r.add_argument(
        "--no-gc",
        action="store_true",
        help="do not collect old journals before the run (ADR-100 retention: NIKA_TRACE_KEEP/_MAX_AGE/_MAX_SIZE)",
    )
    from nika.commands.run_durable import add_arguments as add_durable_arguments  # stdlib-only at import

    add_durable_arguments(r)

    d = sub.add_parser(
        "decide",
        help="evaluate a decision bundle against an evidence snapshot (prints the receipt as JSON)",
        description="Exit 0 for any outcome, 2 when the bundle or snapshot is refused (NIKA-DECIDE-001/002).",
    )
    d.add_argument("bundle", metavar="BUNDLE", help="a decision bundle JSON file")
    d.add_argument("snapshot", metavar="SNAPSHOT", help="an evidence snapshot JSON file (- for stdin)")

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

    sec = sub.add_parser(
        "secrets",
        help="manage the local nika-vault; list a workflow's secrets and whether each resolves (never values)",
        description="Values are read from standard input, never the command line (NIKA_VAULT_FILE: a file vault).",
    )
    sec.add_argument("secrets_action", choices=("set", "get", "list", "rm"), metavar="ACTION", help="set|get|list|rm")
    sec.add_argument("key", nargs="?", metavar="KEY", help="the vault key (path), e.g. prod/anthropic/api-key")
    sec.add_argument("--workflow", metavar="FILE", help="with list: the workflow's declared secrets instead")

    t = sub.add_parser("trace", help="work with run journals")
    tsub = t.add_subparsers(dest="trace_command", metavar="SUBCOMMAND")
    tv = tsub.add_parser("verify", help="walk a journal's hash chain: clean, finding or forged")
    tv.add_argument("file", metavar="FILE", help="a journal (.nika/traces/*.ndjson)")
    add_output_format(tv)
    from nika.commands.trace import add_parsers  # stdlib-only at import: the check path stays light

    add_parsers(tsub)

    from nika.commands.catalog import register as register_catalog  # stdlib-only at import

    register_catalog(sub)
    from nika.cli_project import register as register_project_commands  # init, new, test (nika/cli_project.py)

    register_project_commands(sub)
    return p


def main(argv: Sequence[str] | None = None) -> int:
    program, argv = argv is None, sys.argv[1:] if argv is None else argv  # program: the process ends after
    if program:  # an in-process call (a test, an embedding) keeps its collector as it was
        from nika.heap import freeze_at_exit

        freeze_at_exit()
    parser = _parser(argv[0] if argv else None)
    args, extra = parser.parse_known_args(argv)
    if extra:  # report an unknown flag against the command it was given to
        sub = _subparser(parser, args.command)
        (sub or parser).error(f"unrecognized arguments: {' '.join(extra)}")
    if args.version:
        from importlib.metadata import PackageNotFoundError, version

        try:
            print(f"nika {version('nika-tools')}")
        except PackageNotFoundError:
            print("nika (not installed)")
        return 0
    from nika.cli_project import dispatch as project_command

    if (status := project_command(args)) is not None:
        return status
    if args.command == "check":
        return cmd_check(args)
    if args.command == "explain":
        if args.list is not None:
            return cmd_explain_list(args.list)
        if not args.code:
            _subparser(parser, "explain").error("give a code or rule, or --list")  # type: ignore[union-attr]
        return cmd_explain(args.code)
    if args.command == "graph":
        return cmd_graph(args.file, args.format)
    if args.command == "lsp":
        return cmd_lsp(args)
    if args.command == "schema":
        return cmd_schema()
    if args.command == "run":
        from nika.commands.run import run_command
        from nika.commands.run_durable import Durable

        return run_command(
            args.file,
            output_format=args.output_format,
            var_pairs=args.var,
            model=args.model,
            dry_run=args.dry_run,
            max_parallel=args.max_parallel,
            trace_dir=args.trace_dir,
            events=args.events,
            gc=not args.no_gc,
            executor=args.executor,
            scheduler=args.scheduler,
            durable=Durable.of(args),
        )
    if args.command == "catalog":
        from nika.commands.catalog import run as catalog_run

        return catalog_run(args)
    if args.command == "decide":
        from nika.commands.decide import run as decide_run

        return decide_run(args.bundle, args.snapshot)
    if args.command == "doctor":
        from nika.commands.doctor import run as doctor

        return doctor(args.output_format)
    if args.command == "secrets":
        from nika.commands.secrets import run as secrets_run

        return secrets_run(args.secrets_action, args.key, args.workflow)
    if args.command == "trace":
        if args.trace_command != "verify":
            from nika.commands.trace import run as trace_run

            return trace_run(args)
        from nika.commands.run import trace_verify_command

        return trace_verify_command(args.file, output_format=args.output_format)
    _parser().print_help()
    return 1


def cmd_check(args: argparse.Namespace) -> int:
    from nika.commands.check import run

    return run(args)


def _subparser(parser: argparse.ArgumentParser, name: str | None) -> argparse.ArgumentParser | None:
    for action in parser._actions:  # argparse offers no public accessor for sub-parsers
        if isinstance(action, argparse._SubParsersAction) and name:
            return action.choices.get(name)
    return None


def cmd_explain(code: str) -> int:
    from nika.commands.explain import explain

    return explain(code)


def cmd_explain_list(pattern: str) -> int:
    from nika.commands.explain import explain_list

    return explain_list(pattern)


def cmd_graph(path: str, fmt: str) -> int:
    """Print the plan of one workflow; 1 when it cannot be read or is not a YAML mapping."""
    import contextlib

    from checker.project.files import compile_path
    from checker.views.plan import plan_document
    from nika.output.graph_formats import render_graph

    compiled, why = compile_path(path)
    if compiled is None:
        print(f"nika graph: {path}: {why}", file=sys.stderr)
        return 1
    doc = plan_document(compiled)
    if "reason" in doc:
        why = "no workflow to draw (the text is not a YAML mapping); `nika check` says more"
        print(f"nika graph: {path}: {why}", file=sys.stderr)
        return 1
    wf = compiled.workflow
    name = (wf.id if wf is not None else None) or os.path.basename(path)
    with contextlib.suppress(BrokenPipeError):
        sys.stdout.write(render_graph(doc, fmt, name=name))
        sys.stdout.flush()
    errors = sum(1 for d in compiled.diagnostics if d.is_error)
    if errors:
        noun = "error" if errors == 1 else "errors"
        print(f"nika graph: {path} has {errors} {noun}; `nika check {path}` shows them", file=sys.stderr)
    return 0


def cmd_schema() -> int:
    """Print the generated workflow JSON Schema on stdout."""
    import json

    from checker.views.json_schema import workflow_json_schema

    with contextlib.suppress(BrokenPipeError):
        print(json.dumps(workflow_json_schema(), indent=2))
    return 0


def cmd_lsp(args: argparse.Namespace) -> int:
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


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
