"""Plain words and a one-sentence repair for each common YAML syntax error (NIKA-PARSE-001).

The YAML parsers (libyaml, and ruamel's pure-Python parser for YAML 1.2) report where they gave
up in their own vocabulary: "did not find expected key (while parsing a block mapping)" is, to
the person who typed it, a key indented one space too far. :func:`explain` turns the parser's
problem and context strings, with the positions it gives, into what happened in the user's
terms, a repair that names the column to use, and labels pointing back at where the trouble
started (the quote that never closed, the bracket still open).

Both parsers' wordings are matched; a message neither knows keeps the parser's own text.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable

from checker.core.diagnostics import Label
from checker.core.display import clip
from checker.core.records import record
from checker.core.source import SourceText, Span

__all__ = ["Explained", "explain"]

GENERIC_HELP = "Fix the YAML syntax at this position."
TAB_HELP = "YAML indentation must use spaces, not tabs."
_KEY_RE = re.compile(r"""(?:"[^"\n]*"|'[^'\n]*'|[^\s#:,\[\]{}][^:#\n]*?)(?=\s*:(?:\s|$))""")


@record
class Explained:
    """What a syntax error means: the message after ``YAML syntax error: ``, the repair, labels."""

    message: str
    help: str
    related: tuple[Label, ...] = ()


@record
class _Error:
    """The parser's report, normalized: its wording, where it stopped and where the construct began."""

    src: SourceText
    problem: str
    context: str
    at: int
    context_at: int | None

    @property
    def raw(self) -> str:
        return f"{self.problem} ({self.context})" if self.context else self.problem

    def column(self, offset: int) -> int:
        return self.src.line_col(offset).column

    def line(self, offset: int) -> int:
        return self.src.line_col(offset).line

    def char(self, offset: int) -> str:
        return self.src.text[offset] if 0 <= offset < len(self.src.text) else ""


def explain(src: SourceText, problem: str, context: str | None, at: int, context_at: int | None) -> Explained:
    """The plain-words form of one syntax error; ``at`` is where the parser stopped."""
    err = _Error(src, problem.strip(), (context or "").strip(), at, context_at)
    fallback = Explained(err.raw, TAB_HELP if "\t" in src.line_text(src.line_index(at)) else GENERIC_HELP)
    try:
        found = next((f for p, handler in _TABLE if p.search(err.raw) and (f := handler(err)) is not None), fallback)
        return _with_open_quote(err, found)
    except Exception:  # explaining must never cost the finding itself: the parser's words stay
        return fallback


# --- helpers ----------------------------------------------------------------------------------


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip(" "))


def _content(line: str) -> str:
    """The line without indentation and without a trailing comment-only remainder."""
    s = line.strip()
    return "" if s.startswith("#") else s


def _key_at(text: str) -> str | None:
    """The key a line (from its first non-blank character) starts with, if it is ``key:``."""
    m = _KEY_RE.match(text)
    return m.group(0).strip().strip("\"'") if m else None


def _line_start_col(err: _Error, offset: int) -> tuple[int, str, int]:
    """``(line index, line text, 0-based column)`` of ``offset``."""
    idx = err.src.line_index(offset)
    line = err.src.line_text(idx)
    return idx, line, offset - err.src.line_starts[idx]


def _starts_line(err: _Error, offset: int) -> bool:
    _idx, line, col = _line_start_col(err, offset)
    return not line[:col].strip(" -") and col < len(line)


def _parent_column(err: _Error, below: int, column: int) -> int | None:
    """0-based column of the nearest key above line ``below`` that is indented less than ``column``."""
    for idx in range(below - 1, -1, -1):
        line = err.src.line_text(idx)
        if _content(line) and _indent(line) < column:
            return _indent(line)
    return None


@record
class _Level:
    """A mapping open above an error line: its keys' 0-based column, one key and its line."""

    col: int
    key: str
    line: int
    item_line: int | None = None  # the line of the `- ` when the mapping is a list item


