"""`nika schema`: the generated JSON Schema is itself valid, accepts our examples and refuses
what the checker refuses structurally."""

from __future__ import annotations

import copy
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from jsonschema import Draft202012Validator

from checker.contracts import tables as contracts
from checker.core.source import SourceText
from checker.engine.pipeline import compile_text
from checker.grammar import table as G
from checker.grammar.table import CAPTURE_MODES, DECODE_MODES
from checker.parse.nodes import parse_yaml
from checker.views.workflow_schema import workflow_json_schema

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = sorted((ROOT / "examples").glob("*.nika.yaml"))

MINIMAL: dict[str, Any] = {
    "nika": "v1",
    "workflow": {"id": "w"},
    "tasks": {"a": {"exec": {"command": ["true"]}}},
}


@pytest.fixture(scope="module")
def validator() -> Draft202012Validator:
    return Draft202012Validator(workflow_json_schema())


def _load(path: Path) -> Any:
    parsed = parse_yaml(SourceText(path.read_text(encoding="utf-8"), str(path)))
    assert parsed.root is not None, path
    return parsed.root.to_python()


def _with_task(body: dict[str, Any]) -> dict[str, Any]:
    doc = copy.deepcopy(MINIMAL)
    doc["tasks"] = {"a": body}
    return doc


def test_schema_is_valid_2020_12() -> None:
    schema = workflow_json_schema()
    assert schema["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    Draft202012Validator.check_schema(schema)


def test_there_are_examples() -> None:
    assert len(EXAMPLES) >= 5


@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: p.name)
def test_every_example_validates(validator: Draft202012Validator, path: Path) -> None:
    errors = [f"{list(e.absolute_path)}: {e.message}" for e in validator.iter_errors(_load(path))]
    assert errors == []


def test_unknown_task_field_is_rejected(validator: Draft202012Validator) -> None:
    doc = _with_task({"exec": {"command": ["true"]}, "depends_on": ["b"]})
    assert not validator.is_valid(doc)
    assert any(e.validator == "additionalProperties" for e in validator.iter_errors(doc))


def test_minimal_document_is_accepted(validator: Draft202012Validator) -> None:
    assert validator.is_valid(MINIMAL)


def test_field_docs_are_descriptions() -> None:
    schema = workflow_json_schema()
    task = schema["$defs"]["task"]["properties"]
    assert set(task) == set(G.TASK.names)
    assert task["timeout"]["description"] == G.TASK["timeout"].doc
    assert schema["properties"]["tasks"]["description"] == G.ENVELOPE["tasks"].doc


def test_every_builtin_and_its_arguments_are_listed() -> None:
    schema = workflow_json_schema()
    ids = [alt["const"] for alt in schema["$defs"]["builtinTool"]["anyOf"]]
    assert ids == list(contracts.tool_ids()) and len(ids) == 28
    fetch = schema["$defs"]["args-fetch"]
    assert "url" in fetch["required"] and fetch["additionalProperties"] is False


@pytest.mark.parametrize(
    ("body", "ok"),
    [
        ({"exec": {"command": ["true"]}, "timeout": "1h30m"}, True),
        ({"exec": {"command": ["true"]}, "timeout": "30m1h"}, False),
        ({"exec": {"command": ["true"]}, "after": {"b": "terminal"}}, True),
        ({"exec": {"command": ["true"]}, "after": {"b": "completed"}}, False),
        ({"exec": {"command": ["true"], "capture": "structured", "decode": "json"}}, False),
        ({"exec": {"command": ["true"]}, "retry": {"max_attempts": 2, "on_codes": ["NIKA-TIMEOUT-001"]}}, True),
        ({"exec": {"command": ["true"]}, "retry": {"max_attempts": 2, "on_codes": ["timeout"]}}, False),
        ({"exec": {"command": ["true"]}, "returns": {"object": {"n": {"optional": "integer"}}}}, True),
        ({"exec": {"command": ["true"]}, "returns": {"objet": {"n": "integer"}}}, False),
        ({"exec": {"command": ["true"]}, "infer": {"prompt": "x"}}, False),
        ({"invoke": {"tool": "nika:read", "args": {"path": "a.txt"}}}, True),
        ({"invoke": {"tool": "nika:read", "args": {"pth": "a.txt"}}}, False),
        ({"invoke": {"tool": "nika:inspect"}}, False),
        ({"invoke": {"tool": "nika:nope"}}, False),
        ({"invoke": {"tool": "nika:done"}}, False),
        ({"invoke": {"tool": "mcp:github/search", "args": {"anything": 1}}}, True),
        ({"invoke": {"tool": "nika:hash", "args": {"content": "x", "algo": "md5"}}}, False),
        ({"invoke": {"tool": "nika:hash", "args": {"content": "x", "algo": "${{ inputs.algo }}"}}}, True),
        ({"invoke": {"tool": "nika:wait", "args": {"duration": "1s", "until": "x"}}}, False),
        ({"infer": {"prompt": "x", "model": "mock/echo"}}, True),
        ({"infer": {"prompt": "x", "model": "gpt-4o"}}, False),
    ],
)
def test_task_shapes(validator: Draft202012Validator, body: dict[str, Any], ok: bool) -> None:
    assert validator.is_valid(_with_task(body)) is ok


def test_cli_prints_the_schema() -> None:
    proc = subprocess.run([sys.executable, "-m", "nika", "schema"], capture_output=True, text=True, cwd=ROOT)
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout) == workflow_json_schema()
    helptext = subprocess.run(
        [sys.executable, "-m", "nika", "schema", "--help"], capture_output=True, text=True, cwd=ROOT
    ).stdout
    assert "yaml-language-server" in helptext


@pytest.mark.parametrize(("field", "modes"), [("capture", CAPTURE_MODES), ("decode", DECODE_MODES)])
def test_exec_modes_match_the_compiler(field: str, modes: tuple[str, ...]) -> None:
    text = f'nika: v1\nworkflow:\n  id: w\ntasks:\n  a:\n    exec:\n      command: ["true"]\n      {field}: nope\n'
    [d] = [d for d in compile_text(text).diagnostics if f"valid `{field}:`" in d.message]
    assert d.help is not None and d.help.endswith("Use one of " + ", ".join(modes) + ".")
