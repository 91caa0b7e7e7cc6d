"""nika:jq, nika:json_diff (RFC 6902), nika:json_merge_patch (RFC 7386/7396), nika:validate,
nika:convert."""

from __future__ import annotations

import copy
import json
import tomllib

import pytest
from builtins_harness import direct, fails, make_ctx
from hypothesis import given, settings
from hypothesis import strategies as st

from runtime.builtins import call
from runtime.builtins._support import json_equal


@pytest.fixture
def ctx(tmp_path):
    return make_ctx(tmp_path)[0]


# ── jq ────────────────────────────────────────────────────────────────────────────────────────


async def test_jq_returns_the_single_value(ctx):
    args = {"expression": ".items | map(.price) | add", "input": {"items": [{"price": 2}, {"price": 3.5}]}}
    assert await call("nika:jq", args, ctx) == 5.5


async def test_jq_merges_a_constructed_pair(ctx):
    args = {"expression": ".[0] * .[1]", "input": [{"a": {"x": 1, "y": 2}}, {"a": {"y": 3}, "b": True}]}
    assert await call("nika:jq", args, ctx) == {"a": {"x": 1, "y": 3}, "b": True}


async def test_jq_compiles_each_program_once(ctx):
    from runtime.builtins.data import _program

    _program.cache_clear()
    for n in range(3):
        assert await call("nika:jq", {"expression": ". + 1", "input": n}, ctx) == n + 1
    info = _program.cache_info()
    assert (info.misses, info.hits) == (1, 2)


async def test_jq_runtime_error(ctx):
    e = await fails("nika:jq", {"expression": ".a.b", "input": {"a": "text"}}, ctx)
    assert (e.code, e.category) == ("NIKA-BUILTIN-JQ-001", "tool_error")


@pytest.mark.parametrize(("expression", "count"), [(".[]", 3), ("empty", 0)])
async def test_jq_needs_exactly_one_value(ctx, expression, count):
    e = await fails("nika:jq", {"expression": expression, "input": [1, 2, 3]}, ctx)
    assert e.code == "NIKA-BUILTIN-JQ-001"
    assert e.details == {"count": count}


async def test_jq_program_that_does_not_compile(ctx):
    e = await fails("nika:jq", {"expression": ".[", "input": 1}, ctx)
    assert e.code == "NIKA-VAR-005"


async def test_jq_input_must_be_json(ctx):
    e = await fails("nika:jq", {"expression": ".", "input": {"b": b"\x00"}}, ctx)
    assert e.code == "NIKA-BUILTIN-JQ-001"


async def test_jq_contract_refusal_names_the_argument(ctx):
    e = await fails("nika:jq", {"query": ".a", "input": {}}, ctx)
    assert e.code == "NIKA-BUILTIN-001"
    assert "expression" in e.message


# ── json_diff (RFC 6902) ──────────────────────────────────────────────────────────────────────


def apply_patch(doc, patch):
    """A small RFC 6902 applier (add/remove/replace) used only to check the diffs."""
    doc = copy.deepcopy(doc)
    for op in patch:
        tokens = [t.replace("~1", "/").replace("~0", "~") for t in op["path"].split("/")[1:]]
        if not tokens:
            doc = copy.deepcopy(op["value"]) if op["op"] != "remove" else None
            continue
        parent = doc
        for t in tokens[:-1]:
            parent = parent[int(t)] if isinstance(parent, list) else parent[t]
        last = tokens[-1]
        if isinstance(parent, list):
            i = len(parent) if last == "-" else int(last)
            if op["op"] == "add":
                parent.insert(i, copy.deepcopy(op["value"]))
            elif op["op"] == "remove":
                del parent[i]
            else:
                parent[i] = copy.deepcopy(op["value"])
        elif op["op"] == "remove":
            del parent[last]
        else:
            parent[last] = copy.deepcopy(op["value"])
    return doc


