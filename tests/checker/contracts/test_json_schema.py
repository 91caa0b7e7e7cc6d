"""The JSON Schema of a builtin's arguments, written once (checker/contracts/args_schema.py) and read
by ``nika schema`` and the agent's tool definitions."""

from __future__ import annotations

from typing import Any

import jsonschema
import pytest

from checker.contracts import tables as contracts
from checker.contracts.args_schema import ecma_pattern, json_schema

TEMPLATE = {"type": "string", "pattern": r"\$\{\{"}


def _valid(schema: dict[str, Any], args: dict[str, Any]) -> bool:
    return jsonschema.Draft202012Validator(schema).is_valid(args)


@pytest.mark.parametrize("tool", [c.id for c in contracts.contracts()])
def test_properties_and_required_follow_the_contract(tool: str) -> None:
    c = contracts.contract(tool)
    assert c is not None
    schema = json_schema(tool)
    jsonschema.Draft202012Validator.check_schema(schema)
    assert set(schema.get("properties", {})) == {a.name for a in c.args}
    assert schema.get("required", []) == [a.name for a in c.required_args()]
    assert ("additionalProperties" in schema) is (not c.open_args)
    for a in c.args:
        if a.reserved:
            assert schema["properties"][a.name] is False


def test_a_string_id_and_a_contract_give_the_same_schema() -> None:
    c = contracts.contract("nika:fetch")
    assert c is not None
    assert json_schema("nika:fetch") == json_schema(c)
    assert json_schema("nika:not-a-builtin") == {"type": "object"}


def test_concrete_arguments_are_judged_like_the_checker_judges_them() -> None:
    schema = json_schema("nika:wait")  # exactly_one_of duration/until, durations have a pattern
    assert _valid(schema, {"duration": "30s"})
    assert not _valid(schema, {})  # neither
    assert not _valid(schema, {"duration": "30s", "until": "2026-01-01T00:00:00Z"})  # both
    assert not _valid(schema, {"duration": "thirty seconds"})
    assert not _valid(schema, {"duration": "30s", "bogus": 1})  # closed
    fetch = json_schema("nika:fetch")
    assert _valid(fetch, {"url": "https://example.com", "method": "GET"})
    assert not _valid(fetch, {"url": "https://example.com", "method": "FETCH"})  # closed values
    assert not _valid(fetch, {"method": "GET"})  # url is required


def test_a_template_is_accepted_only_when_the_caller_names_its_schema() -> None:
    args = {"duration": "${{ inputs.delay }}"}
    assert not _valid(json_schema("nika:wait"), args)  # a model sends concrete values
    assert _valid(json_schema("nika:wait", template=TEMPLATE), args)
    assert not _valid(json_schema("nika:uuid"), {"version": "${{ inputs.v }}"})
    assert _valid(json_schema("nika:uuid", template=TEMPLATE), {"version": "${{ inputs.v }}"})


def test_patterns_are_anchored_for_ecma() -> None:
    assert ecma_pattern(r"^[a-z]+\Z") == "^(?:[a-z]+)$"
    assert ecma_pattern("[a-z]+") == "^(?:[a-z]+)$"
