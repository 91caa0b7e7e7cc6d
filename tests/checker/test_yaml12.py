"""YAML 1.2 decides what is a syntax error, not the YAML 1.1 scanner of the C parser.

The fast path reads events from libyaml (ruamel.yaml.clib); where it refuses the text, the
pure-Python YAML 1.2 parser gets the last word. These tests pin the false refusals found so far
and check that both parsers build the same tree wherever both read the text.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from checker import compile_text
from checker.core.source import SourceText
from checker.parse.nodes import _Builder, parse_yaml
from checker.parse.values import ListValue, MapValue, ScalarValue, Value

ROOT = Path(__file__).resolve().parents[2]
SPEC = ROOT.parent / "shared" / "nika-spec"

HEAD = (
    "nika: v1\nworkflow:\n  id: y12\n"
    'permits: { exec: ["echo"], fs: { read: ["**"] }, net: { http: ["example.com"] }, tools: ["nika:*"] }\n'
    "tasks:\n"
)


def codes(text: str) -> list[str]:
    return [
        d.code or ""
        for d in compile_text(text).diagnostics
        if d.rule != "build/unavailable" and d.code != "NIKA-DRIFT-001"
    ]


# Each body is valid YAML 1.2 that libyaml refuses, and a valid workflow.
ACCEPTED = {
    "builtin id inside a flow mapping": (
        '  t:\n    invoke: { tool: nika:jq, args: { expression: ".a", input: { a: 1 } } }\n'
    ),
    "builtin id inside a flow sequence": (
        '  t:\n    agent: { model: mock/echo, prompt: "go", tools: [nika:read, nika:done] }\n'
    ),
    "URL inside a flow mapping": (
        "  t:\n    invoke: { tool: nika:fetch, args: { url: https://example.com/a?b=c:d } }\n"
    ),
    "plain scalar ending in a colon inside a flow sequence": ('  t:\n    exec: { command: [echo, "a", b:] }\n'),
    "next line (U+0085) inside a plain scalar": "  t:\n    exec:\n      command:\n        - echo\n        - a\u0085b\n",
    "line separator (U+2028) inside a plain scalar": (
        "  t:\n    exec:\n      command:\n        - echo\n        - a\u2028b\n"
    ),
}


@pytest.mark.parametrize("body", ACCEPTED.values(), ids=list(ACCEPTED))
def test_yaml12_text_is_not_a_syntax_error(body: str) -> None:
    assert codes(HEAD + body) == []


def test_tree_from_the_fallback_keeps_exact_values_and_spans() -> None:
    text = "a: { tool: nika:jq, n: 0755, b: no }\n"
    parsed = parse_yaml(SourceText(text, "x.yaml"))
    assert not parsed.fatal and parsed.diagnostics == ()
    assert isinstance(parsed.root, MapValue)
    inner = parsed.root.get("a")
    assert isinstance(inner, MapValue)
    tool = inner.get("tool")
    assert isinstance(tool, ScalarValue) and tool.value == "nika:jq"
    assert text[tool.span.start : tool.span.end] == "nika:jq"
    n, b = inner.get("n"), inner.get("b")
    assert isinstance(n, ScalarValue) and n.value == 755
    assert isinstance(b, ScalarValue) and b.value == "no"


def test_profile_is_still_judged_on_the_fallback_path() -> None:
    text = HEAD + "  t:\n    invoke: { tool: nika:log, args: { message: &m hi, level: info } }\n"
    assert "NIKA-YAML-001" in codes(text)
    dup = HEAD + "  t:\n    invoke: { tool: nika:log, tool: nika:log }\n"
    assert "NIKA-YAML-004" in codes(dup)


REFUSED = {
    "unquoted template inside a flow mapping": "a: { b: ${{ x }} }\n",
    "bad indentation": "a:\n  b: 1\n c: 2\n",
    "unclosed flow mapping": "a: { b: c\n",
    "tab as indentation": "a:\n\tb: 1\n",
    "lone surrogate escape": 'a: "\\ud800"\n',
    "lone surrogate after a YAML 1.2-only colon": 'a: { t: nika:jq, m: "\\udc00" }\n',
}


@pytest.mark.parametrize("text", REFUSED.values(), ids=list(REFUSED))
def test_text_yaml12_refuses_stays_a_syntax_error(text: str) -> None:
    parsed = parse_yaml(SourceText(text, "x.yaml"))
    assert parsed.fatal
    assert [d.code for d in parsed.diagnostics] == ["NIKA-PARSE-001"]


def test_error_after_a_yaml12_only_construct_is_placed_at_the_real_error() -> None:
    text = "a: { t: nika:jq }\nb: [1, 2\n"
    parsed = parse_yaml(SourceText(text, "x.yaml"))
    (d,) = parsed.diagnostics
    assert d.span.start > text.index("nika:jq") + len("nika:jq")


def test_surrogate_refusal_points_at_the_escape() -> None:
    text = 'a: { t: nika:jq, m: "\\udc00" }\n'
    (d,) = parse_yaml(SourceText(text, "x.yaml")).diagnostics
    assert d.span.start == text.index("\\udc00")


# -- both parsers build the same tree wherever both read the text ------------------------------


def _dump(node: Value | None) -> Any:
    if node is None:
        return None
    base = (type(node).__name__, node.span.start, node.span.end)
    if isinstance(node, ScalarValue):
        value = node.value
        if isinstance(value, float) and value != value:
            value = "nan"
        return (*base, repr(value), node.raw, node.style, tuple(node.offsets or ()))
    if isinstance(node, MapValue):
        return (*base, node.flow, tuple((_dump(e.key), _dump(e.value)) for e in node.entries))
    if isinstance(node, ListValue):
        return (*base, node.flow, tuple(_dump(i) for i in node.items))
    raise AssertionError(type(node))


def _build(text: str, pure: bool) -> Any:
    b = _Builder(SourceText(text, "x.yaml"))
    try:
        root = b.build(pure=pure)
    except Exception as exc:
        return ("error", type(exc).__name__)
    return _dump(root), [(d.code, d.span.start, d.span.end) for d in b.diags]


def _corpus() -> list[Path]:
    files = sorted(ROOT.glob("examples/**/*.nika.yaml")) + sorted(ROOT.glob("tests/**/*.yaml"))
    if SPEC.is_dir():
        files += sorted(SPEC.glob("conformance/**/*.yaml")) + sorted(SPEC.glob("templates/**/*.yaml"))
    return files


def test_both_parsers_build_the_same_tree() -> None:
    compared = 0
    for path in _corpus():
        try:
            text = path.read_text("utf-8")
        except (UnicodeDecodeError, OSError):
            continue
        if text.startswith("\ufeff"):
            continue  # libyaml counts marks after a byte order mark one short; the profile refuses a BOM anyway
        fast = _build(text, pure=False)
        if fast[0] == "error":
            continue
        assert _build(text, pure=True) == fast, path
        compared += 1
    assert compared >= (20 if SPEC.is_dir() else 10)
