"""YAML text -> the span-carrying value tree, with the Nika YAML profile enforced on the way.

We read ruamel.yaml's *event stream* (its C parser from ruamel.yaml.clib when importable, the
pure-Python parser otherwise) and build the model's own :mod:`checker.parse.values` from it, once:
every key, value and item keeps its exact span, scalars are resolved with the YAML 1.2 core
schema (``no``/``on``/``yes`` stay strings, ``0755`` is a decimal integer), and a string holding
``${{ … }}`` islands becomes a :class:`~checker.parse.values.TemplateValue` carrying its parsed
template. The compiler then judges and types this tree without copying it. The profile
(NIKA-YAML-001..011: anchors, aliases, tags, merge keys, key types, duplicates, caps) is judged
here at the event level, so nothing YAML-specific (tags, anchors) needs to survive into the
tree. A syntax error is NIKA-PARSE-001 at the parser's position. The builder is iterative, so
nesting depth can never exhaust the Python stack.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable
from typing import Any

from ruamel.yaml.error import YAMLError
from ruamel.yaml.events import (
    AliasEvent,
    DocumentStartEvent,
    MappingEndEvent,
    MappingStartEvent,
    ScalarEvent,
    SequenceEndEvent,
    SequenceStartEvent,
)

from checker.core.codes import report
from checker.core.diagnostics import Diagnostic, Label
from checker.core.display import clip
from checker.core.records import record
from checker.core.source import Anchor, AnchoredSpan, SourceText, Span
from checker.expr import parse_template
from checker.expr.template import has_island
from checker.parse.events import Mark as _Mark
from checker.parse.events import make_parser as _make_parser
from checker.parse.values import Entry, ListValue, Literal, MapValue, ScalarValue, TemplateValue, Value

MAX_DOCUMENT_BYTES = 1_048_576
MAX_SCALAR_BYTES = 65_536
MAX_DEPTH = 64
# Integers are data, but one longer than this cannot even be printed by Python (its int-to-str
# limit); the literal is refused (NIKA-YAML-005) and kept as its text.
MAX_INT_DIGITS = 4300
_INT_CAP = 10**MAX_INT_DIGITS


def over_scalar_cap(raw: str) -> bool:
    """Whether a scalar's text is over ``MAX_SCALAR_BYTES`` (UTF-8): the one test of the cap, so
    the parser's NIKA-YAML-005 and every editor feature that skips such a scalar agree."""
    return len(raw) > MAX_SCALAR_BYTES // 4 and len(raw.encode("utf-8", "surrogatepass")) > MAX_SCALAR_BYTES


CORE_TAGS = {"tag:yaml.org,2002:" + t for t in ("str", "int", "float", "bool", "null", "map", "seq")} | {"!"}

_INT_RE = re.compile(r"[-+]?[0-9]+\Z")
_OCT_RE = re.compile(r"0o[0-7]+\Z")
_HEX_RE = re.compile(r"0x[0-9a-fA-F]+\Z")
_FLOAT_RE = re.compile(r"[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?\Z")
_INF_RE = re.compile(r"[-+]?\.(inf|Inf|INF)\Z")
_NAN_RE = re.compile(r"\.(nan|NaN|NAN)\Z")
_new_span = tuple.__new__  # Span(a, b) without the named tuple's Python-level constructor
_NULLS = {"", "~", "null", "Null", "NULL"}
_TRUES = {"true", "True", "TRUE"}
_FALSES = {"false", "False", "FALSE"}


@record
class ParsedYaml:
    """The value tree (``None`` when the text could not be turned into one) and profile findings."""

    root: Value | None
    diagnostics: tuple[Diagnostic, ...]
    fatal: bool
    # (repeated key, first occurrence) for every duplicate mapping key, in source order
    duplicates: tuple[tuple[ScalarValue, ScalarValue], ...] = ()


