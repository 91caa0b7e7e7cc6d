"""The ``json`` format of ``nika check``: a stable, versioned report for other programs.

The shape is a public contract (external tools score against it); change it only together with
``REPORT_VERSION``. New keys may be added without a bump (readers ignore keys they do not know):
each file report carries ``certificate``, the :mod:`checker.views.certificate` document (``null`` when
the file holds no workflow). Lines and columns are 1-based, columns count code points, and ``offset`` is
the 0-based UTF-8 byte offset of the same position.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from nika.output._common import sorted_findings, source_of

if TYPE_CHECKING:
    from checker.core.diagnostics import Diagnostic
    from checker.core.source import SourceText, Span
    from checker.project.report import CheckRun, FileReport
    from checker.views.certificate import PriceTable

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


def _certificate(report: FileReport, prices: PriceTable | None) -> dict[str, Any] | None:
    """The file's certificate (:mod:`checker.views.certificate`), ``None`` without a workflow model."""
    compiled = report.compiled
    if compiled is None or compiled.workflow is None:
        return None
    from checker.views.certificate import CERTIFICATE_VERSION, certify

    try:
        cert = certify(compiled, prices)
    except Exception as exc:  # a bug here must not cost the findings their report
        return {"certificate_version": CERTIFICATE_VERSION, "error": f"internal error: {exc!r}"}
    return cert.to_json() if cert is not None else None


def _file(report: FileReport, prices: PriceTable | None = None) -> dict[str, Any]:
    if report.error is not None:
        return {"path": report.path, "clean": False, "error": report.error, "findings": [], "certificate": None}
    source = source_of(report)
    return {
        "path": report.path,
        "clean": report.clean,
        "findings": [_finding(source, d) for d in sorted_findings(report)],
        "certificate": _certificate(report, prices),
    }


def report_dict(run: CheckRun, prices: PriceTable | None = None) -> dict[str, Any]:
    """The report as plain data, keys in contract order; ``prices`` feeds each certificate."""
    return {
        "report_version": REPORT_VERSION,
        "clean": run.clean,
        "reports": [_file(r, prices) for r in run.reports],
    }


def render(run: CheckRun, prices: PriceTable | None = None) -> str:
    """The report as one line of JSON followed by a newline."""
    return json.dumps(report_dict(run, prices), ensure_ascii=False, indent=None) + "\n"