def _levels(err: _Error, below: int) -> list[_Level]:
    """The mappings open above line ``below``, innermost first.

    Walking up, each line indented less than every line seen so far opens an enclosing level.
    """
    out: list[_Level] = []
    least: int | None = None
    for idx in range(below - 1, -1, -1):
        line = err.src.line_text(idx)
        content = _content(line)
        if not content:
            continue
        ind = _indent(line)
        if least is not None and ind >= least:
            continue
        least = ind
        col, item = ind, False
        if content.startswith("- "):  # a list item's key starts after its dash
            col += 2 + _indent(content[2:])
            content = content[2:].lstrip(" ")
            item = True
        key = _key_at(content)
        if key is not None:
            if out and out[-1].col == col:  # the first key of the same mapping, maybe a list item
                if item:
                    out[-1] = _Level(out[-1].col, out[-1].key, out[-1].line, idx + 1)
            elif not out or col < out[-1].col:
                out.append(_Level(col, key, idx + 1, idx + 1 if item else None))
        if ind == 0:
            break
    return out


def _misaligned(err: _Error, idx: int, col: int, key: str | None, keys_col: int) -> Explained:
    """A key whose column matches none of the keys open above it: name the columns it could mean."""
    shown = f"`{key}:`" if key else "this line"
    levels = _levels(err, idx)
    deeper = [lv for lv in levels if lv.col > col]
    shallower = [lv for lv in levels if lv.col < col]
    options: list[str] = []
    if deeper:
        lv = deeper[-1]  # the nearest level deeper than the line
        parent = next((p.key for p in levels if p.col < lv.col), None)
        if lv.item_line is not None:
            inside = f" to keep it in the list item of line {lv.item_line}"
        else:
            inside = f" to keep it inside `{parent}`" if parent else ""
        options.append(f"to column {lv.col + 1}{inside} (like `{lv.key}:` on line {lv.line})")
    if shallower:
        lv = shallower[0]
        options.append(f"to column {lv.col + 1} (like `{lv.key}:` on line {lv.line})")
    if not options:
        options.append(f"to column {keys_col + 1}, the column of its sibling keys")
    if deeper and shallower:
        where = f"between the columns of the keys above it ({shallower[0].col + 1} and {deeper[-1].col + 1})"
    elif shallower:
        where = f"deeper than `{shallower[0].key}:` above it (column {shallower[0].col + 1}), which has a value already"
    else:
        where = f"where no key above it starts (column {keys_col + 1} expected)"
    return Explained(
        f"{shown} at column {col + 1} is indented {where}",
        f"Indent {shown} {' or '.join(options)}.",
    )


def _span(offset: int, length: int = 1) -> Span:
    return Span(offset, offset + length)


_CONTROL_NAMES = {
    0x00: "null",
    0x07: "bell",
    0x08: "backspace",
    0x0B: "vertical tab",
    0x0C: "form feed",
    0x1B: "escape",
    0x7F: "delete",
}


def _name(ch: str) -> str:
    """A human name of a character: its Unicode name, or the usual name of a control character."""
    try:
        return unicodedata.name(ch).lower()
    except ValueError:
        return _CONTROL_NAMES.get(ord(ch), "control character")


# --- unclosed things --------------------------------------------------------------------------


def _unclosed_quote(err: _Error) -> Explained | None:
    start = err.context_at
    if start is None:
        return None
    q = err.char(start)
    if q not in "\"'":
        return None
    where = f"line {err.line(start)}, column {err.column(start)}"
    escape = '`\\"`' if q == '"' else "`''`"
    return Explained(
        f"the quoted string opened at {where} is never closed",
        f"Close it with a matching `{q}` on the line where the text ends (a `{q}` inside it is written {escape}).",
        (Label(_span(start), f"the `{q}` that opens the string"),),
    )


def _unclosed_flow(err: _Error) -> Explained | None:
    start = err.context_at
    opener = err.char(start) if start is not None else ""
    if start is None or opener not in "[{":
        return None
    closer = "]" if opener == "[" else "}"
    what = "list" if opener == "[" else "mapping"
    where = f"line {err.line(start)}, column {err.column(start)}"
    if opener == "[":
        repair = "Close it with `]` and separate the items with `,`; quote an item that holds `:`, `#`, `[` or `]`."
    else:
        repair = "Close it with `}` and separate the entries with `,`; quote a value that holds `:`, `,`, `{` or `}`."
    found = err.char(err.at)
    if found == ":" and err.line(err.at) > err.line(start):
        repair = f"Close the `{opener}` with `{closer}` before the line ends; the next key cannot start inside it."
    return Explained(
        f"the flow {what} `{opener}` opened at {where} is not closed by `{closer}` where expected",
        repair,
        (Label(_span(start), f"the `{opener}` that opens the {what}"),),
    )


