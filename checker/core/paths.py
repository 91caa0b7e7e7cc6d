"""Where a relative path a workflow names points (02 §Agent Skills: relative paths resolve
from the working directory, like every other relative path in the language).

One function, used by the check (child workflows, skills, decision bundles), by the runtime
(the same files, at compose time) and, with the workspace folder as the working directory,
by the language server: so check and run always read the same file.

The language server reads only inside the workspace (:func:`resolve_inside`): a file a
document names outside the workspace folders is neither read nor even looked at (no
existence or size oracle for a document someone else wrote); ``nika check`` and ``nika run``
follow every path, as the user who started them asked.
"""

from __future__ import annotations

import os

from checker.core.reader import is_regular_file


def resolve_named(path: str, work_dir: str | None, document: str | None = None) -> str:
    """The absolute path ``path`` names: itself when absolute, else from ``work_dir`` (the
    process's working directory when ``None``). A file that exists only beside ``document``
    (the naming workflow's own file) is found there too, so a workflow checked or run from
    another folder still finds its siblings; when neither exists the working-directory
    candidate is returned, so a missing file is reported where the rule says it should be."""
    if os.path.isabs(path):
        return os.path.realpath(path)
    first = os.path.realpath(os.path.join(work_dir if work_dir is not None else os.getcwd(), path))
    if is_regular_file(first) or not document or not os.path.isfile(document):
        return first
    beside = os.path.realpath(os.path.join(os.path.dirname(os.path.abspath(document)), path))
    return beside if is_regular_file(beside) else first


def _under(path: str, roots: tuple[str, ...]) -> bool:
    return any(path == root or path.startswith(root.rstrip(os.sep) + os.sep) for root in roots)


def resolve_inside(path: str, work_dir: str | None, document: str | None, roots: tuple[str, ...] | None) -> str | None:
    """:func:`resolve_named` confined to ``roots`` (absolute folders): ``None`` when what
    ``path`` names lies outside every root, lexically or once symlinks are followed. A
    candidate outside is never stat'ed. With ``roots`` ``None`` nothing is confined."""
    if roots is None:
        return resolve_named(path, work_dir, document)
    lexical = tuple(os.path.normpath(os.path.abspath(r)) for r in roots)
    real = tuple(os.path.realpath(r) for r in lexical)
    if os.path.isabs(path):
        candidates = [path]
    else:
        candidates = [os.path.join(work_dir if work_dir is not None else os.getcwd(), path)]
        if document and os.path.isabs(document):
            candidates.append(os.path.join(os.path.dirname(document), path))
    inside = []
    for candidate in candidates:
        norm = os.path.normpath(candidate)
        if not _under(norm, lexical):
            continue
        found = os.path.realpath(norm)
        if _under(found, real):
            inside.append(found)
    for found in inside:
        if is_regular_file(found):
            return found
    return inside[0] if inside else None
