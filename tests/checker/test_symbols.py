"""The symbol index: every definition and use, with spans that cover exactly the name."""

from __future__ import annotations

import pytest

from checker import compile_text
from checker.core.source import Span
from checker.views.symbols import Symbol, SymbolIndex, build_index, rename_blocker, rename_problem

FLOW = """\
nika: v1
workflow:
  id: symbols
model: mock/echo
types:
  Verdict: { enum: ["low", "high"] }
  Reply:
    object:
      risk: Verdict
      notes: { optional: { array: Verdict } }
      alt: { union: [Verdict, null] }
inputs:
  topic: { type: string, required: true }
  mood: { type: Verdict, default: low }
config:
  region: { type: string, default: "eu" }
const:
  greeting: "hello"
  pi: { type: Verdict, value: low }
secrets:
  token: { source: env, key: API_TOKEN, egress: [{ to: exec }] }
permits:
  exec: ["echo"]
  tools: ["nika:jq", "nika:log"]
tasks:
  fetch:
    # 🦊 café — a line with an emoji and accents before the references
    infer:
      prompt: "Tell me about ${{ inputs.topic }} in ${{ config.region }}"
    returns: Reply
  shout:
    with:
      r: ${{ tasks . fetch . output.risk }}
      s: ${{ tasks['fetch'].status }}
    when: ${{ with.s == 'success' && has(with.r) }}
    exec:
      command: ["echo", "${{ const.greeting }} ${{ with.r }}"]
    on_error: { recover: "${{ tasks.fetch.output }}" }
  fan:
    with:
      r: ${{ tasks.fetch.output }}
    invoke:
      tool: "nika:jq"
      args: { input: "${{ with.r }}", expression: "." }
    output:
      first: ".[0]"
  last:
    after: { fan: success, shout: terminal }
    with:
      first: ${{ tasks.fan.first }}
    invoke:
      tool: "nika:log"
      args: { level: info, message: "${{ with.first }}" }
outputs:
  risk: ${{ tasks.fetch.output }}
  typed:
    value: ${{ tasks.last.status }}
    type: Verdict
"""


def at(text: str, needle: str, nth: int = 0, inner: str | None = None) -> Span:
    """The span of ``inner`` (default: ``needle``) inside the ``nth`` occurrence of ``needle``."""
    pos = -1
    for _ in range(nth + 1):
        pos = text.index(needle, pos + 1)
    if inner is None:
        return Span(pos, pos + len(needle))
    start = pos + needle.index(inner)
    return Span(start, start + len(inner))


@pytest.fixture(scope="module")
def index() -> SymbolIndex:
    compiled = compile_text(FLOW)
    assert compiled.clean, [d.message for d in compiled.diagnostics]
    return build_index(compiled)


def texts(symbol: Symbol, text: str = FLOW) -> list[str]:
    return [text[s.start : s.end] for s in symbol.all_spans()]


def sym(index: SymbolIndex, kind: str, name: str, scope: str | None = None) -> Symbol:
    found = index.lookup(kind, name, scope)
    assert found is not None, (kind, name, scope)
    return found


def test_task_definition_and_every_kind_of_use(index: SymbolIndex) -> None:
    fetch = sym(index, "task", "fetch")
    assert fetch.definition == at(FLOW, "  fetch:", inner="fetch")
    assert fetch.uses == (
        at(FLOW, "tasks . fetch . output", inner="fetch"),  # spaces around the dots
        at(FLOW, "tasks['fetch']", inner="fetch"),  # a string index step
        at(FLOW, 'recover: "${{ tasks.fetch.output', inner="fetch"),
        at(FLOW, "r: ${{ tasks.fetch.output", inner="fetch"),
        at(FLOW, "risk: ${{ tasks.fetch.output", inner="fetch"),  # workflow outputs
    )
    assert set(texts(fetch)) == {"fetch"}
    assert fetch.unmapped == 0 and fetch.scope is None


def test_after_keys_are_task_uses(index: SymbolIndex) -> None:
    assert sym(index, "task", "fan").uses[0] == at(FLOW, "{ fan: success", inner="fan")
    shout = sym(index, "task", "shout")
    assert shout.uses == (at(FLOW, "shout: terminal", inner="shout"),)
    last = sym(index, "task", "last")
    assert last.uses == (at(FLOW, "tasks.last.status", inner="last"),)


def test_with_bindings_are_scoped_to_their_task(index: SymbolIndex) -> None:
    r_shout = sym(index, "with", "r", "shout")
    assert r_shout.definition == at(FLOW, "      r: ${{ tasks . fetch", inner="r")
    assert r_shout.uses == (
        at(FLOW, "has(with.r)", inner="r"),
        at(FLOW, '${{ with.r }}"]', inner="r"),
    )
    r_fan = sym(index, "with", "r", "fan")
    assert r_fan.definition == at(FLOW, "      r: ${{ tasks.fetch.output }}", inner="r")
    assert r_fan.uses == (at(FLOW, 'input: "${{ with.r }}', inner="r"),)
    s = sym(index, "with", "s", "shout")
    assert s.uses == (at(FLOW, "with.s ==", inner="s"),)


