"""``nika dap``: a Debug Adapter Protocol server over stdio (issue 46).

Stages, top down (an import-linter contract in ``pyproject.toml``): :mod:`nika_dap.server` (stdio,
the loop) < :mod:`nika_dap.session` (the requests, the events) < :mod:`nika_dap.live` (a live run
held at the runtime's debugger seam, :mod:`runtime.engine.debug`) | :mod:`nika_dap.replay` (a
recorded journal, read through :mod:`runtime.journal.scan`) < :mod:`nika_dap.views` (variables,
breakpoints on task lines, conditions) | :mod:`nika_dap.protocol` (Content-Length framing).
"""
