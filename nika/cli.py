"""The ``nika`` command line, built from the table of commands (:data:`nika.commands.COMMANDS`):
each command's module adds its own parser (``register(sub)``) and does the command (``run(args)``).

Built on argparse rather than a heavier framework: ``nika check`` runs in pre-commit hooks and
on every editor save, and its whole cold start is budgeted at 100 ms (the measured reason is in
docs/architecture.md). A command module imports what it needs inside its ``run``, and a command
line naming a command builds only that command's parser, so ``nika check`` never loads the
language server or the runtime.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from importlib import import_module
from types import ModuleType
from typing import NoReturn

from nika.commands import COMMANDS


class _Parser(argparse.ArgumentParser):
    """Usage errors exit 1 (2 means "findings"), with the usage of the command that was misused."""

    def error(self, message: str) -> NoReturn:
        self.print_usage(sys.stderr)
        self.exit(1, f"{self.prog}: error: {message}\n")


def command_module(command: str) -> ModuleType:
    """The module of ``command`` (its ``register`` and ``run``)."""
    return import_module(f"nika.commands.{COMMANDS[command]}")


def _parser(command: str | None = None) -> argparse.ArgumentParser:
    """The whole command line; with a ``command`` only that command's parser (its cold start)."""
    p = _Parser(prog="nika", description="Check, serve and run Nika workflows (nika: v1).")
    p.add_argument("--version", action="store_true", help="print the version and exit")
    sub = p.add_subparsers(dest="command", metavar="COMMAND")
    for name in [command] if command in COMMANDS else COMMANDS:
        command_module(name).register(sub)
    return p


def main(argv: Sequence[str] | None = None) -> int:
    program, argv = argv is None, sys.argv[1:] if argv is None else argv  # program: the process ends after
    if program and argv and argv[0] == "run":  # a signal from the first instant on is a cancellation: exit 3
        from nika.commands import run_stop

        run_stop.install()
    if program:  # an in-process call (a test, an embedding) keeps its collector as it was
        from nika.heap import freeze_at_exit

        freeze_at_exit()
    parser = _parser(argv[0] if argv else None)
    args, extra = parser.parse_known_args(argv)
    if extra:  # report an unknown flag against the command it was given to
        (_subparser(parser, args.command) or parser).error(f"unrecognized arguments: {' '.join(extra)}")
    if args.version:
        return _version()
    if args.command is None:
        _parser().print_help()
        return 1
    return int(command_module(args.command).run(args))


def _version() -> int:
    from importlib.metadata import PackageNotFoundError, version

    try:
        print(f"nika {version('nika-tools')}")
    except PackageNotFoundError:
        print("nika (not installed)")
    return 0


def _subparser(parser: argparse.ArgumentParser, name: str | None) -> argparse.ArgumentParser | None:
    for action in parser._actions:  # argparse offers no public accessor for sub-parsers
        if isinstance(action, argparse._SubParsersAction) and name:
            return action.choices.get(name)
    return None


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
