"""Builtin argument contracts and provider references (checker/contracts/tables.py + its TOML data)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from checker.contracts import tables as C
from checker.core.source import Span
from checker.parse.values import Entry, ListValue, Literal, MapValue, ScalarValue, Value

SPEC = Path(__file__).resolve().parents[4] / "shared" / "nika-spec"

# The closed builtin enum of schemas/workflow.schema.json at the pin.
CLOSED_SET = {
    "nika:assert", "nika:chart", "nika:compose", "nika:convert", "nika:date", "nika:decide",
    "nika:done", "nika:edit", "nika:emit", "nika:fetch", "nika:glob", "nika:grep", "nika:hash",
    "nika:image_fx", "nika:image_generate", "nika:inspect", "nika:jq", "nika:json_diff",
    "nika:json_merge_patch", "nika:log", "nika:notify", "nika:prompt", "nika:read",
    "nika:tts_generate", "nika:uuid", "nika:validate", "nika:wait", "nika:write",
}  # fmt: skip
LOCAL = {"ollama", "lmstudio", "llamacpp", "localai", "vllm"}
CLOUD = {
    "mistral", "anthropic", "openai", "openrouter", "huggingface", "nvidia", "moonshot",
    "groq", "deepseek", "gemini", "xai",
}  # fmt: skip


# ---------------------------------------------------------------------------------------------
# A tiny YAML -> node-tree helper (independent of the project's parser, which is in flight)
# ---------------------------------------------------------------------------------------------


def _resolve(text: str, style: str | None) -> object:
    if style:
        return text
    if text in ("", "~", "null", "Null", "NULL"):
        return None
    if text in ("true", "True", "TRUE"):
        return True
    if text in ("false", "False", "FALSE"):
        return False
    if re.fullmatch(r"[-+]?[0-9]+", text):
        return int(text)
    if re.fullmatch(r"[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?", text):
        return float(text)
    return text


def _convert(n: object, text: str) -> Value:
    from ruamel.yaml.nodes import MappingNode, ScalarNode, SequenceNode

    span = Span(n.start_mark.index, n.end_mark.index)  # type: ignore[attr-defined]
    if isinstance(n, ScalarNode):
        style = n.style or ""
        start = span.start + (1 if style in ("'", '"') else 0)
        exact = text[start : start + len(n.value)] == n.value
        offsets = tuple(range(start, start + len(n.value))) if exact else None
        return Literal(span, _resolve(n.value, style), n.value, style, offsets)
    if isinstance(n, SequenceNode):
        return ListValue(span, tuple(_convert(i, text) for i in n.value))
    assert isinstance(n, MappingNode)
    return MapValue(span, tuple(Entry(_convert(k, text), _convert(v, text)) for k, v in n.value))  # type: ignore[arg-type]


def parse(text: str) -> Value:
    from ruamel.yaml import YAML

    return _convert(YAML(typ="rt", pure=True).compose(text), text)


class Invoke:
    """An ``invoke:`` body written as YAML: ``tool:`` plus optional ``args:``."""

    def __init__(self, text: str) -> None:
        self.text = text
        root = parse(text)
        assert isinstance(root, MapValue)
        self.tool = root.get("tool").value  # type: ignore[union-attr]
        self.args = root.get("args")
        e = root.entry("args") or root.entry("tool")
        assert e is not None
        self.anchor = e.key.span

    def check(self, task: str | None = "t") -> list:
        return C.check_tool_args(self.tool, self.args, task=task, anchor=self.anchor)

    def at(self, span: Span) -> str:
        return self.text[span.start : span.end]


class Hit:
    """The single finding of a check plus the source text its span covers."""

    def __init__(self, d: object, text: str) -> None:
        self.d = d
        self.text = text

    def __getattr__(self, name: str) -> object:
        return getattr(self.d, name)


def one(inv: Invoke, code: str = "NIKA-BUILTIN-001") -> Hit:
    found = inv.check()
    assert len(found) == 1, [(d.code, d.message) for d in found]
    d = found[0]
    assert d.code == code, (d.code, d.message)
    assert d.task == "t"
    assert d.help
    return Hit(d, inv.at(d.span))


def clean(text: str) -> None:
    found = Invoke(text).check()
    assert found == [], [(d.code, d.message) for d in found]


def model(text: str) -> tuple[list, str]:
    root = parse(f"model: {text}\n")
    assert isinstance(root, MapValue)
    value = root.get("model")
    assert isinstance(value, ScalarValue)
    src = f"model: {text}\n"
    return C.check_model_ref(value, task="t"), src


# ---------------------------------------------------------------------------------------------
# Data integrity
# ---------------------------------------------------------------------------------------------


def test_exactly_the_28_builtins():
    assert len(C.tool_ids()) == 28
    assert set(C.tool_ids()) == CLOSED_SET


def test_closed_set_matches_the_pinned_schema():
    schema = SPEC / "schemas" / "workflow.schema.json"
    if not schema.exists():
        pytest.skip("spec checkout not available")
    text = schema.read_text()
    assert set(re.findall(r'"(nika:[a-z_]+)"', text)) >= CLOSED_SET
    tool = json.loads(text)["$defs"]["invoke"]["properties"]["tool"]["oneOf"][0]["enum"]
    assert set(tool) == set(C.tool_ids())


def test_capability_classes_follow_canon():
    external = {"nika:read", "nika:write", "nika:edit", "nika:glob", "nika:grep", "nika:chart",
                "nika:image_fx", "nika:fetch", "nika:notify", "nika:image_generate",
                "nika:tts_generate"}  # fmt: skip
    for c in C.contracts():
        assert c.capability == ("external" if c.id in external else "pure_internal"), c.id
        assert c.summary and c.output
    assert {c.id for c in C.contracts() if c.agent_only} == {"nika:done", "nika:compose"}
    assert C.contract("nika:fetch").effects == ("net",)
    assert C.contract("nika:image_generate").effects == ("fs", "tools")
    assert [c.id for c in C.contracts() if c.open_args] == ["nika:date", "nika:emit"]


def test_exactly_17_providers():
    ps = C.providers()
    assert len(ps) == 17
    assert {p for p, v in ps.items() if v.kind == "local"} == LOCAL
    assert {p for p, v in ps.items() if v.kind == "cloud"} == CLOUD
    assert {p for p, v in ps.items() if v.kind == "test"} == {"mock"}
    assert all(ps[p].base_url and not ps[p].env_vars for p in LOCAL)
    assert all(ps[p].env_vars and not ps[p].base_url for p in CLOUD)
    assert ps["huggingface"].env_vars == ("HF_TOKEN",)
    assert ps["ollama"].base_url == "http://localhost:11434"
    assert "echo" in ps["mock"].models
    assert set(C.mock_models()) == set(ps["mock"].models)


def test_extract_modes_are_nine_plus_raw():
    modes = C.extract_modes()
    assert [m.name for m in modes if m.canonical] == [
        "markdown", "article", "text", "selector", "jq", "metadata", "links", "feed", "sitemap",
    ]  # fmt: skip
    assert [m.name for m in modes if not m.canonical] == ["raw"]
    assert {m.name: m.needs for m in modes if m.needs} == {"selector": "selector", "jq": "jq"}
    assert C.contract("nika:fetch").arg("mode").values == tuple(m.name for m in modes)


def test_every_code_in_the_data_is_registered():
    from checker.core.codes import registry

    try:
        reg = registry()
    except FileNotFoundError:
        pytest.skip("checker/core/codes.toml not written yet")
    codes = {C.ARG_CODE, C.SHAPE_CODE, C.MODEL_CODE, C.TOOL_CODE}
    for c in C.contracts():
        for r in c.rules:
            codes.add(r.code)
        for _, spec in C.iter_arg_specs(c):
            codes.add(spec.code)
            codes.update(r.code for r in spec.rules)
        if c.agent_only:
            codes.add(c.error_plane + "-001")
    assert codes <= set(reg), sorted(codes - set(reg))


def test_rule_arguments_name_real_arguments():
    for c in C.contracts():
        names = {a.name for a in c.args}
        for r in c.rules:
            mentioned = set(r.args) | set(r.with_) | {k for k, _ in r.when}
            mentioned |= {x for x in (r.arg, r.of, r.target) if x}
            assert mentioned <= names, (c.id, r)


# ---------------------------------------------------------------------------------------------
# Shape, unknown, missing
# ---------------------------------------------------------------------------------------------


def test_args_must_be_a_mapping_list():
    inv = Invoke('tool: "nika:jq"\nargs: ["not", "a", "dict"]\n')
    d = one(inv, "NIKA-PARSE-019")
    assert d.text == '["not", "a", "dict"]'
    assert d.namespace == "NIKA-PARSE"
    assert "a list" in d.message


def test_args_must_be_a_mapping_scalar():
    d = one(Invoke('tool: "nika:wait"\nargs: "30s"\n'), "NIKA-PARSE-019")
    assert d.text == '"30s"'


def test_args_shape_is_checked_for_any_tool_but_contracts_only_for_builtins():
    one(Invoke('tool: "mcp:srv/do"\nargs: [1]\n'), "NIKA-PARSE-019")
    clean('tool: "mcp:srv/do"\nargs: {whatever: 1}\n')


def test_unknown_arg_with_alias_suggestion():
    d = one(Invoke('tool: "nika:jq"\nargs: { input: [], query: "length" }\n'))
    assert d.text == "query"
    assert "`expression`" in d.help
    d = one(Invoke('tool: "nika:jq"\nargs: { input: [], expr: "length" }\n'))
    assert d.text == "expr" and "`expression`" in d.help


def test_unknown_arg_with_difflib_suggestion():
    d = one(Invoke("tool: nika:write\nargs:\n  path: a\n  content: b\n  create_dir: true\n"))
    assert d.text == "create_dir"
    assert "`create_dirs`" in d.help


def test_argument_suggestions_use_the_one_did_you_mean():
    """The contracts guess with checker.core.suggest.did_you_mean (its cutoffs, 0.75 then 0.7 on the
    lower-cased `-`→`_` form); their own helper once guessed at 0.6, e.g. `url` for `ulr`."""
    found = Invoke('tool: nika:fetch\nargs: {ulr: "https://example.com"}\n').check()
    unknown = [d for d in found if "no argument `ulr`" in d.message]
    assert len(unknown) == 1 and not unknown[0].fixes and "`url`" in unknown[0].help  # the listing
    assert any("missing its required argument `url`" in d.message for d in found)
    d = one(Invoke('tool: nika:fetch\nargs: {URL: "https://example.com"}\n'))
    assert d.fixes[0].edits[0].new_text == "url" and d.fixes[0].applicability == "safe"


def test_unknown_arg_without_suggestion_lists_the_arguments():
    d = one(Invoke("tool: nika:uuid\nargs: {zzz: 1}\n"))
    assert d.text == "zzz"
    assert "`version`" in d.help


def test_misspelt_arg_does_not_cascade_into_rules():
    d = one(Invoke('tool: nika:wait\nargs: {duraton: "5s"}\n'))
    assert d.text == "duraton" and "`duration`" in d.help
    d = one(Invoke('tool: "nika:jq"\nargs: { input: [], query: "length" }\n'))
    assert d.fixes[0].applicability == "safe"
    assert d.fixes[0].edits[0].new_text == "expression"


def test_unknown_arg_whose_suggestion_is_already_set():
    d = one(Invoke("tool: nika:read\nargs: {path: a, paths: b}\n"))
    assert d.text == "paths" and "already set" in d.help
    assert not d.fixes


def test_tools_without_a_contract_only_get_the_shape_check():
    assert Invoke("tool: nika:csv_to_json\nargs: {input: x}\n").check() == []


def test_known_args_pass():
    clean('tool: "nika:jq"\nargs: { input: [], expression: "length" }\n')


def test_open_args_tool_accepts_unknown_args():
    clean("tool: nika:date\nargs: {op: add, base: x, duration: 1h, whatever: 1}\n")


def test_missing_required_at_the_args_key():
    d = one(Invoke("tool: nika:convert\nargs:\n  input: a\n  from: csv\n"))
    assert d.text == "args"
    assert "`to`" in d.message and "to:" in d.help


def test_missing_required_without_args_at_the_anchor():
    inv = Invoke("tool: nika:fetch\n")
    found = inv.check()
    assert [d.code for d in found] == ["NIKA-BUILTIN-001"]
    assert inv.at(found[0].span) == "tool"
    assert "`url`" in found[0].message


def test_several_missing_args_give_one_finding_each():
    found = Invoke("tool: nika:image_fx\nargs: {input: a.png}\n").check()
    assert sorted(d.message.split("`")[-2] for d in found) == ["ops", "out"]


def test_only_what_the_stdlib_marks_required_is_required():
    # The stdlib text leaves these optional: a call without them is not refused.
    clean("tool: nika:notify\nargs: {target: https://hooks.example.com/x, message: done}\n")
    clean("tool: nika:write\nargs: {path: out.json, content: {a: [1, 2]}}\n")
    clean("tool: nika:write\nargs: {path: out.json, content: [1, 2]}\n")
    clean("tool: nika:edit\nargs: {path: CHANGELOG.md, find: 2024, replace: 2025}\n")
    clean("tool: nika:emit\nargs: {event: task_done, status: ok}\n")
    clean("tool: nika:jq\nargs: {expression: '[1, 2]'}\n")
    # What it marks required still is.
    assert "`url`" in one(Invoke("tool: nika:fetch\nargs: {mode: article}\n")).message
    assert "`view`" in one(Invoke("tool: nika:inspect\nargs: {}\n")).message


def test_reserved_arg_is_refused():
    d = one(Invoke("tool: nika:image_generate\nargs: {provider: mock, prompt: p, output_dir: o, reference_images: []}"))
    assert d.text == "reference_images"


# ---------------------------------------------------------------------------------------------
# Literal types and values
# ---------------------------------------------------------------------------------------------


def test_wrong_type_at_the_value():
    d = one(Invoke('tool: nika:edit\nargs: {path: a, find: b, replace: c, count: "2"}\n'))
    assert d.text == '"2"'
    assert "integer" in d.message and "a string" in d.message


def test_right_type_and_dynamic_value_pass():
    clean("tool: nika:edit\nargs: {path: a, find: b, replace: c, count: 2}\n")
    clean('tool: nika:edit\nargs: {path: a, find: b, replace: c, count: "${{ inputs.n }}"}\n')


def test_bool_is_not_an_integer():
    d = one(Invoke("tool: nika:edit\nargs: {path: a, find: b, replace: c, count: true}\n"))
    assert d.text == "true"


def test_string_arg_refuses_a_mapping():
    d = one(Invoke("tool: nika:read\nargs:\n  path: {a: 1}\n"))
    assert d.text == "{a: 1}"


def test_enum_value_with_suggestion():
    d = one(Invoke("tool: nika:fetch\nargs:\n  url: https://x.test\n  mode: artcle\n"))
    assert d.text == "artcle"
    assert "`article`" in d.help


def test_unknown_extract_mode():
    d = one(Invoke("tool: nika:fetch\nargs:\n  url: https://example.com\n  mode: html\n"))
    assert d.text == "html"
    assert d.namespace == "NIKA-BUILTIN"


def test_enum_known_value_and_raw_mode_pass():
    clean("tool: nika:fetch\nargs: {url: 'https://x.test', mode: article}\n")
    clean("tool: nika:fetch\nargs: {url: 'https://x.test', mode: raw}\n")


def test_inspect_view_has_its_own_code():
    d = one(Invoke("tool: nika:inspect\nargs: {view: costs}\n"), "NIKA-BUILTIN-INSPECT-001")
    assert d.text == "costs" and "`cost`" in d.help
    clean("tool: nika:inspect\nargs: {view: dag_info}\n")


def test_hash_algo_has_its_own_code():
    d = one(Invoke("tool: nika:hash\nargs: {content: x, algo: md5}\n"), "NIKA-BUILTIN-HASH-001")
    assert d.text == "md5"
    one(Invoke("tool: nika:hash\nargs: {content: x, algo: sha1}\n"), "NIKA-BUILTIN-HASH-001")
    clean("tool: nika:hash\nargs: {content: x, algo: sha256, encoding: base64}\n")


def test_date_unknown_op_has_its_own_code():
    d = one(Invoke("tool: nika:date\nargs: {op: tomorrow}\n"), "NIKA-BUILTIN-DATE-001")
    assert d.text == "tomorrow"
    clean("tool: nika:date\nargs: {op: now, tz: Europe/Paris}\n")


def test_emit_event_type_pattern():
    d = one(Invoke("tool: nika:emit\nargs: {event_type: Deploy.Done}\n"), "NIKA-BUILTIN-EMIT-001")
    assert d.text == "Deploy.Done"
    one(Invoke('tool: nika:emit\nargs: {event_type: "9lives"}\n'), "NIKA-BUILTIN-EMIT-001")
    clean("tool: nika:emit\nargs: {event_type: custom.event, payload: {a: 1}}\n")
    clean('tool: nika:emit\nargs: {event_type: "${{ inputs.kind }}"}\n')


def test_duration_literal():
    d = one(Invoke('tool: nika:wait\nargs: {duration: "5 minutes"}\n'))
    assert d.text == '"5 minutes"'
    d = one(Invoke("tool: nika:wait\nargs: {duration: 30}\n"))
    assert d.text == "30" and "duration" in d.message
    clean('tool: nika:wait\nargs: {duration: "1h30m"}\n')


def test_integer_range():
    d = one(Invoke("tool: nika:fetch\nargs: {url: u, traverse: {max_pages: 26}}\n"))
    assert d.text == "26"
    assert "1..25" in d.message
    one(Invoke("tool: nika:fetch\nargs: {url: u, traverse: {max_pages: 0}}\n"))
    clean("tool: nika:fetch\nargs: {url: u, traverse: {max_pages: 25, respect_robots: false}}\n")


def test_image_generate_n_range():
    base = "tool: nika:image_generate\nargs: {provider: mock, prompt: p, output_dir: o, n: %s}\n"
    d = one(Invoke(base % "11"))
    assert d.text == "11"
    one(Invoke(base % "0"))
    clean(base % "10")


def test_number_range():
    base = "tool: nika:tts_generate\nargs: {provider: mock, text: hi, output_dir: o, speed: %s}\n"
    d = one(Invoke(base % "4.5"))
    assert d.text == "4.5"
    clean(base % "0.25")
    clean(base % "2")


def test_string_length():
    long = "x" * 4097
    d = one(Invoke(f"tool: nika:tts_generate\nargs: {{provider: mock, text: {long}, output_dir: o}}\n"))
    assert d.text == long and "4097" in d.message
    one(Invoke('tool: nika:tts_generate\nargs: {provider: mock, text: "", output_dir: o}\n'))
    clean(f"tool: nika:tts_generate\nargs: {{provider: mock, text: {'x' * 4096}, output_dir: o}}\n")


def test_array_item_count():
    d = one(Invoke("tool: nika:prompt\nargs: {message: m, mode: choice, choices: []}\n"))
    assert d.text == "[]"
    ops = ", ".join(["grayscale: {}"] * 33)
    d = one(Invoke(f"tool: nika:image_fx\nargs: {{input: a.png, out: b.png, ops: [{ops}]}}\n"))
    assert d.text.startswith("[") and "33" in d.message


def test_array_items_are_typed():
    d = one(Invoke("tool: nika:glob\nargs: {pattern: '*', exclude: [a, 3]}\n"))
    assert d.text == "3" and "exclude[1]" in d.message
    clean("tool: nika:glob\nargs: {pattern: '*', exclude: [a, b]}\n")


def test_closed_literal_set_on_a_boolean():
    base = "tool: nika:image_generate\nargs: {provider: mock, prompt: p, output_dir: o, save: %s}\n"
    d = one(Invoke(base % "false"))
    assert d.text == "false"
    clean(base % "true")


def test_template_required():
    d = one(Invoke('tool: nika:assert\nargs: {condition: "tasks.x.output > 0"}\n'))
    assert d.text == '"tasks.x.output > 0"'
    clean('tool: nika:assert\nargs: {condition: "${{ tasks.x.output.ok }}", message: m}\n')


def test_arg_specific_code_for_a_type_error():
    d = one(
        Invoke('tool: nika:convert\nargs: {input: x, from: csv, to: json, formula_guard: "yes"}\n'),
        "NIKA-BUILTIN-CONVERT-001",
    )
    assert d.text == '"yes"'
    clean("tool: nika:convert\nargs: {input: x, from: json, to: csv, formula_guard: true}\n")


def test_map_entries_are_typed():
    d = one(Invoke("tool: nika:fetch\nargs: {url: u, method: POST, form: {q: {nested: 1}}}\n"))
    assert d.text == "{nested: 1}" and "form.q" in d.message
    clean("tool: nika:fetch\nargs: {url: u, method: POST, form: {q: nika, page: 1, on: true}}\n")
    d = one(Invoke("tool: nika:chart\nargs: {data: [], chart: {type: bar}, out: a.svg, semantics: {c: money}}\n"))
    assert d.text == "money"


def test_nested_object_unknown_and_missing_fields():
    # a misspelt required field: one finding (the rename), not a second "missing" one
    inv = Invoke("tool: nika:fetch\nargs:\n  url: u\n  traverse: {max_page: 5}\n")
    d = one(inv)
    assert d.text == "max_page" and "`max_pages`" in d.help
    assert d.fixes and d.fixes[0].edits[0].new_text == "max_pages"
    assert d.fixes[0].applicability == "maybe-incorrect"
    d = one(Invoke("tool: nika:fetch\nargs:\n  url: u\n  traverse: {}\n"))
    assert d.text == "traverse" and "max_pages" in d.message
    d = one(Invoke("tool: nika:fetch\nargs:\n  url: u\n  traverse: {max_pages: 2, depth: 1}\n"))
    assert d.text == "depth"


def test_chart_pattern_and_nested_enum():
    d = one(Invoke("tool: nika:chart\nargs: {data: {path: m.json}, chart: {type: line}, out: a.png}\n"))
    assert d.text == "a.png"
    d = one(Invoke("tool: nika:chart\nargs: {data: {path: m.json}, chart: {type: pie}, out: a.svg}\n"))
    assert d.text == "pie"


# ---------------------------------------------------------------------------------------------
# Cross-argument rules
# ---------------------------------------------------------------------------------------------


def test_exactly_one_of_neither():
    d = one(Invoke("tool: nika:wait\nargs: {}\n"), "NIKA-BUILTIN-WAIT-003")
    assert d.text == "args"
    assert d.namespace == "NIKA-BUILTIN"


def test_exactly_one_of_both():
    inv = Invoke('tool: nika:wait\nargs:\n  duration: "5s"\n  until: "2026-05-23T09:00:00Z"\n')
    d = one(inv, "NIKA-BUILTIN-WAIT-003")
    assert d.text == "until"
    assert d.related and inv.at(d.related[0].span) == "duration"


def test_exactly_one_of_passes():
    clean('tool: nika:wait\nargs: {duration: "5s"}\n')
    clean('tool: nika:wait\nargs: {until: "${{ inputs.when }}", timeout: "1h"}\n')


def test_requires_with():
    d = one(Invoke('tool: nika:wait\nargs: {duration: "5s", timeout: "1h"}\n'))
    assert d.text == "timeout"
    assert "`until`" in d.message


def test_at_most_one_of():
    inv = Invoke("tool: nika:fetch\nargs: {url: u, method: POST, body: {a: 1}, form: {a: 1}}\n")
    d = one(inv)
    assert d.text == "form"
    assert inv.at(d.related[0].span) == "body"
    clean("tool: nika:fetch\nargs: {url: u, method: POST, body: {a: 1}}\n")


def test_at_least_one_of():
    d = one(Invoke("tool: nika:tts_generate\nargs: {text: hi, output_dir: o}\n"))
    assert d.text == "args"
    clean("tool: nika:tts_generate\nargs: {model: gpt-4o-mini-tts, text: hi, output_dir: o}\n")


def test_requires_method_for_form_default_get():
    inv = Invoke('tool: "nika:fetch"\nargs:\n  url: "https://api.example.com/search"\n  form: { q: "nika", page: 1 }\n')
    d = one(inv)
    assert d.text == "form"
    assert "GET" in d.message and "default" in d.message


def test_requires_method_for_multipart_explicit_get():
    inv = Invoke("tool: nika:fetch\nargs:\n  url: u\n  method: GET\n  multipart: [{name: a, value: b}]\n")
    d = one(inv)
    assert d.text == "multipart"
    assert inv.at(d.related[0].span) == "GET"


def test_requires_method_passes_and_dynamic_method_is_unknown():
    clean("tool: nika:fetch\nargs: {url: u, method: PUT, form: {q: 1}}\n")
    clean('tool: nika:fetch\nargs: {url: u, method: "${{ inputs.m }}", form: {q: 1}}\n')


def test_requires_mode_for_jq_and_selector():
    d = one(Invoke("tool: nika:fetch\nargs: {url: u, jq: .a}\n"))
    assert d.text == "jq" and "markdown" in d.message
    inv = Invoke('tool: "nika:fetch"\nargs:\n  url: u\n  mode: markdown\n  selector: "div.product-list"\n')
    d = one(inv)
    assert d.text == "selector"
    clean('tool: nika:fetch\nargs: {url: u, mode: jq, jq: ".items | map(.name)"}\n')
    clean('tool: nika:fetch\nargs: {url: u, mode: selector, selector: "div.product-list"}\n')


def test_required_when_mode_needs_companion():
    inv = Invoke("tool: nika:fetch\nargs: {url: u, mode: selector}\n")
    d = one(inv)
    assert d.text == "selector" and "`selector:`" in d.help
    assert d.span.start == inv.text.index("selector")


def test_required_when_choice_needs_choices():
    d = one(Invoke("tool: nika:prompt\nargs: {message: m, mode: choice}\n"))
    assert d.text == "choice"
    clean("tool: nika:prompt\nargs: {message: m, mode: choice, choices: [a, b]}\n")
    clean("tool: nika:prompt\nargs: {message: m, default: false}\n")


def test_required_when_edit_needs_a_source():
    inv = Invoke(
        'tool: "nika:image_generate"\nargs:\n  prompt: "replace the sky"\n  output_dir: "./assets"\n  mode: edit\n'
    )
    found = inv.check()
    texts = sorted(inv.at(d.span) for d in found)
    # no provider/model either (the fixture's only point is the missing source)
    assert texts == ["args", "edit"]
    edit = next(d for d in found if inv.at(d.span) == "edit")
    assert "`image`" in edit.message


def test_at_most_one_of_image_images():
    base = "tool: nika:image_generate\nargs: {provider: openai, mode: edit, prompt: p, output_dir: o, %s}\n"
    d = one(Invoke(base % "image: a.png, images: [b.png]"))
    assert d.text == "images"
    clean(base % "images: [a.png, b.png]")


def test_forbidden_when():
    base = (
        "tool: nika:image_generate\n"
        "args: {provider: %s, mode: edit, image: a.png, mask: m.png, prompt: p, output_dir: o}\n"
    )
    d = one(Invoke(base % "gemini"))
    assert d.text == "mask"
    clean(base % "openai")
    clean(base % '"${{ inputs.p }}"')


def test_requires_with_own_value():
    base = "tool: nika:image_generate\nargs: {provider: openai, prompt: p, output_dir: o, background: %s}\n"
    d = one(Invoke(base % "transparent, format: jpeg"))
    assert d.text == "background"
    clean(base % "transparent")  # png by default
    clean(base % "opaque, format: jpeg")


def test_excludes():
    inv = Invoke("tool: nika:fetch\nargs: {url: u, traverse: {max_pages: 5}, mode: text, jq: .a}\n")
    found = inv.check()
    texts = sorted(inv.at(d.span) for d in found)
    # `jq` is refused twice: by traverse, and for lacking mode: jq
    assert texts == ["jq", "jq", "mode"]
    clean('tool: "nika:fetch"\nargs:\n  url: "https://example.com"\n  traverse: { max_pages: 5 }\n')


def test_traverse_is_get_only():
    d = one(Invoke("tool: nika:fetch\nargs: {url: u, method: HEAD, traverse: {max_pages: 2}}\n"))
    assert d.text == "traverse"


def test_distinct():
    inv = Invoke("tool: nika:convert\nargs: {input: x, from: json, to: json}\n")
    d = one(inv, "NIKA-BUILTIN-CONVERT-001")
    assert d.span.start == inv.text.rindex("json")
    clean("tool: nika:convert\nargs: {input: x, from: csv, to: json, has_header: false}\n")


def test_member_of():
    inv = Invoke("tool: nika:prompt\nargs: {message: m, mode: choice, choices: [a, b], default: c}\n")
    d = one(inv, "NIKA-BUILTIN-PROMPT-002")
    assert d.text == "c"
    clean("tool: nika:prompt\nargs: {message: m, mode: choice, choices: [a, b], default: b}\n")
    clean('tool: nika:prompt\nargs: {message: m, mode: choice, choices: ["${{ tasks.a.output }}", b], default: c}\n')
    clean("tool: nika:prompt\nargs: {message: m, mode: input, default: c}\n")


def test_excludes_key():
    inv = Invoke("tool: nika:fetch\nargs: {url: u, method: POST, form: {a: 1}, headers: {Content-Type: x, X-A: b}}\n")
    d = one(inv)
    assert d.text == "Content-Type"
    clean("tool: nika:fetch\nargs: {url: u, method: POST, body: {a: 1}, headers: {Content-Type: x}}\n")


def test_nested_item_rules_multipart():
    inv = Invoke(
        "tool: nika:fetch\nargs:\n  url: u\n  method: POST\n  multipart:\n"
        '    - { name: file, value: "x", path: "./y.png" }\n'
    )
    d = one(inv)
    assert d.text == "path"
    assert "multipart[0]" in d.message
    d = one(Invoke("tool: nika:fetch\nargs: {url: u, method: POST, multipart: [{name: a, value: b, filename: c}]}\n"))
    assert d.text == "filename"
    d = one(Invoke("tool: nika:fetch\nargs: {url: u, method: POST, multipart: [{name: a}]}\n"))
    assert d.text == "{name: a}"
    clean(
        "tool: nika:fetch\n"
        "args: {url: u, method: POST, multipart: [{name: a, value: b}, {name: f, path: p, filename: x}]}\n"
    )


def test_last():
    inv = Invoke("tool: nika:image_fx\nargs: {input: a.png, out: b.txt, ops: [{ascii: {emit: text}}, grayscale: {}]}\n")
    d = one(inv)
    assert d.text == "ascii"
    clean("tool: nika:image_fx\nargs: {input: a.png, out: b.txt, ops: [grayscale: {}, {ascii: {emit: text}}]}\n")


def test_op_maps():
    base = "tool: nika:image_fx\nargs: {input: a.png, out: b.png, ops: [%s]}\n"
    d = one(Invoke(base % "grayscal: {}"))
    assert d.text == "grayscal" and "`grayscale`" in d.help
    d = one(Invoke(base % "{grain: {}, vignette: {}}"))
    assert d.text == "{grain: {}, vignette: {}}"
    d = one(Invoke(base % "grain: {intensity: 200}"))
    assert d.text == "200"
    d = one(Invoke(base % "halftone: {angle: 30}"))
    assert d.text == "30"
    d = one(Invoke(base % "grain: {amount: 3}"))
    assert d.text == "amount"
    d = one(Invoke(base % "resize: {filter: nearest}"))
    assert d.text == "resize"
    clean(base % "grayscale: null, resize: {width: 320}, halftone: {angle: 15}")


# ---------------------------------------------------------------------------------------------
# Spec fixtures: every `nika:*` invoke in the stdlib and deep fixtures
# ---------------------------------------------------------------------------------------------


def _fixture_invokes():
    roots = [SPEC / "conformance/tests/stdlib", *sorted((SPEC / "conformance/tests/deep").glob("0*"))]
    for root in roots:
        for f in sorted(root.rglob("input.yaml")):
            expected = json.loads(f.with_name("expected.json").read_text())
            text = f.read_text()
            tree = parse(text)
            stack = [tree]
            while stack:
                n = stack.pop()
                if isinstance(n, MapValue):
                    inv = n.get("invoke")
                    if isinstance(inv, MapValue) and isinstance(inv.get("tool"), ScalarValue):
                        yield f.parent.name, expected, inv
                    stack.extend(e.value for e in n.entries)
                elif isinstance(n, ListValue):
                    stack.extend(n.items)


@pytest.mark.skipif(not SPEC.exists(), reason="spec checkout not available")
def test_spec_fixtures_agree():
    seen = 0
    for name, expected, inv in _fixture_invokes():
        tool = inv.get("tool").value
        if C.contract(tool) is None:
            continue
        seen += 1
        e = inv.entry("args") or inv.entry("tool")
        found = C.check_tool_args(tool, inv.get("args"), task=None, anchor=e.key.span)
        namespaces = {x.get("namespace") for x in expected.get("errors", [])}
        if expected["valid"] or namespaces & {"NIKA-VAR"}:
            assert found == [], (name, [d.message for d in found])
        elif namespaces & {"NIKA-BUILTIN", "NIKA-PARSE"}:
            got = {d.namespace for d in found}
            assert got & namespaces, (name, got)
        elif "image-generate" in name:
            assert found, name
    assert seen >= 15


# ---------------------------------------------------------------------------------------------
# Model references
# ---------------------------------------------------------------------------------------------


def test_model_without_prefix():
    found, src = model("claude-sonnet-4-6")
    assert [d.code for d in found] == ["NIKA-PROVIDER-002"]
    d = found[0]
    assert d.namespace == "NIKA-PROVIDER" and d.task == "t"
    assert src[d.span.start : d.span.end] == "claude-sonnet-4-6"
    assert "anthropic/claude-sonnet-4-6" in d.help


def test_model_unknown_prefix_spans_the_prefix():
    found, src = model("fakecloud/agent-model")
    assert [d.code for d in found] == ["NIKA-PROVIDER-002"]
    assert src[found[0].span.start : found[0].span.end] == "fakecloud"


def test_model_envelope_fixture():
    found, _ = model("gpt-4o/latest")
    assert len(found) == 1
    assert "openai/gpt-4o/latest" in found[0].help


def test_model_near_provider_suggestion():
    found, _ = model("OpenAI/gpt-5.2")
    assert "`openai/gpt-5.2`" in found[0].help
    found, _ = model("anthropc/claude-3-5-haiku")
    assert "`anthropic/claude-3-5-haiku`" in found[0].help


def test_model_names_pass_verbatim():
    for ok in (
        "openrouter/anthropic/claude-sonnet-4-6",
        "huggingface/Qwen/Qwen3.5-9B:cheapest",
        "nvidia/nvidia/nemotron-3-super-120b-a12b",
        "ollama/qwen3.5:9b",
        "mock/echo",
        '"${{ const.model }}"',
        '"${{ inputs.provider }}/x"',
    ):
        assert model(ok)[0] == [], ok


def test_model_provider_only_or_empty_name():
    found, _ = model("mock")
    assert "mock/echo" in found[0].help
    found, _ = model("openai/")
    assert len(found) == 1 and "after `openai/`" in found[0].help


def test_model_non_string_is_left_to_the_schema():
    assert model("42")[0] == []


def test_provider_of():
    assert C.provider_of("ollama/qwen3.5:9b").kind == "local"
    assert C.provider_of("openrouter/a/b").id == "openrouter"
    assert C.provider_of("nope") is None


# ---------------------------------------------------------------------------------------------
# Tool ids
# ---------------------------------------------------------------------------------------------


def _tool_scalar(tool: str) -> ScalarValue:
    return Literal(Span(6, 6 + len(tool)), tool, tool, "")


def test_tool_ref_typo_and_retired():
    (d,) = C.check_tool_ref(_tool_scalar("nika:imagefx"), task="t")
    assert d.code == "NIKA-INVOKE-001" and "nika:image_fx" in d.help
    (d,) = C.check_tool_ref(_tool_scalar("nika:csv_to_json"), task="t")
    assert "nika:convert" in d.help
    (d,) = C.check_tool_ref(_tool_scalar("nika:sleep"), task="t")
    assert "nika:wait" in d.help
    assert C.check_tool_ref(_tool_scalar("nika:read"), task="t") == []
    assert C.check_tool_ref(_tool_scalar("mcp:srv/tool"), task="t") == []


def test_standalone_invoke_of_loop_only_tools():
    (d,) = C.check_standalone_invoke("nika:done", task="t", anchor=Span(0, 4))
    assert d.code == "NIKA-BUILTIN-DONE-001"
    (d,) = C.check_standalone_invoke("nika:compose", task="t", anchor=Span(0, 4))
    assert d.code == "NIKA-BUILTIN-COMPOSE-001"
    assert C.check_standalone_invoke("nika:read", task="t", anchor=Span(0, 4)) == []


# ---------------------------------------------------------------------------------------------
# Completion and hover helpers
# ---------------------------------------------------------------------------------------------


def test_snippets():
    assert C.contract("nika:write").snippet() == "args:\n  path: ${1}\n  content: ${2}"
    assert C.contract("nika:inspect").snippet() == "args:\n  view: ${1|cost,records,dag_info,threads|}"
    assert C.contract("nika:uuid").snippet() == "args: {$1}"


def test_iter_arg_specs_walks_nested_fields():
    paths = dict(C.iter_arg_specs(C.contract("nika:fetch")))
    assert {"url", "traverse.max_pages", "multipart[].path"} <= set(paths)
    assert paths["traverse.max_pages"].max == 25


def test_markdown_card():
    md = C.contract("nika:fetch").markdown()
    assert md.startswith("**`nika:fetch`**")
    assert "| `url` | string | yes |" in md
    assert "| `method` |" in md and "`GET`" in md
    assert "at most one of `body`, `form`, `multipart`" in md
    assert "**Returns:**" in md
    assert "reference_images" not in C.contract("nika:image_generate").markdown()
    card = C.contract("nika:fetch").arg("traverse").get_field("max_pages").markdown("nika:fetch")
    assert "1..25" in card and "required" in card


@pytest.mark.parametrize("digits", [310, 4000])
def test_a_huge_integer_out_of_range_is_worded_not_crashed(digits):
    """A number far outside `float` (and past Python's int-to-text limit) in an argument with a
    min/max is refused as out of range, naming its length, not an internal error (issue 29)."""
    d = one(Invoke(f"tool: nika:edit\nargs: {{path: a, find: b, replace: c, count: -{'9' * digits}}}\n"))
    assert "out of range" in d.message and f"{digits}-digit integer" in d.message