def resolve_plain(text: str) -> Any:
    """Resolve a plain scalar with the YAML 1.2 core schema."""
    if text in _NULLS:
        return None
    if text in _TRUES:
        return True
    if text in _FALSES:
        return False
    c = text[0]
    if c.isdigit() or c in "+-.":
        if _INT_RE.match(text):
            return int(text) if len(text) <= MAX_INT_DIGITS else text
        if _OCT_RE.match(text) or _HEX_RE.match(text):
            value = int(text[2:], 8 if text[1] == "o" else 16)
            return value if value < _INT_CAP else text
        if _FLOAT_RE.match(text):
            return float(text)
        if _INF_RE.match(text):
            return float("-inf") if text[0] == "-" else float("inf")
        if _NAN_RE.match(text):
            return float("nan")
    return text


def oversized_int_digits(text: str) -> int | None:
    """The digit count of a core-schema integer literal over the cap (about, for 0o/0x), else None."""
    if len(text) <= MAX_INT_DIGITS or not (text[:1].isdigit() or text[:1] in "+-"):
        return None
    if _INT_RE.match(text):
        return len(text.lstrip("+-"))
    if _OCT_RE.match(text) or _HEX_RE.match(text):
        bits = int(text[2:], 8 if text[1] == "o" else 16).bit_length()
        return int(bits * 0.30103) + 1
    return None


def _resolve_tagged(tag: str, text: str) -> Any:
    kind = tag.rsplit(":", 1)[-1]
    if kind == "str":
        return text
    value = resolve_plain(text)
    if kind == "int" and isinstance(value, int) and not isinstance(value, bool):
        return value
    if kind == "float" and isinstance(value, (int, float)) and not isinstance(value, bool):
        return float(value)
    if kind == "bool" and isinstance(value, bool):
        return value
    if kind == "null" and value is None:
        return None
    return text


class _Frame:
    __slots__ = ("anchor", "depth", "flow", "is_map", "items", "pending_key", "seen", "start", "tag")

    def __init__(self, is_map: bool, start: int, tag: str | None, anchor: str | None, flow: bool, depth: int):
        self.is_map = is_map
        self.start = start
        self.tag = tag
        self.anchor = anchor
        self.flow = flow
        self.depth = depth
        self.items: list[Any] = []
        self.pending_key: ScalarValue | None = None
        self.seen: dict[str, ScalarValue] | None = {} if is_map else None


