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


def under_roots(path: str, roots: tuple[str, ...]) -> bool:
    """The path-under-roots judge: whether the file ``path`` (absolute) names lies inside one of
    ``roots`` (absolute folders) both as written and once every symlink on the way is resolved.
    A root is compared by its resolved form too, so a root that is itself a symlink still
    admits what lies under its target. Plain strings in, a bool out; nothing is opened (only
    ``realpath``'s ``lstat`` calls). ``nika mcp serve`` and ``nika serve`` ask it about every
    path a client names; the language server's :func:`resolve_inside` uses the same test."""
    if not path or "\x00" in path or not os.path.isabs(path) or not roots:
        return False
    lexical = tuple(os.path.normpath(r) for r in roots if os.path.isabs(r))
    real = tuple(os.path.realpath(r) for r in lexical)
    norm = os.path.normpath(path)
    if not (_under(norm, lexical) or _under(norm, real)):
        return False
    return _under(os.path.realpath(norm), real)


def narrow_roots(base: tuple[str, ...], announced: tuple[str, ...] | None) -> tuple[str, ...]:
    """The folders a server may read when a client announces ``announced`` (``None``: it
    announced nothing) under the server's own ``base``: each announced root that lies inside a
    base root, and each base root that lies inside an announced one. Announcing can only narrow
    what the server reads, never widen it (a root outside every base root counts for nothing)."""
    base_real = tuple(os.path.realpath(b) for b in base if os.path.isabs(b))
    if announced is None:
        return base_real
    out: list[str] = []
    for a in announced:
        if not a or not os.path.isabs(a) or "\x00" in a:
            continue
        ra = os.path.realpath(a)
        for b in base_real:
            inner = ra if _under(ra, (b,)) else b if _under(b, (ra,)) else None
            if inner is not None and inner not in out:
                out.append(inner)
    return tuple(out)


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
