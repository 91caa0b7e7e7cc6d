"""Template splitting: islands, the backslash-run escaping rule, unclosed openers, legacy forms."""

from __future__ import annotations

import pytest

from checker.expr import (
    Ident,
    Island,
    Member,
    has_island,
    legacy_mustache_spans,
    parse_template,
)

BS = "\\"


def shape(value: str) -> list[str]:
    """Parts as text: literals as-is, islands as ``<inner text stripped>``."""
    return [p if isinstance(p, str) else f"<{p.text.strip()}>" for p in parse_template(value).parts]


def test_plain_text_is_one_literal_part() -> None:
    t = parse_template("just text")
    assert t.parts == ("just text",)
    assert t.errors == ()
    assert t.islands == ()
    assert not t.is_single_island


def test_empty_value() -> None:
    t = parse_template("")
    assert t.parts == ()
    assert not t.is_single_island


def test_island_offsets_are_relative_to_the_value() -> None:
    value = "Hi ${{ inputs.name }}!"
    t = parse_template(value)
    assert len(t.islands) == 1
    isl = t.islands[0]
    assert (isl.start, isl.end) == (3, 21)
    assert value[isl.start : isl.end] == "${{ inputs.name }}"
    assert value[isl.expr_start : isl.expr_end] == isl.text == " inputs.name "
    assert isl.expr == Member(Ident("inputs", 1, 7), "name", 1, 12)
    assert value[isl.expr_start + isl.expr.start : isl.expr_start + isl.expr.end] == "inputs.name"
    assert isl.error is None
    assert t.parts == ("Hi ", isl, "!")


@pytest.mark.parametrize(
    ("value", "parts"),
    [
        # zero backslashes: live
        ("${{ x }}", ["<x>"]),
        # one: escaped, the backslash is consumed
        (BS + "${{ x }}", ["${{ x }}"]),
        # two: live, the pair renders as one backslash
        (BS * 2 + "${{ x }}", [BS, "<x>"]),
        # three: escaped, one pair stays as one backslash
        (BS * 3 + "${{ x }}", [BS + "${{ x }}"]),
        # four: live, two pairs
        (BS * 4 + "${{ x }}", [BS * 2, "<x>"]),
        # five: escaped, two pairs
        (BS * 5 + "${{ x }}", [BS * 2 + "${{ x }}"]),
        # backslashes not directly before `${{` are ordinary characters
        ("a" + BS * 2 + "b ${{ x }}", ["a" + BS * 2 + "b ", "<x>"]),
        (BS + " ${{ x }}", [BS + " ", "<x>"]),
        ("${{ x }}" + BS, ["<x>", BS]),
        ("$" + BS + "{{ x }}", ["$" + BS + "{{ x }}"]),
        # an escaped opener next to a live one
        (BS + "${{ a }} and ${{ b }}", ["${{ a }} and ", "<b>"]),
        (BS + "${{" + BS + "${{", ["${{${{"]),
        ("${{ a }}${{ b }}", ["<a>", "<b>"]),
    ],
)
def test_backslash_runs(value: str, parts: list[str]) -> None:
    t = parse_template(value)
    assert t.errors == ()
    assert shape(value) == parts


def test_spec_examples_of_escaping() -> None:
    # 04 §Escaping: \${{ x }} -> literal; \\${{ x }} -> one \ + island; \\\${{ x }} -> \ + literal
    assert parse_template(BS + "${{ inputs.x }}").parts == ("${{ inputs.x }}",)
    assert not has_island(BS + "${{ inputs.x }}")
    assert has_island(BS * 2 + "${{ inputs.x }}")
    assert not has_island(BS * 3 + "${{ inputs.x }}")


def test_escaped_unclosed_opener_is_not_an_error() -> None:
    t = parse_template("cost: " + BS + "${{ 5")
    assert t.errors == ()
    assert t.parts == ("cost: ${{ 5",)


def test_unclosed_opener() -> None:
    value = "Research ${{ const.topic"
    t = parse_template(value)
    assert len(t.errors) == 1
    err = t.errors[0]
    assert err.code == "NIKA-VAR-008"
    assert (err.start, err.end) == (9, 12)
    assert value[err.start : err.end] == "${{"
    assert t.islands == ()
    assert has_island(value)


def test_unclosed_after_a_closed_island() -> None:
    value = "${{ a }} then ${{ b"
    t = parse_template(value)
    assert [e.code for e in t.errors] == ["NIKA-VAR-008"]
    assert t.errors[0].start == 14
    assert len(t.islands) == 1


