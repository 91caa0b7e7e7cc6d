"""The working directory the language server resolves a document's relative paths from.

Spec 02 (§Agent Skills): relative paths resolve from the working directory, like every other
relative path in the language. An editor's equivalent of the directory ``nika check`` and
``nika run`` are started from is the workspace folder, never the server's own process
directory: the first workspace folder that contains the document; with none, the document's
own folder; for a document that is not a local file, ``None`` (nothing is resolved).

What the server may read beyond the document (:func:`reading_roots`) is confined to the
workspace folders, plus the document's own folder when it lies in none of them: a child
workflow, skill or decision bundle named outside is neither read nor looked at and is
reported as workspace/001 (``checker.core.paths.resolve_inside``). ``nika check`` and
``nika run`` are not confined.
"""

from __future__ import annotations

import os
from collections.abc import Iterable


def working_directory(document: str | None, folders: Iterable[str]) -> str | None:
    """The directory ``document``'s relative paths resolve from (see the module docstring)."""
    if not document or not os.path.isabs(document):
        return None
    doc = os.path.normpath(document)
    for folder in folders:
        root = os.path.normpath(folder)
        if doc == root or doc.startswith(root.rstrip(os.sep) + os.sep):
            return root
    return os.path.dirname(doc)


def reading_roots(document: str | None, folders: Iterable[str]) -> tuple[str, ...]:
    """The folders files named by ``document`` may be read from (see the module docstring)."""
    roots = tuple(os.path.normpath(f) for f in folders)
    if document and os.path.isabs(document):
        own = os.path.dirname(os.path.normpath(document))
        if not any(own == r or own.startswith(r.rstrip(os.sep) + os.sep) for r in roots):
            roots += (own,)
    return roots
