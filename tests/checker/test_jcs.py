"""RFC 8785 (JCS): the byte encoding of the projection — numbers as ECMAScript writes them, keys
by UTF-16 code units, no whitespace, and idempotent."""

from __future__ import annotations

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from checker.core.jcs import NotJson, dumps, number


@pytest.mark.parametrize(
    ("value", "text"),
    [
        (0.0, "0"),
        (-0.0, "0"),
        (1.0, "1"),
        (100.0, "100"),
        (0.0002, "0.0002"),
        (1e-6, "0.000001"),
        (1e-7, "1e-7"),
        (1.5e-6, "0.0000015"),
        (1.2345e-7, "1.2345e-7"),
        (1e20, "100000000000000000000"),
        (1e21, "1e+21"),
        (123456789012345680000.0, "123456789012345680000"),
        (0.1 + 0.2, "0.30000000000000004"),
        (-3.5, "-3.5"),
        (5e-324, "5e-324"),
        (1.7976931348623157e308, "1.7976931348623157e+308"),
    ],
)
def test_numbers_are_written_as_ecmascript_writes_them(value: float, text: str) -> None:
    assert number(value) == text


def test_keys_sort_by_utf16_code_units_and_nothing_is_spaced() -> None:
    # U+1F600 is a surrogate pair (D83D …), which sorts before U+FFFF in UTF-16 (not in code points)
    assert dumps({"\uffff": 1, "\U0001f600": 2, "b": [1, 2.5, None, True], "a": "é\n"}) == (
        '{"a":"é\\n","b":[1,2.5,null,true],"😀":2,"\uffff":1}'
    )


def test_what_json_cannot_spell_is_refused() -> None:
    for bad in (float("nan"), float("inf"), {1: "x"}, {"a": {1, 2}}):
        with pytest.raises(NotJson):
            dumps(bad)


json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-(2**53), 2**53)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=4), inner, max_size=4),
    max_leaves=12,
)


def _as_doubles(v: object) -> object:
    """Numbers as the doubles a JSON reader of ECMAScript makes of them (Python reads `1e+21`-free
    integral text as an int)."""
    if isinstance(v, bool) or v is None or isinstance(v, str):
        return v
    if isinstance(v, (int, float)):
        return float(v)
    if isinstance(v, list):
        return [_as_doubles(x) for x in v]
    assert isinstance(v, dict)
    return {k: _as_doubles(x) for k, x in v.items()}


@given(json_values)
def test_canonical_text_reads_back_to_the_same_value_and_is_idempotent(value: object) -> None:
    text = dumps(value)
    assert dumps(json.loads(text)) == text
    assert _as_doubles(json.loads(text)) == _as_doubles(json.loads(json.dumps(value)))
