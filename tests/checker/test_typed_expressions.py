"""Expressions judged over declared types (04, 09 §typed value edges): what fails on every run by
the types of typed inputs, config, const, `returns:`, `with:` bindings and `for_each` items is
reported at check with the run's code; what some value of those types lets through is not."""

from __future__ import annotations

import pytest

from checker.engine.pipeline import compile_text
from checker.expr import parse_expression
from checker.expr.evaluate import EvalError, evaluate
from tests.checker.run_failures import is_run_failure, said

HEAD = """nika: v1
workflow: { id: t }
permits: { tools: ["nika:log"], exec: ["echo"] }
types:
  Point: { object: { x: integer, y: { optional: integer } } }
inputs:
  flag: { type: bool, required: true }
  n: { type: integer, default: 3 }
  ratio: { type: number, default: 0.5 }
  s: { type: string, default: "x" }
  opt: { type: string }
  tags: { type: { array: string }, default: [] }
  p: { type: Point, required: true }
  m: { type: { map: integer }, default: {} }
  open: { type: { object: { a: string }, additional: true }, required: true }
  either: { type: { union: [string, integer] }, required: true }
  level: { type: { enum: [low, high] }, default: low }
config:
  region: { type: string, default: eu }
const:
  hosts: [a, b]
  limit: 3
  typed: { type: integer, value: 7 }
tasks:
  make:
    exec: { command: ["echo"], decode: json }
    returns: { object: { title: string, count: integer, items: { array: string } } }
  free:
    exec: { command: ["echo"] }
"""

# Where the expression goes: a `nika:log` message in a task reading everything through `with:`.
USE = """  use:
    with:
      title: "${{ tasks.make.output.title }}"
      count: "${{ tasks.make.output.count }}"
      whole: "${{ tasks.make.output }}"
      loose: "${{ tasks.free.output }}"
      text: "n = ${{ inputs.n }}"
      lit: 5
      pair: { a: 1, b: "${{ inputs.s }}" }
    invoke: { tool: nika:log, args: { message: "EXPR" } }
"""


RUN_CODES = {"NIKA-VAR-006"}  # an evaluation failure (phase `run`): never a refusal


def compiled(expr: str, use: str = USE) -> list[tuple[str, str]]:
    text = HEAD + use.replace("EXPR", f"${{{{ {expr} }}}}")
    out = compile_text(text, "/tmp/w.nika.yaml", "/tmp")
    assert not any(d.is_error for d in out.diagnostics if d.code in RUN_CODES), out.diagnostics
    return [(d.code or "", text[d.span.start : d.span.end]) for d in out.diagnostics if said(d)]


POSITIVE = [
    ("inputs.flag.startsWith('a')", "NIKA-VAR-006", "inputs.flag.startsWith('a')"),
    ("'abc'.startsWith(inputs.n)", "NIKA-VAR-006", "'abc'.startsWith(inputs.n)"),
    ("size(inputs.n)", "NIKA-VAR-006", "size(inputs.n)"),
    ("inputs.n < 'a'", "NIKA-VAR-006", "inputs.n < 'a'"),
    ("inputs.s == 1", "NIKA-VAR-006", "inputs.s == 1"),
    ("'a' in inputs.n", "NIKA-VAR-006", "'a' in inputs.n"),
    ("inputs.s.x", "NIKA-VAR-001", "inputs.s.x"),
    ("inputs.p.z", "NIKA-VAR-001", "inputs.p.z"),
    ("inputs.tags.x", "NIKA-VAR-001", "inputs.tags.x"),
    ("inputs.tags['a']", "NIKA-VAR-006", "inputs.tags['a']"),
    ("!inputs.s", "NIKA-VAR-006", "inputs.s"),
    ("inputs.n && true", "NIKA-VAR-006", "inputs.n"),
    ("inputs.s ? 1 : 2", "NIKA-VAR-006", "inputs.s"),
    ("inputs.level < 1", "NIKA-VAR-006", "inputs.level < 1"),
    ("inputs.either < true", "NIKA-VAR-006", "inputs.either < true"),
    ("inputs.tags < inputs.tags", "NIKA-VAR-006", "inputs.tags < inputs.tags"),
    ("with.loose < [1]", "NIKA-VAR-006", "with.loose < [1]"),
    (
        "with.loose.x.startsWith(1)",
        "NIKA-VAR-006",
        "with.loose.x.startsWith(1)",
    ),  # never with an int argument  # unknown, yet no value orders against a list
    ("config.region > 1", "NIKA-VAR-006", "config.region > 1"),
    ("const.hosts.startsWith('a')", "NIKA-VAR-006", "const.hosts.startsWith('a')"),
    ("const.hosts[5]", "NIKA-VAR-001", "const.hosts[5]"),
    ("const.limit == 'x'", "NIKA-VAR-006", "const.limit == 'x'"),
    ("const.typed.x", "NIKA-VAR-001", "const.typed.x"),
    ("with.title < 1", "NIKA-VAR-006", "with.title < 1"),
    ("with.count.startsWith('1')", "NIKA-VAR-006", "with.count.startsWith('1')"),
    ("with.whole.nope", "NIKA-VAR-001", "with.whole.nope"),
    ("with.text > 1", "NIKA-VAR-006", "with.text > 1"),
    ("with.lit.x", "NIKA-VAR-001", "with.lit.x"),
    ("with.pair.c", "NIKA-VAR-001", "with.pair.c"),
    ("with.pair.b < 1", "NIKA-VAR-006", "with.pair.b < 1"),
    ("size(inputs.p.x)", "NIKA-VAR-006", "size(inputs.p.x)"),
    ("[inputs.n][0].startsWith('a')", "NIKA-VAR-006", "[inputs.n][0].startsWith('a')"),
    ("(inputs.flag ? inputs.n : 2) < 'a'", "NIKA-VAR-006", "(inputs.flag ? inputs.n : 2) < 'a'"),
]

