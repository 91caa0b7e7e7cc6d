"""One module per subcommand's implementation (``nika check``, ``run``, ``trace``, ``decide``,
``init``/``new``, ``test``, ``secrets``, ``doctor``, ``explain``, ``mcp serve``); :mod:`nika.cli` wires them."""
