"""``--output-format``, spelled one way on every command.

The human-readable report is called ``text`` everywhere (``nika check``, ``run``, ``doctor``,
``trace``); ``full`` — the name ``nika check`` used first, as ruff does — stays accepted as an alias
of ``text`` on every command, so existing scripts and hooks keep working. ``nika check`` also has
``concise`` (one line per finding) and the machine formats ``json``, ``sarif`` and ``github``.
"""

from __future__ import annotations

import argparse

TEXT = "text"
ALIASES = {"full": TEXT}

# `nika check`'s formats as the command line spells them (the renderer calls `text` "full").
CHECK_FORMATS = (TEXT, "concise", "json", "sarif", "github")


def normalise(value: str) -> str:
    """An argparse ``type``: aliases become their canonical name before ``choices`` is checked."""
    v = value.strip().lower()
    return ALIASES.get(v, v)


def add_output_format(
    parser: argparse.ArgumentParser, choices: tuple[str, ...] = (TEXT, "json"), what: str = "print"
) -> None:
    parser.add_argument(
        "--output-format",
        type=normalise,
        choices=choices,
        default=TEXT,
        help=f"how to {what} (default: text; `full` is accepted as another name for text)",
    )


def renderer_name(fmt: str) -> str:
    """``nika check``'s renderer name for a command-line format (``text``/``full`` → ``full``)."""
    return "full" if normalise(fmt) == TEXT else fmt