NEGATIVE = [
    "inputs.opt == 1",  # an optional input without a default may be null, and null == 1 is false
    "inputs.n == 3 && inputs.s.startsWith('x')",
    "inputs.flag || inputs.n.startsWith('a')",  # the right side may never run
    "inputs.flag ? 1 : size(inputs.n)",  # a branch may never run
    "has(inputs.p.z)",
    "has(inputs.s.x)",
    "inputs.p.y > 0",  # optional field: present on some runs
    "inputs.open.anything",  # an open object may hold it
    "inputs.m.key > 1",  # a map may hold the key
    "inputs.tags[3] == 'a'",  # a list may be that long
    "inputs.tags[inputs.n] == 'a'",
    "const.hosts[inputs.n] == 'a'",
    "inputs.ratio < 1",  # integer and double compare
    "inputs.either < 1",  # one member of the union orders against an int
    "inputs.either.startsWith('a')",
    "with.loose.x.y < 1",  # a producer without `returns:` is unknown
    "inputs.level == 'low'",
    "'a' in inputs.tags",
    "'a' in inputs.m",
    "inputs.tags == []",
    "inputs.p == inputs.p",
    "inputs.s == null",
    "with.loose.anything.startsWith('a')",  # no `returns:`: unknown
    "with.title.startsWith('x')",
    "with.whole.items[2] == 'x'",
    "size(with.text) > 0",
    "with.pair.a < 2",
    "inputs.undeclared < 1",  # reported once, by the reference rule
    "tasks.make.output.count",  # out of scope in a body: reported once, by the reference rule
]


@pytest.mark.parametrize(("expr", "code", "at"), POSITIVE)
def test_a_type_failure_is_reported_with_the_runs_code(expr: str, code: str, at: str) -> None:
    found = compiled(expr)
    assert found == [(code, at)], found


@pytest.mark.parametrize("expr", NEGATIVE)
def test_what_some_value_lets_through_is_not_refused(expr: str) -> None:
    found = [f for f in compiled(expr) if f[0] in ("NIKA-VAR-006", "NIKA-VAR-003")]
    assert found == [], found
    if not expr.startswith(("inputs.undeclared", "tasks.")):
        assert compiled(expr) == []


def test_the_failure_is_the_one_the_run_raises_on_fitting_values() -> None:
    """check ≡ run: each input-only positive case fails in the runtime's evaluator on values that
    fit the declared types, with the code the check reported."""
    scope = {
        "inputs": {"flag": True, "n": 3, "s": "x", "tags": ["a"], "p": {"x": 1}, "level": "low"},
        "config": {"region": "eu"},
        "const": {"hosts": ["a", "b"], "limit": 3, "typed": 7},
    }
    for expr, code, _ in POSITIVE:
        if "with." in expr or "either" in expr:
            continue
        with pytest.raises(EvalError) as caught:
            evaluate(parse_expression(expr), scope)
        assert caught.value.code == code, expr


def test_a_read_outside_the_returns_type_is_var_003_with_a_suggestion() -> None:
    use = '  use:\n    with: { t: "${{ tasks.make.output.titel }}" }\n'
    use += '    invoke: { tool: nika:log, args: { message: "EXPR" } }\n'
    text = HEAD + use.replace("EXPR", "${{ with.t }}")
    out = compile_text(text, "/tmp/w.nika.yaml", "/tmp")
    errors = [d for d in out.diagnostics if d.is_error]
    assert [(d.code, text[d.span.start : d.span.end]) for d in errors] == [("NIKA-VAR-003", "tasks.make.output.titel")]
    assert "`.title`" in (errors[0].help or "")
    [edit] = errors[0].fixes[0].edits
    fixed = text[: edit.span.start] + edit.new_text + text[edit.span.end :]
    assert '"${{ tasks.make.output.title }}"' in fixed
    after = compile_text(fixed, "/tmp/w.nika.yaml", "/tmp")
    assert [d.code for d in after.diagnostics if d.is_error] == []


