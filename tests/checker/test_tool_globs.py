"""The one glob matcher: tool ids (02 §tool whitelist) and fs paths (01 §permits), by property."""

from __future__ import annotations

import re

from hypothesis import given
from hypothesis import strategies as st

from checker.core.globs import canonical_path, glob_match, match_path, match_tool, parse_tool_rules, tool_verdict

SEG = st.text(alphabet="abcxyz_-.", min_size=1, max_size=6).filter(lambda s: s not in (".", ".."))
TOOL = st.builds(
    lambda ns, parts: f"{ns}:{'/'.join(parts)}", st.sampled_from(["nika", "mcp"]), st.lists(SEG, min_size=1, max_size=4)
)
PAT_CHARS = st.text(alphabet="ab*/:!\\.", max_size=10)


def _reference(pattern: str, text: str, seps: str, hard: str) -> bool:
    """An independent oracle: the pattern translated with every literal escaped."""
    out, i = [], 0
    while i < len(pattern):
        c = pattern[i]
        if c == "\\" and i + 1 < len(pattern):
            out.append(re.escape(pattern[i + 1]))
            i += 2
        elif pattern.startswith("**/", i):
            out.append(f"(?:[^{re.escape(hard)}]*{re.escape(seps)})?" if hard else f"(?:.*{re.escape(seps)})?")
            i += 3
        elif pattern.startswith("**", i):
            out.append(f"[^{re.escape(hard)}]*" if hard else ".*")
            i += 2
            while i < len(pattern) and pattern[i] == "*":
                i += 1
        elif c == "*":
            out.append(f"[^{re.escape(seps + hard)}]*")
            i += 1
        else:
            out.append(re.escape(c))
            i += 1
    return re.fullmatch("".join(out), text, re.S) is not None


@given(PAT_CHARS, st.text(alphabet="ab/:.", max_size=10))
def test_the_matcher_agrees_with_an_escaped_oracle(pattern: str, text: str) -> None:
    assert glob_match(pattern, text, seps="/", hard=":") == _reference(pattern, text, "/", ":")
    assert glob_match(pattern, text, seps="/") == _reference(pattern, text, "/", "")


@given(TOOL)
def test_an_exact_id_matches_itself_and_star_never_crosses_the_colon(tool: str) -> None:
    assert match_tool(tool, tool)
    assert not match_tool("*", tool)
    assert not match_tool("**", tool)
    ns = tool.split(":", 1)[0]
    other = "mcp" if ns == "nika" else "nika"
    assert not match_tool(f"{other}:*", tool) and not match_tool(f"{other}:**", tool)


@given(TOOL)
def test_star_stays_in_one_segment_and_double_star_crosses(tool: str) -> None:
    ns, rest = tool.split(":", 1)
    assert match_tool(f"{ns}:*", tool) == ("/" not in rest)
    assert match_tool(f"{ns}:**", tool)


@given(
    st.lists(st.tuples(st.booleans(), st.sampled_from(["nika:*", "nika:read", "mcp:**", "mcp:b/*", "**"])), max_size=6),
    TOOL,
)
def test_the_last_matching_rule_decides(entries: list[tuple[bool, str]], tool: str) -> None:
    rules = parse_tool_rules([("!" if neg else "") + pat for neg, pat in entries])
    got = tool_verdict(rules, tool)
    matching = [r for r in rules if match_tool(r.pattern, tool)]
    assert got == (matching[-1] if matching else None)


def test_the_spec_examples() -> None:
    assert match_tool("mcp:browser/*", "mcp:browser/navigate")
    assert not match_tool("mcp:browser/*", "mcp:browser/tab/open")
    assert match_tool("mcp:browser/**", "mcp:browser/tab/open")
    assert not match_tool("nika:*", "mcp:browser/navigate")
    rules = parse_tool_rules(["mcp:browser/*", "!mcp:browser/navigate"])
    assert tool_verdict(rules, "mcp:browser/navigate").negated  # type: ignore[union-attr]
    assert not tool_verdict(rules, "mcp:browser/click").negated  # type: ignore[union-attr]


def test_regex_metacharacters_are_plain_text() -> None:
    assert match_tool("mcp:a.b/(x)+", "mcp:a.b/(x)+")
    assert not match_tool("mcp:a.b/x", "mcp:aXb/x")
    assert glob_match("a\\*b", "a*b") and not glob_match("a\\*b", "axb")


@given(st.lists(st.sampled_from(["a", "b", ".", "..", ""]), max_size=8))
def test_canonical_paths_are_idempotent_and_never_keep_dots_inside(parts: list[str]) -> None:
    p = "/".join(parts)
    c = canonical_path(p)
    assert canonical_path(c) == c
    if c in ("/", "."):
        return
    segs = c.removeprefix("/").split("/")
    assert "." not in segs and "" not in segs
    climbing = [s == ".." for s in segs]
    assert climbing == sorted(climbing, reverse=True)  # `..` only at the front


@given(st.lists(SEG, min_size=1, max_size=4), st.integers(min_value=1, max_value=3))
def test_no_glob_without_a_literal_climb_admits_a_climbing_path(parts: list[str], ups: int) -> None:
    path = "../" * ups + "/".join(parts)
    for pat in ("**", "./**", "*", "**/*", "data/**", "*/**"):
        assert not match_path(pat, path)
    assert match_path("../" * ups + "**", path)


def test_paths_the_spec_names() -> None:
    assert match_path("datasets/**", "datasets/../datasets/q3.csv")
    assert not match_path("datasets/**", "../../etc/passwd")
    assert not match_path("./datasets/*.csv", "datasets/sub/deeper/private.key.csv")
    assert match_path("./datasets/*.csv", "datasets/q3.csv")
    assert match_path("./examples/fixtures/kpis.csv", "examples/fixtures/kpis.csv")
    assert match_path("**/*.md", "README.md") and match_path("**/*.md", "a/b/c.md")
    assert not match_path("./out/**", "/out/x") and not match_path("/srv/**", "srv/x")


def test_file_name_classes_only_when_asked() -> None:
    """``?`` and ``[…]`` are wildcards for ``nika:glob`` (classes=True) and literal in permits/tools."""
    assert glob_match("src/?.rs", "src/a.rs", classes=True)
    assert not glob_match("src/?.rs", "src/a.rs")
    assert glob_match("src/?.rs", "src/?.rs")
    assert glob_match("*/[!a-m]*", "src/x", classes=True)
    assert not glob_match("*/[!a-m]*", "src/b", classes=True)
    assert glob_match("[]x]", "]", classes=True) and glob_match("[^a]", "b", classes=True)
    assert not glob_match("a[!x]b", "a/b", classes=True)  # a class never matches a separator
    assert not glob_match("a?b", "a/b", classes=True)


def test_file_name_class_syntax_errors() -> None:
    from checker.core.globs import GlobSyntaxError

    for bad in ("src/[a-z.rs", "src/\\"):
        try:
            glob_match(bad, "x", classes=True)
        except GlobSyntaxError as e:
            assert bad in str(e) or repr(bad) in str(e)
        else:
            raise AssertionError(f"{bad!r} was accepted")