DIFF_CASES = [
    # (before, after, the expected patch)
    ({"a": 1}, {"a": 1}, []),
    ({"a": 1}, {"a": 2}, [{"op": "replace", "path": "/a", "value": 2}]),
    ({"a": 1, "b": 2}, {"a": 1}, [{"op": "remove", "path": "/b"}]),
    ({}, {"n": {"x": [1]}}, [{"op": "add", "path": "/n", "value": {"x": [1]}}]),
    ({"o": {"p": {"q": 1}}}, {"o": {"p": {"q": 1, "r": None}}}, [{"op": "add", "path": "/o/p/r", "value": None}]),
    ([1, 2, 3], [1, 5, 3], [{"op": "replace", "path": "/1", "value": 5}]),
    ([1, 2, 3], [1], [{"op": "remove", "path": "/2"}, {"op": "remove", "path": "/1"}]),
    ([1], [1, 2, 3], [{"op": "add", "path": "/1", "value": 2}, {"op": "add", "path": "/2", "value": 3}]),
    (
        {"a/b": 1, "m~n": 2},
        {"a/b": 3},
        [{"op": "replace", "path": "/a~1b", "value": 3}, {"op": "remove", "path": "/m~0n"}],
    ),
    ({"a": [1]}, {"a": {"0": 1}}, [{"op": "replace", "path": "/a", "value": {"0": 1}}]),
    ("x", ["x"], [{"op": "replace", "path": "", "value": ["x"]}]),
    # one number domain, but a boolean is not a number
    ({"n": 1}, {"n": 1.0}, []),
    ({"n": 1}, {"n": True}, [{"op": "replace", "path": "/n", "value": True}]),
    ({"n": 0}, {"n": False}, [{"op": "replace", "path": "/n", "value": False}]),
]


@pytest.mark.parametrize(("before", "after", "patch"), DIFF_CASES)
async def test_json_diff_known_answers(ctx, before, after, patch):
    out = await call("nika:json_diff", {"before": before, "after": after}, ctx)
    assert out == patch
    assert json_equal(apply_patch(before, out), after)


json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-5, 5) | st.sampled_from(["", "a", "b/c", "~"]),
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.sampled_from(["a", "b", "c/d", "e~"]), inner, max_size=4)
    ),
    max_leaves=12,
)


@settings(max_examples=80, deadline=None)
@given(before=json_values, after=json_values)
def test_json_diff_patch_turns_before_into_after(before, after):
    from runtime.builtins.data import _diff

    patch: list = []
    _diff(before, after, "", patch)
    assert json_equal(apply_patch(before, patch), after)


async def test_json_diff_non_json_input(ctx):
    e = await fails("nika:json_diff", {"before": {"a": b"\x01"}, "after": {}}, ctx)
    assert (e.code, e.category) == ("NIKA-BUILTIN-JSON_DIFF-001", "validation_error")
    assert "/a" in e.message


async def test_json_diff_contract_refusal(ctx):
    e = await fails("nika:json_diff", {"before": {}}, ctx)
    assert e.code == "NIKA-BUILTIN-001"


# ── json_merge_patch (RFC 7386 / 7396) ────────────────────────────────────────────────────────

MERGE_CASES = [
    # (target, patch, result)
    ({"a": 1}, {"a": 2}, {"a": 2}),
    ({"a": 1}, {"b": 2}, {"a": 1, "b": 2}),
    ({"a": 1, "b": 2}, {"a": None}, {"b": 2}),
    ({"a": 1}, {"missing": None}, {"a": 1}),
    ({"a": [1, 2]}, {"a": [3]}, {"a": [3]}),  # arrays are replaced, never merged
    ({"a": {"x": 1, "y": 2}}, {"a": {"y": None, "z": 3}}, {"a": {"x": 1, "z": 3}}),
    ({"a": "text"}, {"a": {"deep": {"k": None, "v": 1}}}, {"a": {"deep": {"v": 1}}}),  # nulls vanish in new objects
    ({"a": {"x": 1}}, {"a": 7}, {"a": 7}),
    ({"a": {"x": 1}}, {}, {"a": {"x": 1}}),
    ({}, {"list": [None, {"k": None}]}, {"list": [None, {"k": None}]}),  # inside arrays nulls stay
]


@pytest.mark.parametrize(("target", "patch", "result"), MERGE_CASES)
async def test_json_merge_patch_known_answers(ctx, target, patch, result):
    before = copy.deepcopy(target)
    assert await call("nika:json_merge_patch", {"target": target, "patch": patch}, ctx) == result
    assert target == before  # the input is not modified


@pytest.mark.parametrize(("target", "patch"), [(["a"], {"c": 1}), ({"a": 1}, "x"), ({"a": 1}, None)])
async def test_json_merge_patch_needs_objects(ctx, target, patch):
    # the contract of this build refuses these literals under NIKA-BUILTIN-001 before the tool
    # runs; the tool's own code is what a value computed at run time meets
    with pytest.raises(Exception) as info:
        await direct("nika:json_merge_patch")({"target": target, "patch": patch}, ctx)
    assert info.value.code == "NIKA-BUILTIN-JSON_MERGE_PATCH-001"


