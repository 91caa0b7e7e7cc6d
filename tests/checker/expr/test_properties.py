"""Property tests: the parsers fail only through ExprError, and offsets always stay in range."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from checker.expr import (
    ExprError,
    Island,
    has_island,
    legacy_mustache_spans,
    parse_expression,
    parse_template,
    references,
    walk,
)

# a small alphabet biased towards characters that matter to the grammar
_ALPHABET = st.sampled_from(
    [*"abcxyz_019 .,()[]{}!?:=<>&|'\"\\$-+*/%\n\t", "${{", "}}", "{{", "==", "&&", "||", "in", "é"]
)
_CEL_ISH = st.lists(_ALPHABET, max_size=40).map("".join)
_TOKENS = st.sampled_from(
    [
        "inputs.x",
        "with.a[0]",
        "tasks.t.status",
        "size(",
        "has(",
        ".size()",
        ".contains('a')",
        "'s'",
        '"d"',
        "1",
        "-2",
        "3.5",
        "true",
        "null",
        "[",
        "]",
        "(",
        ")",
        ",",
        " == ",
        " < ",
        " in ",
        " && ",
        " || ",
        "!",
        " ? ",
        " : ",
    ]
)
_TOKEN_SOUP = st.lists(_TOKENS, max_size=25).map("".join)


def _check_expr(text: str) -> None:
    try:
        node = parse_expression(text)
    except ExprError as err:
        assert 0 <= err.start <= err.end <= len(text)
        assert err.code == "NIKA-VAR-005"
        assert err.message
        return
    for sub in walk(node):
        assert 0 <= sub.start <= sub.end <= len(text)
    for ref in references(node):
        assert 0 <= ref.start <= ref.end <= len(text)


@settings(max_examples=200, deadline=None)  # generation dominates; 200 per parser entry
@given(st.text(max_size=60))
def test_parse_expression_on_arbitrary_text(text: str) -> None:
    _check_expr(text)


@settings(max_examples=200, deadline=None)  # generation dominates; 200 per parser entry
@given(_CEL_ISH)
def test_parse_expression_on_grammar_characters(text: str) -> None:
    _check_expr(text)


@settings(max_examples=200, deadline=None)  # generation dominates; 200 per parser entry
@given(_TOKEN_SOUP)
def test_parse_expression_on_token_soup(text: str) -> None:
    _check_expr(text)


def _check_template(value: str) -> None:
    t = parse_template(value)
    for err in t.errors:
        assert 0 <= err.start <= err.end <= len(value)
        assert err.code in ("NIKA-VAR-005", "NIKA-VAR-008")
    last_end = 0
    for part in t.parts:
        assert part != ""
        if isinstance(part, Island):
            assert last_end <= part.start < part.expr_start <= part.expr_end < part.end <= len(value)
            assert value[part.start : part.expr_start] == "${{"
            assert value[part.expr_end : part.end] == "}}"
            assert (part.expr is None) != (part.error is None)
            last_end = part.end
    assert has_island(value) == (bool(t.islands) or any(e.code == "NIKA-VAR-008" for e in t.errors))
    for start, end in legacy_mustache_spans(value):
        assert value[start : start + 2] == "{{" and value[end - 2 : end] == "}}"


@settings(max_examples=200, deadline=None)  # generation dominates; 200 per parser entry
@given(st.text(max_size=80))
def test_parse_template_on_arbitrary_text(value: str) -> None:
    _check_template(value)


@settings(max_examples=200, deadline=None)  # generation dominates; 200 per parser entry
@given(st.lists(st.one_of(_ALPHABET, _TOKENS), max_size=40).map("".join))
def test_parse_template_on_grammar_characters(value: str) -> None:
    _check_template(value)


@given(st.text(alphabet="ab \\", max_size=12), st.integers(min_value=0, max_value=7))
def test_escaping_rule_round_trip(prefix: str, run: int) -> None:
    """A run of `run` backslashes before `${{ x }}` renders `run // 2` backslashes and is live
    exactly when `run` is even."""
    prefix = prefix.rstrip("\\")
    value = prefix + "\\" * run + "${{ x }}"
    t = parse_template(value)
    assert t.errors == ()
    rendered = "".join(p if isinstance(p, str) else "<x>" for p in t.parts)
    if run % 2 == 0:
        assert rendered == prefix + "\\" * (run // 2) + "<x>"
    else:
        assert rendered == prefix + "\\" * (run // 2) + "${{ x }}"
