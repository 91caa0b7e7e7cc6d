"""Suppression comments: ``# nika: ignore[CODE-or-rule, …] reason`` and ``# nika: ignore-file[…]``.

A line comment silences the listed codes or rule ids for findings that start on its own line or on
the line below it (a comment alone on its line covers the next line); ``ignore-file`` covers the
whole document. Matching is by exact code or rule id, never by message text. Structural findings
(NIKA-PARSE, NIKA-YAML) cannot be silenced: the document they describe is not the one you meant.

What cannot be honoured is itself reported, as a hint with a rule id of its own: a suppression that
silenced nothing (``suppression/unused``), and an entry that names no code or rule, or one that
may not be suppressed (``suppression/invalid``).
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from checker.core.diagnostics import Diagnostic, Edit, Fix
from checker.core.records import record
from checker.core.source import SourceText, Span

_COMMENT = re.compile(r"(?:^|(?<=\s))#\s*nika:\s*(ignore(?:-file)?)\s*\[([^\]\n]*)\]([^\n]*)", re.M)
UNSUPPRESSIBLE = ("NIKA-PARSE", "NIKA-YAML")
UNUSED = "suppression/unused"
INVALID = "suppression/invalid"


@record
class Suppression:
    """One entry of one comment: ``name`` (a code or rule id) and where it was written."""

    name: str
    span: Span  # the entry inside the brackets
    comment: Span  # the whole comment
    file_level: bool
    lines: tuple[int, ...]  # 0-based lines it covers (empty for file level)
    reason: str


@record
class Outcome:
    kept: tuple[Diagnostic, ...]
    suppressed: tuple[tuple[Diagnostic, Suppression], ...]
    notes: tuple[Diagnostic, ...]  # unused or invalid suppressions


def parse(src: SourceText) -> list[Suppression]:
    text = src.text
    if "ignore" not in text:
        return []
    out: list[Suppression] = []
    for m in _COMMENT.finditer(text):
        kind, body, reason = m.group(1), m.group(2), m.group(3).strip()
        file_level = kind == "ignore-file"
        line = src.line_index(m.start())
        alone = not text[text.rfind("\n", 0, m.start()) + 1 : m.start()].strip()
        lines = () if file_level else ((line, line + 1) if alone else (line,))
        pos = m.start(2)
        for part in body.split(","):
            name = part.strip()
            if name:
                start = pos + part.index(name)
                out.append(
                    Suppression(
                        name, Span(start, start + len(name)), Span(m.start(), m.end()), file_level, lines, reason
                    )
                )
            pos += len(part) + 1
    return out


def _matches(s: Suppression, d: Diagnostic) -> bool:
    return s.name == d.code or s.name == d.rule or (d.code is not None and _bare(s.name) == d.code)


def _bare(name: str) -> str:
    """``DAG-002`` is accepted for ``NIKA-DAG-002``."""
    return name if name.startswith("NIKA-") or "/" in name else "NIKA-" + name


def _known(name: str) -> bool:
    from checker.core.codes import lints, registry

    return _bare(name) in registry() or name in lints()


def apply(src: SourceText, diagnostics: Iterable[Diagnostic]) -> Outcome:
    """Split findings into kept and suppressed, and report suppressions that cannot be honoured."""
    diags = tuple(diagnostics)
    sups = parse(src)
    if not sups:
        return Outcome(diags, (), ())
    notes: list[Diagnostic] = []
    valid: list[Suppression] = []
    for s in sups:
        bare = _bare(s.name)
        if bare.startswith(tuple(ns + "-" for ns in UNSUPPRESSIBLE)):
            notes.append(_note(INVALID, s, f"`{s.name}` cannot be suppressed: structural findings must be fixed"))
        elif not _known(s.name):
            notes.append(_note(INVALID, s, f"`{s.name}` is not a NIKA code or lint rule", _guess(s.name)))
        else:
            valid.append(s)
    used: set[int] = set()
    kept: list[Diagnostic] = []
    suppressed: list[tuple[Diagnostic, Suppression]] = []
    for d in diags:
        if d.namespace in UNSUPPRESSIBLE:
            kept.append(d)
            continue
        line = src.line_index(d.span.start)
        hit = next((i for i, s in enumerate(valid) if _matches(s, d) and (s.file_level or line in s.lines)), None)
        if hit is None:
            kept.append(d)
        else:
            used.add(hit)
            suppressed.append((d, valid[hit]))
    for i, s in enumerate(valid):
        if i not in used:
            where = "in this file" if s.file_level else "on this line or the next"
            notes.append(_note(UNUSED, s, f"`{s.name}` is suppressed here, but no such finding is {where}"))
    return Outcome(tuple(kept), tuple(suppressed), tuple(notes))


def _guess(name: str) -> str | None:
    from checker.core.codes import lints, nearest
    from checker.core.suggest import did_you_mean

    if "/" in name:
        return did_you_mean(name, lints())
    hits = nearest(name, 1)
    return hits[0] if hits else None


def _note(rule: str, s: Suppression, message: str, guess: str | None = None) -> Diagnostic:
    from checker.core.codes import lint

    if guess:
        help_text = f"Did you mean `{guess}`?"
        fixes: tuple[Fix, ...] = (Fix(f"Change to `{guess}`", (Edit(s.span, guess),)),)
    elif rule == UNUSED:
        help_text = "Remove the stale entry (or the whole comment)."
        fixes = ()
    else:
        help_text = "Fix what the finding reports instead of silencing it." if "cannot" in message else None
        fixes = ()
    return lint(rule, s.span, message, help_text, fixes=fixes)


def suppress_edit(src: SourceText, d: Diagnostic, reason: str = "") -> Edit | None:
    """The edit that silences ``d`` (for an editor's "Suppress … on this line" action).

    It adds the finding's code or rule to a standalone ``# nika: ignore[…]`` comment on the line
    above when there is one, else inserts such a comment line with the line's indentation.
    ``None`` for findings that cannot be suppressed.
    """
    name = d.code or d.rule
    if name is None or d.namespace in UNSUPPRESSIBLE:
        return None
    text = src.text
    line = src.line_index(d.span.start)
    start = src.line_starts[line]
    if line > 0:
        prev_start = src.line_starts[line - 1]
        prev = text[prev_start:start]
        m = _COMMENT.search(prev)
        if m and m.group(1) == "ignore" and not prev[: m.start()].strip():
            close = prev_start + m.end(2)
            sep = ", " if m.group(2).strip() else ""
            return Edit(Span(close, close), f"{sep}{name}")
    end = text.find("\n", start)
    own = text[start : len(text) if end == -1 else end]
    indent = own[: len(own) - len(own.lstrip(" "))]
    why = f" {reason.strip()}" if reason.strip() else ""
    return Edit(Span(start, start), f"{indent}# nika: ignore[{name}]{why}\n")


__all__ = ["INVALID", "UNUSED", "Outcome", "Suppression", "apply", "parse", "suppress_edit"]
