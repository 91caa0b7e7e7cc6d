"""Authority-safe repairs (issue 39): a repair never advises a grant wider than the task needs
without saying so, and the common slips get the message (and fix) that names where things go."""

from __future__ import annotations

import pytest

from checker import compile_text
from checker.rules.support.fixes import apply_fixes

HEAD = "nika: v1\nworkflow: { id: r }\n"


def found(text: str, key: str):
    return [d for d in compile_text(text, "r.nika.yaml").diagnostics if key in (d.code, d.rule)]


def fixed(text: str, *, unsafe: bool = False) -> str:
    return apply_fixes(text, compile_text(text, "r.nika.yaml").diagnostics, unsafe=unsafe).text


def clean(text: str) -> bool:
    return not [d for d in compile_text(text, "r.nika.yaml").diagnostics if d.is_error]


# -- exec: a shell in the grant bounds nothing ----------------------------------------------------

SH = HEAD + 'permits: { exec: ["echo"] }\ntasks:\n  t:\n    exec: { command: ["sh", "-c", "LINE"] }\n'


@pytest.mark.parametrize("program", ["sh", "bash", "/bin/sh", "python3"])
def test_a_grant_of_a_program_that_runs_any_code_says_so(program: str) -> None:
    text = SH.replace('"sh"', f'"{program}"')
    (d,) = found(text, "NIKA-SEC-004")
    assert "bounds nothing" in d.help and f"Adding `{program}`" in d.help


def test_sh_c_over_plain_words_offers_the_argv_it_runs() -> None:
    text = SH.replace("LINE", "echo hello")
    (d,) = found(text, "NIKA-SEC-004")
    (fix,) = d.fixes
    assert fix.applicability == "unsafe" and [e.new_text for e in fix.edits] == ['["echo", "hello"]']
    after = fixed(text, unsafe=True)
    assert 'command: ["echo", "hello"]' in after and clean(after)  # echo is granted: nothing to widen


@pytest.mark.parametrize("line", ["echo $HOME", "ls | wc -l", "echo 'a b'", "rm *.tmp", "a && b"])
def test_sh_c_over_shell_syntax_offers_no_split(line: str) -> None:
    (d,) = found(SH.replace("LINE", line), "NIKA-SEC-004")
    assert d.fixes == ()


# -- exec: a string `command:` ----------------------------------------------------------------------

STR = HEAD + 'permits: { exec: ["echo"] }\ntasks:\n  t:\n    exec: { command: "LINE" }\n'


def test_a_string_command_of_plain_words_is_split_safely() -> None:
    text = STR.replace("LINE", "echo hello world")
    (d,) = found(text, "NIKA-PARSE-019")
    assert d.fixes[0].applicability == "safe"
    after = fixed(text)
    assert 'command: ["echo", "hello", "world"]' in after and clean(after)


def test_a_string_command_with_shell_syntax_offers_shell_and_names_its_grant() -> None:
    text = STR.replace("LINE", "echo hi | wc -c")
    (d,) = found(text, "NIKA-PARSE-019")
    (fix,) = d.fixes
    assert fix.applicability == "unsafe" and "permits.exec: true" in fix.title
    assert "permits.exec: true" in d.help


def test_a_number_in_command_is_refused_with_a_quoting_fix() -> None:
    """The schema's `items: {type: string}` (02: semantics never fork on a YAML type)."""
    text = HEAD + 'permits: { exec: ["sleep"] }\ntasks:\n  t:\n    exec: { command: ["sleep", 5] }\n'
    (d,) = found(text, "NIKA-PARSE-019")
    assert "not a number" in d.message
    after = fixed(text)
    assert 'command: ["sleep", "5"]' in after and clean(after)


# -- net: a URL where a host goes ---------------------------------------------------------------------

NET = (
    HEAD + 'permits: { net: { http: ["ENTRY"] }, tools: ["nika:fetch"] }\ntasks:\n'
    '  t:\n    invoke: { tool: "nika:fetch", args: { url: "https://api.example.com/v1/items" } }\n'
)


@pytest.mark.parametrize(
    ("entry", "applicability", "wider"),
    [("https://api.example.com", "safe", False), ("https://api.example.com/v1", "unsafe", True)],
)
def test_a_url_in_net_http_is_an_inert_grant_with_a_fix_to_the_host(entry: str, applicability: str, wider: bool):
    text = NET.replace("ENTRY", entry)
    (d,) = found(text, "permits/001")
    assert not d.is_error  # the spec has no refusal for it: the fetch's NIKA-SEC-004 is the refusal
    assert [d.code for d in compile_text(text, "r.nika.yaml").diagnostics if d.is_error] == ["NIKA-SEC-004"]
    assert not found(text, "NIKA-DRIFT-001")  # one mistake, one finding
    (fix,) = d.fixes
    assert fix.applicability == applicability and ("every path" in d.help) is wider
    after = fixed(text, unsafe=True)
    assert 'http: ["api.example.com"]' in after and clean(after)


# -- where a field goes ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("body", "name", "home"),
    [
        ('permits: { http: ["api.example.com"] }\n', "http", "net"),
        ('permits: { read: ["./**"] }\n', "read", "fs"),
        ("tasks:\n  t:\n    infer: { model: mock/echo, prompt: x }\n    max_attempts: 3\n", "max_attempts", "retry"),
        ("tasks:\n  t:\n    infer: { model: mock/echo, prompt: x, budget_tokens: 5 }\n", "budget_tokens", "thinking"),
        ('tasks:\n  t:\n    exec: { command: ["echo"] }\n    cwd: "."\n', "cwd", "exec"),
    ],
)
def test_a_field_valid_one_level_down_says_where_it_belongs(body: str, name: str, home: str) -> None:
    text = HEAD + body + ("" if "tasks:" in body else "tasks:\n  t: { infer: { model: mock/echo, prompt: x } }\n")
    (d,) = found(text, "NIKA-PARSE-005")
    assert f"`{name}` belongs under `{home}:`, one level deeper" in d.help


def test_a_dedented_task_body_is_one_finding_with_the_indentation_as_its_fix() -> None:
    text = (
        HEAD + 'permits: { exec: ["echo"] }\ntasks:\n  build:\n  exec: { command: ["echo", "hi"] }\n'
        "  timeout: 5s\n  report:\n    exec: { command: [echo, done] }\n"
    )
    errors = [d for d in compile_text(text, "r.nika.yaml").diagnostics if d.is_error]
    assert [(d.code, d.help) for d in errors] == [("NIKA-PARSE-019", "Indent the body under `build:`.")]
    after = fixed(text)
    assert '  build:\n    exec: { command: ["echo", "hi"] }\n    timeout: 5s\n  report:' in after
    assert clean(after)


def test_provider_colon_model_is_fixed_to_provider_slash_model() -> None:
    for written, want in (('"openai:gpt-4o"', '"openai/gpt-4o"'), ("ollama:qwen3.5:9b", "ollama/qwen3.5:9b")):
        text = HEAD + f"tasks:\n  t:\n    infer: {{ model: {written}, prompt: x }}\n"
        (d,) = found(text, "NIKA-PROVIDER-002")
        assert f"model: {want}" in fixed(text)
        assert d.fixes[0].applicability == "safe"
