"""YAML syntax errors in plain words: each common parser message gets its own one-sentence repair,
indentation mistakes name the column to use, and an unclosed quote or bracket points back at
where it opened (checker.parse.errors)."""

from __future__ import annotations

import pytest

from checker import compile_text
from checker.core.diagnostics import Diagnostic
from checker.parse.errors import GENERIC_HELP

WF = "nika: v1\nworkflow: {id: d}\npermits: { exec: true }\ntasks:\n"


def syntax_error(text: str) -> tuple[Diagnostic, list[tuple[int, int, str]]]:
    compiled = compile_text(text)
    [d] = [d for d in compiled.diagnostics if d.code == "NIKA-PARSE-001"]
    src = compiled.source
    labels = [(src.line_col(lb.span.start).line, src.line_col(lb.span.start).column, lb.message) for lb in d.related]
    return d, labels


def test_unterminated_double_quote_points_at_where_it_opened() -> None:
    text = WF + '  a:\n    with: { v: 1 }\n    exec: { command: ["./a.sh"] }\n    prompt: "abc\n'
    d, labels = syntax_error(text)
    assert "never closed" in d.message and "line 8, column 13" in d.message
    assert labels == [(8, 13, 'the `"` that opens the string')]
    assert 'matching `"`' in (d.help or "")


def test_unterminated_single_quote() -> None:
    d, labels = syntax_error("a:\n  b: 'it\n  c: 1\n")
    assert labels[0][:2] == (2, 6) and "`''`" in (d.help or "")


def test_a_quote_that_swallows_lines_is_pointed_at() -> None:
    # The quote opened on line 6 closes only at the first `"` of line 7; the parser stops there.
    text = WF + '  a:\n    exec: { command: ["./a.sh", "unterminated] }\n  b:\n    exec: { command: ["./b.sh"] }\n'
    _, labels = syntax_error(text)
    assert (6, 33, 'this `"` string runs on to line 8: is its closing `"` missing?') in labels
    assert (6, 22, "the `[` that opens the list") in labels


@pytest.mark.parametrize(
    ("text", "message", "help"),
    [
        # deeper than its siblings after a complete value: the sibling's column
        (
            WF + '  a:\n    exec: { command: ["./a.sh"] }\n     with: { v: 1 }\n',
            "`with:` at column 6 is indented deeper than `exec:` above it (column 5)",
            "Indent `with:` to column 5 (like `exec:` on line 6).",
        ),
        # between two levels: both columns, the nearer first
        (
            WF + '  a:\n    exec: { command: ["./a.sh"] }\n   with: { v: 1 }\n',
            "`with:` at column 4 is indented between the columns of the keys above it (3 and 5)",
            "Indent `with:` to column 5 to keep it inside `a` (like `exec:` on line 6) "
            "or to column 3 (like `a:` on line 5).",
        ),
        # less than its siblings
        (
            "a:\n  b: 1\n c: 2\n",
            "`c:` at column 2 is indented between the columns of the keys above it (1 and 3)",
            "Indent `c:` to column 3 to keep it inside `a` (like `b:` on line 2) or to column 1 (like `a:` on line 1).",
        ),
        # deeper under a plain value: YAML reads the key as more text of that value
        (
            "a:\n  b: 1\n   c: 2\n",
            "`c:` is indented deeper (column 4) than `b:` on line 2 (column 3)",
            "Align `c:` with `b:` at column 3",
        ),
        # a key among list items, inside a list item
        (
            "tasks:\n  - id: a\n    exec: x\n   with: 1\n",
            "`with:` at column 4 is indented between",
            "to column 5 to keep it in the list item of line 2 (like `exec:` on line 3)",
        ),
    ],
)
def test_indentation_mistakes_name_the_column(text: str, message: str, help: str) -> None:
    d, _ = syntax_error(text)
    assert message in d.message
    assert help in (d.help or "")
    assert "did not find expected key" not in d.message and "while parsing" not in d.message


# One input per common parser message; each gets its own repair, never the generic one.
COMMON = {
    "unclosed flow list": ("a: [1, 2\nb: 3\n", "Close the `[` with `]`"),
    "unclosed flow mapping": ("a: {x: 1\nb: 3\n", "Close the `{` with `}`"),
    "colon in a plain value": ("a: b: c\n", "Quote the value"),
    "tab indentation": ("a:\n\tb: 1\n", "spaces, not tabs"),
    "list item among keys": ("a: 1\n- b\n", "Indent the list under the key"),
    "anchor without a name": ("a: &\n", "`&` is text"),
    "text after the document": ("---\na: 1\n...\n%YAML 1.1\n", "one YAML document"),
    "open collection at the end": ("a: [1,\n", "Close it with `]` or `}`"),
    "line without a colon": ("a: 1\nb\nc: 2\n", "Add `: ` after the key"),
    "backtick": ("a: `x`\n", "quotes"),
    "at sign": ("a: @x\n", "quotes"),
    "unknown escape": ('a: "\\q"\n', "Write `\\\\` for a backslash"),
    "short hex escape": ('a: "\\xZZ"\n', "hex digits"),
    "text after a quoted value": ('a: "x" y\n', "Quote the whole value"),
    "key among list items": ("a:\n  - x\n  b: 1\n", "Start it with `- `"),
    "extra closing brace": ("a: {b: 1}}\n", "Delete the extra `}`"),
    "list item on the key's line": ("a: - b\n", "on a line of its own"),
    "block scalar indicator": ("a: |x\n  t\n", "next line"),
    "malformed tag": ("a: !<x y\n", "tag"),
    "control character": ('a: "x\x07"\n', "escape `\\x07`"),
    "surrogate escape": ('a: "\\ud83d"\n', "whole code point"),
}


@pytest.mark.parametrize("name", list(COMMON))
def test_each_common_parser_message_gets_a_specific_repair(name: str) -> None:
    text, repair = COMMON[name]
    d, _ = syntax_error(text)
    assert d.help != GENERIC_HELP
    assert repair in (d.help or ""), d.help
    assert d.help and d.help.count(". ") == 0  # one sentence


def test_control_character_names_it_and_keeps_its_position() -> None:
    text = WF + '  a:\n    exec: { command: ["./a.sh"] }\n    with: { v: "ab\x1bcd" }\n'
    compiled = compile_text(text)
    [d] = compiled.diagnostics
    assert compiled.source.line_col(d.span.start) == compiled.source.line_col(text.index("\x1b"))
    assert "U+001B (escape)" in d.message


def test_an_escape_past_the_unicode_range_is_a_syntax_error_not_a_crash() -> None:
    """`"\\U00110000"` names no character: YAML refuses it, and the refusal is NIKA-PARSE-001 at the
    escape (the scanner fails inside `chr()`; that is no internal error of the checker)."""
    from checker import compile_text

    text = 'nika: v1\nworkflow: { id: y }\ntasks:\n  t:\n    infer: { model: mock/echo, prompt: "\\U00110000" }\n'
    found = compile_text(text, "y.nika.yaml").diagnostics
    assert [d.code for d in found] == ["NIKA-PARSE-001"]
    at = text.index("\\U00110000")
    assert at <= found[0].span.start < at + len("\\U00110000")  # on the escape
    ok = text.replace("\\U00110000", "\\U0010FFFF")
    assert [d.code for d in compile_text(ok, "y.nika.yaml").diagnostics if d.is_error] == []
