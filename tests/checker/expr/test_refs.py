"""Static analysis helpers: reference chains, status comparisons, the `when:` shape rule."""

from __future__ import annotations

import pytest

from checker.expr import (
    STATUS_VOCABULARY,
    Ref,
    is_boolean_shaped,
    parse_expression,
    references,
    status_comparisons,
)


def refs(text: str) -> list[tuple[str, tuple[object, ...]]]:
    return [(r.root, r.path) for r in references(parse_expression(text))]


def test_simple_chain_with_literal_index() -> None:
    text = "tasks.fetch.output.items[0]"
    (ref,) = references(parse_expression(text))
    assert ref == Ref("tasks", ("fetch", "output", "items", 0), 0, len(text), False)


def test_bare_identifier_is_a_reference() -> None:
    assert refs("item") == [("item", ())]
    assert refs("index > 2") == [("index", ())]


def test_string_index_is_a_static_step() -> None:
    assert refs("with.obj['key-with-dash'].x") == [("with", ("obj", "key-with-dash", "x"))]


def test_dynamic_index_ends_the_static_path_but_the_span_covers_the_chain() -> None:
    text = "with.pages[with.i].url"
    found = references(parse_expression(text))
    assert [(r.root, r.path) for r in found] == [("with", ("pages", None)), ("with", ("i",))]
    assert (found[0].start, found[0].end) == (0, len(text))
    assert text[found[1].start : found[1].end] == "with.i"


def test_non_int_literal_index_is_dynamic() -> None:
    assert refs("with.a[true].b") == [("with", ("a", None))]
    assert refs("with.a[1.5]") == [("with", ("a", None))]


def test_references_in_source_order_across_the_tree() -> None:
    text = "has(inputs.style) ? size(with.items) > const.min : [item.a, tasks.t.output].size() == 0"
    assert refs(text) == [
        ("inputs", ("style",)),
        ("with", ("items",)),
        ("const", ("min",)),
        ("item", ("a",)),
        ("tasks", ("t", "output")),
    ]


def test_method_calls_are_not_path_steps() -> None:
    assert refs("with.log.contains('x')") == [("with", ("log",))]
    assert refs("tasks.a.output.size() > 0") == [("tasks", ("a", "output"))]


def test_chains_not_rooted_at_an_identifier_are_not_references() -> None:
    assert refs("[1, 2][0]") == []
    assert refs("'abc'.size()") == []


def test_spans_point_at_the_chain() -> None:
    text = "  inputs.a == with.b.c "
    found = references(parse_expression(text))
    assert [text[r.start : r.end] for r in found] == ["inputs.a", "with.b.c"]


def test_in_has_marks_every_reference_inside_has() -> None:
    found = references(parse_expression("has(with.a[with.i].b) && with.c"))
    assert [(r.root, r.path, r.in_has) for r in found] == [
        ("with", ("a", None), True),
        ("with", ("i",), True),
        ("with", ("c",), False),
    ]


def test_size_argument_is_not_in_has() -> None:
    (ref,) = references(parse_expression("size(with.x) > 0"))
    assert not ref.in_has


# ---- status comparisons ----------------------------------------------------------------------


def statuses(text: str) -> list[tuple[str, object, str]]:
    return [
        (f"{r.root}.{'.'.join(map(str, r.path))}", lit, text[s:e])
        for r, lit, s, e in status_comparisons(parse_expression(text))
    ]


def test_status_equality_either_order() -> None:
    assert statuses("tasks.p.status == 'done'") == [("tasks.p.status", "done", "'done'")]
    assert statuses("'success' != tasks.p.status") == [("tasks.p.status", "success", "'success'")]


def test_status_in_list_yields_every_literal() -> None:
    text = "tasks.p.status in ['success', \"finished\", with.other]"
    assert statuses(text) == [
        ("tasks.p.status", "success", "'success'"),
        ("tasks.p.status", "finished", '"finished"'),
    ]


def test_status_comparisons_nested_anywhere() -> None:
    text = "x ? (tasks.a.status == 'failure' || tasks.b.status == 'failed') : !(tasks.c.status != 'ok')"
    found = statuses(text)
    assert [lit for _, lit, _ in found] == ["failure", "failed", "ok"]
    bad = [lit for _, lit, _ in found if lit not in STATUS_VOCABULARY]
    assert bad == ["failed", "ok"]


def test_not_status_comparisons() -> None:
    assert statuses("tasks.p.output == 'done'") == []
    assert statuses("tasks.p.status.x == 'done'") == []
    assert statuses("tasks.p.status == with.s") == []
    assert statuses("tasks.p.status < 'done'") == []
    assert statuses("'done' in tasks.p.status") == []


def test_status_comparisons_through_a_with_binding() -> None:
    # conformance deep/028: `with: { s: ${{ tasks.p.status }} }` then `when: ${{ with.s != 'done' }}`
    expr = parse_expression("with.s != 'done'")
    assert list(status_comparisons(expr)) == []
    found = list(status_comparisons(expr, lambda r: r.root == "with" and r.path == ("s",)))
    assert [(lit, s, e) for _, lit, s, e in found] == [("done", 10, 16)]


def test_non_string_literals_are_yielded_too() -> None:
    assert [lit for _, lit, _ in statuses("tasks.p.status == 1 || tasks.p.status != null")] == [1, None]


def test_vocabulary() -> None:
    assert frozenset({"success", "failure", "skipped", "cancelled"}) == STATUS_VOCABULARY


# ---- when: shape -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    "text",
    [
        "inputs.env == 'production'",
        "with.coverage > 80",
        "size(with.findings) > 0",
        "has(inputs.style) && inputs.style != 'none'",
        "item.kind == 'article'",
        "with.status in ['success', 'skipped']",
        "!with.flag",
        "with.a || with.b",
        "with.a && with.b",
        "has(with.x)",
        "with.log.contains('ERROR')",
        "with.url.startsWith('https')",
        "with.url.endsWith('.org')",
        "true",
        "false",
        "(with.a == 1)",
        "with.a ? with.b > 1 : false",
        "with.a ? (with.b ? true : with.c == 2) : !with.d",
    ],
)
def test_boolean_shaped(text: str) -> None:
    assert is_boolean_shaped(parse_expression(text))


@pytest.mark.parametrize(
    "text",
    [
        "inputs.threshold",
        "with.report",
        "'production'",
        "42",
        "1.5",
        "null",
        "[true]",
        "size(with.items)",
        "with.items.size()",
        "with.flags[0]",
        "(with.flag)",
        "with.a ? with.b : false",
        "with.a ? true : 'no'",
    ],
)
def test_not_boolean_shaped(text: str) -> None:
    assert not is_boolean_shaped(parse_expression(text))
