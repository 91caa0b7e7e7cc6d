"""Evaluator and renderer semantics beyond the known-answer table."""

from __future__ import annotations

from collections import OrderedDict
from types import MappingProxyType
from typing import Any

import pytest

from checker.expr import (
    EvalError,
    ExprError,
    evaluate,
    evaluate_bool,
    parse_expression,
    parse_template,
    render_string,
    render_template,
)

SCOPE: dict[str, Any] = {
    "inputs": {"topic": "Rust", "n": 3, "ratio": 0.25, "flag": False, "none": None},
    "with": {
        "obj": {"b": 2, "a": [1, "é", None, True]},
        "items": [1, 2],
        "blob": b"\x89PNG",
        "nested": {"img": b"\x00"},
        "big": 10**15,
        "whole": 2.0,
    },
}


def ev(text: str, scope: dict[str, Any] = SCOPE) -> Any:
    return evaluate(parse_expression(text), scope)


def test_single_island_keeps_its_native_type() -> None:
    assert render_template("${{ inputs.n }}", SCOPE) == 3
    assert render_template("  ${{ with.obj }} ", SCOPE) == SCOPE["with"]["obj"]
    assert render_template("${{ inputs.none }}", SCOPE) is None
    assert render_template("${{ inputs.flag }}", SCOPE) is False
    assert render_template("${{ with.blob }}", SCOPE) == b"\x89PNG"
    assert render_template("${{ [inputs.n, 'x'] }}", SCOPE) == [3, "x"]


def test_mixed_text_renders_to_a_string() -> None:
    out = render_template(
        "t=${{ inputs.topic }} n=${{ inputs.n }} r=${{ inputs.ratio }} f=${{ inputs.flag }} "
        "z=${{ inputs.none }} o=${{ with.obj }} l=${{ with.items }} w=${{ with.whole }}",
        SCOPE,
    )
    assert out == 't=Rust n=3 r=0.25 f=false z=null o={"a":[1,"é",null,true],"b":2} l=[1,2] w=2.0'


def test_rendering_applies_escapes_and_keeps_other_text() -> None:
    assert render_template("\\${{ inputs.topic }} is literal", SCOPE) == "${{ inputs.topic }} is literal"
    assert render_template("\\\\${{ inputs.topic }}", SCOPE) == "\\Rust"
    assert render_template("no islands at all", SCOPE) == "no islands at all"
    assert render_template("", SCOPE) == ""


def test_render_accepts_a_parsed_template() -> None:
    t = parse_template("a ${{ inputs.n }}")
    assert render_template(t, SCOPE) == "a 3"


def test_static_errors_are_raised_as_expr_errors() -> None:
    with pytest.raises(ExprError) as info:
        render_template("x ${{ inputs.n", SCOPE)
    assert info.value.code == "NIKA-VAR-008"
    with pytest.raises(ExprError) as info:
        render_template("x ${{ a + 1 }}", SCOPE)
    assert info.value.code == "NIKA-VAR-005"


def test_bytes_in_a_string_position() -> None:
    value = "see ${{ with.blob }}"
    with pytest.raises(EvalError) as info:
        render_template(value, SCOPE)
    assert info.value.code == "NIKA-VAR-007"
    assert value[info.value.start : info.value.end] == "${{ with.blob }}"
    with pytest.raises(EvalError) as info:
        render_template("see ${{ with.nested }}", SCOPE)
    assert info.value.code == "NIKA-VAR-007"


def test_eval_errors_in_templates_are_positioned_in_value_offsets() -> None:
    value = "a ${{ with.missing }} b"
    with pytest.raises(EvalError) as info:
        render_template(value, SCOPE)
    err = info.value
    assert err.code == "NIKA-VAR-001"
    assert value[err.start : err.end] == "with.missing"
    assert "has(with.missing)" in err.message


