"""``python -m nika_lsp`` starts the server on stdio (``--tcp HOST:PORT`` for debugging)."""

import sys

from nika_lsp.server import main

sys.exit(main())
