"""`nika check` and `nika schema` agree field by field, because both come from checker/grammar/table.py.

Every block of a workflow that uses every block of the grammar (plus the shipped examples) is
mutated one field at a time: a value of the wrong type, a number outside its range, a value
outside a closed set, an unknown key, a missing required field. For each mutant the checker must
refuse exactly when the generated JSON Schema refuses. Where a refusal depends on a value in a
way a schema cannot say, the mutation is listed in ``VALUE_DEPENDENT`` with the reason.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from jsonschema import Draft202012Validator

from checker.engine.pipeline import compile_text
from checker.grammar import table as G
from checker.grammar.table import Block, Kind
from checker.views.workflow_schema import workflow_json_schema

ROOT = Path(__file__).resolve().parents[2]

# A workflow that writes every block of the grammar once, valid for both the checker and the schema.
EVERY_BLOCK: dict[str, Any] = {
    "nika": "v1",
    "workflow": {"id": "every-block", "description": "Each block of the grammar once."},
    "model": "mock/echo",
    "types": {"Verdict": {"enum": ["ok", "bad"]}},
    "inputs": {"topic": {"type": "string", "required": False, "default": "x", "description": "d"}},
    "config": {"region": {"type": "string", "default": "eu", "description": "d"}},
    "const": {"limit": 3, "typed": {"type": "integer", "value": 4, "description": "d"}},
    "secrets": {
        "token": {"source": "env", "key": "TOKEN", "egress": [{"to": "exec", "host": "example.com"}]},
        "cert": {"source": "file", "path": "./cert.pem"},
    },
    "permits": {
        "fs": {"read": ["./**"], "write": ["./out/**"]},
        "net": {"http": ["example.com"]},
        "exec": True,
        "tools": ["nika:*"],
        "env": ["HOME"],
    },
    "run": {"entropy": "ambient", "clock": "system"},
    "policy": {
        "require": {"human_gate_before": ["net"]},
        "forbid": {"exec_after": ["net"]},
        "allow": {"providers": ["mock"]},
        "limits": {"max_tasks": 10},
        "prefer": {"providers": ["mock"]},
        "optimize": "cost",
        "endorsement": "solo",
    },
    "tasks": {
        "ask": {
            "infer": {
                "prompt": "Say ${{ inputs.topic }}",
                "system": "Be brief.",
                "model": "mock/echo",
                "temperature": 0.5,
                "max_tokens": 100,
                "thinking": {"enabled": True, "budget_tokens": 50},
                "vision": [{"source": "file", "path": "./a.png"}],
            },
            "retry": {
                "max_attempts": 2,
                "backoff_ms": 10,
                "backoff_strategy": "fixed",
                "backoff_max_ms": 100,
                "jitter": False,
                "on_codes": ["NIKA-INFER-001"],
            },
            "timeout": "30s",
            "fail_fast": True,
            "output": {"first": ".[0]"},
        },
        "run_it": {
            "with": {"answer": "${{ tasks.ask.output }}"},
            "exec": {
                "command": ["echo", "${{ with.answer }}"],
                "cwd": ".",
                "env": {"A": "b"},
                "stdin": "text",
                "capture": "stdout",
                "decode": "text",
            },
            "on_error": {"skip": True, "on_codes": ["NIKA-EXEC-001"]},
            "on_finally": [{"when": True, "timeout": "5s", "exec": {"shell": "echo done"}}],
            "declassify": [{"from": "with.answer", "to": "trusted", "because": "reviewed by a person"}],
        },
        "fan": {
            "for_each": ["a", "b"],
            "max_parallel": 2,
            "when": "${{ inputs.topic == 'x' }}",
            "agent": {
                "prompt": "Work on ${{ item }}",
                "system": "s",
                "model": "mock/echo",
                "tools": ["nika:read"],
                "max_turns": 3,
                "max_tokens_total": 1000,
                "temperature": 1,
            },
            "after": {"ask": "success"},
            "returns": "string",
            "inert": "fetched text is data",
        },
        "read": {"invoke": {"tool": "nika:read", "args": {"path": "./in.txt"}}},
    },
    "outputs": {"answer": "${{ tasks.ask.output }}", "typed": {"value": "${{ tasks.read.output }}", "type": "string"}},
}

# Mutations whose verdicts legitimately differ, with the reason (none today).
VALUE_DEPENDENT: dict[tuple[str, ...], str] = {}


def _blocks(doc: dict[str, Any]) -> Iterator[tuple[tuple[str | int, ...], Block]]:
    """Every (path, block) of a workflow document, following the grammar's nesting table."""
    return _walk((), G.ENVELOPE, doc)


def _walk(
    path: tuple[str | int, ...], block: Block, value: dict[str, Any]
) -> Iterator[tuple[tuple[str | int, ...], Block]]:
    yield path, block
    for f in block.fields:
        held, v = G.nest(block, f.name), value.get(f.name)
        if held is None or v is None:
            continue
        if held.holds is G.Holds.ONE:
            children = [((*path, f.name), v)]
        elif held.holds is G.Holds.EACH:
            children = [((*path, f.name, k), e) for k, e in v.items()]
        else:
            children = [((*path, f.name, i), e) for i, e in enumerate(v)]
        for at, e in children:
            # a constant is typed only as `{type, value}`; `run.entropy` is a block only as `{seeded: N}`
            if isinstance(e, dict) and (held.child is not G.TYPED_CONST or {"type", "value"} <= e.keys()):
                yield from _walk(at, held.child, e)


