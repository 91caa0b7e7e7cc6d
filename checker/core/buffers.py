"""Open editor buffers: what a language server passes the checker so a document is judged
against the child workflows as the editor holds them, not as they were last saved.

``nika check`` passes none (every file comes from the disk). The language server passes an
object with :meth:`Buffers.text`: the unsaved text of an open document at that absolute path,
or ``None`` when the file is not open or its buffer is the same as the disk. Since ``nika run``
reads the file on disk, a finding about a parent that comes from an unsaved buffer says so
(:func:`unsaved_note`).
"""

from __future__ import annotations

from typing import Protocol


class Buffers(Protocol):
    def text(self, path: str) -> str | None:
        """The unsaved text of the open document at ``path`` (absolute), or ``None``."""
        ...


def unsaved_note(rel: str) -> str:
    """What a finding that read an unsaved buffer adds to its message."""
    return f" (from the unsaved editor buffer of `{rel}`: `nika run` reads the file on disk)"


__all__ = ["Buffers", "unsaved_note"]
