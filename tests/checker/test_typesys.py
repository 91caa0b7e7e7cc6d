"""The type core (checker/model/typesys.py): our own known answers, then the spec's type corpus in full.

The corpus (4,000 pairs over 400 types: subtyping, consistency, assignability, and the JSON
Schema lowering of each type) is read from ../shared/nika-spec when it is there; those tests skip
with a visible reason when it is not.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from checker.model import typesys as T

CORPUS = Path(__file__).resolve().parents[3] / "shared" / "nika-spec" / "conformance" / "type-corpus" / "corpus.jsonl"


def t(expr: Any) -> T.Type:
    return T.parse(expr)


@pytest.mark.parametrize(
    ("a", "b", "sub"),
    [
        ("integer", "number", True),
        ("number", "integer", False),
        ("uri", "string", True),
        ("bytes", "string", False),
        ({"enum": ["a"]}, {"enum": ["a", "b"]}, True),
        ({"enum": ["a", "c"]}, {"enum": ["a", "b"]}, False),
        ({"enum": ["a"]}, "string", True),
        ({"integer": {"min": 0, "max": 5}}, {"number": {"min": -1}}, True),
        ({"integer": {"min": 0}}, {"integer": {"min": 0, "max": 5}}, False),
        ({"string": {"pattern": "^x", "min_len": 2}}, {"string": {"pattern": "^x"}}, True),
        ({"string": {"pattern": "^x"}}, {"string": {"pattern": "^y"}}, False),
        ({"array": "integer"}, {"array": "number"}, True),
        ({"object": {"a": "string", "b": "integer"}}, {"object": {"a": "string"}}, False),  # closed B
        ({"object": {"a": "string", "b": "integer"}}, {"object": {"a": "string"}, "additional": True}, True),
        ({"object": {"a": {"optional": "string"}}}, {"object": {"a": "string"}}, False),
        ({"object": {"a": "string"}, "additional": True}, {"object": {"a": "string"}}, False),
        ("integer", {"union": ["string", "number"]}, True),
        ({"union": ["integer", "null"]}, "integer", False),
    ],
)
def test_subtyping_known_answers(a: Any, b: Any, sub: bool) -> None:
    assert T.subtype(t(a), t(b)) is sub


def test_normalisation() -> None:
    assert t({"union": ["integer", "number"]}) == t("number")
    assert t({"union": [{"enum": ["a"]}, "string"]}) == t("string")
    assert t({"integer": {}}) == t("integer")
    assert t({"union": ["string", {"union": ["null", "string"]}]}) == t({"union": ["null", "string"]})


def test_unknown_is_gradual() -> None:
    unknown = t("NotDeclared")
    assert unknown is T.UNKNOWN
    assert T.assignable(unknown, t("integer")) and T.assignable(t("integer"), unknown)
    assert not T.subtype(unknown, t("integer"))
    assert T.consistent(unknown, t("bool")) and not T.consistent(t("null"), t("bool"))


def test_named_references_resolve_and_cycles_stay_unknown() -> None:
    named = {"Id": "string", "A": {"array": "B"}, "B": {"array": "A"}}
    assert t("integer") != T.parse("Id", named)
    assert T.parse("Id", named) == t("string")
    assert T.parse("A", named) == T.Arr(T.Arr(T.UNKNOWN))


def test_lowering() -> None:
    assert T.lower(t({"object": {"a": {"optional": "uri"}, "b": "integer"}})) == {
        "type": "object",
        "properties": {"a": {"type": "string", "format": "uri"}, "b": {"type": "integer"}},
        "required": ["b"],
        "additionalProperties": False,
    }


def _canon(x: Any) -> Any:
    """anyOf member order carries no meaning (09 §normalisation): compare it as a set."""
    if isinstance(x, dict):
        return {
            k: sorted((_canon(i) for i in v), key=lambda y: json.dumps(y, sort_keys=True))
            if k == "anyOf"
            else _canon(v)
            for k, v in x.items()
        }
    if isinstance(x, list):
        return [_canon(i) for i in x]
    return x


@pytest.fixture(scope="module")
def corpus() -> tuple[dict[int, dict[str, Any]], list[dict[str, Any]]]:
    if not CORPUS.exists():
        pytest.skip(f"the spec's type corpus is not beside the project ({CORPUS})")
    rows = [json.loads(line) for line in CORPUS.read_text().splitlines() if line.strip()]
    return {r["i"]: r for r in rows if r["kind"] == "type"}, [r for r in rows if r["kind"] == "pair"]


def test_corpus_lowering(corpus: tuple[dict[int, dict[str, Any]], list[dict[str, Any]]]) -> None:
    types, _ = corpus
    wrong = [
        r["expr"] for r in types.values() if _canon(T.lower(T.parse(r["expr"]))) != _canon(json.loads(r["lowered"]))
    ]
    assert len(types) >= 400 and wrong == []


@pytest.mark.parametrize("relation", ["subtype", "consistent", "assignable"])
def test_corpus_relations(corpus: tuple[dict[int, dict[str, Any]], list[dict[str, Any]]], relation: str) -> None:
    types, pairs = corpus
    parsed = {i: T.parse(r["expr"]) for i, r in types.items()}
    judge = getattr(T, relation)
    wrong = [
        (types[p["a"]]["expr"], types[p["b"]]["expr"])
        for p in pairs
        if judge(parsed[p["a"]], parsed[p["b"]]) != p[relation]
    ]
    assert len(pairs) >= 4000 and wrong == []


def test_fits_plain_and_run_time_values() -> None:
    assert T.fits(b"\x00", t("bytes")) and T.fits("aGk=", t("bytes")) and T.fits(3, t("bytes")) is False
    assert T.fits((1, 2), t({"array": "integer"})) and T.fits(("x",), t({"array": "integer"})) is False
    assert T.fits("abc", t({"string": {"pattern": "^[A-Z]+$"}})) is False
    assert T.fits({"x": 1}, t({"object": {"x": "integer", "y": {"optional": "integer"}}})) is True
    assert T.fits({"x": 1, "z": 0}, t({"object": {"x": "integer"}})) is False
    assert T.fits({"a": "high"}, t({"map": "integer"})) is False
    assert T.fits(1, t("NotDeclared")) is None
    assert T.fits("x", t({"union": ["integer", "NotDeclared"]})) is None


def test_python_regex_keeps_every_meaning_and_silences_pythons_set_warnings() -> None:
    """Every pattern of up to four characters over the class-syntax alphabet: the same verdict
    (error or the same matches) as Python reads the original, and no FutureWarning."""
    import itertools
    import re
    import warnings

    from checker.model.typesys import python_regex

    samples = ["a", "b", "[", "]", "^", "-", "&", "~", "|", "\\", "c", "ab", "-a", "]]"]

    def verdict(p: str) -> object:
        try:
            return tuple(bool(re.search(p, s)) for s in samples)
        except re.error:
            return "error"

    warned_before = 0
    for n in range(1, 5):
        for combo in itertools.product("[]^-&~|\\ab", repeat=n):
            p = "".join(combo)
            with warnings.catch_warnings(record=True) as before:
                warnings.simplefilter("always")
                want = verdict(p)
            warned_before += bool(before)
            with warnings.catch_warnings():
                warnings.simplefilter("error")
                assert verdict(python_regex(p)) == want, p
    assert warned_before > 100  # the sample does hold the patterns Python warns about


def test_a_type_pattern_with_a_doubled_dash_checks_without_a_warning() -> None:
    import warnings

    from checker.engine.pipeline import compile_text

    text = (
        "nika: v1\nworkflow: {id: w}\ntypes:\n  Code: {string: {pattern: '^[a-z--]+$'}}\n"
        "inputs:\n  c: {type: Code, default: ab-}\n"
        "tasks:\n  t: {infer: {model: mock/echo, prompt: '${{ inputs.c }}'}}\n"
    )
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a warning inside a rule would turn into NIKA-IMPL-001
        assert [d.code for d in compile_text(text).diagnostics] == []


def test_a_pattern_that_backtracks_without_end_is_not_judged_and_does_not_hang() -> None:
    """Without the time limit the match would run for ages and then refuse the value (no match):
    no finding at all is the proof the limit stopped it."""
    from checker.engine.pipeline import compile_text

    text = (
        "nika: v1\nworkflow: {id: w}\ntypes:\n  Code: {string: {pattern: '^(a|aa)+$'}}\n"
        f"inputs:\n  c: {{type: Code, default: {'a' * 60}!}}\n"
        "tasks:\n  t: {infer: {model: mock/echo, prompt: '${{ inputs.c }}'}}\n"
    )
    codes = [d.code for d in compile_text(text).diagnostics]
    assert codes == []  # not judged (the budget is a quarter of a second per value): never a false refusal


def test_an_integral_float_fits_integer_as_its_json_schema_lowering_says() -> None:
    """09: `integer` lowers to `{"type": "integer"}`, which accepts a number whose fractional part
    is zero; the fit agrees with its own lowering (a fetched `10.0` is not refused for nothing)."""
    import math

    from jsonschema import Draft202012Validator

    from checker.model.typesys import Num, Prim, fits

    schema = Draft202012Validator({"type": "integer"})
    for value in (10.0, -3.0, 0.0, 10, 10.5, math.inf, -math.inf, math.nan, True, "10"):
        assert fits(value, Prim("integer")) is schema.is_valid(value), value
    assert fits(10.0, Num("integer", 0, 10)) is True
    assert fits(11.0, Num("integer", 0, 10)) is False