async def test_json_merge_patch_contract_refusal(ctx):
    e = await fails("nika:json_merge_patch", {"target": [1], "patch": {}}, ctx)
    assert e.code in ("NIKA-BUILTIN-001", "NIKA-BUILTIN-JSON_MERGE_PATCH-001")


# ── validate ──────────────────────────────────────────────────────────────────────────────────

SCHEMA = {
    "type": "object",
    "required": ["name", "tags"],
    "properties": {"name": {"type": "string"}, "tags": {"type": "array", "items": {"type": "string"}}},
}


async def test_validate_valid_data(ctx):
    out = await call("nika:validate", {"data": {"name": "n", "tags": ["a"]}, "schema": SCHEMA}, ctx)
    assert out == {"valid": True, "errors": []}


async def test_validate_invalid_data_is_a_report_in_document_order(ctx):
    data = {"name": 3, "tags": ["a"] * 10 + [1, "b", 2]}
    out = await call("nika:validate", {"data": data, "schema": SCHEMA}, ctx)
    assert out["valid"] is False
    assert [(e["path"], e["keyword"]) for e in out["errors"]] == [
        ("/name", "type"),
        ("/tags/10", "type"),
        ("/tags/12", "type"),
    ]
    assert out["errors"][1]["schema_path"] == "/properties/tags/items/type"


async def test_validate_yaml_text(ctx):
    out = await call("nika:validate", {"data": "name: n\ntags: [a, b]\n", "schema": SCHEMA, "format": "yaml"}, ctx)
    assert out["valid"] is True
    out = await call("nika:validate", {"data": "name: n\n", "schema": SCHEMA, "format": "yaml"}, ctx)
    assert out["errors"][0]["keyword"] == "required"


async def test_validate_format_is_an_annotation(ctx):
    schema = {"type": "string", "format": "email"}
    assert (await call("nika:validate", {"data": "not an email", "schema": schema}, ctx))["valid"] is True


async def test_validate_boolean_schema(ctx):
    assert (await call("nika:validate", {"data": 1, "schema": False}, ctx))["valid"] is False


@pytest.mark.parametrize("schema", [{"type": "obj"}, {"required": "name"}, {"$ref": "#/$defs/missing"}])
async def test_validate_broken_schema(ctx, schema):
    e = await fails("nika:validate", {"data": {}, "schema": schema}, ctx)
    assert (e.code, e.category) == ("NIKA-BUILTIN-VALIDATE-001", "validation_error")


@pytest.mark.parametrize("data", ["Here is the YAML:\n  a: [1\n", "a: 1\na: 2\n", 42])
async def test_validate_yaml_that_does_not_parse(ctx, data):
    e = await fails("nika:validate", {"data": data, "schema": {"type": "object"}, "format": "yaml"}, ctx)
    assert e.code == "NIKA-BUILTIN-VALIDATE-002"


async def test_validate_contract_refusal(ctx):
    e = await fails("nika:validate", {"data": {}, "schema": {}, "format": "xml"}, ctx)
    assert e.code == "NIKA-BUILTIN-001"


# ── convert ───────────────────────────────────────────────────────────────────────────────────


async def test_convert_csv_to_json_keeps_cells_as_strings(ctx):
    text = 'zip,name\n01234,"Doe, J"\n99,"say ""hi"""\n'
    out = await call("nika:convert", {"input": text, "from": "csv", "to": "json"}, ctx)
    assert out == [{"zip": "01234", "name": "Doe, J"}, {"zip": "99", "name": 'say "hi"'}]


async def test_convert_csv_without_header(ctx):
    out = await call("nika:convert", {"input": "a,b\n1,2\n", "from": "csv", "to": "json", "has_header": False}, ctx)
    assert out == [["a", "b"], ["1", "2"]]


async def test_convert_json_to_csv_with_union_of_columns(ctx):
    rows = [{"a": 1, "b": "x"}, {"b": "y", "c": True}, {"a": None, "c": {"k": 1}}]
    out = await call("nika:convert", {"input": rows, "from": "json", "to": "csv"}, ctx)
    assert out == 'a,b,c\n1,x,\n,y,true\n,,"{""k"": 1}"\n'