def test_output_bindings_are_task_members(index: SymbolIndex) -> None:
    first = sym(index, "output", "first", "fan")
    assert first.definition == at(FLOW, '      first: ".[0]"', inner="first")
    assert first.uses == (at(FLOW, "tasks.fan.first", inner="first"),)
    # `output` and `status` are task fields, not bindings
    assert index.lookup("output", "output", "fetch") is None
    # the `with:` binding of the same name in another task is another symbol
    assert sym(index, "with", "first", "last").uses == (at(FLOW, "${{ with.first }}", inner="first"),)


@pytest.mark.parametrize(
    ("kind", "name", "use"),
    [
        ("inputs", "topic", "inputs.topic"),
        ("config", "region", "config.region"),
        ("const", "greeting", "const.greeting"),
    ],
)
def test_value_sections(index: SymbolIndex, kind: str, name: str, use: str) -> None:
    symbol = sym(index, kind, name)
    assert symbol.definition == at(FLOW, f"  {name}:", inner=name)
    assert symbol.uses == (at(FLOW, use, inner=name),)


def test_declared_but_unused_entries_have_a_home_and_no_uses(index: SymbolIndex) -> None:
    token = sym(index, "secrets", "token")
    assert token.uses == () and token.all_spans() == (at(FLOW, "  token:", inner="token"),)


def test_named_types(index: SymbolIndex) -> None:
    verdict = sym(index, "type", "Verdict")
    assert verdict.definition == at(FLOW, "  Verdict:", inner="Verdict")
    assert texts(verdict) == ["Verdict"] * 7
    lines = [FLOW.count("\n", 0, s.start) + 1 for s in verdict.uses]
    # inside Reply (field, optional array, union), inputs.mood, const.pi, the typed output
    assert lines == [9, 10, 11, 14, 19, FLOW.count("\n")]
    reply = sym(index, "type", "Reply")
    assert reply.uses == (at(FLOW, "returns: Reply", inner="Reply"),)


def test_enum_values_are_data_not_type_uses() -> None:
    text = FLOW.replace('enum: ["low", "high"]', 'enum: ["low", "Reply"]')
    reply = sym(build_index(compile_text(text)), "type", "Reply")
    assert reply.uses == (at(text, "returns: Reply", inner="Reply"),)


def test_symbol_at(index: SymbolIndex) -> None:
    use = at(FLOW, "tasks.fan.first", inner="fan")
    assert index.symbol_at(use.start) is sym(index, "task", "fan")
    assert index.symbol_at(use.end) is sym(index, "task", "fan")  # cursor right after the name
    first = at(FLOW, "tasks.fan.first", inner="first")
    assert index.symbol_at(first.start) is sym(index, "output", "first", "fan")
    assert index.symbol_at(at(FLOW, "tasks.fan.first").start) is None  # on `tasks`
    assert index.symbol_at(at(FLOW, "nika: v1").start) is None


def test_spans_are_code_points_after_astral_characters() -> None:
    text = FLOW.replace('prompt: "Tell me', 'prompt: "🦊🦊 é Tell me')
    index = build_index(compile_text(text))
    topic = sym(index, "inputs", "topic")
    assert texts(topic, text) == ["topic", "topic"]
    assert topic.uses == (at(text, "inputs.topic", inner="topic"),)


def test_block_scalar_uses_are_exact() -> None:
    text = FLOW.replace(
        '      prompt: "Tell me about ${{ inputs.topic }} in ${{ config.region }}"\n',
        "      prompt: |\n        About:\n          ${{ inputs.topic }} ✓ ${{ config.region }}\n",
    )
    index = build_index(compile_text(text))
    assert sym(index, "inputs", "topic").uses == (at(text, "${{ inputs.topic", inner="topic"),)
    assert sym(index, "config", "region").uses == (at(text, "${{ config.region", inner="region"),)


def test_unmappable_uses_are_counted_not_guessed() -> None:
    text = FLOW.replace('prompt: "Tell me about', 'prompt: "Tell\\tme about')
    index = build_index(compile_text(text))
    topic = sym(index, "inputs", "topic")
    assert topic.uses == () and topic.unmapped == 1
    problem = rename_problem(index, topic, "subject")
    assert problem is not None and "cannot be mapped" in problem
    assert rename_blocker(topic) == problem


def test_an_invalid_name_can_be_renamed_to_a_valid_one() -> None:
    text = (
        "nika: v1\nworkflow: { id: w }\ntasks:\n  Bad-Id:\n    exec: { shell: x }\n"
        "  b:\n    after: { Bad-Id: success }\n    exec: { shell: y }\n"
    )
    index = build_index(compile_text(text))
    bad = sym(index, "task", "Bad-Id")
    assert len(bad.all_spans()) == 2
    assert rename_blocker(bad) is None and rename_problem(index, bad, "good_id") is None
    assert rename_problem(index, bad, "Bad-Id") is not None