def test_eval_error_positions_in_expression_offsets() -> None:
    text = "inputs.n > 1 && inputs.topic == 3"
    with pytest.raises(EvalError) as info:
        ev(text)
    assert text[info.value.start : info.value.end] == "inputs.topic == 3"
    assert info.value.code == "NIKA-VAR-006"
    text = "with.obj.b.c"
    with pytest.raises(EvalError) as info:
        ev(text)
    assert info.value.code == "NIKA-VAR-001"
    assert text[info.value.start : info.value.end] == text


def test_cross_type_message_teaches() -> None:
    with pytest.raises(EvalError) as info:
        ev("42 == '42'")
    assert "int and string" in info.value.message
    assert "never converted" in info.value.message


def test_unknown_root() -> None:
    with pytest.raises(EvalError) as info:
        ev("topic == 'x'")
    assert info.value.code == "NIKA-VAR-001"
    assert (info.value.start, info.value.end) == (0, 5)


def test_evaluate_bool() -> None:
    assert evaluate_bool(parse_expression("inputs.n > 1"), SCOPE) is True
    with pytest.raises(EvalError) as info:
        evaluate_bool(parse_expression("inputs.topic"), SCOPE)
    assert info.value.code == "NIKA-VAR-006"


def test_short_circuit_skips_the_right_side_entirely() -> None:
    # the right side would be a type error and an unresolved reference
    assert ev("inputs.flag && nothing.here == 1") is False
    assert ev("!inputs.flag || 1 == 'one'") is True


def test_ternary_evaluates_only_the_chosen_branch() -> None:
    assert ev("has(inputs.none) ? inputs.none.x : 'fallback'") == "fallback"


def test_has_does_not_hide_type_errors() -> None:
    with pytest.raises(EvalError) as info:
        ev("has(with.obj.b == 'x')")
    assert info.value.code == "NIKA-VAR-006"


def test_bool_is_not_an_int_anywhere() -> None:
    assert ev("with.obj.a[3] == true") is True
    with pytest.raises(EvalError):
        ev("with.obj.a[3] == 1")
    with pytest.raises(EvalError):
        ev("with.items[true]")


def test_large_ints_and_numeric_comparison() -> None:
    assert ev("with.big > 999999999999999") is True
    assert ev("with.whole == 2") is True
    assert ev("inputs.ratio < 1") is True


def test_tuples_and_read_only_mappings_are_lists_and_maps() -> None:
    scope = {"with": MappingProxyType({"t": (1, 2), "m": OrderedDict(z=1, a=2)})}
    assert ev("size(with.t) == 2 && with.t[1] == 2 && with.t == [1, 2]", scope) is True
    assert ev("'a' in with.m && with.m.z == 1", scope) is True
    assert render_template("${{ with.m }}!", scope) == '{"a":2,"z":1}!'


def test_list_membership_is_strict() -> None:
    assert ev("'a' in ['a', 'b']") is True
    with pytest.raises(EvalError):
        ev("'a' in [1, 'a']")


@pytest.mark.parametrize(
    ("value", "text"),
    [
        (None, "null"),
        (True, "true"),
        (False, "false"),
        (0, "0"),
        (-12, "-12"),
        (1.5, "1.5"),
        ("plain", "plain"),
        ([], "[]"),
        ({}, "{}"),
        ({"b": [1, {"d": 1, "c": None}], "a": "x"}, '{"a":"x","b":[1,{"c":null,"d":1}]}'),
        (["ü", "日本"], '["ü","日本"]'),
    ],
)
def test_render_string(value: Any, text: str) -> None:
    assert render_string(value) == text


def test_render_string_refuses_bytes() -> None:
    for blob in (b"x", bytearray(b"x"), [b"x"]):
        with pytest.raises(EvalError) as info:
            render_string(blob, 3, 9)
        assert (info.value.code, info.value.start, info.value.end) == ("NIKA-VAR-007", 3, 9)


def test_eval_error_shifted() -> None:
    err = EvalError("m", 1, 4, "NIKA-VAR-001").shifted(5)
    assert (err.start, err.end, err.code) == (6, 9, "NIKA-VAR-001")
    assert EvalError("m").code == "NIKA-VAR-006"
