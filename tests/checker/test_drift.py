"""NIKA-DRIFT-001 (spec 05): declared but unused — a hint, never a failure, silent wherever the
used set is not decidable."""

from __future__ import annotations

from checker import compile_text
from checker.core.diagnostics import Severity

HEAD = "nika: v1\nworkflow: { id: d }\n"


def _drift(text: str) -> list[str]:
    found = compile_text(HEAD + text, "d.nika.yaml").diagnostics
    hints = [d for d in found if d.code == "NIKA-DRIFT-001"]
    assert all(d.severity is Severity.HINT for d in hints)
    return [d.message.split("`")[1] for d in hints]


def test_unused_names_are_hinted_and_used_ones_are_not() -> None:
    text = (
        "inputs:\n  topic: { type: string, default: tea }\n  unused_in: { type: string, default: x }\n"
        "const:\n  greeting: Hello\n  stale: 3\n"
        'tasks:\n  t: { infer: { model: mock/echo, prompt: "${{ const.greeting }} ${{ inputs.topic }}" } }\n'
    )
    assert sorted(_drift(text)) == ["const.stale", "inputs.unused_in"]


def test_a_dynamic_read_poisons_its_root() -> None:
    text = (
        "inputs:\n  a: { type: string, default: x }\n  b: { type: string, default: y }\n"
        'tasks:\n  t: { infer: { model: mock/echo, prompt: "${{ inputs }}" } }\n'
    )
    assert _drift(text) == []


def test_unused_hosts_programs_and_tools() -> None:
    text = (
        'permits:\n  net: { http: ["api.example.com", "old.example.com"] }\n'
        '  exec: ["make", "rm"]\n  tools: ["nika:fetch", "nika:jq"]\n'
        "tasks:\n"
        '  f: { invoke: { tool: "nika:fetch", args: { url: "https://api.example.com/s" } } }\n'
        '  b: { exec: { command: ["make"] } }\n'
    )
    assert sorted(_drift(text)) == ["permits.exec", "permits.net.http", "permits.tools"]


def test_a_computed_url_a_shell_line_and_an_agent_keep_their_category_silent() -> None:
    text = (
        'inputs:\n  base: { type: string, default: "https://api.example.com" }\n'
        'permits:\n  net: { http: ["api.example.com", "old.example.com"] }\n'
        '  exec: ["make", "rm"]\n  tools: ["nika:fetch", "nika:jq"]\n'
        "tasks:\n"
        '  f: { invoke: { tool: "nika:fetch", args: { url: "${{ inputs.base }}/s" } } }\n'
        '  b: { exec: { shell: "make all" } }\n'
        '  a: { agent: { model: mock/echo, prompt: "x", tools: ["nika:jq"] } }\n'
    )
    assert _drift(text) == []


def test_a_wildcard_host_entry_is_used_by_any_literal_host() -> None:
    text = (
        'permits:\n  net: { http: ["*"] }\n  tools: ["nika:fetch"]\n'
        'tasks:\n  f: { invoke: { tool: "nika:fetch", args: { url: "https://x.example.com/" } } }\n'
    )
    assert _drift(text) == []
