"""The project commands of the ``nika`` CLI: ``init``, ``new``, ``test``, ``mcp serve``.

Registered on the main parser by :func:`register` and dispatched by :func:`dispatch`, so they
live apart from the checking and running commands in :mod:`nika.cli`.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any, NoReturn


class _PytestLikeParser(argparse.ArgumentParser):
    """``nika test`` usage errors exit 4, as pytest's do (1 means a case failed)."""

    def error(self, message: str) -> NoReturn:
        self.print_usage(sys.stderr)
        self.exit(4, f"{self.prog}: error: {message}\n")


def register(sub: Any) -> None:
    _init_and_new(sub)
    _test(sub)
    _mcp(sub)


def _init_and_new(sub: Any) -> None:
    i = sub.add_parser(
        "init",
        help="start a project: a starter workflow and its test, .nika/ configuration, pre-commit, .gitignore",
        description=(
            "Create the files of a Nika project in DIR (default: the current directory), empty or not: "
            "hello.nika.yaml and its test hello.nika-test.yaml, .nika/ engine configuration (providers.env "
            "and mcp.json, commented), a .pre-commit-config.yaml hook, and a .gitignore line for .nika/traces/. "
            "A file that already exists is never overwritten: it is listed as skipped (an existing "
            ".gitignore or .pre-commit-config.yaml gets the missing entry appended instead)."
        ),
        epilog="exit status: 0 done (some files may have been skipped); 1 DIR cannot be created or written",
    )
    i.add_argument("dir", nargs="?", default=".", metavar="DIR", help="the project folder (created when missing)")

    n = sub.add_parser(
        "new",
        help="write a workflow (and its test) from a template: nika new --list",
        description=(
            "Write NAME.nika.yaml and NAME.nika-test.yaml from one of the built-in templates, with the "
            "workflow id set to NAME (default: the template's name). Existing files are never overwritten."
        ),
        epilog="exit status: 0 written; 1 unknown template, bad name, or a file already exists",
    )
    n.add_argument("template", nargs="?", metavar="TEMPLATE", help="a template name (see --list)")
    n.add_argument("name", nargs="?", metavar="NAME", help="the workflow id and file name (kebab-case)")
    n.add_argument("--list", action="store_true", help="list the templates and exit")
    n.add_argument("--dir", default=".", metavar="DIR", help="where to write the files (default: .)")


def _test(sub: Any) -> None:
    t = sub.add_parser(
        "test",
        help="run workflow tests (*.nika-test.yaml) under the mock provider",
        description=(
            "Run the cases of workflow test files (*.nika-test.yaml, *.nika-test.yml; directories searched "
            "recursively, default .) under the mock provider: scripted model replies, mocked task results, "
            "expected statuses and outputs. Nothing leaves the machine and no trace is written."
        ),
        epilog=(
            "exit status (as pytest's): 0 all cases passed; 1 a case failed; 2 a test file or its workflow "
            "could not be used, or interrupted; 3 internal error; 4 bad usage; 5 no case collected"
        ),
    )
    t.__class__ = _PytestLikeParser
    t.add_argument("paths", nargs="*", metavar="PATH", help="test files or directories (default: .)")
    t.add_argument("-k", metavar="TEXT", dest="keyword", help="run only the cases whose FILE::CASE id contains TEXT")
    t.add_argument("-v", "--verbose", action="store_true", help="one line per case")
    t.add_argument("--update", action="store_true", help="rewrite each case's expect: from what the run did")
    t.add_argument("--junit-xml", metavar="FILE", help="also write a JUnit XML report to FILE (for CI)")


def _mcp(sub: Any) -> None:
    m = sub.add_parser("mcp", help="serve the checker to coding agents over MCP: nika mcp serve")
    msub = m.add_subparsers(dest="mcp_command", metavar="SUBCOMMAND")
    ms = msub.add_parser(
        "serve",
        help="an MCP server (stdio) with the tools check, explain, graph, schema, fix, run_dry",
        description=(
            "Serve the checker over the Model Context Protocol, so a coding agent can check workflows as it "
            "writes them. Tools: check (the JSON report), explain, graph, schema, fix (returns the diff; writes "
            "only with write: true), run_dry (the plan; nothing runs). Resources: nika://codes, "
            "nika://codes/{code}. Relative paths resolve from the working directory."
        ),
    )
    ms.add_argument("--http", metavar="HOST:PORT", help="serve streamable HTTP on HOST:PORT instead of stdio")


def dispatch(args: argparse.Namespace) -> int | None:
    """The exit status of a project command, or ``None`` when ``args`` names another command."""
    if args.command == "init":
        from nika.commands.init import init

        return init(args.dir)
    if args.command == "new":
        from nika.commands.init import new

        return new(args.template, args.name, directory=args.dir, list_only=args.list)
    if args.command == "test":
        from nika.commands.test import run

        return run(args.paths, keyword=args.keyword, update=args.update, junit=args.junit_xml, verbose=args.verbose)
    if args.command == "mcp":
        if args.mcp_command != "serve":
            print("nika mcp: give a subcommand: serve [--http HOST:PORT]", file=sys.stderr)
            return 1
        from nika.commands.mcp_serve import serve

        return serve(args.http)
    return None
