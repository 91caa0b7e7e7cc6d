"""Code actions: the checker's own repairs, offered where the findings are.

* **Quick fixes** come straight from the ``data.fixes`` a diagnostic carries (see
  :func:`nika_lsp.features.diagnostics.fix_data`): the client sends the diagnostics under the
  cursor back with the request, and each of their fixes becomes one action. Nothing is analysed
  again. A finding with exactly one fix, and that fix safe, marks it preferred, so
  "auto fix" applies it.
* **``source.fixAll.nika``** applies every *safe* fix of the document's current analysis in one
  edit (for "fix all" commands and ``editor.codeActionsOnSave``). Fixes whose edits overlap, or
  even touch, an edit already taken are left for the next round, so the result never depends on
  the order the client applies edits in.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from lsprotocol import types as lsp

from checker.core.diagnostics import Edit
from checker.core.source import Span
from checker.core.vocab import Applicability
from nika_lsp.convert import span_to_range

if TYPE_CHECKING:
    from nika_lsp.documents import Snapshot
    from nika_lsp.host import Host

FIX_ALL_KIND = "source.fixAll.nika"
QUICK_FIX_KIND = lsp.CodeActionKind.QuickFix.value


def wanted(kind: str, only: Sequence[Any] | None) -> bool:
    """Whether an action of ``kind`` passes the client's ``only`` filter (kinds are prefixes)."""
    if not only:
        return True
    for o in only:
        name = str(getattr(o, "value", o))
        if name and (kind == name or kind.startswith(name + ".")):
            return True
    return False


def _position(data: Any) -> lsp.Position | None:
    if not isinstance(data, dict):
        return None
    line, char = data.get("line"), data.get("character")
    if isinstance(line, int) and isinstance(char, int):
        return lsp.Position(line=line, character=char)
    return None


def _text_edit(data: Any) -> lsp.TextEdit | None:
    """One ``{range, newText}`` of a diagnostic's fix data as a TextEdit (``None`` if malformed)."""
    if not isinstance(data, dict) or not isinstance(data.get("newText"), str):
        return None
    rng = data.get("range")
    start = _position(rng.get("start")) if isinstance(rng, dict) else None
    end = _position(rng.get("end")) if isinstance(rng, dict) else None
    if start is None or end is None:
        return None
    return lsp.TextEdit(range=lsp.Range(start=start, end=end), new_text=data["newText"])


def _fixes_of(d: lsp.Diagnostic) -> list[dict[str, Any]]:
    data = d.data
    if d.source != "nika" or not isinstance(data, dict) or not isinstance(data.get("fixes"), list):
        return []
    return [f for f in data["fixes"] if isinstance(f, dict) and isinstance(f.get("title"), str)]


def _suppression_of(d: lsp.Diagnostic, uri: str) -> lsp.CodeAction | None:
    data = d.data
    sup = data.get("suppress") if d.source == "nika" and isinstance(data, dict) else None
    if not isinstance(sup, dict) or not isinstance(sup.get("title"), str) or not isinstance(sup.get("edits"), list):
        return None
    edits = [te for e in sup["edits"] if (te := _text_edit(e)) is not None]
    if not edits or len(edits) != len(sup["edits"]):
        return None
    return lsp.CodeAction(
        title=sup["title"], kind=QUICK_FIX_KIND, diagnostics=[d], edit=lsp.WorkspaceEdit(changes={uri: edits})
    )


def quick_fixes(uri: str, diagnostics: Sequence[lsp.Diagnostic]) -> list[lsp.CodeAction]:
    """One quick fix per fix attached to each of our diagnostics, then (never preferred) the
    action that silences the finding with a `# nika: ignore[…]` comment."""
    out: list[lsp.CodeAction] = []
    suppressions: list[lsp.CodeAction] = []
    for d in diagnostics:
        if (sup := _suppression_of(d, uri)) is not None:
            suppressions.append(sup)
        fixes = _fixes_of(d)
        for fix in fixes:
            raw = fix.get("edits")
            edits = [te for e in raw if (te := _text_edit(e)) is not None] if isinstance(raw, list) else []
            if not edits or len(edits) != len(raw or []):
                continue  # a partial edit would be worse than none
            preferred = len(fixes) == 1 and fix.get("applicability") == Applicability.SAFE
            out.append(
                lsp.CodeAction(
                    title=fix["title"],
                    kind=QUICK_FIX_KIND,
                    diagnostics=[d],
                    edit=lsp.WorkspaceEdit(changes={uri: edits}),
                    is_preferred=True if preferred else None,
                )
            )
    return out + suppressions


def _clash(a: Span, b: Span) -> bool:
    """Overlapping or touching (an insertion at the edge of a replacement counts)."""
    return a.start <= b.end and b.start <= a.end


def safe_edits(snap: Snapshot) -> list[Edit]:
    """The edits of every safe fix of the document that can be applied together."""
    taken: list[Span] = []
    out: list[Edit] = []
    for d in snap.compiled.diagnostics:
        for fix in d.fixes:
            if fix.applicability != Applicability.SAFE or not fix.edits:
                continue
            spans = [e.span for e in fix.edits]
            inner = any(_clash(s, t) for i, s in enumerate(spans) for t in spans[i + 1 :])
            if inner or any(_clash(s, t) for s in spans for t in taken):
                continue
            taken.extend(spans)
            out.extend(fix.edits)
    return sorted(out, key=lambda e: (e.span.start, e.span.end))


def fix_all(snap: Snapshot, encoding: str, *, versioned: bool) -> lsp.CodeAction | None:
    """The ``source.fixAll.nika`` action, or ``None`` when there is nothing safe to apply."""
    edits = safe_edits(snap)
    if not edits:
        return None
    src = snap.source
    text_edits = [lsp.TextEdit(range=span_to_range(src, e.span, encoding), new_text=e.new_text) for e in edits]
    if versioned:
        doc = lsp.OptionalVersionedTextDocumentIdentifier(uri=snap.uri, version=snap.version)
        edit = lsp.WorkspaceEdit(document_changes=[lsp.TextDocumentEdit(text_document=doc, edits=text_edits)])
    else:
        edit = lsp.WorkspaceEdit(changes={snap.uri: text_edits})
    return lsp.CodeAction(
        title="Apply every safe Nika fix",
        kind=FIX_ALL_KIND,
        edit=edit,
    )


def _document_changes(ls: Host) -> bool:
    ws = ls.client_capabilities.workspace
    return bool(ws and ws.workspace_edit and ws.workspace_edit.document_changes)


def register(server: Host) -> None:
    """Attach the code action handler."""

    options = lsp.CodeActionOptions(code_action_kinds=[QUICK_FIX_KIND, FIX_ALL_KIND], resolve_provider=False)

    @server.feature(lsp.TEXT_DOCUMENT_CODE_ACTION, options)
    async def code_action(ls: Host, params: lsp.CodeActionParams) -> list[lsp.CodeAction] | None:
        uri = params.text_document.uri
        only = params.context.only
        out: list[lsp.CodeAction] = []
        if wanted(QUICK_FIX_KIND, only):
            out += ls.safely("codeAction", lambda: quick_fixes(uri, params.context.diagnostics), [])
        if wanted(FIX_ALL_KIND, only):
            snap = await ls.snapshot_async(uri)
            if snap is not None:
                action = ls.safely("fixAll", lambda: fix_all(snap, ls.encoding, versioned=_document_changes(ls)), None)
                if action is not None:
                    out.append(action)
        return out or None
