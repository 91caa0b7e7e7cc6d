"""The structural jq check against real jq (libjq through the `jq` package, a test-only dependency).

Programs come from three places: every jq program the spec and its templates write (output
bindings, `nika:jq` expressions, `nika:fetch` `jq:`), programs generated from a small jq grammar,
and single-character mutants of those. Real jq compiles each one.

* A program jq compiles must never be refused (a false refusal fails a valid workflow).
* Every program the spec writes is judged exactly as jq judges it.
* A program jq refuses for its syntax should be refused too. The structural check does not parse
  the full jq grammar yet, so this direction is held to a ceiling that may only come down.
  Programs jq refuses only because a name is not defined (`foo/0 is not defined`) are left out:
  the runtime engine (jaq) has its own set of definitions.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from functools import cache
from pathlib import Path

import pytest
from jq_corpus import generated

from checker.expr import has_island
from checker.jq_syntax import jq_problem
from checker.source import SourceText
from checker.values import ListValue, MapValue, ScalarValue, Value
from checker.yaml_nodes import parse_yaml

jq = pytest.importorskip("jq", reason="the `jq` package (libjq bindings) is not installed; install '.[test]'")

SPEC = Path(__file__).resolve().parents[2].parent / "shared" / "nika-spec"
FENCE = re.compile(r"^```ya?ml[^\n]*\n(.*?)^```", re.S | re.M)
JQ_ARGS = {"nika:jq": "expression", "nika:fetch": "jq"}

# Syntax errors among the generated mutants that the structural check lets through (it is not a
# full jq parser). Lower it when the check learns more; never raise it.
MISSED_CEILING = 79


def libjq_error(program: str) -> str | None:
    try:
        jq.compile(program)
    except ValueError as exc:
        return str(exc)
    return None


def _nodes(root: Value) -> Iterator[MapValue]:
    todo = [root]
    while todo:
        node = todo.pop()
        if isinstance(node, MapValue):
            yield node
            for e in node.entries:
                todo += [e.key, e.value]
        elif isinstance(node, ListValue):
            todo += node.items


def _programs_in(text: str) -> Iterator[str]:
    root = parse_yaml(SourceText(text, "example.yaml")).root
    if root is None:
        return
    for m in _nodes(root):
        tool, args, output = m.get("tool"), m.get("args"), m.get("output")
        if isinstance(tool, ScalarValue) and tool.value in JQ_ARGS and isinstance(args, MapValue):
            program = args.get(JQ_ARGS[str(tool.value)])
            if isinstance(program, ScalarValue) and isinstance(program.value, str):
                yield program.value
        if isinstance(output, MapValue):
            for e in output.entries:
                if isinstance(e.value, ScalarValue) and isinstance(e.value.value, str):
                    yield e.value.value


@cache
def spec_programs() -> tuple[str, ...]:
    if not SPEC.is_dir():
        return ()
    found: set[str] = set()
    for md in sorted(SPEC.glob("**/*.md")):
        for block in FENCE.finditer(md.read_text("utf-8")):
            found.update(_programs_in(block.group(1)))
    for path in sorted(SPEC.glob("templates/**/*.yaml")) + sorted(SPEC.glob("conformance/**/*.yaml")):
        try:
            found.update(_programs_in(path.read_text("utf-8")))
        except UnicodeDecodeError:
            continue
    return tuple(sorted(p for p in found if not has_island(p)))


def test_spec_programs_are_judged_as_jq_judges_them() -> None:
    if not SPEC.is_dir():
        pytest.skip(f"the Nika spec is not checked out at {SPEC}")
    programs = spec_programs()
    assert len(programs) >= 25
    disagree = [(p, jq_problem(p), libjq_error(p)) for p in programs]
    assert [d for d in disagree if (d[1] is None) != (d[2] is None)] == []


@pytest.fixture(scope="module")
def corpus() -> list[tuple[str, str | None]]:
    programs = [*generated(500), *spec_programs()]
    return [(p, libjq_error(p)) for p in programs]


def test_corpus_is_large_and_mixed(corpus: list[tuple[str, str | None]]) -> None:
    assert len(corpus) >= 1000
    compiled = sum(err is None for _, err in corpus)
    assert 400 <= compiled <= len(corpus) - 200  # both valid and broken programs are exercised


def test_no_program_jq_compiles_is_refused(corpus: list[tuple[str, str | None]]) -> None:
    refused = [(p, problem.message) for p, err in corpus if err is None and (problem := jq_problem(p)) is not None]
    assert refused == []


def test_syntax_errors_jq_refuses_are_mostly_refused(corpus: list[tuple[str, str | None]]) -> None:
    syntax = [p for p, err in corpus if err is not None and "is not defined" not in err]
    missed = [p for p in syntax if jq_problem(p) is None]
    assert len(syntax) >= 200
    assert len(missed) <= MISSED_CEILING, missed[:20]


@pytest.mark.parametrize(
    "program",
    ["-first", "-length", "-.a", "-1", "-nan", ".a | -first"],
)
def test_negation_is_not_a_flag(program: str) -> None:
    assert libjq_error(program) is None
    assert jq_problem(program) is None


@pytest.mark.parametrize("program", ["-n", "-r", "-nr", "--arg", "--raw-output .a"])
def test_command_line_flags_are_refused(program: str) -> None:
    problem = jq_problem(program)
    assert problem is not None and "flag" in problem.message
