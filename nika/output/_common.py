"""Helpers shared by the output formats: finding order and position lookup."""

from __future__ import annotations

from typing import TYPE_CHECKING

from checker.core.source import SourceText

if TYPE_CHECKING:
    from checker.core.diagnostics import Diagnostic
    from checker.project.report import FileReport

_EMPTY = SourceText("")


def finding_key(d: Diagnostic) -> tuple[int, int, str, str, str]:
    """Order of findings inside one report: start offset, end offset, code, then tie-breakers."""
    return (d.span.start, d.span.end, d.code or "", d.rule or "", d.message)


def sorted_findings(report: FileReport) -> list[Diagnostic]:
    return sorted(report.diagnostics, key=finding_key)


def source_of(report: FileReport) -> SourceText:
    """The report's source, or an empty one (every position then maps to 1:1, offset 0).

    A report without a source is normally an unreadable file and carries no findings; the
    fallback only keeps the renderers total if a caller breaks that rule.
    """
    return report.source if report.source is not None else _EMPTY
