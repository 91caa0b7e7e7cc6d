"""The command line is a table (``nika.commands.COMMANDS``): each command is one module with
``register(sub)`` and ``run(args)``, and building the whole command line imports nothing beyond the
standard library and ``nika``'s own light modules (each command's ``run`` imports the rest)."""

from __future__ import annotations

import argparse
import importlib
import json
import subprocess
import sys

from nika.cli import _parser
from nika.commands import COMMANDS


def test_every_command_is_a_module_with_register_and_run() -> None:
    sub = next(a for a in _parser()._actions if isinstance(a, argparse._SubParsersAction))
    assert list(sub.choices) == list(COMMANDS)  # `nika --help` lists them in the table's order
    for name, module in COMMANDS.items():
        mod = importlib.import_module(f"nika.commands.{module}")
        assert callable(getattr(mod, "register", None)) and callable(getattr(mod, "run", None)), name


def test_a_named_command_builds_only_its_own_parser() -> None:
    for name in COMMANDS:
        sub = next(a for a in _parser(name)._actions if isinstance(a, argparse._SubParsersAction))
        assert list(sub.choices) == [name]


def test_building_the_command_line_loads_no_library_and_no_other_package() -> None:
    # What the interpreter loaded before `nika` (site hooks, a `.pth` file importing certifi on some
    # machines, an editable install's finder) is the machine's, not the command line's: subtracted.
    code = (
        "import sys\n"
        "before = {m.split('.')[0] for m in sys.modules}\n"
        "import json\n"
        "from nika.cli import _parser\n"
        "_parser()\n"
        "tops = {m.split('.')[0] for m in sys.modules} - before\n"
        "print(json.dumps(sorted(tops - set(sys.stdlib_module_names))))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    loaded = {m for m in json.loads(out) if not m.startswith("_")}
    assert loaded == {"nika"}
