"""The ``nika`` command line: check | explain | lsp | schema | run.

Built on argparse rather than a heavier framework: ``nika check`` runs in pre-commit hooks and
on every editor save, and its whole cold start is budgeted at 100 ms. Each command imports what
it needs inside its handler, so ``nika check`` never loads the language server or the runtime.
"""

from __future__ import annotations

import argparse
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
    c.add_argument("--native-strict", action="store_true", help="native-first findings fail the check")
    c.add_argument("--fix", action="store_true", help="apply safe fixes in place (stdin: print the fixed text)")
    c.add_argument(
        "--unsafe-fixes", action="store_true", help="with --fix or --diff, also apply fixes that need review"
    )
    c.add_argument("--diff", action="store_true", help="print the fixes as a unified diff instead of applying them")
    c.add_argument("--show-settings", metavar="FILE", help="print the configuration that applies to FILE and exit")
    c.add_argument("--allow-empty", action="store_true", help="exit 0 when the paths hold no workflow file")

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

    r = sub.add_parser("run", help="run a workflow")
    r.add_argument("file")
    r.add_argument("--output-format", choices=("text", "json"), default="text")
    r.add_argument("--var", action="append", default=[], metavar="K=JSON")
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
        print(
            "nika: `nika run` is not implemented yet; only `nika check` is available in this release.", file=sys.stderr
        )
        return 1
    _parser().print_help()
    return 1


def cmd_check(args: argparse.Namespace) -> int:
    from nika.check_command import run

    return run(args)


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
