"""The canonical tool-glob matcher (02 §Tool whitelist), shared by the checker and the agent loop:
the spec's examples, then properties over generated tool ids."""

from __future__ import annotations

import string

from hypothesis import given
from hypothesis import strategies as st

from checker.core.globs import expand_tools as expand
from checker.core.globs import match_tool as matches
from checker.core.globs import tool_allowed as allowed

# one segment, [a-z][a-z0-9_-]{0,8}, built from characters (st.from_regex draws the same set at
# several times the cost, and this file draws thousands)
SEGMENT = st.builds(
    str.__add__,
    st.sampled_from(string.ascii_lowercase),
    st.text(string.ascii_lowercase + string.digits + "_-", max_size=8),
)
NIKA_IDS = SEGMENT.map(lambda s: f"nika:{s}")
MCP_IDS = st.tuples(SEGMENT, st.lists(SEGMENT, min_size=1, max_size=3)).map(lambda t: f"mcp:{t[0]}/{'/'.join(t[1])}")
TOOL_IDS = st.one_of(NIKA_IDS, MCP_IDS)


def test_spec_examples():
    assert matches("nika:read", "nika:read")
    assert not matches("nika:read", "nika:reader")
    assert matches("nika:*", "nika:fetch")
    assert not matches("nika:*", "mcp:browser/navigate")  # the namespace colon is never crossed
    assert matches("mcp:browser/*", "mcp:browser/navigate")
    assert not matches("mcp:browser/*", "mcp:browser/tab/open")  # `*` stops at `/`
    assert matches("mcp:browser/**", "mcp:browser/tab/open")  # `**` crosses it
    assert matches("mcp:postgres/query", "mcp:postgres/query")
    assert not matches("mcp:postgres/query", "mcp:postgres/exec")
    rules = ["mcp:browser/*", "!mcp:browser/navigate"]
    assert allowed(rules, "mcp:browser/click")
    assert not allowed(rules, "mcp:browser/navigate")
    assert not allowed([], "nika:read")  # default-deny
    assert allowed(["!nika:read", "nika:*"], "nika:read")  # later rules win


@given(TOOL_IDS)
def test_an_exact_id_matches_itself_only(tool):
    assert matches(tool, tool)
    assert allowed([tool], tool)
    assert not matches(tool, tool + "x")


@given(TOOL_IDS, st.lists(TOOL_IDS, max_size=4))
def test_the_last_matching_rule_decides(tool, others):
    assert allowed([*others, tool], tool)
    assert not allowed([*others, tool, "!" + tool], tool)
    assert allowed([*others, "!" + tool, tool], tool)


@given(NIKA_IDS, MCP_IDS)
def test_star_never_crosses_namespace_or_slash(nika, mcp):
    assert matches("nika:*", nika)
    assert not matches("nika:*", mcp)
    assert not matches("mcp:*", mcp)  # `mcp:*` has no `/`, every MCP id has one
    server = mcp.split("/", 1)[0]
    assert matches(server + "/**", mcp)
    assert matches(server + "/*", mcp) == (mcp.count("/") == 1)
    assert not matches("**", nika)  # `**` crosses `/`, never the colon


@given(st.lists(TOOL_IDS, min_size=1, max_size=8, unique=True), st.lists(TOOL_IDS, max_size=3))
def test_expand_lists_exactly_the_allowed_tools(known, denied):
    rules = ["nika:*", "mcp:*/**", *("!" + d for d in denied)]
    granted = expand(rules, known)
    assert set(granted) == {t for t in known if allowed(rules, t)}
    assert len(granted) == len(set(granted))
