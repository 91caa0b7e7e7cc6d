"""Parser: tree shapes, node spans, precedence, and the exact position of every error."""

from __future__ import annotations

import pytest

from checker.expr import (
    Binary,
    Call,
    ExprError,
    Ident,
    Index,
    ListLit,
    Literal,
    Member,
    MethodCall,
    Ternary,
    Unary,
    parse_expression,
    tokenize,
    walk,
)
from checker.expr.parser import MAX_DEPTH, MAX_NESTING


def test_reference_chain_tree_and_spans() -> None:
    text = "tasks.fetch.output.items[0]"
    node = parse_expression(text)
    assert node == Index(
        Member(Member(Member(Ident("tasks", 0, 5), "fetch", 0, 11), "output", 0, 18), "items", 0, 24),
        Literal(0, 25, 26),
        0,
        27,
    )


def test_member_name_is_last_token_of_span() -> None:
    text = "with . article"
    node = parse_expression(text)
    assert isinstance(node, Member)
    assert text[node.end - len(node.name) : node.end] == "article"


def test_every_span_lies_inside_the_text_and_nests() -> None:
    text = "  has(inputs.style) ? [with.a[0], size(x)] : !(a.b.contains('z') || c in ['d'])  "
    root = parse_expression(text)
    for node in walk(root):
        assert 0 <= node.start < node.end <= len(text)
        assert text[node.start] not in " \t"
        assert text[node.end - 1] not in " \t"


def test_precedence_postfix_then_not_then_relation_then_and_then_or_then_ternary() -> None:
    node = parse_expression("!a.b == c && d || e ? f : g")
    assert isinstance(node, Ternary)
    cond = node.cond
    assert isinstance(cond, Binary) and cond.op == "||"
    left = cond.left
    assert isinstance(left, Binary) and left.op == "&&"
    rel = left.left
    assert isinstance(rel, Binary) and rel.op == "=="
    assert isinstance(rel.left, Unary) and isinstance(rel.left.operand, Member)


def test_and_or_are_left_associative() -> None:
    node = parse_expression("a && b && c")
    assert isinstance(node, Binary) and isinstance(node.left, Binary)
    assert node.left.right == Ident("b", 5, 6)


def test_ternary_is_right_associative() -> None:
    node = parse_expression("a ? b : c ? d : e")
    assert isinstance(node, Ternary)
    assert isinstance(node.else_, Ternary)
    assert node.then == Ident("b", 4, 5)
    assert (node.start, node.end) == (0, 17)
    assert (node.else_.start, node.else_.end) == (8, 17)


def test_ternary_does_not_count_as_a_relation() -> None:
    node = parse_expression("a == b ? c == d : e != f")
    assert isinstance(node, Ternary)


def test_parentheses_allow_an_explicit_double_relation() -> None:
    node = parse_expression("(a == b) == c")
    assert isinstance(node, Binary) and isinstance(node.left, Binary)
    assert (node.start, node.end) == (0, 13)
    assert (node.left.start, node.left.end) == (1, 7)


def test_calls_and_methods() -> None:
    assert parse_expression("size(x)") == Call("size", (Ident("x", 5, 6),), 0, 7)
    assert parse_expression("has(x.y)") == Call("has", (Member(Ident("x", 4, 5), "y", 4, 7),), 0, 8)
    assert parse_expression("x.size()") == MethodCall(Ident("x", 0, 1), "size", (), 0, 8)
    node = parse_expression("x.startsWith('a')")
    assert node == MethodCall(Ident("x", 0, 1), "startsWith", (Literal("a", 13, 16),), 0, 17)


def test_field_named_like_a_function_is_plain_access() -> None:
    assert parse_expression("x.size") == Member(Ident("x", 0, 1), "size", 0, 6)
    assert parse_expression("size") == Ident("size", 0, 4)
    assert parse_expression("x.matches") == Member(Ident("x", 0, 1), "matches", 0, 9)


def test_list_and_literals() -> None:
    node = parse_expression("[1, 2.5, 'a', true, null]")
    assert isinstance(node, ListLit)
    assert [i.value for i in node.items if isinstance(i, Literal)] == [1, 2.5, "a", True, None]
    assert parse_expression("[]") == ListLit((), 0, 2)


def test_namespaces_that_are_cel_reserved_words_elsewhere_are_plain_identifiers() -> None:
    # `const` is reserved in full CEL but is a Nika namespace; only true/false/null/in are reserved here
    assert parse_expression("const.x") == Member(Ident("const", 0, 5), "x", 0, 7)


def test_tokens_carry_offsets() -> None:
    toks = tokenize("a >= 'b'")
    assert [(t.kind, t.start, t.end) for t in toks] == [
        ("IDENT", 0, 1),
        (">=", 2, 4),
        ("STRING", 5, 8),
        ("EOF", 8, 8),
    ]


def test_tokenize_raises_on_bad_character() -> None:
    with pytest.raises(ExprError) as info:
        tokenize("a + b")
    assert (info.value.start, info.value.end) == (2, 3)