def _with_open_quote(err: _Error, found: Explained) -> Explained:
    """Add a label at the opening quote of a multi-line quoted string that ends where the parser gave up.

    A quote left open swallows text up to the next quote, often lines later, and the parser
    stops only there; the place to look is where the string opened.
    """
    if any("string" in label.message for label in found.related):
        return found
    scalar = _last_quoted_scalar(err.src, err.at)
    if scalar is None:
        return found
    start, end, q = scalar
    if err.line(end) == err.line(start) or err.line(end) != err.line(err.at):
        return found
    label = Label(_span(start), f"this `{q}` string runs on to line {err.line(end)}: is its closing `{q}` missing?")
    return Explained(found.message, found.help, (*found.related, label))


def _last_quoted_scalar(src: SourceText, at: int) -> tuple[int, int, str] | None:
    """``(start, end, quote)`` of the last quoted scalar the parser read before stopping at ``at``."""
    from ruamel.yaml.error import YAMLError

    from checker.parse.events import make_parser

    last: tuple[int, int, str] | None = None
    parser = make_parser(src.text)
    try:
        while (ev := parser.get_event()) is not None:
            style = getattr(ev, "style", None)
            if style in ('"', "'") and ev.end_mark.index <= at:
                last = (ev.start_mark.index, ev.end_mark.index, style)
    except YAMLError:
        pass
    return last


# --- indentation ------------------------------------------------------------------------------


def _block_mapping(err: _Error) -> Explained | None:
    """libyaml's "did not find expected key" / ruamel's "expected <block end>" in a block mapping."""
    idx, line, col = _line_start_col(err, err.at)
    if err.context_at is None:
        return None
    keys_col = err.context_at - err.src.line_starts[err.src.line_index(err.context_at)]
    token = line[col:]
    if _starts_line(err, err.at) and not line[:col].strip():
        if token.startswith("- ") or token == "-":
            return Explained(
                f"a `- ` list item at column {col + 1} stands among the keys of a mapping (column {keys_col + 1})",
                f"Indent the list under the key it belongs to (deeper than column {keys_col + 1}), "
                "or give the item a key of its own.",
            )
        return _misaligned(err, idx, col, _key_at(token), keys_col)
    # The stop is in the middle of a line: something follows a complete value.
    extra = token.split("#", 1)[0].strip() or token.strip()
    if extra[:1] in ("}", "]"):
        return Explained(
            f"`{extra[0]}` closes nothing: no flow collection is open here",
            f"Delete the extra `{extra[0]}`, or add the `{'{' if extra[0] == '}' else '['}` it was meant to close.",
        )
    return Explained(
        f"unexpected text `{clip(extra, 40)}` after the value on this line",
        'Quote the whole value (`key: "…"`), or move the extra text to a line of its own.',
    )


def _block_sequence(err: _Error) -> Explained | None:
    """libyaml's "did not find expected '-' indicator": a line among list items that is not an item."""
    idx, line, col = _line_start_col(err, err.at)
    if err.context_at is None:
        return None
    items_col = err.context_at - err.src.line_starts[err.src.line_index(err.context_at)]
    key = _key_at(line[col:])
    if col != items_col:
        return _misaligned(err, idx, col, key, items_col)
    shown = f"`{key}:`" if key else "this line"
    parent = _parent_column(err, idx, items_col)
    up = f", or move it to column {parent + 1} if it is a key of the list's parent" if parent is not None else ""
    return Explained(
        f"{shown} stands at the column of the list's `- ` items (column {items_col + 1}) but is not an item",
        f"Start it with `- ` to make it an item{up}.",
    )


