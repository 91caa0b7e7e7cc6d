"""The checker's jq recogniser against real jq (libjq through the `jq` package, a test-only
dependency of the checker: the runtime compiles with it, the checker never imports it).

Programs come from everywhere jq is written for Nika: every jq program in the spec's prose, its
templates and conformance suite and our own examples (output bindings, `nika:jq` expressions,
`nika:fetch` `jq:`), hand-picked corners of jq (`jq_corpus.EDGES`), programs from a random jq
grammar and mutants of all of these (`jq_corpus.generated`, a fixed seed). libjq compiles each,
and the recogniser must refuse exactly the programs libjq refuses, in both directions and with
no allow-list: a program jq compiles is never refused (that would fail a valid workflow) and a
program jq refuses, for its syntax or for a name it cannot resolve, is always refused.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from functools import cache
from pathlib import Path

import pytest
from jq_corpus import EDGES, generated
from suite_size import examples

from checker.core.source import SourceText
from checker.expr import has_island
from checker.jq.builtins import BUILTINS
from checker.jq.syntax import jq_problem
from checker.parse.nodes import parse_yaml
from checker.parse.values import ListValue, MapValue, ScalarValue, Value
from checker.rules.jq import ISLAND_NAME, rendered_program

pytestmark = pytest.mark.xdist_group("jq-corpus")  # one worker judges the corpus (module fixture), not each

import jq  # noqa: E402 - a dependency of the base install (the runtime compiles with it)

ROOT = Path(__file__).resolve().parents[2]
SPEC = ROOT.parent / "shared" / "nika-spec"
FENCE = re.compile(r"^```ya?ml[^\n]*\n(.*?)^```", re.S | re.M)
JQ_ARGS = {"nika:jq": "expression", "nika:fetch": "jq"}

# The generated part of the corpus: programs from the grammar, then mutants (mostly refused, and
# cheap for libjq to refuse, so they are the bulk). About 3,200 distinct programs in `.ci/run
# campaigns` (~3 s of libjq), a fixed-seed quarter of them (about 1,000) in the default suite.
GENERATED = examples(600, 150)
MUTANTS = examples(2400, 600)


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
def written_programs() -> tuple[str, ...]:
    """Every jq program the spec (prose, templates, conformance suite) and our examples write."""
    found: set[str] = set()
    if SPEC.is_dir():
        for md in sorted(SPEC.glob("**/*.md")):
            for block in FENCE.finditer(md.read_text("utf-8")):
                found.update(_programs_in(block.group(1)))
    files = sorted(SPEC.glob("templates/**/*.yaml")) + sorted(SPEC.glob("conformance/**/*.yaml"))
    for path in files + sorted((ROOT / "examples").glob("**/*.yaml")):
        try:
            found.update(_programs_in(path.read_text("utf-8")))
        except UnicodeDecodeError:
            continue
    return tuple(sorted(found))


Verdicts = list[tuple[str, str | None, str | None]]  # program, libjq's error, our refusal


def judged(programs: list[str]) -> Verdicts:
    out: Verdicts = []
    for program in programs:
        problem = jq_problem(program)
        out.append((program, libjq_error(program), None if problem is None else problem.message))
    return out


def disagreements(verdicts: Verdicts, *, jq_compiles: bool) -> list[tuple[str, str | None, str | None]]:
    """The programs judged differently among those libjq compiles (or refuses)."""
    return [
        (program, err and err.splitlines()[0], ours)
        for program, err, ours in verdicts
        if (err is None) == jq_compiles and (ours is None) != (err is None)
    ]


def test_the_builtin_table_is_libjq_s() -> None:
    listed = {tuple(entry.rsplit("/", 1)) for entry in jq.compile("builtins").input_value(None).first()}
    listed_pairs = {(name, int(arity)) for name, arity in listed}
    assert listed_pairs <= BUILTINS, "libjq has builtins the table lacks"
    assert all(name.startswith("_") for name, _ in BUILTINS - listed_pairs), "only hidden helpers are unlisted"
    # One live call of every entry: libjq names the first that does not exist.
    calls = [name if n == 0 else f"{name}({'; '.join(['.'] * n)})" for name, n in sorted(BUILTINS)]
    assert libjq_error("[" + ", ".join(f"({c})" for c in calls) + "] | length") is None


def test_written_programs_are_judged_as_jq_judges_them() -> None:
    if not SPEC.is_dir():
        pytest.skip(f"the Nika spec is not checked out at {SPEC}")
    verdicts = judged([p for p in written_programs() if not has_island(p)])
    assert len(verdicts) >= 25
    assert disagreements(verdicts, jq_compiles=True) == disagreements(verdicts, jq_compiles=False) == []


def test_templated_programs_are_judged_as_jq_judges_their_renderings() -> None:
    """A `${{ … }}` island is judged as a name defined everywhere; libjq agrees once that name is
    defined (as a function of every arity the program uses and as a `$` variable)."""
    templated = [p for p in written_programs() if has_island(p)]
    templated += [
        ".items[0].${{ const.key }}",
        ".items[${{ inputs.n }}] | .${{ inputs.field }}",
        '.items | map(select(.name == "${{ inputs.field }}"))',
        "${{ inputs.fn }}(.a; .b) | $${{ inputs.var }}",
        "{${{ inputs.key }}: 1} | @${{ inputs.fmt }}",
        ".a | ${{ inputs.n }} |",
        "${{ inputs.fn }}(.a",
    ]
    prelude = " ".join(f"def {ISLAND_NAME}{'' if n == 0 else '(' + ';'.join('abc'[:n]) + ')'}: .;" for n in range(4))
    for template in templated:
        rendered = rendered_program(template, ISLAND_NAME)
        assert rendered is not None
        program = rendered[0]
        try:
            jq.compile(f"{prelude} {program}", args={ISLAND_NAME: 0})
            err = None
        except ValueError as exc:
            err = str(exc)
        assert (jq_problem(program, open_name=ISLAND_NAME) is None) == (err is None), (template, err)


@pytest.fixture(scope="module")
def corpus() -> Verdicts:
    return judged(list(dict.fromkeys([*written_programs(), *EDGES, *generated(GENERATED, MUTANTS)])))


def test_corpus_is_large_and_mixed(corpus: Verdicts) -> None:
    errors = [err for _, err, _ in corpus if err is not None]
    # the generated part does not depend on the pinned spec beside the project; its programs add
    # about 30 where it is present (a clean checkout may have none of them)
    written = len(written_programs())
    assert len(corpus) - written >= examples(3000, 950)
    assert not SPEC.is_dir() or written >= 25
    assert len(corpus) - len(errors) >= examples(700, 300)  # programs jq compiles
    assert sum("syntax error" in err for err in errors) >= examples(1000, 450)
    assert sum("is not defined" in err for err in errors) >= examples(250, 100)  # names jq cannot resolve
    rest = sum("syntax error" not in err and "is not defined" not in err for err in errors)
    assert rest >= examples(100, 60)  # the rest


def test_no_program_jq_compiles_is_refused(corpus: Verdicts) -> None:
    assert disagreements(corpus, jq_compiles=True) == []


def test_every_program_jq_refuses_is_refused(corpus: Verdicts) -> None:
    assert disagreements(corpus, jq_compiles=False) == []


@pytest.mark.parametrize("depth", [30, 120, 400])
def test_deep_nesting_is_judged_or_left_to_jq(depth: int) -> None:
    """Past the parser's depth bound the recogniser still refuses what the scanner alone proves
    wrong (an unclosed bracket, a bad escape), and accepts the rest rather than guess."""
    for program in ["(" * depth + "1" + ")" * depth, "[" * depth + "1" + "]" * depth, "(" * depth + "1"]:
        assert (jq_problem(program) is None) == (libjq_error(program) is None), program[:40]
    assert jq_problem("(" * depth + '"\\q"' + ")" * depth) is not None


@pytest.mark.parametrize(
    ("program", "at", "words"),
    [
        (".a | | b", "|", "nothing on its left"),
        (".a |", "|", "nothing on its right"),
        (".items[0] | (.a", "(", "never closed"),
        ('"abc', '"', "unterminated string"),
        ("if . then 1", "if", "never closed"),
        ("1 2", "2", "two values"),
        (". foo", "foo", "`.foo`"),
        ("lenght", "lenght", "did you mean `length`"),
        ("map(.; .)", "map", "takes 1 argument"),
        (". as [$a] | $b", "$b", "`$b` is not defined"),
        ("break $out", "break $out", "no enclosing `label $out"),
        ("{(1 + 1): 2}", "1 + 1", "always a number"),
        ('"\\q"', "\\q", "not a string escape"),
        ("1 == 2 == 3", "==", "do not chain"),
        ("try .a + 1 catch 0", "catch", "parentheses"),
        (".a.[1:2]", ":", "slice"),
        ("def f: 1;", "def f: 1;", "only defines functions"),
        ('import "m" as m; .', "import", "module"),
    ],
)
def test_refusals_say_where_and_why(program: str, at: str, words: str) -> None:
    assert libjq_error(program) is not None
    problem = jq_problem(program)
    assert problem is not None
    assert program[problem.start : problem.end] == at
    assert words in problem.message


@pytest.mark.parametrize("program", ["-first", "-length", "-.a", "-1", "-nan", ".a | -first", "--sort-keys"])
def test_negation_is_not_a_flag(program: str) -> None:
    assert libjq_error(program) is None
    assert jq_problem(program) is None


@pytest.mark.parametrize("program", ["-n", "-r", "-nr", "--arg", "--raw-output .a"])
def test_command_line_flags_are_refused(program: str) -> None:
    assert libjq_error(program) is not None
    problem = jq_problem(program)
    assert problem is not None and "flag" in problem.message
