"""Position arithmetic for the LSP tests, written independently of nika_lsp.convert.

The tests compute where they expect things in the negotiated encoding themselves, so a
conversion bug in the server cannot hide behind a shared helper.
"""

from __future__ import annotations

from lsprotocol import types as lsp
from pytest_lsp import LanguageClient


def negotiated_encoding(client: LanguageClient) -> str:
    """The position encoding the server picks for this client (its first supported offer)."""
    general = client.capabilities.general if client.capabilities else None
    for enc in (general.position_encodings or []) if general else []:
        if str(enc) in ("utf-8", "utf-16", "utf-32"):
            return str(enc)
    return "utf-16"


def units(text: str, enc: str) -> int:
    """Length of ``text`` in code units of ``enc``."""
    if enc == "utf-8":
        return len(text.encode("utf-8"))
    if enc == "utf-16":
        return len(text.encode("utf-16-le")) // 2
    return len(text)


def position_of(text: str, index: int, enc: str) -> lsp.Position:
    """The LSP position of code-point ``index`` in ``text``."""
    start = text.rfind("\n", 0, index) + 1
    return lsp.Position(line=text.count("\n", 0, index), character=units(text[start:index], enc))
