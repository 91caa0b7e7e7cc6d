"""Admission: the one verdict on a compiled workflow, as its project configures it.

``nika check``, ``nika run`` (and ``--dry-run``), a child workflow launched by ``invoke:`` and
the language server all ask :func:`admit`, so a run is refused exactly when ``nika check`` with
the same configuration exits non-zero, and for the same codes: the file's suppression comments
and its ``[tool.nika]`` settings (per-code severities, ignores, ``strict``) apply the same way
everywhere.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from checker.core.diagnostics import Diagnostic
from checker.core.records import record, replace
from checker.project.finalize import finalize
from checker.project.report import CheckRun, FileReport

if TYPE_CHECKING:
    from checker.model.workflow import CompiledWorkflow
    from checker.project.settings import Settings


@record
class Verdict:
    """The effective findings of one file and whether they refuse it."""

    report: FileReport

    @property
    def findings(self) -> tuple[Diagnostic, ...]:
        return self.report.diagnostics

    @property
    def errors(self) -> tuple[Diagnostic, ...]:
        """The findings that refuse the file (warnings too under ``strict``)."""
        from checker.core.diagnostics import Severity

        failing = (Severity.ERROR, Severity.WARNING) if self.report.strict else (Severity.ERROR,)
        return tuple(d for d in self.findings if d.severity in failing)

    @property
    def refused(self) -> bool:
        """``nika check`` on this file alone would exit non-zero."""
        return CheckRun((self.report,)).exit_code != 0


def admit(
    compiled: CompiledWorkflow,
    path: str,
    *,
    native_strict: bool = False,
    strict: bool = False,
    settings: Settings | None = None,
) -> Verdict:
    """Apply ``path``'s suppressions and configuration (found upward from it, or ``settings``)
    to ``compiled``'s findings. ``strict`` is ``--strict``: warnings fail whatever the settings
    say. Raises :class:`~checker.project.finalize.SettingsError` for an unusable configuration."""
    report = FileReport(path, compiled.source, compiled.diagnostics, compiled=compiled)
    return admit_report(report, native_strict=native_strict, strict=strict, settings=settings)


def admit_report(
    report: FileReport, *, native_strict: bool = False, strict: bool = False, settings: Settings | None = None
) -> Verdict:
    """:func:`admit` on a report already built (an unreadable file stays as it is: refused)."""
    done = finalize(report, native_strict=native_strict, settings=settings)
    if strict:
        done = replace(done, strict=True)
    return Verdict(done)


def model_option(model: str) -> Diagnostic | None:
    """The finding a ``--model`` value gets, judged as a literal ``model:`` is (one rule for both):
    ``None`` when it names ``<provider>/<name>`` with a known provider."""
    from checker.contracts import tables as contracts
    from checker.core.source import Span
    from checker.parse.values import ScalarValue

    found = contracts.check_model_ref(ScalarValue(Span(0, len(model)), model, model), task=None)
    return found[0] if found else None


def configured(compiled: CompiledWorkflow, path: str | None) -> CompiledWorkflow:
    """``compiled`` with the findings ``nika check`` would print for it: its ``# nika: ignore[…]``
    comments and the project configuration found upward from ``path`` applied (``None``: an
    unsaved document, its own comments only; ``-``: standard input, searched from the working
    directory). A broken configuration file is ``nika check``'s error to report; the findings then
    stay as compiled. The language server's documents and the projection's surfaces read this."""
    from checker.project.finalize import SettingsError

    try:
        if path is None:
            from checker.project.settings import DEFAULT

            done = admit(compiled, "<unsaved>", settings=DEFAULT).report
        else:
            done = admit(compiled, path).report
    except (SettingsError, OSError):
        return compiled
    if done.diagnostics == compiled.diagnostics:
        return compiled
    return replace(compiled, diagnostics=done.diagnostics)