async def test_convert_formula_guard(ctx):
    rows = [{"=cmd": "=HYPERLINK(1)", "n": -5, "t": "\tx", "s": "  @SUM(A1)", "ok": "plain"}]
    plain = await call("nika:convert", {"input": rows, "from": "json", "to": "csv"}, ctx)
    guarded = await call("nika:convert", {"input": rows, "from": "json", "to": "csv", "formula_guard": True}, ctx)
    assert plain.splitlines()[1] == "=HYPERLINK(1),-5,\tx,  @SUM(A1),plain"
    assert guarded.splitlines() == ["'=cmd,n,t,s,ok", "'=HYPERLINK(1),'-5,'\tx,'  @SUM(A1),plain"]


async def test_convert_json_text_to_yaml_and_back(ctx):
    text = '{"name": "café", "list": [1, 2.5, null, true], "nested": {"k": "yes"}}'
    yaml_text = await call("nika:convert", {"input": text, "from": "json", "to": "yaml"}, ctx)
    assert "café" in yaml_text
    assert await call("nika:convert", {"input": yaml_text, "from": "yaml", "to": "json"}, ctx) == json.loads(text)


async def test_convert_yaml_is_read_as_yaml_1_2(ctx):
    out = await call("nika:convert", {"input": "a: yes\nb: 2024-01-01\n1: one\n", "from": "yaml", "to": "json"}, ctx)
    assert out == {"a": "yes", "b": "2024-01-01", "1": "one"}


async def test_convert_toml_round_trip(ctx):
    value = {
        "title": 'say "hi"\n\tand \u0001',
        "n": 3,
        "f": 1e20,
        "g": 2.0,
        "flags": [True, False],
        "owner": {"name": "x", "dob": "1979-05-27", "a b": {"c": []}},
        "servers": [{"ip": "10.0.0.1", "meta": {"role": "db"}}, {"ip": "10.0.0.2", "meta": {"role": "web"}}],
        "mixed": [1, {"k": "v"}],
    }
    text = await call("nika:convert", {"input": value, "from": "json", "to": "toml"}, ctx)
    assert tomllib.loads(text) == value
    assert await call("nika:convert", {"input": text, "from": "toml", "to": "json"}, ctx) == value


toml_keys = st.text(st.characters(codec="utf-8", exclude_categories=("Cs",)), max_size=5)
toml_scalars = st.booleans() | st.integers(-(2**63), 2**63 - 1) | st.text(max_size=8) | st.floats(allow_nan=False)
toml_values = st.recursive(
    toml_scalars,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(toml_keys, inner, max_size=3),
    max_leaves=10,
)


@settings(max_examples=80, deadline=None)
@given(doc=st.dictionaries(toml_keys, toml_values, max_size=4))
def test_convert_toml_writer_round_trips_through_tomllib(doc):
    from runtime.builtins._formats import dump_toml

    assert tomllib.loads(dump_toml(doc)) == doc


async def test_convert_same_format_is_refused(ctx):
    e = await fails("nika:convert", {"input": "{}", "from": "json", "to": "json"}, ctx)
    assert (e.code, e.category) == ("NIKA-BUILTIN-CONVERT-001", "validation_error")


async def test_convert_formula_guard_must_be_a_boolean(ctx):
    e = await fails("nika:convert", {"input": [], "from": "json", "to": "csv", "formula_guard": "yes"}, ctx)
    assert e.code == "NIKA-BUILTIN-CONVERT-001"


@pytest.mark.parametrize(
    ("value", "src", "dst"),
    [
        ("a,b\n1,2,3\n", "csv", "json"),  # a ragged row
        ('a,"b\n', "csv", "json"),  # an unclosed quote
        ("x,x\n1,2\n", "csv", "json"),  # a header naming a column twice
        ("[a] \n[a]\n", "toml", "json"),  # a table defined twice
        ("{'a': 1}", "json", "yaml"),
        ("a: [1\n", "yaml", "json"),
        ({"a": 1}, "csv", "json"),  # CSV input must be text
        ([1, 2], "json", "toml"),  # a TOML document is a table
        ({"a": None}, "json", "toml"),  # TOML has no null
        ([1, 2], "json", "csv"),  # CSV rows must be objects or arrays
    ],
)
async def test_convert_input_that_does_not_fit(ctx, value, src, dst):
    e = await fails("nika:convert", {"input": value, "from": src, "to": dst}, ctx)
    assert (e.code, e.category) == ("NIKA-BUILTIN-CONVERT-002", "tool_error")


async def test_convert_contract_refusal(ctx):
    e = await fails("nika:convert", {"input": "", "from": "xml", "to": "json"}, ctx)
    assert e.code == "NIKA-BUILTIN-001"