class _Builder:
    def __init__(self, src: SourceText, anchor: Anchor | None = None, depth: int = 0) -> None:
        self.src = src
        self.depth = depth  # how deep the text's root sits in its document (a piece of it)
        self.diags: list[Diagnostic] = []
        self.duplicates: list[tuple[ScalarValue, ScalarValue]] = []
        # Makes a node's span from ``(start, end)`` offsets into ``src``: plain, or kept relative
        # to the anchor when there is one (called like ``tuple.__new__(Span, pair)``).
        self.new_span: Callable[[type, tuple[int, int]], Span] = _new_span
        if anchor is not None:

            def anchored(_cls: type, pair: tuple[int, int]) -> Span:
                return tuple.__new__(AnchoredSpan, (*pair, anchor))

            self.new_span = anchored

    def span(self, start: int, end: int) -> Span:
        return self.new_span(Span, (start, end))

    # -- profile findings -------------------------------------------------------------------
    def flag(self, code: str, span: Span, message: str, help: str, related: tuple[Label, ...] = ()) -> None:
        self.diags.append(report(code, span, message, help, related=related))

    def check_node_meta(self, anchor: str | None, tag: str | None, span: Span) -> None:
        if anchor is not None:
            self.flag(
                "NIKA-YAML-001",
                self._anchor_span(span, "&" + anchor),
                f"anchor `&{anchor}` is not allowed in a Nika workflow",
                "Write the value out where it is needed; anchors and aliases are refused even when unused.",
            )
        if tag is not None and tag not in CORE_TAGS:
            shown = tag if not tag.startswith("tag:yaml.org,2002:") else "!!" + tag.rsplit(":", 1)[-1]
            self.flag(
                "NIKA-YAML-006",
                self._anchor_span(span, shown),
                f"custom tag `{shown}` is outside the YAML core schema",
                "Remove the tag; only plain strings, numbers, booleans, null, mappings and lists are allowed.",
            )

    def _anchor_span(self, span: Span, needle: str) -> Span:
        # Event marks start after the anchor/tag property; look back on the same line for it.
        text = self.src.text
        line_start = max(text.rfind("\n", 0, span.start), text.rfind("\r", 0, span.start)) + 1
        i = text.rfind(needle, line_start, span.end)
        if i == -1:
            i = text.find(needle, span.start, span.end)
        if i == -1:
            return span
        return Span(i, i + len(needle))

    # -- building ---------------------------------------------------------------------------
    def scalar(self, ev: Any, is_key: bool) -> ScalarValue:
        start, end = ev.start_mark.index, ev.end_mark.index
        span = self.span(start, end)
        raw: str = ev.value
        style = ev.style or ""
        tag = ev.tag
        if ev.anchor is not None or tag is not None:
            self.check_node_meta(ev.anchor, tag, span)
        if tag is not None and tag != "!":
            value = _resolve_tagged(tag, raw) if tag in CORE_TAGS else raw
        elif style == "" and ev.implicit[0]:
            value = resolve_plain(raw)
        else:
            value = raw
        if isinstance(value, float) and (value != value or value in (float("inf"), float("-inf"))):
            self.flag(
                "NIKA-YAML-008",
                span,
                f"`{clip(raw)}` is not a finite number",
                "Use a finite number, or quote the text if you meant a string.",
            )
        if isinstance(value, str) and style == "" and (digits := oversized_int_digits(raw)) is not None:
            self.flag(
                "NIKA-YAML-005",
                span,
                f"this integer has {'about ' if raw[1:2] in ('o', 'x') else ''}{digits} digits, "
                f"over the {MAX_INT_DIGITS}-digit cap for numbers",
                "Quote it if it is an identifier; otherwise move the number into a file read at run time.",
            )
        if over_scalar_cap(raw):
            self.flag(
                "NIKA-YAML-005",
                Span(start, min(end, start + 1)),
                f"this scalar is {len(raw.encode('utf-8', 'surrogatepass'))} bytes, over the 65536-byte cap",
                "Move large content into a file and read it with `nika:read`.",
            )
        offsets = self._offsets(raw, style, start, end)
        # `"${{" in value` first: the cheap test rules out nearly every string before the exact one
        if not is_key and value.__class__ is str and "${{" in value and has_island(value):
            return TemplateValue(span, value, raw, style, offsets, parse_template(value))
        return Literal(span, value, raw, style, offsets)

    def _offsets(self, raw: str, style: str, start: int, end: int) -> range | tuple[int, ...] | None:
        """Offsets into ``src`` of each character of ``raw`` (see ``ScalarValue.offsets``)."""
        n = len(raw)
        width = end - start
        # A one-line plain scalar is its source text; a quoted one is too, minus the quotes,
        # unless it used escapes (then the lengths differ and we give up on exact offsets).
        if style == "" and width == n and "\n" not in raw:
            return range(start, end)
        if style in ("'", '"') and width == n + 2 and "\n" not in raw:
            text = self.src.text
            if text[start + 1 : end - 1] == raw:
                return range(start + 1, end - 1)
        if style == "|":
            return self._block_offsets(raw, start)
        return None

    def _block_offsets(self, raw: str, start: int) -> tuple[int, ...] | None:
        src = self.src
        text = src.text
        line = src.line_index(start) + 1  # first content line follows the header
        out: list[int] = []
        indent: int | None = None
        for value_line in raw.split("\n"):
            if line >= len(src.line_starts):
                break
            ls = src.line_starts[line]
            le = src.line_end(line)
            if indent is None and value_line:
                body = text[ls:le]
                indent = body.find(value_line)
                if indent < 0:
                    return None
            col = ls + (indent or 0)
            if text[col : col + len(value_line)] != value_line:
                return None
            out.extend(range(col, col + len(value_line)))
            out.append(le)  # the newline
            line += 1
        return tuple(out[: len(raw)]) if len(out) >= len(raw) else None

    def build(self, pure: bool = False) -> Value | None:
        """The value tree of the text, built from the parser's events: each scalar, alias and
        closed collection becomes a node, attached to the collection open around it."""
        stack: list[_Frame] = []
        root: Value | None = None
        documents = 0
        get_event = _make_parser(self.src.text, pure).get_event
        try:
            return self._events(get_event, stack, root, documents)
        except ValueError as exc:  # the scanner's chr() on an escape past U+10FFFF is no syntax error of its own
            if "chr()" not in str(exc):
                raise
            raise _EscapeError(self.src.text) from None

    def _events(self, get_event: Any, stack: list[_Frame], root: Value | None, documents: int) -> Value | None:
        short_scalar = self._short_scalar
        while True:
            ev = get_event()
            if ev is None:
                break
            cls = ev.__class__
            if cls is ScalarEvent:
                fr = stack[-1] if stack else None
                node = short_scalar(ev, fr is not None and fr.is_map and fr.pending_key is None)
            elif cls is MappingStartEvent or cls is SequenceStartEvent:
                stack.append(self._frame(ev, cls is MappingStartEvent, len(stack) + 1 + self.depth))
                continue
            elif cls is MappingEndEvent or cls is SequenceEndEvent:
                node = self._collection(stack.pop(), ev)
            elif cls is AliasEvent:
                node = self._alias(ev)
            elif cls is DocumentStartEvent:
                documents += 1
                if documents > 1:
                    self._second_document(ev)
                continue
            else:
                continue
            if not stack:
                root = node
                continue
            fr = stack[-1]  # attach the node: a list item, a mapping's key, or the value of its key
            if not fr.is_map:
                fr.items.append(node)
            elif fr.pending_key is None:
                fr.pending_key = self._check_key(fr, node, ev.tag if cls is ScalarEvent else None)
            else:
                fr.items.append(Entry(fr.pending_key, node))
                fr.pending_key = None
        return root

    def _short_scalar(self, ev: Any, is_key: bool) -> Value:
        """The node of a scalar event. The hot path, one short plain or quoted scalar without tag,
        anchor or island, is built here directly (a 500-task workflow holds tens of thousands of
        them); every other scalar goes through :meth:`scalar`."""
        raw = ev.value
        if ev.ctag is not None or ev.anchor is not None or len(raw) >= 4096 or "\n" in raw:
            return self.scalar(ev, is_key)
        style = ev.style
        start = ev.start_mark.index
        end = ev.end_mark.index
        n = len(raw)
        if not style and ev.implicit[0]:
            value = resolve_plain(raw)
            if value.__class__ is float or (value.__class__ is str and "${{" in raw):
                return self.scalar(ev, is_key)
            return Literal(
                self.new_span(Span, (start, end)), value, raw, "", range(start, end) if end - start == n else None
            )
        if (style == '"' or style == "'") and not ("${{" in raw and not is_key and has_island(raw)):
            text = self.src.text
            offsets = range(start + 1, end - 1) if end - start == n + 2 and text[start + 1 : end - 1] == raw else None
            return Literal(self.new_span(Span, (start, end)), raw, raw, style, offsets)
        return self.scalar(ev, is_key)

    def _frame(self, ev: Any, is_map: bool, depth: int) -> _Frame:
        """The frame a mapping or sequence opens (NIKA-YAML-009 past the nesting cap)."""
        start = ev.start_mark.index
        if depth > MAX_DEPTH:
            self.flag(
                "NIKA-YAML-009",
                Span(start, start + 1),
                f"nesting reaches level {depth}, over the cap of {MAX_DEPTH}",
                "Flatten the structure or move the data into a file read at run time.",
            )
            raise _Stop
        if ev.anchor is not None or ev.tag is not None:
            self.check_node_meta(ev.anchor, ev.tag, Span(start, ev.end_mark.index))
        return _Frame(is_map, start, ev.tag, ev.anchor, bool(ev.flow_style), depth)

    def _collection(self, fr: _Frame, ev: Any) -> Value:
        """The mapping or sequence a frame closes into; a block one ends at its last item."""
        end = ev.end_mark.index
        items = fr.items
        if items and not fr.flow:
            last = items[-1]
            end = last.value.span.end if fr.is_map else last.span.end
        span = self.new_span(Span, (fr.start, max(end, fr.start)))
        return MapValue(span, tuple(items), fr.flow) if fr.is_map else ListValue(span, tuple(items), fr.flow)

    def _alias(self, ev: Any) -> Value:
        """An alias is refused (NIKA-YAML-002) and stands as an opaque placeholder."""
        span = Span(ev.start_mark.index, ev.end_mark.index)
        self.flag(
            "NIKA-YAML-002",
            span,
            f"alias `*{ev.anchor}` is not allowed in a Nika workflow",
            "Write the value out in full instead of referring to an anchor.",
        )
        # An opaque placeholder: the alias is already refused, nothing else should trip on it.
        return Literal(span, f"*{ev.anchor}", f"*{ev.anchor}", "*", None)

    def _second_document(self, ev: Any) -> None:
        """A second ``---`` document stops the build (NIKA-PARSE-001)."""
        at = ev.start_mark.index
        self.flag(
            "NIKA-PARSE-001",
            Span(at, at + 3),
            "the file holds more than one YAML document",
            "Keep one workflow per file: remove the `---` separator and what follows it.",
        )
        raise _Stop

    def _check_key(self, fr: _Frame, key: Value, tag: str | None) -> ScalarValue:
        """The profile's verdict on one mapping key; a collection key is refused and stands in
        the tree as a null key at its span (no lookup can reach it)."""
        if not isinstance(key, ScalarValue):
            self.flag(
                "NIKA-YAML-007",
                key.span,
                "a mapping key must be a string, not a collection",
                "Use a plain string as the key.",
            )
            return Literal(key.span, None)
        if key.style == "" and key.raw == "<<" and tag is None:
            self.flag(
                "NIKA-YAML-003",
                key.span,
                "merge keys (`<<`) are not allowed in a Nika workflow",
                "Write the merged fields out explicitly in this mapping.",
            )
            return key
        if not isinstance(key.value, str):
            self.flag(
                "NIKA-YAML-007",
                key.span,
                f"the key `{clip(key.raw)}` resolves to a non-string value",
                f'Quote it (`"{clip(key.raw)}"`) so it is read as a string.',
            )
            return key
        seen = fr.seen
        assert seen is not None
        first = seen.get(key.value)
        if first is not None:
            self.duplicates.append((key, first))
            self.flag(
                "NIKA-YAML-004",
                key.span,
                f"duplicate key `{clip(key.value)}` in this mapping",
                "Remove one of the two entries; YAML would silently keep only the last.",
                related=(Label(first.span, f"`{clip(key.value)}` first defined here"),),
            )
        else:
            seen[key.value] = key
        return key


