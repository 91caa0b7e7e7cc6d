"""bashlex, loaded with its parse tables ready-made.

bashlex (the shell parser the blocklist judges ``shell:`` lines with) builds its LALR tables
from the grammar on every import — about a quarter of a second, paid by every ``nika check``
of a workflow with a shell command, more than the rest of the check. The tables depend only
on the grammar, so they are shipped as data (``bashlex_lalr.json``, made by
``scripts/bashlex_tables.py``) and handed to bashlex's table builder in place of the search;
the grammar's signature (every production and terminal) guards them, and any other bashlex
grammar is built the slow way, as before. Nothing is written anywhere: the checker stays pure.
"""

from __future__ import annotations

import hashlib
import importlib
import importlib.util
import json
import sys
from functools import cache
from pathlib import Path
from types import ModuleType
from typing import Any

TABLES = Path(__file__).with_name("bashlex_lalr.json")


def signature(grammar: Any) -> str:
    """What the tables depend on: the numbered productions, the terminals and their precedence."""
    rows = [f"{p.number}:{p.name}->{' '.join(p.prod)}:{p.prec}" for p in grammar.Productions if p is not None]
    rows += sorted(f"{t}:{grammar.Precedence.get(t)}" for t in grammar.Terminals)
    return hashlib.blake2b("\n".join(rows).encode(), digest_size=16).hexdigest()


@cache
def _shipped() -> dict[str, Any] | None:
    try:
        data = json.loads(TABLES.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


def _states(table: dict[str, dict[str, int]]) -> dict[int, dict[str, int]]:
    return {int(state): row for state, row in table.items()}


def bashlex() -> ModuleType:
    """The ``bashlex`` package, its tables taken from :data:`TABLES` when they fit its grammar."""
    loaded = sys.modules.get("bashlex")
    if loaded is not None and "bashlex.parser" in sys.modules:
        return loaded
    spec = importlib.util.find_spec("bashlex")
    if spec is None or spec.loader is None:
        raise ImportError("bashlex is not installed")
    package = importlib.util.module_from_spec(spec)
    sys.modules["bashlex"] = package  # the package's __init__ (which builds the parser) waits
    try:
        yacc = importlib.import_module("bashlex.yacc")
        built = yacc.LRTable
        shipped = _shipped()

        class ReadyTable(built):  # type: ignore[misc, valid-type]
            def __init__(self, grammar: Any, log: Any = None) -> None:
                if shipped is None or shipped.get("signature") != signature(grammar):
                    super().__init__(grammar, log)
                    return
                self.grammar = grammar
                self.log = log
                self.lr_action = _states(shipped["action"])
                self.lr_goto = _states(shipped["goto"])
                self.lr_productions = grammar.Productions
                self.sr_conflicts, self.rr_conflicts = [], []

        yacc.LRTable = ReadyTable
        try:
            spec.loader.exec_module(package)
        finally:
            yacc.LRTable = built
    except BaseException:
        sys.modules.pop("bashlex", None)
        raise
    return package


def tables_of_installed() -> dict[str, Any]:
    """The tables the installed bashlex builds for its grammar, as its generator leaves them
    (before bashlex's own corrections, which it applies at import): for the script and the test."""
    import copy

    from bashlex import parser, yacc

    made: dict[str, Any] = {}
    built = yacc.LRTable

    class Spy(built):  # type: ignore[misc, valid-type]
        def __init__(self, grammar: Any, log: Any = None) -> None:
            super().__init__(grammar, log)
            made.update(signature=signature(grammar), action=copy.deepcopy(self.lr_action), goto=self.lr_goto)

    yacc.LRTable = Spy
    try:
        yacc.yacc(module=parser, outputdir=str(Path(parser.__file__).parent), debug=False)
    finally:
        yacc.LRTable = built
    return {
        "signature": made["signature"],
        "action": {str(k): dict(v) for k, v in sorted(made["action"].items())},
        "goto": {str(k): dict(v) for k, v in sorted(made["goto"].items())},
    }
