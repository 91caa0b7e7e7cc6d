"""Where a relative path a workflow names points (02 §Agent Skills: relative paths resolve
from the working directory, like every other relative path in the language).

One function, used by the check (child workflows, skills, decision bundles), by the runtime
(the same files, at compose time) and, with the workspace folder as the working directory,
by the language server: so check and run always read the same file.
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
