"""Machine fixes as minimal text edits: building them (for rules) and applying them (``--fix``).

Edits replace spans of the original text and never re-serialise the document, so comments,
quoting and layout outside the edited spans survive byte for byte.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from itertools import pairwise

from checker.diagnostics import Diagnostic, Edit, Fix
from checker.source import Span
from checker.values import Entry, MapValue

SAFE = "safe"


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


@dataclass(frozen=True, slots=True)
class Applied:
    """The outcome of one fixing pass over one document."""

    text: str
    applied: tuple[Diagnostic, ...]
    skipped: tuple[Diagnostic, ...]  # fixable findings left for a later pass (overlaps)


def fixable(d: Diagnostic, *, unsafe: bool) -> Fix | None:
    """The first fix of ``d`` the user allowed (safe ones always; the rest with ``unsafe``)."""
    for fix in d.fixes:
        if fix.edits and (fix.applicability == SAFE or unsafe):
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
