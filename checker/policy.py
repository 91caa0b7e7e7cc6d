"""What a project asks of a finished report: suppression comments, then its configuration.

Kept out of the engine so that the compiled model (and the language server's view of it) stays
the checker's verdict; ``nika check`` applies this last, per file.
"""

from __future__ import annotations

import dataclasses

from checker.report import FileReport
from checker.settings import Settings, apply, settings_for


def finalize(report: FileReport, *, native_strict: bool = False, settings: Settings | None = None) -> FileReport:
    """Apply the file's suppressions and settings (raises :class:`~checker.settings.SettingsError`)."""
    if report.source is None:
        return report
    if settings is None:
        settings = settings_for(report.path)
    diags = report.diagnostics
    suppressed: tuple[tuple[object, str], ...] = ()
    if "ignore" in report.source.text:  # cheap pre-check: most files carry no suppression
        from checker.diagnostics import Diagnostic
        from checker.suppressions import apply as suppress

        outcome = suppress(report.source, diags)
        diags = tuple(sorted(outcome.kept + outcome.notes, key=Diagnostic.sort_key))
        suppressed = tuple((d, s.reason) for d, s in outcome.suppressed)
    diags = apply(diags, settings, report.path, native_strict=native_strict)
    return dataclasses.replace(report, diagnostics=diags, suppressed=suppressed, strict=settings.strict)  # type: ignore[arg-type]