def test_unclosed_after_an_even_run() -> None:
    t = parse_template(BS * 2 + "${{ x")
    assert [e.code for e in t.errors] == ["NIKA-VAR-008"]
    assert t.errors[0].start == 2


def test_close_inside_a_string_literal_does_not_end_the_island() -> None:
    value = "${{ with.s == '}}' }} tail"
    t = parse_template(value)
    assert t.errors == ()
    isl = t.islands[0]
    assert isl.text == " with.s == '}}' "
    assert value[isl.end :] == " tail"
    value2 = '${{ "a}}b" == with.x && \'}}\' != "}}" }}'
    t2 = parse_template(value2)
    assert t2.errors == ()
    assert t2.islands[0].end == len(value2)


def test_escaped_quote_inside_string_in_island() -> None:
    value = "${{ 'it\\'s }}' == x }}!"
    t = parse_template(value)
    assert t.errors == ()
    assert t.parts[-1] == "!"


def test_unbalanced_quote_falls_back_to_first_close() -> None:
    value = "${{ it's }} and ${{ y }}"
    t = parse_template(value)
    assert len(t.islands) == 2
    first = t.islands[0]
    assert first.expr is None and first.error is not None
    assert first.error.code == "NIKA-VAR-005"
    assert "never closed" in first.error.message
    # offsets of the island error are relative to the value
    assert value[first.error.start : first.error.end] == "'s "
    assert t.islands[1].expr == Ident("y", 1, 2)


def test_island_error_offsets_are_relative_to_the_value() -> None:
    value = "x ${{ a < b < c }} y"
    t = parse_template(value)
    assert len(t.errors) == 1
    err = t.errors[0]
    assert value[err.start : err.end] == "<"
    assert err.start == 12
    assert t.islands[0].error is err


@pytest.mark.parametrize("value", ["${{}}", "a ${{ }} b", "${{\n}}"])
def test_empty_island_underlines_the_whole_island(value: str) -> None:
    t = parse_template(value)
    assert len(t.errors) == 1
    err = t.errors[0]
    isl = t.islands[0]
    assert (err.start, err.end) == (isl.start, isl.end)
    assert err.code == "NIKA-VAR-005"


def test_several_errors_are_all_collected() -> None:
    t = parse_template("${{ a + 1 }} ${{ foo(x) }} ${{ b")
    assert [e.code for e in t.errors] == ["NIKA-VAR-005", "NIKA-VAR-005", "NIKA-VAR-008"]


@pytest.mark.parametrize(
    ("value", "single"),
    [
        ("${{ x }}", True),
        ("  ${{ x }}\n", True),
        ("${{ a + }}", True),
        ("a${{ x }}", False),
        ("${{ x }} ", True),
        ("${{ x }}${{ y }}", False),
        ("${{ x }} ${{ y }}", False),
        (BS + "${{ x }}", False),
        (BS * 2 + "${{ x }}", False),
        ("text", False),
        ("", False),
    ],
)
def test_is_single_island(value: str, single: bool) -> None:
    assert parse_template(value).is_single_island is single


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("", False),
        ("plain", False),
        ("$ {{ x }}", False),
        ("{{ x }}", False),
        ("${{ x }}", True),
        ("${{ x", True),
        (BS + "${{ x }}", False),
        (BS + "${{ a }} ${{ b }}", True),
    ],
)
def test_has_island(value: str, expected: bool) -> None:
    assert has_island(value) is expected


@pytest.mark.parametrize(
    ("value", "spans"),
    [
        ("Hello {{ name }}!", [(6, 16)]),
        ("{{a}} and {{ b }}", [(0, 5), (10, 17)]),
        ("${{ a }}", []),
        (BS + "${{ a }}", []),
        ("${{ '{{ x }}' }}", []),
        ("{{ not closed", []),
        ("plain", []),
        ("{{ a {{ b }}", [(5, 12)]),
        ("${{ a }} {{ b }}", [(9, 16)]),
    ],
)
def test_legacy_mustache_spans(value: str, spans: list[tuple[int, int]]) -> None:
    assert legacy_mustache_spans(value) == spans


def test_islands_are_immutable_and_templates_are_cached() -> None:
    t = parse_template("a ${{ x }}")
    isl = t.islands[0]
    assert isinstance(isl, Island)
    with pytest.raises(AttributeError):
        isl.start = 3  # type: ignore[misc]
    assert parse_template("a ${{ x }}") is t