class _Stop(Exception):
    """Raised by the builder when a cap stops work early."""


def decode_source(data: bytes, path: str) -> tuple[SourceText, list[Diagnostic]]:
    """Decode bytes as UTF-8; invalid bytes become U+FFFD (one each) and one NIKA-PARSE-001 finding.

    Every replacement character stands for exactly one byte of the file, and the source records
    where they are, so byte offsets in reports still point into the file as it was given.
    """
    try:
        return SourceText(data.decode("utf-8"), path), []
    except UnicodeDecodeError as exc:
        escaped = data.decode("utf-8", errors="surrogateescape")
        repaired = tuple(m.start() for m in _ESCAPED_RE.finditer(escaped))
        text = _ESCAPED_RE.sub("\ufffd", escaped)
        src = SourceText(text, path, repaired, bytes(ord(escaped[i]) - 0xDC00 for i in repaired))
        at = repaired[0]
        d = report(
            "NIKA-PARSE-001",
            Span(at, at + 1),
            f"the file is not valid UTF-8 (byte 0x{data[exc.start]:02x} at byte offset {exc.start})",
            "Save the workflow as UTF-8 text.",
        )
        return src, [d]


_ESCAPED_RE = re.compile("[\udc80-\udcff]")


def _lone_surrogate(text: str) -> Diagnostic | None:
    """NIKA-PARSE-001 at the first lone UTF-16 surrogate (text that came from a str, not from bytes)."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as exc:
        at = exc.start
        return report(
            "NIKA-PARSE-001",
            Span(at, at + 1),
            f"the text holds a lone surrogate code point (U+{ord(text[at]):04X}), which is not a character",
            "Delete it, or type the intended character again so it is stored whole.",
        )
    return None


def oversize(size: int | None) -> Diagnostic:
    """NIKA-YAML-010 for a document over the cap (``size`` is None when reading stopped early)."""
    what = f"is {size} bytes, " if size is not None else "is "
    return report(
        "NIKA-YAML-010",
        Span(0, 0),
        f"the document {what}over the 1 MiB ({MAX_DOCUMENT_BYTES}-byte) cap",
        "Split the workflow, or move large data into files read at run time.",
    )


def parse_yaml(src: SourceText) -> ParsedYaml:
    """Judge the YAML profile and build the node tree for one document."""
    text = src.text
    diags: list[Diagnostic] = []
    size = len(text) if text.isascii() else len(text.encode("utf-8", "surrogatepass"))
    if size > MAX_DOCUMENT_BYTES:
        return ParsedYaml(None, (oversize(size),), True)
    if size != len(text) and (bad := _lone_surrogate(text)) is not None:
        return ParsedYaml(None, (bad,), True)
    if text.startswith("\ufeff"):
        diags.append(
            report(
                "NIKA-YAML-011",
                Span(0, 1),
                "the file starts with a byte order mark",
                "Save the file as UTF-8 without a BOM.",
            )
        )
    if not text.isascii() and not unicodedata.is_normalized("NFC", text):
        at = _first_non_nfc(text)
        diags.append(
            report(
                "NIKA-YAML-011",
                Span(at, at + 1),
                "the text is not in Unicode normal form C (NFC)",
                "Normalize the file to NFC (most editors can; `uconv -x any-nfc` does too).",
            )
        )
    b = _Builder(src)
    try:
        root = b.build()
    except _Stop:
        return ParsedYaml(None, tuple(diags + b.diags), True)
    except YAMLError as exc:  # the parser's syntax and reader errors; anything else is a bug (NIKA-IMPL-001)
        confirmed = _confirm_syntax_error(src, exc)
        if isinstance(confirmed, ParsedYaml):
            return ParsedYaml(
                confirmed.root, tuple(diags) + confirmed.diagnostics, confirmed.fatal, confirmed.duplicates
            )
        diags.extend(b.diags)
        diags.append(_syntax_error(src, confirmed))
        return ParsedYaml(None, tuple(diags), True)
    return ParsedYaml(root, tuple(diags + b.diags), False, tuple(b.duplicates))


def parse_piece(text: str, anchor: Anchor | None, depth: int = 0) -> ParsedYaml | None:
    """The value tree of ``text`` (a piece of a document whose root sits ``depth`` levels deep
    in it, or a whole one) when the YAML layer has nothing at all to report on it, else
    ``None``. Spans are offsets into ``text``, kept relative to ``anchor`` when one is given.
    The whole-text checks (size, BOM, NFC, surrogates, directives) are the caller's."""
    src = SourceText(text)
    b = _Builder(src, anchor, depth)
    try:
        root = b.build()
    except (_Stop, YAMLError):
        # A text libyaml refuses but YAML 1.2 reads is read whole by the pure parser, whose
        # marks differ from libyaml's (an empty value sits at the next token): not a piece.
        return None
    if root is None or b.diags:
        return None
    return ParsedYaml(root, (), False)


