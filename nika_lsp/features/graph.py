"""LSP feature module: graph (registered by :func:`register`)."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from nika_lsp.server import NikaLanguageServer


def register(server: NikaLanguageServer) -> None:
    """Attach this module's handlers to server."""
