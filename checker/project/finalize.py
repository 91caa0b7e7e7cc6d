"""What a project asks of a finished report: suppression comments, then its configuration.

Kept out of the engine so that the compiled model (and the language server's view of it) stays
the checker's verdict; ``nika check`` applies this last, per file. The common case (no
configuration file, no suppression comment, no ``--native-strict``) imports nothing more.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from checker.core.diagnostics import Diagnostic
from checker.core.records import replace
from checker.project.config_files import MAX_CONFIG_BYTES, SettingsError, config_file_for
from checker.project.report import FileReport

if TYPE_CHECKING:
    from checker.project.settings import Settings

__all__ = ["MAX_CONFIG_BYTES", "SettingsError", "config_file_for", "finalize"]


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