def _mapping_value(err: _Error) -> Explained | None:
    """A `:` where no mapping can start: a key indented under a plain value, or `: ` inside a value."""
    idx, line, col = _line_start_col(err, err.at)
    before = line[:col]
    first = _indent(line)
    key = _key_at(line[first:])
    if key is not None and ":" not in before[first:].replace(key, "", 1).strip().rstrip(":"):
        prev = _previous_content_line(err, idx)
        if prev is not None and first > _indent(err.src.line_text(prev)):
            prev_line = err.src.line_text(prev)
            prev_col = _indent(prev_line)
            prev_content = prev_line[prev_col:]
            if prev_content.startswith("- "):
                prev_col += 2 + _indent(prev_content[2:])
                prev_content = prev_content[2:].lstrip(" ")
            sib = _key_at(prev_content)
            if sib is not None:
                return Explained(
                    f"`{key}:` is indented deeper (column {first + 1}) than `{sib}:` on line {prev + 1} "
                    f"(column {prev_col + 1}), so YAML reads it as more text of `{sib}`'s value",
                    f"Align `{key}:` with `{sib}:` at column {prev_col + 1}, or, if it belongs inside `{sib}`, "
                    f"move `{sib}`'s value onto lines of its own.",
                )
    return Explained(
        "a `: ` inside a plain (unquoted) value starts a mapping where none can start",
        'Quote the value (`key: "a: b"`) so `: ` is text, or put each key on a line of its own.',
    )


def _previous_content_line(err: _Error, idx: int) -> int | None:
    for i in range(idx - 1, -1, -1):
        if _content(err.src.line_text(i)):
            return i
    return None


def _simple_key(err: _Error) -> Explained | None:
    """libyaml's "could not find expected ':'": a line that is neither `key: value` nor a continuation."""
    start = err.context_at if err.context_at is not None else err.at
    idx = err.src.line_index(start)
    line = err.src.line_text(idx).strip()
    end = max(start + 1, err.src.line_end(idx))  # from where the entry starts to the end of its line
    return Explained(
        f"line {err.line(start)} (`{clip(line, 40)}`) is not a `key: value` entry",
        "Add `: ` after the key (`name: value`), or, if it continues the value above, indent it deeper "
        "than that value's key.",
        (Label(Span(start, end), "this line has no `: `"),) if err.context_at is not None else (),
    )


# --- characters and escapes -------------------------------------------------------------------


def _cannot_start(err: _Error) -> Explained | None:
    ch = err.char(err.at)
    if ch == "\t":
        return Explained("a tab character where YAML expects spaces or a value", TAB_HELP)
    if ch in "@`":
        what = "`@`" if ch == "@" else "a backtick"
        return Explained(f"{what} is reserved in YAML and cannot start a plain value", "Put the value in quotes.")
    if ch == "%":
        return Explained(
            "`%` at the start of a line begins a YAML directive",
            'Quote the value (`key: "%…"`), or delete the directive line.',
        )
    shown = f"`{ch}`" if ch.isprintable() and ch else f"U+{ord(ch):04X} ({_name(ch)})" if ch else "the end of the text"
    return Explained(f"{shown} cannot start a YAML value here", "Quote the value so YAML reads it as text.")


def _escape(err: _Error) -> Explained | None:
    m = re.search(r"\\(.)", err.src.text[err.at - 1 : err.at + 2]) if err.at > 0 else None
    if err.char(err.at) == "\\":
        m = re.match(r"\\(.)", err.src.text[err.at : err.at + 2])
    seq = f"`\\{m.group(1)}`" if m and m.group(1).isprintable() else "this backslash sequence"
    return Explained(
        f"{seq} is not an escape YAML knows in a double-quoted string",
        "Write `\\\\` for a backslash, or use single quotes, where `\\` is plain text (regexes, Windows paths).",
    )


def _hex_escape(err: _Error) -> Explained | None:
    return Explained(
        "a `\\x`, `\\u` or `\\U` escape without enough hexadecimal digits",
        "Give `\\x` 2, `\\u` 4 and `\\U` 8 hex digits, or write `\\\\` for a literal backslash.",
    )


def _surrogate(err: _Error) -> Explained | None:
    return Explained(
        "a `\\u` escape names a UTF-16 surrogate, which is not a character",
        "Write the character itself, or its whole code point as one `\\UXXXXXXXX` escape.",
    )


def _tab(err: _Error) -> Explained | None:
    return Explained("a tab character in the indentation", TAB_HELP)


def _anchor(err: _Error) -> Explained | None:
    sign = err.char(err.context_at) if err.context_at is not None else "&"
    sign = sign if sign in "&*" else "&"
    return Explained(
        f"`{sign}` starts a YAML {'alias' if sign == '*' else 'anchor'} and must be followed by a name",
        f'Quote the value if `{sign}` is text (`key: "{sign}…"`); workflows use no anchors or aliases.',
    )


# --- structure --------------------------------------------------------------------------------


