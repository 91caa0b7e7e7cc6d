"""Terminal formats of ``nika check``: ``full`` (source snippet with carets) and ``concise``."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

from checker.core.diagnostics import Severity
from checker.core.display import char_width
from nika.output._common import sorted_findings, source_of

if TYPE_CHECKING:
    from checker.core.diagnostics import Diagnostic
    from checker.core.source import SourceText
    from checker.project.report import CheckRun, FileReport
    from checker.views.certificate import PriceTable

__all__ = [
    "FOLD_AFTER",
    "MAX_SHOWN",
    "MAX_SHOWN_BINARY",
    "TAB_WIDTH",
    "display_columns",
    "render_concise",
    "render_full",
    "summary",
]

TAB_WIDTH = 4
# At most this many findings with the same code on the same line are shown; the rest are folded.
FOLD_AFTER = 3
# A source line longer than this (in code points) is shown as a window around the finding.
MAX_SHOWN = 240
# A line that is mostly binary (control characters, bytes that were not UTF-8) gets this window.
MAX_SHOWN_BINARY = 32
_ELLIPSIS = "…"

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


def _escaped(ch: str) -> str | None:
    """How a character that must not reach the terminal is shown (``\\x1b``), else ``None``."""
    o = ord(ch)
    if o < 0x20 or 0x7F <= o <= 0x9F:  # C0 and C1 controls, DEL
        return f"\\x{o:02x}"
    if ch in "\u2028\u2029" or 0xD800 <= o <= 0xDFFF:  # line/paragraph separators, lone surrogates
        return f"\\u{o:04x}"
    return None


def display_columns(line: str, replaced: Mapping[int, int] | None = None) -> tuple[str, list[int]]:
    """Lay out one source line for the terminal.

    Returns the printable text (tabs expanded to stops of ``TAB_WIDTH``, other control
    characters escaped as ``\\xNN`` so the source can neither drive the terminal nor vanish)
    and, for every code-point index ``0..len(line)``, the display column where that character
    starts. Wide (East Asian, emoji) characters count two columns, combining marks zero.
    ``replaced`` maps indexes of U+FFFD characters that stand for an invalid byte of the file
    to that byte, shown as ``\\xNN`` too.
    """
    out: list[str] = []
    cols: list[int] = []
    col = 0
    for i, ch in enumerate(line):
        cols.append(col)
        if replaced and i in replaced:
            esc = f"\\x{replaced[i]:02x}"
            out.append(esc)
            col += len(esc)
        elif ch == "\t":
            step = TAB_WIDTH - col % TAB_WIDTH
            out.append(" " * step)
            col += step
        elif (esc := _escaped(ch)) is not None:
            out.append(esc)
            col += len(esc)
        else:
            out.append(ch)
            col += char_width(ch)
    cols.append(col)
    return "".join(out), cols


def _binary(line: str) -> bool:
    """Mostly not text: at least a quarter control characters or replaced bytes (U+FFFD)."""
    if len(line) < 8:
        return False
    odd = sum(1 for ch in line if (ch != "\t" and _escaped(ch) is not None) or ch == "\ufffd")
    return odd * 4 >= len(line)


# --- summary ------------------------------------------------------------------------------


def _plural(n: int, word: str) -> str:
    return f"{n} {word}" if n == 1 else f"{n} {word}s"


def _join(parts: list[str]) -> str:
    if len(parts) <= 1:
        return "".join(parts)
    return ", ".join(parts[:-1]) + " and " + parts[-1]


def summary(run: CheckRun, folded: int = 0) -> str:
    """One closing sentence: how many findings of each kind, in how many files.

    ``folded`` is how many repeated findings the rendering left out (see :data:`FOLD_AFTER`).
    """
    readable = [r for r in run.reports if r.error is None]
    unreadable = len(run.reports) - len(readable)
    incomplete = sum(1 for r in readable if r.incomplete)
    errors = warnings = notes = 0
    with_findings = fixable = 0
    for r in readable:
        if r.diagnostics:
            with_findings += 1
        for d in r.diagnostics:
            if any(f.applicability == "safe" for f in d.fixes):
                fixable += 1
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
    if incomplete:
        tail += f" {_plural(incomplete, 'file')} could not be fully checked (an internal error; see NIKA-IMPL-001)."
    if folded:
        are = "finding is" if folded == 1 else "findings are"
        tail += f" {folded} repeated {are} folded (`--output-format json` lists all)."
    if fixable:
        tail += f" {fixable} fixable with `nika check --fix`."
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
    """The gutter + source line + caret line of the primary span, and the gutter width.

    A line longer than :data:`MAX_SHOWN` code points is shown as a window around the span,
    with ``…`` where it was cut, so each finding costs the same however long its line is; a
    binary line (see :func:`_binary`) gets a window of :data:`MAX_SHOWN_BINARY`.
    """
    start = source.line_col(d.span.start)
    end = source.line_col(max(d.span.end, d.span.start))
    end_line, end_col = end.line, end.column
    idx = start.line - 1
    line_start = source.line_starts[idx]
    line_len = source.line_end(idx) - line_start
    # A span that stops right after a line break ends, for display, at the end of that line.
    if end_line > start.line and end_col == 1:
        end_line -= 1
        end_col = source.line_end(end_line - 1) - source.line_starts[end_line - 1] + 1

    first = min(start.column - 1, line_len)
    if end_line == start.line:
        last = max(first, min(end_col - 1, line_len))
        more = ""
    else:
        last = line_len
        more = f" ... continues to line {end_line}"
    lo, hi = 0, line_len
    cap = MAX_SHOWN
    if line_len > MAX_SHOWN_BINARY and _binary(source.text[line_start : line_start + min(line_len, 4 * MAX_SHOWN)]):
        cap = MAX_SHOWN_BINARY
    if line_len > cap:
        lo = max(0, first - cap // 4)
        hi = min(line_len, lo + cap)
        lo = max(0, min(lo, hi - cap))
    line = source.text[line_start + lo : line_start + hi]
    replaced = None
    if source.repaired_bytes and "\ufffd" in line:
        base = line_start + lo
        replaced = {
            i: b for i, ch in enumerate(line) if ch == "\ufffd" and (b := source.replaced_byte(base + i)) is not None
        }
    shown, cols = display_columns(line, replaced)
    lead = 0
    if lo > 0:
        shown, lead = _ELLIPSIS + shown, 1
    if hi < line_len:
        shown += _ELLIPSIS
    a, b = first - lo, min(last, hi) - lo
    width = max(1, cols[b] - cols[a])

    gutter_w = len(str(start.line))
    pad = " " * gutter_w
    bar = paint("|", _BOLD, _BLUE)
    carets = paint("^" * width + more, _BOLD, _SEVERITY_COLOR[d.severity])
    lines = [
        f"{pad} {bar}",
        f"{paint(str(start.line), _BOLD, _BLUE)} {bar} {shown}".rstrip(),
        f"{pad} {bar} {' ' * (lead + cols[a])}{carets}",
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


def _fold(source: SourceText, findings: list[Diagnostic]) -> list[tuple[Diagnostic, int]]:
    """The findings to show, each with how many of its repeats are folded after it (usually 0).

    A repeat is a finding with the same code (or rule) starting on the same line; only the first
    :data:`FOLD_AFTER` of a kind are shown, and the last shown one carries the folded count.
    """
    totals: dict[tuple[int, str], int] = {}
    keys = []
    for d in findings:
        key = (source.line_index(d.span.start), d.code or d.rule or d.message)
        keys.append(key)
        totals[key] = totals.get(key, 0) + 1
    seen: dict[tuple[int, str], int] = {}
    out: list[tuple[Diagnostic, int]] = []
    for d, key in zip(findings, keys, strict=True):
        n = seen[key] = seen.get(key, 0) + 1
        if n < FOLD_AFTER or (n == FOLD_AFTER and totals[key] == FOLD_AFTER):
            out.append((d, 0))
        elif n == FOLD_AFTER:
            out.append((d, totals[key] - FOLD_AFTER))
    return out


def _folded_line(path: str, source: SourceText, d: Diagnostic, n: int, paint: _Paint) -> str:
    line = source.line_col(d.span.start).line
    what = "finding" if n == 1 else "findings"
    return paint(f"{path}:{line}: ... {n} more {_ident(d).rstrip(':')} {what} on this line (folded)", _BOLD)


def render_full(
    run: CheckRun, *, color: bool = False, certificate: bool = False, prices: PriceTable | None = None
) -> str:
    """Every finding with its source line, carets, notes, help and docs link, then a summary.

    Repeats of one finding on one line are folded after :data:`FOLD_AFTER` (the summary says how
    many); the machine formats keep them all. ``certificate`` adds each file's certificate after
    its findings.
    """
    paint = _Paint(color)
    blocks: list[str] = []
    folded = 0
    for report in run.reports:
        if report.error is not None:
            blocks.append(_unreadable_line(report, paint))
            continue
        source = source_of(report)
        for d, more in _fold(source, sorted_findings(report)):
            blocks.append(_full_finding(report.path, source, d, paint))
            if more:
                folded += more
                blocks.append(_folded_line(report.path, source, d, more, paint))
        if certificate:
            blocks.append(_certificate_block(report, paint, prices))
    blocks.append(paint(summary(run, folded), _BOLD))
    return "\n\n".join(blocks) + "\n"


def _certificate_block(report: FileReport, paint: _Paint, prices: PriceTable | None) -> str:
    from checker.views.certificate import certify
    from nika.output.certificate_text import certificate_lines

    compiled = report.compiled
    cert = certify(compiled, prices) if compiled is not None else None
    if cert is None:
        return paint(f"certificate · {report.path}", _BOLD) + "\n  none: the file holds no workflow to certify"
    head, *rest = certificate_lines(cert, report.path)
    return "\n".join([paint(head, _BOLD), *rest])


# --- concise ------------------------------------------------------------------------------


def render_concise(
    run: CheckRun, *, color: bool = False, certificate: bool = False, prices: PriceTable | None = None
) -> str:
    """One line per finding (message plus repair), unreadable files, then a summary (repeats folded);
    ``certificate`` adds each file's certificate after its findings."""
    paint = _Paint(color)
    lines: list[str] = []
    folded = 0
    for report in run.reports:
        if report.error is not None:
            lines.append(_unreadable_line(report, paint))
            continue
        source = source_of(report)
        for d, more in _fold(source, sorted_findings(report)):
            lines.append(_header(report.path, source, d, paint, d.full_message()))
            if more:
                folded += more
                lines.append(_folded_line(report.path, source, d, more, paint))
        if certificate:
            lines.append(_certificate_block(report, paint, prices))
    lines.append(paint(summary(run, folded), _BOLD))
    return "\n".join(lines) + "\n"