# (text, offending text, start, end, a phrase the message must contain)
ERRORS = [
    ("a < b < c", "<", 6, 7, "split it with `&&`"),
    ("a == b == c", "==", 7, 9, "(a == b) == c"),
    ("x > 1 in y", "in", 6, 8, "chained comparison"),
    ("foo(x)", "foo", 0, 3, "only functions are `size(x)` and `has(x)`"),
    ("with.a.matches('x')", "matches", 7, 14, "regular expressions"),
    ("x.map(y, y)", "map", 2, 5, "nika:jq"),
    ("x.length()", "length", 2, 8, "`.size()`"),
    ("x.startswith('a')", "startswith", 2, 12, "`.startsWith()`"),
    ("contains(x, 'a')", "contains", 0, 8, "is a method"),
    ("x.has()", "has", 2, 5, "is a function"),
    ("size()", "size()", 0, 6, "exactly one argument"),
    ("has(a, b)", "has(a, b)", 0, 9, "exactly one argument"),
    ("x.size(1)", "size(1)", 2, 9, "takes no argument"),
    ("x.endsWith()", "endsWith()", 2, 12, "exactly one string argument"),
    ("size(x,)", ",", 6, 7, "trailing comma"),
    ("a + 1", "+", 2, 3, "arithmetic"),
    ("a - b", "-", 2, 3, "`-`"),
    ("n -1", "-", 2, 3, "subtraction"),
    ("a * 2", "*", 2, 3, "arithmetic"),
    ("inputs.x | json", "|", 9, 10, "no template filters"),
    ("a = b", "=", 2, 3, "`==`"),
    ("a & b", "&", 2, 3, "`&&`"),
    ("a and b", "and", 2, 5, "`&&`"),
    ("a or b", "or", 2, 4, "`||`"),
    ("{'a': 1}", "{", 0, 1, "map literals"),
    ("x.y }", "}", 4, 5, "unexpected `}`"),
    ("'abc", "'abc", 0, 4, "never closed"),
    ('"a\\qb"', "\\q", 2, 4, "not a recognised escape"),
    ("(a == b", "(", 0, 1, "never closed"),
    ("[1, 2", "[", 0, 1, "never closed"),
    ("x[0", "[", 1, 2, "never closed"),
    ("size(x", "(", 4, 5, "never closed"),
    ("a)", ")", 1, 2, "unmatched `)`"),
    ("a]", "]", 1, 2, "unmatched `]`"),
    ("[1, 2,]", ",", 5, 6, "trailing comma"),
    ("(a, b)", ",", 2, 3, "`[…]`"),
    ("a, b", ",", 1, 2, "list items"),
    ("a ? b", "?", 2, 3, "no `:` branch"),
    ("a ? b c", "c", 6, 7, "`:`"),
    ("a : b", ":", 2, 3, "without a `?`"),
    ("a b", "b", 2, 3, "end of the expression"),
    ("a &&", "&&", 2, 4, "stops after `&&`"),
    ("== b", "==", 0, 2, "put a value"),
    ("in x", "in", 0, 2, "needs a value on its left"),
    ("x.in", "in", 2, 4, "['in']"),
    ("x.null", "null", 2, 6, "reserved word"),
    ("x.0", "0", 2, 3, "[0]"),
    ("x.'a'", "'a'", 2, 5, "['key']"),
    ("x[]", "[]", 1, 3, "jq"),
    ("x..y", ".", 2, 3, "field name"),
    ("a // c", "/", 2, 3, "comments"),
    ("${{ a }}", "${{", 0, 3, "cannot be nested"),
    ("`a`", "`", 0, 1, "backticks"),
    ("inputs.café", "é", 10, 11, "unexpected character"),
    ("12345678901234567890", "12345678901234567890", 0, 20, "64 bits"),
    ("-a", "-", 0, 1, "`-`"),
]


@pytest.mark.parametrize(("text", "token", "start", "end", "phrase"), ERRORS, ids=[e[0] for e in ERRORS])
def test_error_position_and_message(text: str, token: str, start: int, end: int, phrase: str) -> None:
    with pytest.raises(ExprError) as info:
        parse_expression(text)
    err = info.value
    assert (err.start, err.end) == (start, end), err.message
    assert text[err.start : err.end] == token
    assert phrase in err.message
    assert err.code == "NIKA-VAR-005"
    assert ": " in err.message  # every message names the problem, then the repair


@pytest.mark.parametrize("text", ["", "   ", "\n\t"])
def test_empty_expression(text: str) -> None:
    with pytest.raises(ExprError) as info:
        parse_expression(text)
    assert "empty" in info.value.message
    assert (info.value.start, info.value.end) == (0, len(text))


def test_first_problem_in_the_text_wins() -> None:
    # the unknown function comes before the lexical problem at `+`
    with pytest.raises(ExprError) as info:
        parse_expression("foo(x) + 1")
    assert info.value.start == 0


def test_nesting_limit_is_an_expr_error() -> None:
    deep = "(" * (MAX_NESTING + 1) + "a" + ")" * (MAX_NESTING + 1)
    with pytest.raises(ExprError):
        parse_expression(deep)
    ok = "(" * MAX_NESTING + "a" + ")" * MAX_NESTING
    assert parse_expression(ok) == Ident("a", MAX_NESTING, MAX_NESTING + 1)


def test_depth_limit_covers_long_chains() -> None:
    with pytest.raises(ExprError):
        parse_expression(" && ".join(["a"] * (MAX_DEPTH + 5)))
    with pytest.raises(ExprError):
        parse_expression("!" * (MAX_DEPTH + 5) + "a")
    with pytest.raises(ExprError):
        parse_expression("a" + ".b" * (MAX_DEPTH + 5))
    parse_expression(" && ".join(["a"] * 50))


def test_expr_error_shifted_and_equality() -> None:
    err = ExprError("m", 1, 2)
    assert err.code == "NIKA-VAR-005"
    moved = err.shifted(10)
    assert (moved.start, moved.end, moved.code, moved.message) == (11, 12, "NIKA-VAR-005", "m")
    assert err == ExprError("m", 1, 2)
    assert str(err) == "m"
