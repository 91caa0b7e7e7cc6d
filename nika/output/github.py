"""The ``github`` format of ``nika check``: GitHub Actions workflow commands (annotations)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from checker.core.diagnostics import Severity
from nika.output._common import sorted_findings, source_of

if TYPE_CHECKING:
    from checker.project.report import CheckRun

__all__ = ["escape_data", "escape_property", "render"]

_COMMAND = {
    Severity.ERROR: "error",
    Severity.WARNING: "warning",
    Severity.INFO: "notice",
    Severity.HINT: "notice",
}


def escape_data(text: str) -> str:
    """Escape a command's message (the part after ``::``)."""
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def escape_property(text: str) -> str:
    """Escape a property value (``file=``, ``title=``): also ``:`` and ``,``."""
    return escape_data(text).replace(":", "%3A").replace(",", "%2C")


def render(run: CheckRun) -> str:
    """One workflow command per finding and per unreadable file; empty when there is none."""
    lines: list[str] = []
    for report in run.reports:
        path = escape_property(report.path)
        if report.error is not None:
            lines.append(f"::error file={path}::{escape_data(report.error)}")
            continue
        source = source_of(report)
        for d in sorted_findings(report):
            start = source.line_col(d.span.start)
            end = source.line_col(d.span.end)
            props = f"file={path},line={start.line},col={start.column},endLine={end.line},endColumn={end.column}"
            ident = d.code or d.rule
            if ident:
                props += f",title={escape_property(ident)}"
            lines.append(f"::{_COMMAND[d.severity]} {props}::{escape_data(d.full_message())}")
    return "".join(line + "\n" for line in lines)
