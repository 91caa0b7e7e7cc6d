"""Diagnostics: pushed (``publishDiagnostics`` with the document version) or pulled
(``textDocument/diagnostic`` with a result id tied to the version), never both."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from lsprotocol import types as lsp

from checker.core.diagnostics import Diagnostic, Edit, Severity
from checker.core.source import SourceText
from nika_lsp.convert import span_to_range

if TYPE_CHECKING:
    from nika_lsp.documents import Snapshot

_SEVERITY = {
    Severity.ERROR: lsp.DiagnosticSeverity.Error,
    Severity.WARNING: lsp.DiagnosticSeverity.Warning,
    Severity.INFO: lsp.DiagnosticSeverity.Information,
    Severity.HINT: lsp.DiagnosticSeverity.Hint,
}


def _edit_data(e: Edit, src: SourceText, encoding: str) -> dict[str, Any]:
    r = span_to_range(src, e.span, encoding)
    return {
        "range": {
            "start": {"line": r.start.line, "character": r.start.character},
            "end": {"line": r.end.line, "character": r.end.character},
        },
        "newText": e.new_text,
    }


def fix_data(d: Diagnostic, src: SourceText, encoding: str) -> list[dict[str, Any]]:
    """The finding's fixes as plain data, so code actions need no re-analysis."""
    return [
        {
            "title": fix.title,
            "applicability": fix.applicability,
            "edits": [_edit_data(e, src, encoding) for e in fix.edits],
        }
        for fix in d.fixes
    ]


def suppress_data(d: Diagnostic, src: SourceText, encoding: str) -> dict[str, Any] | None:
    """The "Suppress … on this line" action as plain data (``None`` when it cannot be silenced)."""
    from checker.project.suppressions import suppress_edit

    edit = suppress_edit(src, d)
    if edit is None:
        return None
    return {"title": f"Suppress {d.code or d.rule} on this line", "edits": [_edit_data(edit, src, encoding)]}


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
        data=_data(d, src, encoding),
    )


def _data(d: Diagnostic, src: SourceText, encoding: str) -> dict[str, Any] | None:
    suppress = suppress_data(d, src, encoding)
    if not (d.fixes or d.task or suppress):
        return None
    data: dict[str, Any] = {"fixes": fix_data(d, src, encoding), "task": d.task}
    if suppress is not None:
        data["suppress"] = suppress
    return data


def diagnostics_for(snap: Snapshot, encoding: str, *, related_support: bool = True) -> list[lsp.Diagnostic]:
    return [to_lsp(d, snap, encoding, related_support=related_support) for d in snap.compiled.diagnostics]