def test_declassify_from_is_a_use() -> None:
    text = FLOW.replace(
        "    returns: Reply\n",
        "    returns: Reply\n    declassify:\n      - { from: inputs.topic, to: trusted, because: reviewed }\n",
    )
    index = build_index(compile_text(text))
    assert at(text, "from: inputs.topic", inner="topic") in sym(index, "inputs", "topic").uses


def test_file_links() -> None:
    text = """\
nika: v1
workflow: { id: links }
tasks:
  helper:
    agent:
      prompt: go
      skills: ["./skills/a/SKILL.md", "${{ inputs.x }}"]
  child:
    invoke: { workflow: ./child.nika.yaml }
  remote:
    invoke: { workflow: "registry:me/flow@1.0.0" }
"""
    index = build_index(compile_text(text))
    assert [(link.kind, link.path) for link in index.links] == [
        ("skill", "./skills/a/SKILL.md"),
        ("workflow", "./child.nika.yaml"),
    ]
    skill = index.links[0]
    assert text[skill.span.start : skill.span.end] == '"./skills/a/SKILL.md"'
    assert index.link_at(skill.span.start + 3) is skill
    assert index.link_at(0) is None


def test_a_task_with_a_broken_body_still_has_a_home() -> None:
    text = "nika: v1\nworkflow: { id: w }\ntasks:\n  a: 3\n  b:\n    after: { a: success }\n    exec: { shell: x }\n"
    index = build_index(compile_text(text))
    a = sym(index, "task", "a")
    assert a.definition == at(text, "  a: 3", inner="a") and a.uses == (at(text, "{ a: success", inner="a"),)


@pytest.mark.parametrize(
    ("kind", "name", "scope", "new", "expect"),
    [
        ("task", "fetch", None, "Fetch", "not a valid task id"),
        ("task", "fetch", None, "1st", "not a valid task id"),
        ("task", "fetch", None, "fan", "already exists"),
        ("task", "fetch", None, "in", "keyword"),
        ("with", "r", "shout", "s", "already exists in task `shout`"),
        ("with", "r", "shout", "output", "reserved"),
        ("with", "r", "shout", "has-dash", "not a valid"),
        ("output", "first", "fan", "status", "reserved"),
        ("inputs", "topic", None, "mood", "already exists"),
        ("const", "greeting", None, "null", "keyword"),
        ("type", "Verdict", None, "verdict", "PascalCase"),
        ("type", "Verdict", None, "Reply", "already exists"),
    ],
)
def test_rename_refusals(index: SymbolIndex, kind: str, name: str, scope: str | None, new: str, expect: str) -> None:
    problem = rename_problem(index, sym(index, kind, name, scope), new)
    assert problem is not None and expect in problem


@pytest.mark.parametrize(
    ("kind", "name", "scope", "new"),
    [
        ("task", "fetch", None, "fetch_v2"),
        ("task", "fetch", None, "fetch"),
        ("with", "r", "shout", "first"),  # `first` exists, but in another task
        ("with", "r", "shout", "_Risk2"),
        ("inputs", "topic", None, "region"),  # a config name, not an input
        ("type", "Verdict", None, "Risk2"),
    ],
)
def test_renames_allowed(index: SymbolIndex, kind: str, name: str, scope: str | None, new: str) -> None:
    assert rename_problem(index, sym(index, kind, name, scope), new) is None


@pytest.mark.parametrize(
    "text",
    [
        "",
        "just a string\n",
        "- a\n- b\n",
        "nika: v1\ntasks: [\n",
        "nika: v1\nworkflow: { id: w }\ntasks: 3\n",
        "nika: v1\nworkflow: { id: w }\ntasks:\n  a:\n    with: 7\n    exec: { shell: '${{ tasks. }}' }\n",
    ],
)
def test_broken_documents_give_an_empty_or_partial_index(text: str) -> None:
    index = build_index(compile_text(text))
    assert all(s.kind == "task" for s in index.symbols)
    if compile_text(text).workflow is None:
        assert index.symbols == () and index.links == ()
        assert index.symbol_at(0) is None


def test_every_prefix_of_a_document_indexes_without_raising() -> None:
    for end in range(0, len(FLOW), 7):
        text = FLOW[:end]
        index = build_index(compile_text(text))
        for symbol in index.symbols:
            for span in symbol.all_spans():
                if symbol.unmapped == 0:
                    assert text[span.start : span.end] == symbol.name


def _rename(text: str, symbol: Symbol, new: str) -> str:
    for span in sorted(symbol.all_spans(), key=lambda s: s.start, reverse=True):
        text = text[: span.start] + new + text[span.end :]
    return text


def test_renaming_any_symbol_everywhere_keeps_the_document_clean(index: SymbolIndex) -> None:
    for symbol in index.symbols:
        new = symbol.name + ("Renamed" if symbol.kind == "type" else "_renamed")
        assert rename_problem(index, symbol, new) is None
        renamed = _rename(FLOW, symbol, new)
        compiled = compile_text(renamed)
        assert compiled.clean, (symbol.key, [d.message for d in compiled.diagnostics])
        again = build_index(compiled).lookup(symbol.kind, new, symbol.scope)
        assert again is not None and len(again.all_spans()) == len(symbol.all_spans()), symbol.key