def _mutations(f: G.Field, value: Any) -> Iterator[tuple[str, Any]]:
    """(label, new value) pairs that break field ``f`` in one way each."""
    scalar_kinds = (Kind.STRING, Kind.TEXT, Kind.BOOL, Kind.TRUE, Kind.INT, Kind.NUMBER, Kind.ENUM)
    if f.kind in (*scalar_kinds, Kind.DURATION, Kind.MODEL):
        yield "wrong type (mapping)", {"x": 1}
        yield "wrong type (list)", [1]
    if f.kind in (Kind.STRING, Kind.TEXT, Kind.ENUM, Kind.DURATION, Kind.MODEL):
        yield "wrong type (number)", 7
    if f.kind in (Kind.INT, Kind.NUMBER, Kind.BOOL, Kind.TRUE):
        yield "wrong type (plain string)", "zz"
    if f.kind in (Kind.INT, Kind.NUMBER):
        if f.minimum is not None:
            yield "below the minimum", f.minimum - 1
        if f.maximum is not None:
            yield "above the maximum", f.maximum + 1
        if f.kind is Kind.INT:
            yield "not an integer", 1.5
    if f.kind is Kind.ENUM:
        yield "unknown value", "zz-not-a-value"
    if f.kind is Kind.TEXT:
        yield "blank", "  "
    if f.kind is Kind.DURATION:
        yield "units out of order", "30m1h"
    if f.kind in (Kind.MAPPING, Kind.LIST, Kind.STRINGS):
        yield "wrong type (number)", 7
    if f.kind is Kind.STRINGS:
        yield "non-string entry", [{"x": 1}]


def _at(doc: Any, path: tuple[str | int, ...]) -> Any:
    for step in path:
        doc = doc[step]
    return doc


def _mutants(doc: dict[str, Any]) -> Iterator[tuple[str, dict[str, Any]]]:
    for path, block in _blocks(doc):
        where = ".".join(map(str, path)) or "<envelope>"
        node = _at(doc, path)
        for f in block.fields:
            if f.name in node:
                for label, new in _mutations(f, node[f.name]):
                    mutant = copy.deepcopy(doc)
                    _at(mutant, path)[f.name] = new
                    yield f"{where}.{f.name}: {label}", mutant
                if f.required:
                    mutant = copy.deepcopy(doc)
                    del _at(mutant, path)[f.name]
                    yield f"{where}.{f.name}: missing", mutant
        mutant = copy.deepcopy(doc)
        _at(mutant, path)["zz_unknown"] = 1
        yield f"{where}: unknown key", mutant


def _documents() -> list[tuple[str, dict[str, Any]]]:
    from ruamel.yaml import YAML

    docs: list[tuple[str, dict[str, Any]]] = [("every-block", EVERY_BLOCK)]
    yaml = YAML(typ="safe", pure=True)
    for path in sorted((ROOT / "examples").glob("*.nika.yaml")):
        docs.append((path.name, json.loads(json.dumps(yaml.load(path.read_text())))))
    return docs


@pytest.fixture(scope="module")
def validator() -> Draft202012Validator:
    return Draft202012Validator(workflow_json_schema())


def _refused(doc: dict[str, Any]) -> list[str]:
    compiled = compile_text(json.dumps(doc, indent=1))
    return [f"{d.code}: {d.message}" for d in compiled.diagnostics if d.is_error]


@pytest.mark.parametrize(("name", "doc"), _documents(), ids=lambda x: x if isinstance(x, str) else "")
def test_check_refuses_exactly_what_the_schema_refuses(
    name: str, doc: dict[str, Any], validator: Draft202012Validator
) -> None:
    assert _refused(doc) == [], f"{name} must check clean before it is mutated"
    assert validator.is_valid(doc), f"{name} must fit the schema before it is mutated"
    disagreements = []
    count = 0
    for label, mutant in _mutants(doc):
        count += 1
        by_check = _refused(mutant)
        by_schema = not validator.is_valid(mutant)
        if bool(by_check) != by_schema and tuple(label.split(": ")) not in VALUE_DEPENDENT:
            disagreements.append(
                f"{label}: check {'refuses' if by_check else 'accepts'} {by_check[:1]}, "
                f"schema {'refuses' if by_schema else 'accepts'}"
            )
    assert count > 10
    assert disagreements == [], "\n".join(disagreements)


def test_every_block_covers_the_whole_grammar() -> None:
    seen = {id(b) for _, b in _blocks(EVERY_BLOCK)}
    missing = [name for name, b in G.ALL_BLOCKS.items() if id(b) not in seen and name not in ("seeded", "vision_item")]
    assert missing == []


def test_a_tagged_union_is_not_also_written_as_exclusions() -> None:
    """One table per grammar fact: fields of a block's ``one_of`` already exclude each other, so
    no field there also lists the others in ``excludes`` (a second copy to keep in step)."""
    twice = [
        (name, f.name, x)
        for name, b in G.ALL_BLOCKS.items()
        for f in b.fields
        for x in f.excludes
        if f.name in b.one_of and x in b.one_of
    ]
    assert twice == []
