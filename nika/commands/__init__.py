"""One module per subcommand: each has ``register(sub)``, which adds its parser to the ``nika``
command line, and ``run(args)``, which does the command and returns its exit status.

:data:`COMMANDS` is the table :mod:`nika.cli` builds the command line from, in the order ``nika
--help`` lists them. Adding a command is one module here and one line in the table. A command
module imports only the standard library at import time (its ``run`` imports the rest), so building
the command line stays cheap; ``nika check`` builds only its own parser (its cold start).
"""

from __future__ import annotations

COMMANDS: dict[str, str] = {  # command -> its module under nika/commands/
    "check": "check",
    "explain": "explain",
    "graph": "graph",
    "inspect": "inspect",
    "lsp": "lsp",
    "dap": "dap",
    "schema": "schema",
    "run": "run",
    "catalog": "catalog",
    "decide": "decide",
    "doctor": "doctor",
    "secrets": "secrets",
    "trace": "trace",
    "init": "init",
    "new": "new",
    "test": "test",
    "mcp": "mcp_serve",
    "serve": "serve",
}
