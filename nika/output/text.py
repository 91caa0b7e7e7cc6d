"""Terminal formats of ``nika check``: ``full`` (source snippet with carets) and ``concise``."""

from __future__ import annotations

import unicodedata
from typing import TYPE_CHECKING

from checker.diagnostics import Severity
from nika.output._common import sorted_findings, source_of

if TYPE_CHECKING:
    from checker.diagnostics import Diagnostic
    from checker.report import CheckRun, FileReport
    from checker.source import SourceText

__all__ = ["TAB_WIDTH", "display_columns", "render_concise", "render_full", "summary"]

TAB_WIDTH = 4

_RESET = "\x1b[0m"
_BOLD = "\x1b[1m"
_RED = "\x1b[31m"
_YELLOW = "\x1b[33m"
_BLUE = "\x1b[34m"
_CYAN = "\x1b[36m"

_SEVERITY_COLOR = {
    Severity.ERROR: _RED,
    Severity.WARNING: _YELLOW,
    Severity.INFO: _CYAN,
    Severity.HINT: _CYAN,
}


class _Paint:
    """Wraps text in ANSI styles when enabled, and is the identity otherwise."""

    __slots__ = ("on",)

    def __init__(self, on: bool) -> None:
        self.on = on

    def __call__(self, text: str, *styles: str) -> str:
        if not self.on or not styles or not text:
            return text
        return "".join(styles) + text + _RESET


# --- display geometry ---------------------------------------------------------------------


def _char_width(ch: str) -> int:
    if unicodedata.category(ch) in ("Mn", "Me", "Cf"):
        return 0
    return 2 if unicodedata.east_asian_width(ch) in ("W", "F") else 1


def display_columns(line: str) -> tuple[str, list[int]]:
    """Lay out one source line for the terminal.

    Returns the printable text (tabs expanded to stops of ``TAB_WIDTH``, other control
    characters shown as U+FFFD so the source cannot drive the terminal) and, for every
    code-point index ``0..len(line)``, the display column where that character starts.
    Wide (East Asian, emoji) characters count two columns, combining marks zero.
    """
    out: list[str] = []
    cols: list[int] = []
    col = 0
    for ch in line:
        cols.append(col)
        if ch == "\t":
            step = TAB_WIDTH - col % TAB_WIDTH
            out.append(" " * step)
            col += step
        elif ch < " " or ch == "\x7f":
            out.append("\ufffd")
            col += 1
        else:
            out.append(ch)
            col += _char_width(ch)
    cols.append(col)
    return "".join(out), cols


# --- summary ------------------------------------------------------------------------------


def _plural(n: int, word: str) -> str:
    return f"{n} {word}" if n == 1 else f"{n} {word}s"


def _join(parts: list[str]) -> str:
    if len(parts) <= 1:
        return "".join(parts)
    return ", ".join(parts[:-1]) + " and " + parts[-1]


def summary(run: CheckRun) -> str:
    """One closing sentence: how many findings of each kind, in how many files."""
    readable = [r for r in run.reports if r.error is None]
    unreadable = len(run.reports) - len(readable)
    errors = warnings = notes = 0
    with_findings = 0
    for r in readable:
        if r.diagnostics:
            with_findings += 1
        for d in r.diagnostics:
            if d.severity is Severity.ERROR:
                errors += 1
            elif d.severity is Severity.WARNING:
                warnings += 1
            else:
                notes += 1
    if not run.reports:
        return "No files checked."
    counts = [_plural(n, word) for n, word in ((errors, "error"), (warnings, "warning"), (notes, "note")) if n]
    lost = f"{_plural(unreadable, 'file')} could not be read"
    if not counts:
        if not readable:
            return f"Nothing checked: {lost}."
        if unreadable:
            return f"No findings in {_plural(len(readable), 'file')}, but {lost}."
        return f"All checked: {_plural(len(readable), 'file')}, no findings."
    tail = f" {lost}." if unreadable else ""
    where = (
        _plural(with_findings, "file")
        if with_findings == len(readable)
        else f"{with_findings} of {_plural(len(readable), 'file')}"
    )
    return f"Found {_join(counts)} in {where}.{tail}"


# --- shared pieces ------------------------------------------------------------------------


