"""checker.core.display: bounded renderings of user values (huge integers, long strings, nested data)."""

from __future__ import annotations

import pytest

from checker.core.display import clip, int_digits, show_int, show_value


@pytest.mark.parametrize(
    ("exp", "delta"), [(0, 0), (1, -1), (1, 0), (2, -1), (17, 0), (18, -1), (18, 0), (300, -1), (5000, 0)]
)
def test_int_digits_matches_the_decimal_length(exp: int, delta: int) -> None:
    n = 10**exp + delta
    expected = exp + 1 if delta == 0 else max(exp, 1)
    assert int_digits(n) == expected
    assert int_digits(-n) == expected


def test_small_integers_are_shown_in_full() -> None:
    assert show_int(-123) == "-123"
    assert show_int(10**40, limit=80) == str(10**40)


def test_a_huge_integer_shows_its_leading_digits_and_its_length() -> None:
    n = sum(123456789 * 10 ** (9 * i) for i in range(1000))  # 9000 digits; str() of it would raise
    out = show_int(n)
    assert out.startswith("12345678912345") and out.endswith("(9000 digits)")
    assert len(out) <= 80
    assert show_int(-n).startswith("-1234")
    huge = 16**20000  # built without any string conversion
    assert show_value(huge).endswith(f"({int_digits(huge)} digits)")


def test_clip_keeps_short_text_and_bounds_long_text() -> None:
    assert clip("abc") == "abc"
    long = "x" * 10_000
    out = clip(long, 60)
    assert out.startswith("xxxx") and out.endswith("(10000 characters)") and len(out) <= 60


def test_show_value_is_bounded_for_nested_data() -> None:
    value = {"k": [10**5000, "y" * 1000, True, None, 1.5]} | {str(i): i for i in range(1000)}
    out = show_value(value)
    assert len(out) <= 80 and out.startswith("{k: [")
    assert show_value(True) == "true" and show_value(None) == "null" and show_value(2.5) == "2.5"
