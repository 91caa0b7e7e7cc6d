"""Diagnostics: pushed (``publishDiagnostics`` with the document version) or pulled
(``textDocument/diagnostic`` with a result id tied to the version), never both."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from lsprotocol import types as lsp

from checker.diagnostics import Diagnostic, Severity
from checker.source import SourceText
from nika_lsp.convert import span_to_range

if TYPE_CHECKING:
    from nika_lsp.documents import Snapshot

_SEVERITY = {
    Severity.ERROR: lsp.DiagnosticSeverity.Error,
    Severity.WARNING: lsp.DiagnosticSeverity.Warning,
    Severity.INFO: lsp.DiagnosticSeverity.Information,
    Severity.HINT: lsp.DiagnosticSeverity.Hint,
}


def fix_data(d: Diagnostic, src: SourceText, encoding: str) -> list[dict[str, Any]]:
    """The finding's fixes as plain data, so code actions need no re-analysis."""
    out = []
    for fix in d.fixes:
        edits = []
        for e in fix.edits:
            r = span_to_range(src, e.span, encoding)
            edits.append(
                {
                    "range": {
                        "start": {"line": r.start.line, "character": r.start.character},
                        "end": {"line": r.end.line, "character": r.end.character},
                    },
                    "newText": e.new_text,
                }
            )
        out.append({"title": fix.title, "applicability": fix.applicability, "edits": edits})
    return out


def to_lsp(d: Diagnostic, snap: Snapshot, encoding: str, *, related_support: bool = True) -> lsp.Diagnostic:
    src = snap.source
    code = d.code or d.rule
    related = None
    if related_support and d.related:
        related = [
            lsp.DiagnosticRelatedInformation(
                location=lsp.Location(uri=snap.uri, range=span_to_range(src, lab.span, encoding)),
                message=lab.message,
            )
            for lab in d.related
        ]
    tags = [lsp.DiagnosticTag.Unnecessary] if "unnecessary" in d.tags else None
    message = d.full_message()
    if d.related and not related_support:
        message += "".join(f"\n{lab.message} (line {src.line_col(lab.span.start).line})" for lab in d.related)
    return lsp.Diagnostic(
        range=span_to_range(src, d.span, encoding),
        message=message,
        severity=_SEVERITY[d.severity],
        code=code,
        code_description=lsp.CodeDescription(href=d.docs_url) if d.docs_url else None,
        source="nika",
        related_information=related,
        tags=tags,
        data={"fixes": fix_data(d, src, encoding), "task": d.task} if d.fixes or d.task else None,
    )


def diagnostics_for(snap: Snapshot, encoding: str, *, related_support: bool = True) -> list[lsp.Diagnostic]:
    return [to_lsp(d, snap, encoding, related_support=related_support) for d in snap.compiled.diagnostics]