def _confirm_syntax_error(src: SourceText, exc: Exception) -> ParsedYaml | Exception:
    """Re-judge a syntax error of the C parser with the pure-Python YAML 1.2 parser.

    libyaml scans YAML 1.1, which refuses some text YAML 1.2 allows: a plain scalar holding `:`
    inside a flow collection (`{ tool: nika:jq }`), an empty implicit key (`{ : x }`), NEL or
    LS/PS inside a scalar, a reserved directive. When the pure parser reads the document, the
    tree is built from its events (with the profile judged as usual). When it refuses too, the
    error reported is the pure parser's if it lies further on (the C parser stopped at something
    YAML 1.2 allows), else the C parser's. A ``\\u`` escape naming a surrogate is no character
    (the pure parser lets it through), so a tree holding one is refused at that escape.
    """
    b = _Builder(src)
    try:
        root = b.build(pure=True)
    except _Stop:
        return ParsedYaml(None, tuple(b.diags), True)
    except YAMLError as exc12:  # a bug elsewhere is NIKA-IMPL-001, not a syntax error
        return exc12 if _error_index(exc12) > _error_index(exc) else exc
    if root is not None and _holds_surrogate(root):
        m = _SURROGATE_ESCAPE_RE.search(src.text)
        return _Refusal("a `\\u` escape names a surrogate, which is not a character", m.start() if m else 0)
    return ParsedYaml(root, tuple(b.diags), False, tuple(b.duplicates))


