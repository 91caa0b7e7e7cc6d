"""The language server's workspace rule (workspace/001): files a document names outside the
workspace folders are neither read nor looked at (:func:`checker.core.paths.resolve_inside`)."""

from __future__ import annotations

from checker.core.codes import lint
from checker.core.diagnostics import Diagnostic
from checker.core.source import Span


def outside_workspace(span: Span, rel: str, what: str, task: str) -> Diagnostic:
    """workspace/001: the language server does not follow ``rel`` (outside its workspace)."""
    return lint(
        "workspace/001",
        span,
        f"the {what} `{rel}` is outside the workspace folders: the editor does not read it",
        "Add its folder to the workspace to check it here; `nika check` follows it as usual.",
        task=task,
    )
