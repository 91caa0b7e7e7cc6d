"""The result of checking one or more paths: what the output formats render."""

from __future__ import annotations

from typing import TYPE_CHECKING

from checker.core.diagnostics import Diagnostic, Severity
from checker.core.records import field, record
from checker.core.source import SourceText

if TYPE_CHECKING:
    from checker.model.workflow import CompiledWorkflow


@record
class FileReport:
    """Findings for one path, exactly as the path was given on the command line.

    ``source`` is ``None`` when the file could not be read; ``error`` then says why in one line
    (such a path makes the whole run exit 1: it could not be checked). A NIKA-IMPL finding, a
    failure of the checker itself, makes the run exit 1 the same way.
    """

    path: str
    source: SourceText | None
    diagnostics: tuple[Diagnostic, ...]
    error: str | None = None
    # findings silenced by a `# nika: ignore[…]` comment, with the reason written there
    suppressed: tuple[tuple[Diagnostic, str], ...] = ()
    strict: bool = False  # configuration `strict = true`: warnings fail too
    # what the findings were computed from (the certificate reads it); None for an unread file
    compiled: CompiledWorkflow | None = field(default=None, compare=False, repr=False)
    # (task, extra): what a run of this file needs that this installation lacks
    # (checker/contracts/extras.toml); only ever an informational note, never a finding
    extras_missing: tuple[tuple[str, str], ...] = field(default=(), compare=False, repr=False)

    @property
    def clean(self) -> bool:
        if self.error is not None:
            return False
        failing = (Severity.ERROR, Severity.WARNING) if self.strict else (Severity.ERROR,)
        return not any(d.severity in failing for d in self.diagnostics)

    @property
    def incomplete(self) -> bool:
        """The checker failed on this file (a NIKA-IMPL finding): like an unreadable file, it was not checked."""
        return any(d.is_internal for d in self.diagnostics)


@record
class CheckRun:
    """Every file report of one ``nika check`` invocation, in the order the paths were found."""

    reports: tuple[FileReport, ...]

    @property
    def clean(self) -> bool:
        return all(r.clean for r in self.reports)

    @property
    def exit_code(self) -> int:
        """2 when a checked file has errors (this wins), 1 when a path or a file could not be
        (fully) checked, else 0."""
        if any(r.error is None and not r.incomplete and not r.clean for r in self.reports):
            return 2
        if any(r.error is not None or r.incomplete for r in self.reports):
            return 1
        return 0
