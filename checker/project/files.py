"""Finding workflow files and reading them safely (bounded reads, one-line errors)."""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator

from checker.core.source import SourceText
from checker.engine.pipeline import compile_bytes
from checker.model.workflow import CompiledWorkflow
from checker.parse.nodes import MAX_DOCUMENT_BYTES, oversize
from checker.project.report import FileReport

SUFFIXES = (".nika.yaml", ".nika.yml")
SKIP_DIRS = frozenset({".git", ".hg", ".svn", ".venv", "venv", "node_modules", "__pycache__", ".tox", ".mypy_cache"})


def is_workflow_file(name: str) -> bool:
    return name.endswith(SUFFIXES)


def expand(paths: list[str]) -> Iterator[tuple[str, str | None]]:
    """Yield ``(path as given or found, error)``; directories are searched for workflow files."""
    for given in paths:
        if given == "-":
            yield given, None
            continue
        if os.path.isdir(given):
            pruned: list[str] = []
            everything = sorted(_walk(given, pruned))
            found = [f for f in everything if not _excluded(f)]
            if (everything or pruned) and not found:
                print(f"nika: {given}: every workflow file here is excluded by the `exclude` setting", file=sys.stderr)
            elif not found:
                print(f"nika: {given}: no *.nika.yaml or *.nika.yml files found", file=sys.stderr)
            for f in found:
                yield f, _not_regular(f)  # a FIFO found by the walk would block the whole run
        elif os.path.exists(given):
            yield given, None
        else:
            yield given, "no such file or directory"


def _excluded(path: str) -> bool:
    """A file a directory search found, covered by the ``exclude`` setting that governs it (a
    file named on the command line is always checked, as ruff does)."""
    from checker.project.finalize import SettingsError
    from checker.project.settings import settings_for

    try:
        return settings_for(path).excludes(path)
    except SettingsError:
        return False  # the broken configuration is reported when the file is checked


def _excluded_dir(parent: str, name: str) -> bool:
    """A directory the ``exclude`` setting governing ``parent`` covers is not searched at all
    (gitignore and ruff do the same), so a folder left out keeps out every file beneath it, even
    under a configuration of its own (a vendored project, a test's workspace)."""
    from checker.project.finalize import SettingsError
    from checker.project.settings import settings_for

    try:
        return settings_for(os.path.join(parent, name)).excludes(os.path.join(parent, name))
    except SettingsError:
        return False


def _walk(root: str, pruned: list[str]) -> Iterator[str]:
    """The workflow files under ``root``; the excluded directories left out go into ``pruned``."""
    def onerror(exc: OSError) -> None:
        print(f"nika: {exc.filename}: cannot read directory ({exc.strerror})", file=sys.stderr)

    for dirpath, dirnames, filenames in os.walk(root, onerror=onerror):
        kept = sorted(d for d in dirnames if d not in SKIP_DIRS and not d.startswith("."))
        dirnames[:] = [d for d in kept if not _excluded_dir(dirpath, d)]
        pruned.extend(os.path.join(dirpath, d) for d in kept if d not in dirnames)
        for name in filenames:
            if is_workflow_file(name):
                yield os.path.join(dirpath, name)


def _not_regular(path: str) -> str | None:
    """Why a file the directory walk found is not read (``None`` for a regular file). A path
    given by name is read whatever it is (``nika check <(make-workflow)``): the user asked."""
    import stat

    from checker.core.reader import file_kind

    try:
        mode = os.stat(path).st_mode
    except OSError as exc:
        return (exc.strerror or str(exc)).lower()
    return None if stat.S_ISREG(mode) else file_kind(mode)


# How long a workflow named on the command line may take to arrive through a pipe (`<(…)`, `-`).
NAMED_PIPE_DEADLINE_S = 60.0


def read_bounded(path: str, *, named: bool = True) -> bytes:
    """At most one byte more than the document cap, through the one bounded reader
    (:func:`checker.core.reader.read_file`). ``named``: the user named the path on the command
    line, so a pipe (``<(make-workflow)``, ``-`` for standard input) is read too, under a
    deadline; a file another file names (a child workflow) must be a regular file."""
    from checker.core.reader import read_file

    if path == "-":
        return sys.stdin.buffer.read(MAX_DOCUMENT_BYTES + 1)
    if named:
        return read_file(path, MAX_DOCUMENT_BYTES, truncate=True, pipes=True, deadline_s=NAMED_PIPE_DEADLINE_S)
    return read_file(path, MAX_DOCUMENT_BYTES, truncate=True)


def compile_path(path: str, *, named: bool = True) -> tuple[CompiledWorkflow | None, str | None]:
    """Compile one path; returns (compiled, None) or (None, one-line reason)."""
    from checker.core.reader import FileReadError

    try:
        data = read_bounded(path, named=named)
    except FileReadError as exc:
        return None, exc.reason
    except IsADirectoryError:
        return None, "is a directory"
    except PermissionError:
        return None, "permission denied"
    except OSError as exc:
        return None, (exc.strerror or str(exc)).lower()
    base = os.getcwd()  # relative paths the workflow names resolve from here (02)
    shown = "<stdin>" if path == "-" else path
    if len(data) > MAX_DOCUMENT_BYTES:
        head = data[:4096].decode("utf-8", errors="replace")
        src = SourceText(head, shown)
        return CompiledWorkflow(src, None, None, (), (oversize(None),)), None
    return compile_bytes(data, shown, base), None


def check_paths(paths: list[str]) -> list[FileReport]:
    out: list[FileReport] = []
    for path, err in expand(paths):
        if err is not None:
            out.append(FileReport(path, None, (), err))
            continue
        compiled, why = compile_path(path)
        if compiled is None:
            out.append(FileReport(path, None, (), why))
        else:
            out.append(FileReport(path, compiled.source, compiled.diagnostics, compiled=compiled))
    return out