def _error_index(exc: Exception) -> int:
    mark = getattr(exc, "problem_mark", None) or getattr(exc, "context_mark", None)
    index = getattr(mark, "index", None)
    return index if isinstance(index, int) else -1


_SURROGATE_RE = re.compile("[\ud800-\udfff]")
_SURROGATE_ESCAPE_RE = re.compile(r"\\u[dD][89a-fA-F][0-9a-fA-F]{2}")


class _Refusal(Exception):
    """A syntax error found after parsing, shaped like the parser's own (``problem``, ``problem_mark``)."""

    def __init__(self, problem: str, index: int) -> None:
        super().__init__(problem)
        self.problem = problem
        self.problem_mark = _Mark(index)


_BIG_ESCAPE_RE = re.compile(r"\\U([0-9a-fA-F]{8})")


class _EscapeError(YAMLError):
    """A ``\\U`` escape past U+10FFFF in a double-quoted scalar: it names no character. The
    scanner of either parser fails on it inside Python's ``chr()``; here it is the syntax error
    it is, at the escape (the same finding for ``nika check`` and the editor)."""

    def __init__(self, text: str) -> None:
        at = next((m.start() for m in _BIG_ESCAPE_RE.finditer(text) if int(m.group(1), 16) > 0x10FFFF), 0)
        problem = "a `\\U` escape names a code point above U+10FFFF, which is not a character"
        super().__init__(problem)
        self.problem = problem
        self.problem_mark = _Mark(at)