def _ident(d: Diagnostic) -> str:
    """``error[NIKA-DAG-001]``, ``warning[rule-id]`` or a bare ``error`` word."""
    ident = d.code or d.rule
    return f"{d.severity.value}[{ident}]" if ident else f"{d.severity.value}:"


def _location(path: str, source: SourceText, offset: int) -> str:
    lc = source.line_col(offset)
    return f"{path}:{lc.line}:{lc.column}"


def _unreadable_line(report: FileReport, paint: _Paint) -> str:
    return f"{paint(report.path + ':', _BOLD)} {paint('error:', _BOLD, _RED)} {report.error}"


def _header(path: str, source: SourceText, d: Diagnostic, paint: _Paint, message: str) -> str:
    sev = _SEVERITY_COLOR[d.severity]
    return (
        f"{paint(_location(path, source, d.span.start) + ':', _BOLD)} "
        f"{paint(_ident(d), _BOLD, sev)} {paint(message, _BOLD)}"
    )


# --- full ---------------------------------------------------------------------------------


def _snippet(source: SourceText, d: Diagnostic, paint: _Paint) -> tuple[list[str], int]:
    """The gutter + source line + caret line of the primary span, and the gutter width."""
    start = source.line_col(d.span.start)
    end = source.line_col(max(d.span.end, d.span.start))
    end_line, end_col = end.line, end.column
    # A span that stops right after a line break ends, for display, at the end of that line.
    if end_line > start.line and end_col == 1:
        end_line -= 1
        end_col = len(source.line_text(end_line - 1)) + 1

    line = source.line_text(start.line - 1)
    shown, cols = display_columns(line)
    first = min(start.column - 1, len(line))
    if end_line == start.line:
        last = max(first, min(end_col - 1, len(line)))
        more = ""
    else:
        last = len(line)
        more = f" ... continues to line {end_line}"
    width = max(1, cols[last] - cols[first])

    gutter_w = len(str(start.line))
    pad = " " * gutter_w
    bar = paint("|", _BOLD, _BLUE)
    carets = paint("^" * width + more, _BOLD, _SEVERITY_COLOR[d.severity])
    lines = [
        f"{pad} {bar}",
        f"{paint(str(start.line), _BOLD, _BLUE)} {bar} {shown}".rstrip(),
        f"{pad} {bar} {' ' * cols[first]}{carets}",
    ]
    return lines, gutter_w


def _full_finding(path: str, source: SourceText, d: Diagnostic, paint: _Paint) -> str:
    lines = [_header(path, source, d, paint, d.message)]
    snippet, gutter_w = _snippet(source, d, paint)
    lines.extend(snippet)
    eq = " " * gutter_w + " " + paint("=", _BOLD, _BLUE)

    def note(kind: str, text: str) -> None:
        lines.append(f"{eq} {paint(kind + ':', _BOLD)} {text}")

    for label in d.related:
        note("note", f"{_location(path, source, label.span.start)}: {label.message}")
    if d.help:
        note("help", d.help)
    for fix in d.fixes:
        note("fix", fix.title if fix.applicability == "safe" else f"{fix.title} ({fix.applicability})")
    if d.docs_url:
        note("docs", d.docs_url)
    return "\n".join(lines)


def render_full(run: CheckRun, *, color: bool = False) -> str:
    """Every finding with its source line, carets, notes, help and docs link, then a summary."""
    paint = _Paint(color)
    blocks: list[str] = []
    for report in run.reports:
        if report.error is not None:
            blocks.append(_unreadable_line(report, paint))
            continue
        source = source_of(report)
        blocks.extend(_full_finding(report.path, source, d, paint) for d in sorted_findings(report))
    blocks.append(paint(summary(run), _BOLD))
    return "\n\n".join(blocks) + "\n"


# --- concise ------------------------------------------------------------------------------


def render_concise(run: CheckRun, *, color: bool = False) -> str:
    """One line per finding (message plus repair), unreadable files, then a summary."""
    paint = _Paint(color)
    lines: list[str] = []
    for report in run.reports:
        if report.error is not None:
            lines.append(_unreadable_line(report, paint))
            continue
        source = source_of(report)
        lines.extend(_header(report.path, source, d, paint, d.full_message()) for d in sorted_findings(report))
    lines.append(paint(summary(run), _BOLD))
    return "\n".join(lines) + "\n"
