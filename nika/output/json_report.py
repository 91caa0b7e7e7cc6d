"""The ``json`` format of ``nika check``: a stable, versioned report for other programs.

The shape is a public contract (external tools score against it); change it only together with
``REPORT_VERSION``. Lines and columns are 1-based, columns count code points, and ``offset`` is
the 0-based UTF-8 byte offset of the same position.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from nika.output._common import sorted_findings, source_of

if TYPE_CHECKING:
    from checker.diagnostics import Diagnostic
    from checker.report import CheckRun, FileReport
    from checker.source import SourceText, Span

__all__ = ["REPORT_VERSION", "render", "report_dict"]

REPORT_VERSION = 1


def _position(source: SourceText, offset: int) -> dict[str, int]:
    lc = source.line_col(offset)
    return {"line": lc.line, "column": lc.column, "offset": source.byte_offset(offset)}


def _span(source: SourceText, span: Span) -> dict[str, Any]:
    return {"start": _position(source, span.start), "end": _position(source, span.end)}


def _finding(source: SourceText, d: Diagnostic) -> dict[str, Any]:
    return {
        "code": d.code,
        "namespace": d.namespace,
        "category": d.category,
        "severity": d.severity.value,
        "rule": d.rule,
        "task": d.task,
        "message": d.full_message(),
        "span": _span(source, d.span),
        "related": [{"message": lb.message, "span": _span(source, lb.span)} for lb in d.related],
        "fixes": [
            {
                "title": fix.title,
                "applicability": fix.applicability,
                "edits": [{"span": _span(source, e.span), "new_text": e.new_text} for e in fix.edits],
            }
            for fix in d.fixes
        ],
        "docs_url": d.docs_url,
    }


def _file(report: FileReport) -> dict[str, Any]:
    if report.error is not None:
        return {"path": report.path, "clean": False, "error": report.error, "findings": []}
    source = source_of(report)
    return {
        "path": report.path,
        "clean": report.clean,
        "findings": [_finding(source, d) for d in sorted_findings(report)],
    }


def report_dict(run: CheckRun) -> dict[str, Any]:
    """The report as plain data, keys in contract order."""
    return {
        "report_version": REPORT_VERSION,
        "clean": run.clean,
        "reports": [_file(r) for r in run.reports],
    }


def render(run: CheckRun) -> str:
    """The report as one line of JSON followed by a newline."""
    return json.dumps(report_dict(run), ensure_ascii=False, indent=None) + "\n"
