"""Every builtin call the spec writes itself must pass the argument contracts.

The spec's prose examples (spec/, stdlib/, the quick start), its templates and its positive
conformance fixtures are valid by definition: a contract that refuses one of them is wrong.
Each `tool: nika:…` mapping is judged on its own (code blocks are often fragments); whole
workflow files are also checked end to end for tools-family findings.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path

import pytest

from checker import compile_text
from checker.contracts import tables as contracts
from checker.core.source import SourceText
from checker.parse.nodes import parse_yaml
from checker.parse.values import ListValue, MapValue, ScalarValue, Value

SPEC = Path(__file__).resolve().parents[3].parent / "shared" / "nika-spec"
pytestmark = pytest.mark.skipif(not SPEC.is_dir(), reason=f"the Nika spec is not checked out at {SPEC}")

FENCE = re.compile(r"^```ya?ml[^\n]*\n(.*?)^```", re.S | re.M)
PROSE = ("spec/*.md", "stdlib/*.md", "QUICKSTART.md", "README.md", "templates/**/*.md")

# Examples the spec itself marks as not valid v0.1 workflows, with why.
NOT_VALID = {
    ("spec/08-out-of-scope.md", "nika:fetch"): "the macro example is labelled `NOT supported in v0.1` and elides args",
    ("spec/08-out-of-scope.md", "nika:connectome/recall"): "the Connectome capability is deferred, not a v0.1 builtin",
    ("stdlib/builtins-v0.1.md", "nika:wait"): "one block shows both modes; the text makes them exactly-one-of",
}


def is_tools_finding(code: str | None) -> bool:
    return code is not None and (code.startswith("NIKA-BUILTIN") or code in ("NIKA-INVOKE-001", "NIKA-PARSE-019"))


def _mappings(root: Value) -> Iterator[MapValue]:
    todo = [root]
    while todo:
        node = todo.pop()
        if isinstance(node, MapValue):
            yield node
            for e in node.entries:
                todo += [e.key, e.value]
        elif isinstance(node, ListValue):
            todo += node.items


def builtin_calls(text: str) -> Iterator[tuple[str, ScalarValue, Value | None]]:
    parsed = parse_yaml(SourceText(text, "example.yaml"))
    if parsed.root is None:
        return
    for m in _mappings(parsed.root):
        tool = m.get("tool")
        if isinstance(tool, ScalarValue) and isinstance(tool.value, str) and tool.value.startswith("nika:"):
            yield tool.value, tool, m.get("args")


def _positive_fixture(path: Path, text: str) -> bool:
    rel = path.relative_to(SPEC).as_posix()
    if "/invalid/" in rel:
        return False
    expected = path.parent / "expected.json"
    if expected.is_file():
        return bool(json.loads(expected.read_text("utf-8")).get("valid"))
    if (path.parent / "expected-lints.json").is_file() or "/valid/" in rel:
        return True
    header = re.search(r"^# Expected: (.*)$", text, re.M)
    return header is not None and header.group(1).startswith(("exit 0", "check-pass"))


def example_sources() -> Iterator[tuple[str, str]]:
    for pattern in PROSE:
        for md in sorted(SPEC.glob(pattern)):
            text = md.read_text("utf-8")
            for block in FENCE.finditer(text):
                yield md.relative_to(SPEC).as_posix(), block.group(1)
    for path in workflow_files():
        yield path.relative_to(SPEC).as_posix(), path.read_text("utf-8")


def workflow_files() -> list[Path]:
    out = sorted(SPEC.glob("templates/**/*.yaml"))
    for path in sorted(SPEC.glob("conformance/**/*.yaml")):
        try:
            text = path.read_text("utf-8")
        except UnicodeDecodeError:
            continue
        if "nika:" in text and _positive_fixture(path, text):
            out.append(path)
    return out


def test_every_builtin_call_in_the_spec_passes_its_contract() -> None:
    seen = 0
    refused: list[str] = []
    for where, text in example_sources():
        for tool, node, args in builtin_calls(text):
            if (where, tool) in NOT_VALID:
                continue
            seen += 1
            tool_value = node
            assert isinstance(tool_value, ScalarValue)
            found = contracts.check_tool_ref(tool_value, task=None) or contracts.check_tool_args(
                tool, args if args is not None else None, task=None, anchor=node.span
            )
            refused += [f"{where}: {tool}: {d.code} {d.message}" for d in found]
    assert refused == []
    assert seen >= 100  # the spec holds over a hundred builtin calls; far fewer means extraction broke


@pytest.mark.parametrize("path", workflow_files(), ids=lambda p: p.relative_to(SPEC).as_posix())
def test_spec_workflows_have_no_tools_finding(path: Path) -> None:
    compiled = compile_text(path.read_text("utf-8"), str(path))
    assert [f"{d.code} {d.message}" for d in compiled.diagnostics if is_tools_finding(d.code)] == []
