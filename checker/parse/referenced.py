"""Reading a file a workflow names (a child workflow, a decision bundle): bounded, never blocking."""

from __future__ import annotations

from checker.core.reader import read_file
from checker.parse.nodes import MAX_DOCUMENT_BYTES


def read_referenced(path: str) -> bytes:
    """A workflow another file names (a child workflow): through the one bounded reader, so a
    FIFO, a device, a symlink loop or a slow file never blocks; at most one byte over the cap."""
    return read_file(path, MAX_DOCUMENT_BYTES, truncate=True)