def test_a_step_deeper_than_the_top_level_suggests_from_its_own_level() -> None:
    head = HEAD.replace(
        "items: { array: string } }", "items: { array: string }, meta: { object: { author: string } } }"
    )
    use = '  use:\n    with: { t: "${{ tasks.make.output.meta.autor }}" }\n'
    use += "    invoke: { tool: nika:log, args: { message: hi } }\n"
    out = compile_text(head + use, "/tmp/w.nika.yaml", "/tmp")
    [d] = [d for d in out.diagnostics if d.is_error]
    assert d.code == "NIKA-VAR-003" and "`.author`" in (d.help or "") and "title" not in (d.help or "")


@pytest.mark.parametrize(
    ("use", "found"),
    [
        # `when:` reads the bindings: the type of what they bind flows into it
        (
            '  use:\n    with: { c: "${{ tasks.make.output.count }}" }\n    when: "${{ with.c == \'5\' }}"\n'
            "    invoke: { tool: nika:log, args: { message: hi } }\n",
            [("NIKA-VAR-006", "with.c == '5'")],
        ),
        (
            '  use:\n    with: { c: "${{ tasks.make.output.count }}" }\n    when: "${{ with.c == 5 }}"\n'
            "    invoke: { tool: nika:log, args: { message: hi } }\n",
            [],
        ),
        # the item of a fan-out over a typed list is one of its items
        (
            '  use:\n    for_each: "${{ inputs.tags }}"\n'
            '    invoke: { tool: nika:log, args: { message: "${{ item < 1 }}" } }\n',
            [("NIKA-VAR-006", "item < 1")],
        ),
        (
            "  use:\n    for_each: [1, 2]\n"
            "    invoke: { tool: nika:log, args: { message: \"${{ item.startsWith('a') }}\" } }\n",
            [("NIKA-VAR-006", "item.startsWith('a')")],
        ),
        (
            '  use:\n    for_each: [1, "a"]\n'
            "    invoke: { tool: nika:log, args: { message: \"${{ item.startsWith('a') }}\" } }\n",
            [],
        ),
        (
            '  use:\n    for_each: "${{ inputs.tags }}"\n'
            "    invoke: { tool: nika:log, args: { message: \"${{ index.startsWith('a') }}\" } }\n",
            [("NIKA-VAR-006", "index.startsWith('a')")],
        ),
    ],
)
def test_types_flow_through_bindings_and_fan_outs(use: str, found: list[tuple[str, str]]) -> None:
    assert compiled("", use) == found


@pytest.mark.parametrize(
    "producer",
    [
        # a fan-out's output is the list of its iterations' outputs; a recovered value is not
        # held to `returns:`; `schema:` beside `returns:` is TYPE-003's and the schema walk's
        "    for_each: [1]\n",
        "    on_error: { recover: 5 }\n",
    ],
)
def test_producers_whose_output_is_not_their_returns_type_stay_unknown(producer: str) -> None:
    head = HEAD.replace("    returns: { object:", producer + "    returns: { object:")
    use = '  use:\n    with: { c: "${{ tasks.make.output.count }}" }\n    when: "${{ with.c == \'5\' }}"\n'
    use += "    invoke: { tool: nika:log, args: { message: hi } }\n"
    out = compile_text(head + use, "/tmp/w.nika.yaml", "/tmp")
    assert [d.code for d in out.diagnostics if d.code in ("NIKA-VAR-006", "NIKA-VAR-003")] == []


@pytest.mark.parametrize(
    ("for_each", "refused"),
    [
        ('"${{ inputs.n }}"', True),
        ('"${{ inputs.p }}"', True),
        ('"${{ inputs.tags }}"', False),
        ('"${{ with.whole }}"', True),  # an object (or null when the producer was skipped)
        ('"${{ with.whole.items }}"', False),
        ('"${{ with.loose }}"', False),  # no `returns:`: unknown
        ('"${{ inputs.either }}"', True),
        ('"items: ${{ inputs.tags }}"', True),  # a template with text around is a string
    ],
)
def test_a_fan_out_over_a_declared_non_list_is_refused(for_each: str, refused: bool) -> None:
    use = USE.replace("    invoke:", f"    for_each: {for_each}\n    invoke:").replace("EXPR", "hi")
    out = compile_text(HEAD + use, "/tmp/w.nika.yaml", "/tmp")
    assert not any(d.is_error for d in out.diagnostics), out.diagnostics
    found = [d.code for d in out.diagnostics if is_run_failure(d)]
    assert found == (["NIKA-VAR-006"] if refused else []), found
