"""What a project asks of a finished report: suppression comments, then its configuration.

Kept out of the engine so that the compiled model (and the language server's view of it) stays
the checker's verdict; ``nika check`` applies this last, per file. The common case (no
configuration file, no suppression comment, no ``--native-strict``) imports nothing more.
"""

from __future__ import annotations

import errno
import os
from functools import cache
from typing import TYPE_CHECKING

from checker.core.diagnostics import Diagnostic
from checker.core.records import replace
from checker.project.report import FileReport

if TYPE_CHECKING:
    from checker.project.settings import Settings


class SettingsError(Exception):
    """A configuration file that cannot be used; ``str()`` is the one-line explanation."""

    def __init__(self, path: str, key: str | None, message: str) -> None:
        self.path, self.key = path, key
        where = f"{path}: `{key}`" if key else path
        super().__init__(f"{where}: {message}")


def finalize(report: FileReport, *, native_strict: bool = False, settings: Settings | None = None) -> FileReport:
    """Apply the file's suppressions and settings (raises :class:`~checker.project.settings.SettingsError`)."""
    if report.source is None:
        return report
    if settings is None and config_file_for(report.path) is not None:
        from checker.project.settings import settings_for

        settings = settings_for(report.path)
    diags = report.diagnostics
    suppressed: tuple[tuple[Diagnostic, str], ...] = ()
    if "ignore" in report.source.text:  # cheap pre-check: most files carry no suppression
        from checker.project.suppressions import apply as suppress

        outcome = suppress(report.source, diags)
        diags = tuple(sorted(outcome.kept + outcome.notes, key=Diagnostic.sort_key))
        suppressed = tuple((d, s.reason) for d, s in outcome.suppressed)
    if settings is None and not native_strict:
        return replace(report, diagnostics=diags, suppressed=suppressed)
    from checker.project.settings import DEFAULT, apply

    settings = settings or DEFAULT
    diags = apply(diags, settings, report.path, native_strict=native_strict)
    return replace(report, diagnostics=diags, suppressed=suppressed, strict=settings.strict)


def config_file_for(path: str) -> tuple[str, bool] | None:
    """``(file, is_pyproject)`` of the configuration that governs ``path`` (``-``: the cwd)."""
    start = os.getcwd() if path == "-" else os.path.dirname(os.path.abspath(path))
    return _search(start)


MAX_CONFIG_BYTES = 1024 * 1024  # a configuration file is a few KiB; 1 MiB is generous


@cache
def _search(directory: str) -> tuple[str, bool] | None:
    found = _config_in(directory)
    if found is not None:
        return found
    parent = os.path.dirname(directory)
    return None if parent == directory else _search(parent)


def _config_in(directory: str) -> tuple[str, bool] | None:
    from checker.core.reader import FileReadError, is_regular_file, read_file

    nika = os.path.join(directory, "nika.toml")
    if is_regular_file(nika):
        return nika, False  # `load` reads it bounded and names the cap when it is over
    py = os.path.join(directory, "pyproject.toml")
    if is_regular_file(py):
        try:
            text = read_file(py, MAX_CONFIG_BYTES).decode("utf-8", errors="replace")
        except FileReadError as exc:
            if exc.errno == errno.EFBIG:
                return py, True  # too big to pre-check: `load` reports the cap
            return None
        if "tool.nika" in text:  # cheap pre-check before parsing TOML
            return py, True
    return None