def _holds_surrogate(root: Value) -> bool:
    todo: list[Value] = [root]
    while todo:
        node = todo.pop()
        if isinstance(node, ScalarValue):
            if isinstance(node.value, str) and _SURROGATE_RE.search(node.value):
                return True
        elif isinstance(node, MapValue):
            for e in node.entries:
                todo.append(e.key)
                todo.append(e.value)
        elif isinstance(node, ListValue):
            todo.extend(node.items)
    return False


def _first_non_nfc(text: str) -> int:
    for i, ch in enumerate(text):
        if (
            i > 0
            and unicodedata.combining(ch)
            and unicodedata.normalize("NFC", text[i - 1 : i + 1]) != text[i - 1 : i + 1]
        ):
            return i - 1
    return 0


_MODELINE_RE = re.compile(r"^\s*(\$schema=|yaml-language-server:)", re.M)


def _syntax_error(src: SourceText, exc: Exception) -> Diagnostic:
    from checker.parse.errors import explain, explain_character

    mark = getattr(exc, "problem_mark", None) or getattr(exc, "context_mark", None)
    at = mark.index if mark is not None and mark.index is not None else 0
    reader = mark is None and isinstance(getattr(exc, "position", None), int)
    if reader:  # the reader's errors (control characters)
        at = _reader_offset(src.text, exc)
    at = max(0, min(at, len(src.text)))
    problem = str(getattr(exc, "problem", None) or exc).strip().splitlines()[0]
    span = Span(at, min(at + 1, len(src.text)))
    first = _first_content_line(src)
    line_text = src.line_text(first)
    if _MODELINE_RE.match(line_text):
        span = Span(src.line_starts[first], src.line_end(first))
        message = "this line is an editor schema modeline that lost its `# ` comment prefix"
        return report(
            "NIKA-PARSE-001", span, message, "Restore it as `# yaml-language-server: $schema=…`, or delete the line."
        )
    if _unquoted_island_in_flow(src, at):
        context = getattr(exc, "context", None)
        help = (
            "Quote the `${{ … }}` value: inside a `{ … }` flow mapping an unquoted `${{` opens a nested "
            'mapping (write `key: "${{ … }}"`).'
        )
        return report(
            "NIKA-PARSE-001", span, f"YAML syntax error: {problem}" + (f" ({context})" if context else ""), help
        )
    if reader:
        said = explain_character(src, at, problem)
    else:
        cmark = getattr(exc, "context_mark", None)
        cat = getattr(cmark, "index", None)
        said = explain(src, problem, getattr(exc, "context", None), at, cat if isinstance(cat, int) else None)
    size = len(src.text)
    related = tuple(  # every label inside the text, whatever the explanation computed
        Label(Span(min(lb.span.start, size), min(max(lb.span.end, lb.span.start), size)), lb.message)
        for lb in said.related
    )
    return report("NIKA-PARSE-001", span, f"YAML syntax error: {said.message}", said.help, related=related)


def _reader_offset(text: str, exc: Exception) -> int:
    """Where the reader refused a character. libyaml counts that position in UTF-8 bytes (the
    pure parser in characters), so on non-ASCII text the byte count is turned into characters,
    and the offset that holds the refused character wins."""
    position: int = exc.position  # type: ignore[attr-defined]
    char = getattr(exc, "character", None)
    if text.isascii() or not isinstance(char, int):
        return position
    chars = len(text.encode("utf-8", "surrogatepass")[:position].decode("utf-8", "ignore"))
    for at in (chars, position):
        if 0 <= at < len(text) and ord(text[at]) == char:
            return at
    return chars


def _first_content_line(src: SourceText) -> int:
    for i in range(len(src.line_starts)):
        s = src.line_text(i).strip()
        if s and not s.startswith("#"):
            return i
    return 0


def _unquoted_island_in_flow(src: SourceText, at: int) -> bool:
    line = src.line_index(at)
    lo = max(0, line - 1)
    text = "\n".join(src.line_text(i) for i in range(lo, line + 1))
    return "{" in text and re.search(r"[:,\[{]\s*\$\{\{", text) is not None