def _node_content(err: _Error) -> Explained | None:
    ch = err.char(err.at)
    if not ch.strip():
        return Explained(
            "the text ends inside a `[ ]` or `{ }` collection that is still open",
            "Close it with `]` or `}`, and remove a trailing `,`.",
        )
    if ch in ",]}":
        return Explained(
            f"a value is missing before `{ch}`",
            'Remove the extra `,`, or write the missing value (an empty one is `null` or `""`).',
        )
    return Explained(
        "a value is missing here",
        'Write the missing value (an empty one is `null` or `""`), or close the collection that is still open.',
    )


def _sequence_entry(err: _Error) -> Explained | None:
    return Explained(
        "a `- ` list item cannot start on the line of its key or inside a value",
        "Put each `- ` item on a line of its own, indented under its key, or write the list as `[a, b]`.",
    )


def _flow_colon(err: _Error) -> Explained | None:
    return Explained(
        "a `:` inside a plain value of a `[ ]` or `{ }` collection",
        'Quote the value (`"a:b"`) so the `:` is text.',
    )


def _document(err: _Error) -> Explained | None:
    return Explained(
        "text after the end of the workflow document",
        "A workflow is one YAML document: delete what follows it, or the stray `...` or `%` line.",
    )


def _directive(err: _Error) -> Explained | None:
    return Explained(
        f"a YAML directive the workflow format does not use ({err.problem})",
        "Delete the `%` directive line; workflows are read as YAML 1.2.",
    )


def _tag(err: _Error) -> Explained | None:
    return Explained(
        f"a malformed YAML tag ({err.problem})",
        "Delete the `!` tag (workflows use none), or quote the value if `!` is text.",
    )


def _block_scalar(err: _Error) -> Explained | None:
    return Explained(
        "only `+`, `-` or an indentation digit may follow `|` or `>` on its line",
        "Start the text of the block on the next line, indented deeper than its key.",
    )


def _complex_key(err: _Error) -> Explained | None:
    return Explained(
        "`? ` starts a complex key, which workflows do not use",
        'Quote the key if it starts with `?` (`"?x": value`).',
    )


_Handler = Callable[[_Error], Explained | None]

# (pattern over "problem (context)", handler), tried in order: libyaml's wording and ruamel's.
_TABLE: tuple[tuple[re.Pattern[str], _Handler], ...] = tuple(
    (re.compile(p), h)
    for p, h in (
        (r"(unexpected end of stream|unexpected document indicator).*quoted scalar", _unclosed_quote),
        (r"(did not find expected|expected) ',' or '[\]}]'", _unclosed_flow),
        (r"(did not find expected key|expected <block end>.*).*while parsing a block mapping", _block_mapping),
        (
            r"(did not find expected '-' indicator|expected <block end>.*).*while parsing a block collection",
            _block_sequence,
        ),
        (r"mapping values are not allowed", _mapping_value),
        (r"could not find expected ':'", _simple_key),
        (r"(tab character|found character '\\t')", _tab),
        (r"cannot start any token", _cannot_start),
        (r"unknown escape character", _escape),
        (r"(hexdecimal|hexadecimal|escape sequence of)", _hex_escape),
        (r"escape names a surrogate", _surrogate),
        (r"alphabetic or numeric character.*(anchor|alias)", _anchor),
        (r"(did not find expected node content|expected the node content)", _node_content),
        (r"sequence entries are not allowed", _sequence_entry),
        (r"mapping keys are not allowed", _complex_key),
        (r"found unexpected ':'", _flow_colon),
        (r"<document start>", _document),
        (r"(%YAML|%TAG|directive|incompatible YAML document)", _directive),
        (r"(tag handle|tag URI|while parsing a tag|while scanning a tag|URI escaped)", _tag),
        (r"(comment or line break|block scalar)", _block_scalar),
    )
)


def explain_character(src: SourceText, at: int, reason: str) -> Explained:
    """The reader's refusal of a character (a control character, a non-character) at ``at``."""
    ch = src.text[at] if 0 <= at < len(src.text) else ""
    if not ch:
        return Explained(reason, GENERIC_HELP)
    code = f"U+{ord(ch):04X}"
    escape = f"\\x{ord(ch):02x}" if ord(ch) < 0x100 else f"\\u{ord(ch):04x}"
    return Explained(
        f"the control character {code} ({_name(ch)}) is not allowed in YAML text",
        f"Delete it, or write it as the escape `{escape}` inside a double-quoted string.",
    )
