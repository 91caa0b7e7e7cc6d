"""Machine fixes as minimal text edits: building them (for rules) and applying them (``--fix``).

Edits replace spans of the original text and never re-serialise the document, so comments,
quoting and layout outside the edited spans survive byte for byte.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from itertools import pairwise

from checker.core.diagnostics import Diagnostic, Edit, Fix
from checker.core.records import record
from checker.core.source import Span
from checker.core.vocab import Applicability
from checker.parse.values import Entry, MapValue

# -- building edits -------------------------------------------------------------------------


def _line_start(text: str, offset: int) -> int:
    return text.rfind("\n", 0, offset) + 1


def _line_end(text: str, offset: int) -> int:
    """Offset just past the newline ending the line that holds ``offset`` (or the text's end)."""
    nl = text.find("\n", offset)
    return len(text) if nl == -1 else nl + 1


def remove_map_entry(text: str, mapping: MapValue, entry: Entry) -> Edit | None:
    """An edit that deletes ``entry`` from ``mapping`` (``None`` when no clean edit exists).

    In block style the entry's whole lines go; in flow style the entry and one separating comma.
    """
    if entry not in mapping.entries or len(mapping.entries) == 0:
        return None
    start, end = entry.key.span.start, entry.value.span.end
    if not mapping.flow:
        ls = _line_start(text, start)
        if text[ls:start].strip():
            return None  # the key shares its line with something else (`- key:`), leave it
        tail = text[end : _line_end(text, end)]
        if tail.strip() and not tail.strip().startswith("#"):
            return None
        return Edit(Span(ls, _line_end(text, end)), "")
    idx = mapping.entries.index(entry)
    if idx + 1 < len(mapping.entries):
        return Edit(Span(start, mapping.entries[idx + 1].key.span.start), "")
    if idx > 0:
        return Edit(Span(mapping.entries[idx - 1].value.span.end, end), "")
    return None


# -- applying fixes -------------------------------------------------------------------------


@record
class Applied:
    """The outcome of one fixing pass over one document."""

    text: str
    applied: tuple[Diagnostic, ...]
    skipped: tuple[Diagnostic, ...]  # fixable findings left for a later pass (overlaps)


def fixable(d: Diagnostic, *, unsafe: bool) -> Fix | None:
    """The first fix of ``d`` the user allowed (safe ones always; the rest with ``unsafe``)."""
    for fix in d.fixes:
        if fix.edits and (fix.applicability == Applicability.SAFE or unsafe):
            return fix
    return None


def apply_fixes(text: str, diagnostics: Iterable[Diagnostic], *, unsafe: bool = False) -> Applied:
    """Apply every allowed fix whose edits do not overlap an earlier one (in finding order).

    Overlapping fixes are deferred, never merged: the caller re-checks and runs another pass.
    """
    chosen: list[tuple[Diagnostic, Fix]] = []
    taken: list[Span] = []
    skipped: list[Diagnostic] = []
    for d in diagnostics:
        fix = fixable(d, unsafe=unsafe)
        if fix is None:
            continue
        spans = [e.span for e in fix.edits]
        if any(_overlaps(s, t) for s in spans for t in taken) or _self_overlap(spans):
            skipped.append(d)
            continue
        taken.extend(spans)
        chosen.append((d, fix))
    edits = sorted((e for _, f in chosen for e in f.edits), key=lambda e: (e.span.start, e.span.end))
    return Applied(apply_edits(text, edits), tuple(d for d, _ in chosen), tuple(skipped))


def apply_edits(text: str, edits: Sequence[Edit]) -> str:
    """Apply non-overlapping edits (sorted by position) to ``text``."""
    out: list[str] = []
    pos = 0
    for e in edits:
        out.append(text[pos : e.span.start])
        out.append(e.new_text)
        pos = e.span.end
    out.append(text[pos:])
    return "".join(out)


def _overlaps(a: Span, b: Span) -> bool:
    if a.start == a.end or b.start == b.end:  # insertions collide only at the same point or inside
        return b.start < a.start < b.end or a.start < b.start < a.end or a.start == b.start
    return a.start < b.end and b.start < a.end


def _self_overlap(spans: list[Span]) -> bool:
    ordered = sorted(spans)
    return any(_overlaps(x, y) for x, y in pairwise(ordered))


def _indent_of(text: str, offset: int) -> str | None:
    """The indentation before ``offset`` when only spaces precede it on its line."""
    ls = _line_start(text, offset)
    lead = text[ls:offset]
    return lead if lead.strip(" ") == "" else None


def hoist_into_with(
    text: str,
    task: object,
    ref_span: Span,
    name: str,
    *,
    bound: str | None = None,
    applicability: str = Applicability.SAFE,
) -> Fix | None:
    """Bind the ``tasks.…`` reference at ``ref_span`` as ``with.<name>`` of ``task`` and read that.

    ``bound`` replaces the reference's own text as the bound expression (a misspelled task or
    field, corrected). Returns ``None`` whenever a clean, minimal edit is not certain
    (flow-style task, odd layout).
    """
    from checker.model.workflow import Task

    assert isinstance(task, Task)
    expr = bound if bound is not None else text[ref_span.start : ref_span.end]
    if not expr.startswith("tasks.") or any(c in expr for c in '"\\\n'):
        return None
    value = f'"${{{{ {expr} }}}}"'
    body = task.value
    if body.flow or not body.entries:
        return None
    existing = body.entry("with")
    if existing is None:
        first = body.entries[0]
        indent = _indent_of(text, first.key.span.start)
        if indent is None:
            return None
        ls = _line_start(text, first.key.span.start)
        insert = Edit(Span(ls, ls), f"{indent}with:\n{indent}  {name}: {value}\n")
    else:
        wmap = existing.value
        if not isinstance(wmap, MapValue) or not wmap.entries:
            return None
        last = wmap.entries[-1]
        if wmap.flow:
            insert = Edit(Span(last.value.span.end, last.value.span.end), f", {name}: {value}")
        else:
            indent = _indent_of(text, wmap.entries[0].key.span.start)
            if indent is None:
                return None
            end = _line_end(text, last.value.span.end)
            if text[last.value.span.end : end].strip() and not text[last.value.span.end : end].strip().startswith("#"):
                return None
            prefix = "" if end > 0 and text[end - 1] == "\n" else "\n"
            insert = Edit(Span(end, end), f"{prefix}{indent}{name}: {value}\n")
    return Fix(f"Bind `{expr}` as `with.{name}` and read that", (insert, Edit(ref_span, f"with.{name}")), applicability)
