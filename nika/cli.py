"""The ``nika`` command line: check | explain | lsp | schema | run.

Built on argparse rather than a heavier framework: ``nika check`` runs in pre-commit hooks and
on every editor save, and its whole cold start is budgeted at 100 ms. Each command imports what
it needs inside its handler, so ``nika check`` never loads the language server or the runtime.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence

from nika.output import FORMATS


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="nika",
        description="Check, serve and run Nika workflows (nika: v1).",
    )
    p.add_argument("--version", action="store_true", help="print the version and exit")
    sub = p.add_subparsers(dest="command", metavar="COMMAND")

    c = sub.add_parser("check", help="check workflow files statically (no network, no tokens)")
    c.add_argument(
        "paths", nargs="*", metavar="PATH", help="files, directories (searched for *.nika.yaml) or - for stdin"
    )
    c.add_argument("--output-format", choices=FORMATS, default="full", help="how to print findings (default: full)")
    c.add_argument(
        "--color", choices=("auto", "always", "never"), default="auto", help="colour the full/concise output"
    )

    e = sub.add_parser("explain", help="explain a NIKA code")
    e.add_argument("code", help="e.g. NIKA-DAG-001 (or DAG-001)")

    lsp = sub.add_parser("lsp", help="start the language server (stdio)")
    lsp.add_argument("--tcp", metavar="HOST:PORT", help="listen on TCP instead of stdio (for debugging)")

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
        description="Run a workflow. Exit 0 success, 1 failure, 2 refused before any effect, 3 cancelled.",
    )
    r.add_argument("file")
    r.add_argument("--output-format", choices=("text", "json"), default="text")
    r.add_argument("--var", action="append", default=[], metavar="K=V", help="an input (JSON when it parses)")
    r.add_argument("--model", metavar="PROVIDER/NAME", help="answer every infer: with this model")
    r.add_argument("--dry-run", action="store_true", help="print the plan (waves, edges, effects) and stop")
    r.add_argument("--max-parallel", type=int, metavar="N", help="tasks running at once (default 64)")
    r.add_argument("--trace-dir", metavar="DIR", help="where the run journal goes (default .nika/traces)")

    t = sub.add_parser("trace", help="work with run journals")
    tsub = t.add_subparsers(dest="trace_command", metavar="SUBCOMMAND")
    tv = tsub.add_parser("verify", help="walk a journal's hash chain: clean, finding or forged")
    tv.add_argument("file")
    tv.add_argument("--output-format", choices=("text", "json"), default="text")
    return p


def main(argv: Sequence[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    if args.version:
        from importlib.metadata import PackageNotFoundError, version

        try:
            print(f"nika {version('nika-tools')}")
        except PackageNotFoundError:
            print("nika (not installed)")
        return 0
    if args.command == "check":
        return cmd_check(args)
    if args.command == "explain":
        return cmd_explain(args.code)
    if args.command == "lsp":
        return cmd_lsp(args)
    if args.command == "schema":
        return cmd_schema()
    if args.command == "run":
        from runtime.command import run_command

        return run_command(
            args.file,
            output_format=args.output_format,
            var_pairs=args.var,
            model=args.model,
            dry_run=args.dry_run,
            max_parallel=args.max_parallel,
            trace_dir=args.trace_dir,
        )
    if args.command == "trace":
        if args.trace_command != "verify":
            print("nika trace: give a subcommand: verify FILE", file=sys.stderr)
            return 1
        from runtime.command import trace_verify_command

        return trace_verify_command(args.file, output_format=args.output_format)
    _parser().print_help()
    return 1


def cmd_check(args: argparse.Namespace) -> int:
    from checker.files import check_paths
    from checker.report import CheckRun
    from nika.output import render

    if not args.paths:
        print("nika check: give at least one PATH (a file, a directory, or - for stdin)", file=sys.stderr)
        return 1
    run = CheckRun(tuple(check_paths(list(args.paths))))
    color = args.color == "always" or (args.color == "auto" and sys.stdout.isatty() and "NO_COLOR" not in os.environ)
    text = render(run, args.output_format, color=color)
    try:
        sys.stdout.write(text)
        sys.stdout.flush()
    except BrokenPipeError:
        pass
    return run.exit_code


def cmd_explain(code: str) -> int:
    from checker.codes import lookup, nearest, registry

    key = code.strip().upper()
    if not key.startswith("NIKA-"):
        key = "NIKA-" + key
    if key not in registry():
        hint = nearest(key)
        msg = f"nika explain: unknown code `{code}`"
        if hint:
            msg += f"; did you mean {', '.join(hint)}?"
        print(msg, file=sys.stderr)
        return 2
    info = lookup(key)
    print(f"{info.code}: {info.title}")
    print(f"category: {info.category} · phase: {info.phase} · severity: {info.severity.value}")
    print()
    print(info.teaching)
    print()
    print(f"docs: https://nika.sh/errors/{info.code}")
    return 0


def cmd_schema() -> int:
    """Print the generated workflow JSON Schema on stdout."""
    import contextlib
    import json

    from checker.schema_export import workflow_json_schema

    with contextlib.suppress(BrokenPipeError):
        print(json.dumps(workflow_json_schema(), indent=2))
    return 0


def cmd_lsp(args: argparse.Namespace) -> int:
    try:
        from nika_lsp.server import serve
    except ImportError as exc:
        print(f"nika: the language server needs pygls and lsprotocol ({exc.name} is missing)", file=sys.stderr)
        return 1
    return int(serve(tcp=args.tcp) or 0)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
