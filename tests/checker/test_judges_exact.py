"""The permit judge, the gate algebra and the glob matcher, pinned answer by answer.

Each branch is asserted on its exact verdict (the denial's plane, value, canonical form, reason
and rule; the pass set; the matched or unmatched text), so a change to any one of them fails a
test: these are the mutation-tested decisions of the checker (issue 17).
"""

from __future__ import annotations

import pytest

from checker.contracts import effects
from checker.contracts.effects import Boundary, Denial, Need, Target
from checker.core.globs import (
    GlobSyntaxError,
    ToolRule,
    _tokens,
    canonical_path,
    expand_tools,
    glob_base,
    glob_match,
    match_path,
    match_tool,
    parse_tool_rules,
    tool_allowed,
    tool_verdict,
)
from checker.core.vocab import ALL_STATES, EdgeRole, Status
from checker.model.graph import Edge, pass_set

# -- the gate algebra ---------------------------------------------------------------------------


def test_each_edge_kind_lets_exactly_its_states_through() -> None:
    span = (0, 1)
    assert pass_set(EdgeRole.VALUE) == {Status.SUCCESS, Status.SKIPPED}
    assert pass_set(EdgeRole.FAILURE_OBSERVATION) == {Status.FAILURE, Status.SKIPPED}
    assert pass_set(EdgeRole.TERMINAL_OBSERVATION) == ALL_STATES
    assert pass_set(EdgeRole.RECOVERY) == ALL_STATES
    assert pass_set(EdgeRole.CONTROL, "terminal") == ALL_STATES
    assert pass_set(EdgeRole.CONTROL, "failure") == {"failure"}
    assert pass_set(EdgeRole.CONTROL, "skipped") == {"skipped"}
    assert pass_set(EdgeRole.CONTROL, None) == {""}
    edge = Edge("a", "b", EdgeRole.CONTROL, "success", span)  # type: ignore[arg-type]
    assert edge.passes == {"success"} and edge.schedules
    recovery = Edge("a", "b", EdgeRole.RECOVERY, None, span)  # type: ignore[arg-type]
    assert recovery.passes == ALL_STATES and not recovery.schedules


# -- the boundary -------------------------------------------------------------------------------


def _full() -> Boundary:
    """A boundary granting every plane (built per test, never at import)."""
    return Boundary.from_data(
        {
            "fs": {"read": ["./data/**"], "write": ["out/*.txt"]},
            "net": {"http": ["API.example.com"]},
            "exec": ["git"],
            "tools": ["nika:*", "!nika:write"],
            "env": ["HOME", 7],
        }
    )


def test_from_data_reads_every_plane_and_drops_what_is_not_a_string() -> None:
    full = _full()
    assert (
        Boundary(
            True,
            ("./data/**",),
            ("out/*.txt",),
            ("API.example.com",),
            ("git",),
            (ToolRule("nika:*", False, 0), ToolRule("nika:write", True, 1)),
            ("HOME",),
        )
        == full
    )
    assert Boundary.from_data({}) == Boundary(True)
    assert Boundary.from_data({"exec": True}).exec is True
    assert Boundary.from_data({"fs": None, "net": None, "exec": "git"}) == Boundary(True, exec=())
    assert Boundary.from_data(None) == Boundary(False)


def test_grants_names_each_plane() -> None:
    full = _full()
    assert [p for p in effects.PLANES if full.grants(p)] == list(effects.PLANES)
    empty = Boundary(True)
    assert [p for p in effects.PLANES if empty.grants(p)] == []
    assert not Boundary(True, exec=()).grants("exec") and Boundary(True, exec=True).grants("exec")
    assert not Boundary(True, tools=(ToolRule("nika:*", True, 0),)).grants("tools")
    assert not full.grants("nonsense")


def test_an_absent_block_denies_every_plane() -> None:
    for plane in effects.PLANES:
        assert Boundary(False).check(plane, "x") == Denial(
            plane, "x", None, "the workflow declares no `permits:` block"
        )


def test_file_planes() -> None:
    full = _full()
    assert full.check("fs.read", "data/../data/x") is None
    assert full.check("fs.read") is None
    assert full.check("fs.read", "../etc/passwd") == Denial(
        "fs.read", "../etc/passwd", "../etc/passwd", "`../etc/passwd` lies outside `permits.fs.read`"
    )
    assert full.check("fs.write", "out/a.txt") is None
    assert full.check("fs.write", "./out/sub/a.txt") == Denial(
        "fs.write", "./out/sub/a.txt", "out/sub/a.txt", "`out/sub/a.txt` lies outside `permits.fs.write`"
    )
    assert full.check("fs.write", "out", directory=True) is None
    assert full.check("fs.write", "out") is not None
    assert full.check("fs.write", "elsewhere", directory=True) is not None
    assert Boundary(True, fs_write=("x/*",)).check("fs.write", ".", directory=True) is None
    assert Boundary(True, fs_write=("../x/*",)).check("fs.write", ".", directory=True) is not None
    assert Boundary(True, fs_write=("/x/*",)).check("fs.write", ".", directory=True) is not None
    assert Boundary(True).check("fs.read", "a") == Denial("fs.read", "a", None, "`permits.fs.read` grants nothing")
    assert Boundary(True).check("fs.write", "a") == Denial("fs.write", "a", None, "`permits.fs.write` grants nothing")


def test_network_plane() -> None:
    full = _full()
    assert full.check("net", "api.example.com.") is None
    assert full.check("net") is None
    assert full.check("net", "other.example") == Denial(
        "net", "other.example", "other.example", "host `other.example` is not in `permits.net.http`"
    )
    assert Boundary(True, net_http=(" * ",)).check("net", "anything.example") is None
    assert Boundary(True).check("net", "h") == Denial("net", "h", None, "`permits.net.http` grants nothing")


def test_exec_plane() -> None:
    full = _full()
    assert full.check("exec", "git") is None and full.check("exec") is None
    assert full.check("exec", "sh") == Denial("exec", "sh", "sh", "program `sh` is not in `permits.exec`")
    assert Boundary(True, exec=True).check("exec", "anything") is None
    refused = Denial("exec", "git", None, "`permits.exec` does not allow processes")
    assert Boundary(True, exec=False).check("exec", "git") == refused
    assert Boundary(True, exec=()).check("exec", "git") == refused


def test_tools_plane() -> None:
    full = _full()
    assert full.check("tools", "nika:read") is None and full.check("tools") is None
    assert full.check("tools", "nika:write") == Denial(
        "tools",
        "nika:write",
        "nika:write",
        "`nika:write` is excluded by `!nika:write`",
        ToolRule("nika:write", True, 1),
    )
    assert full.check("tools", "mcp:x/y") == Denial(
        "tools", "mcp:x/y", "mcp:x/y", "`mcp:x/y` matches no entry of `permits.tools`"
    )
    assert Boundary(True).check("tools") == Denial("tools", None, None, "`permits.tools` grants nothing")


def test_env_and_unknown_planes() -> None:
    full = _full()
    assert full.check("env", "HOME") is None
    assert full.check("env", "PATH") == Denial("env", "PATH", "PATH", "`PATH` is not in `permits.env`")
    assert full.check("env") == Denial("env", None, None, "`None` is not in `permits.env`")
    assert full.check("disk", "x") == Denial("disk", "x", None, "unknown plane `disk`")


# -- what a call needs --------------------------------------------------------------------------


def test_tool_effects_of_the_three_kinds_of_id() -> None:
    mcp = effects.tool_effects("mcp:srv/t")
    assert (mcp.needs, mcp.ingress, mcp.egress, mcp.pure, mcp.known) == (("tools",), True, True, False, True)
    jq = effects.tool_effects("nika:jq")
    assert (jq.needs, jq.pure, jq.known, jq.needs_tools_grant) == ((), True, True, False)
    unknown = effects.tool_effects("nika:nope")
    assert (unknown.needs, unknown.pure, unknown.known) == (("tools",), False, False)
    fetch = effects.tool_effects("nika:fetch")
    assert fetch.needs[-1] == "tools" and fetch.ingress and fetch.known and not fetch.pure
    assert Target("multipart[].path", "fs.read", "path").steps == ("multipart[]", "path")
    assert effects.verb_needs("exec") == ("exec",) and effects.verb_needs("nonsense") == ()


def test_requirements_follow_nested_and_conditional_targets() -> None:
    assert effects.requirements("nika:read", None) == [Need("fs.read"), Need("tools")]
    got = effects.requirements("nika:fetch", {"url": "https://h.example/", "multipart": [{"path": "a"}, "x", {}]})
    assert got[-2:] == [Need("net", "https://h.example/", "url"), Need("fs.read", "a", "multipart[].path")]
    assert effects.requirements("nika:fetch", {"url": 7, "multipart": {"path": "a"}})[-1] == Need("tools")
    webhook = effects.requirements("nika:notify", {"channel": "webhook", "target": "https://h.example/"})
    assert Need("net", "https://h.example/", "target") in webhook
    unknown_channel = effects.requirements("nika:notify", {"target": "https://h.example/"})
    assert any(n.value == "https://h.example/" for n in unknown_channel)  # an unknown condition may apply
    assert not any(n.value for n in effects.requirements("nika:notify", {"channel": "email", "target": "a@b"}))


# -- canonical forms and floors -----------------------------------------------------------------


@pytest.mark.parametrize(
    ("url", "host"),
    [
        ("https://User@API.Example.COM.:8443/p?q", "api.example.com"),
        ("http://[::1]:80/", "::1"),
        ("git+ssh://h.example/x", "h.example"),
        ("http://h.example?x=/y", "h.example"),
        ("http://h.example#/y", "h.example"),
        ("h.example/x", None),
        ("://h.example", None),
        ("ht tp://h.example", None),
        ("http:///path", None),
        ("a-b.c://h.example", "h.example"),
        ("http://h.example/x://y", "h.example"),
        ("https://X.example/", "x.example"),
    ],
)
def test_url_host(url: str, host: str | None) -> None:
    assert effects.url_host(url) == host


def test_url_path_and_percent_decoding() -> None:
    assert effects.url_path("https://h.example/a%2Eb/c?d#e") == "/a.b/c"
    assert effects.url_path("https://h.example") == ""
    assert effects.url_path("/local/p#x") == ""  # not a URL: no path to judge
    assert effects.url_path("https:///p") == "/p"
    assert effects.url_path("https://h/aXb?c?d") == "/aXb"
    assert effects._percent_decode("%FF") == "\ufffd"
    assert effects._percent_decode("%41%4a%zz%4") == "AJ%zz%4"
    assert effects._percent_decode("%C3%A9") == "é"
    assert effects._percent_decode("a%") == "a%"


def test_canonical_host() -> None:
    assert effects.canonical_host(" Example.COM. ") == "example.com"
    assert effects.canonical_host("[::1]:8080") == "::1"
    assert effects.canonical_host("h.example:443") == "h.example"
    assert effects.canonical_host("::1") == "::1"  # two colons: an address, not host:port
    assert effects.canonical_host("a]b") == "a]b" and effects.canonical_host("[::1]]") == "::1"
    assert effects.canonical_host("BOX.") == "box"
    assert effects.canonical_host("bücher.example") == "xn--bcher-kva.example"


@pytest.mark.parametrize(
    ("host", "reason"),
    [
        ("localhost", "a loopback name"),
        ("db.localhost", "a loopback name"),
        ("metadata.google.internal", "a cloud metadata endpoint"),
        ("169.254.169.254", "a cloud metadata endpoint"),
        ("fd00:ec2::254", "a cloud metadata endpoint"),
        ("100.100.100.200", "a cloud metadata endpoint"),
        ("127.0.0.1", "a loopback address"),
        ("127.1", "a loopback address"),
        ("0x7f000001", "a loopback address"),
        ("::ffff:127.0.0.1", "a loopback address"),
        ("169.254.1.1", "a link-local address"),
        ("100.64.0.1", "a shared (carrier-grade NAT) address"),
        ("0.0.0.0", "the unspecified address"),
        ("10.0.0.1", "a private address"),
        ("192.168.1.1", "a private address"),
        ("fd00::1", "a private address"),
        ("192.0.2.1", "a private address"),
        ("8.8.8.8", None),
        ("example.com", None),
        ("", None),
    ],
)
def test_the_ssrf_floor(host: str, reason: str | None) -> None:
    assert effects.floor_reason(host) == reason


def test_exact_loopback_entries() -> None:
    for entry in ("localhost", " LOCALHOST ", "::1", "[::1]", "127.0.0.1", "127.255.0.9"):
        assert effects.is_exact_loopback(entry), entry
    for entry in ("127.0.0", "127.0.0.256", "128.0.0.1", "127.a.0.1", "localhost.example", "::2"):
        assert not effects.is_exact_loopback(entry), entry


def test_dangerous_env_and_reentry_tokens() -> None:
    assert effects.dangerous_env("bash_env") and effects.dangerous_env("LD_PRELOAD")
    assert not effects.dangerous_env("HOME")
    assert effects.env_floor_class("ld_preload") == "dynamic-linker" and effects.env_floor_class("HOME") is None
    assert effects.env_locator_class("HOME") == "home-and-config" and effects.env_locator_class("TZ") is None


@pytest.mark.parametrize(
    ("url", "verdict"),
    [
        ("https://h.example/model.PKL", ("serialized-executable", ".pkl")),
        ("https://h.example/run.py.", ("script", ".py")),
        ("https://h.example/x%252epy", ("script", ".py")),
        ("https://h.example/libx.so.1.2", ("native", ".so")),
        ("https://h.example/run.py.1", None),
        ("https://h.example/readme", None),
        ("https://h.example/data.json?f=x.py", None),
        ("https://h.example/12", None),
        ("https://h.example/x%25252525252epy", None),  # six encodings: past what is peeled
        ("https://h.example/run.pyX", None),
        ("https://h.example/lib.x.so", ("native", ".so")),
        ("x.py", None),  # not a URL
    ],
)
def test_code_bearing_urls(url: str, verdict: tuple[str, str] | None) -> None:
    assert effects.code_bearing(url) == verdict


# -- globs --------------------------------------------------------------------------------------


def test_tool_rules_and_verdicts() -> None:
    rules = parse_tool_rules(["nika:*", "!nika:write", "mcp:**"])
    assert rules == (ToolRule("nika:*", False, 0), ToolRule("nika:write", True, 1), ToolRule("mcp:**", False, 2))
    assert tool_verdict(rules, "nika:write") == rules[1]
    assert tool_verdict(rules, "mcp:a/b") == rules[2]
    assert tool_verdict(rules, "other:x") is None
    assert tool_allowed(["nika:*"], "nika:read") and not tool_allowed(["!nika:*"], "nika:read")
    assert not tool_allowed([], "nika:read")
    assert match_tool("mcp:a/*", "mcp:a/b") and not match_tool("mcp:a/*", "mcp:a/b/c")
    assert not match_tool("mcp:**", "mcp:a:b")


def test_expand_tools_keeps_the_order_of_the_granting_entries() -> None:
    known = ["nika:write", "nika:read", "nika:jq", "mcp:s/t", "nika:read"]
    assert expand_tools(["nika:read", "nika:*", "!nika:write"], known) == ["nika:read", "nika:jq"]
    assert expand_tools(["mcp:s/t", "nika:unknown", "!mcp:s/t"], known) == []
    assert expand_tools(["nika:j?", "nika:[r]ead"], known) == []  # ? and [ are literal in tool globs
    assert expand_tools(["mcp:s/*", "nika:jq"], known) == ["mcp:s/t", "nika:jq"]


def test_class_syntax() -> None:
    _tokens.cache_clear()  # read each pattern afresh
    assert glob_match("[a-c]x", "bx", classes=True) and not glob_match("[a-c]x", "dx", classes=True)
    assert glob_match("[!a-c]x", "dx", classes=True) and not glob_match("[^a-c]x", "ax", classes=True)
    assert glob_match("[]]", "]", classes=True) and glob_match("[a-]", "-", classes=True)
    assert glob_match("[\\]]", "]", classes=True) and glob_match("[x\\-z]", "-", classes=True)
    assert not glob_match("[x\\-z]", "y", classes=True)
    assert not glob_match("[!a]", "/", classes=True) and not glob_match("?", "/", classes=True)
    assert glob_match("a?c", "abc", classes=True) and not glob_match("a?c", "ac", classes=True)
    assert glob_match("a?c", "a?c") and not glob_match("a?c", "abc")
    assert glob_match("[ab]", "[ab]") and not glob_match("[ab]", "a")
    for bad in ("[ab", "a\\", "[!", "["):
        with pytest.raises(GlobSyntaxError):
            glob_match(bad, "a", classes=True)


def test_star_runs() -> None:
    assert glob_match("a***b", "ax/yb") and glob_match("**/b", "b") and glob_match("**/b", "x/y/b")
    assert not glob_match("**/b", "xb") and glob_match("a/**/b", "a/b") and not glob_match("a/**/b", "ab")
    assert glob_match("x*", "x") and not glob_match("x*", "x/y") and glob_match("x**", "x/y")
    assert not glob_match("**", "a:b", hard=":") and not glob_match("**/x", "a:/x", hard=":")
    assert glob_match("\\*", "*") and not glob_match("\\*", "a")


@pytest.mark.parametrize(
    ("pattern", "split"),
    [
        ("src/**/*.py", ("src", "**/*.py")),
        ("*.py", ("", "*.py")),
        ("/etc/*.conf", ("/etc", "*.conf")),
        ("/*", ("/", "*")),
        ("a/b/c.txt", ("a/b/c.txt", "")),
        ("a/[x]/c", ("a", "[x]/c")),
        ("a/b\\*/c", ("a", "b\\*/c")),
        ("a/b?", ("a", "b?")),
    ],
)
def test_glob_base(pattern: str, split: tuple[str, str]) -> None:
    assert glob_base(pattern) == split


def test_paths() -> None:
    assert canonical_path("") == "." and canonical_path("/..") == "/" and canonical_path("a/../..") == ".."
    assert canonical_path("../../a/./b//") == "../../a/b" and canonical_path("/a/../b") == "/b"
    assert match_path("**", "a") and match_path("**", ".")  # the tree, its root included (as `dir/**` covers `dir`)
    assert match_path("dir/**", "dir") and match_path("dir/**", "dir/x/y") and not match_path("dir/**", "dirx")
    assert not match_path("/a/*", "a/b") and not match_path("a/*", "/a/b")
    assert match_path("../x/*", "../x/y") and not match_path("*/x/*", "../x/y")
    assert not match_path("../*", "../../y")


def _permits(block: str) -> object:
    import checker

    text = f"nika: v1\nworkflow: {{id: w}}\npermits:\n{block}tasks:\n  t: {{infer: {{model: mock/echo, prompt: x}}}}\n"
    return checker.compile_text(text).workflow.permits


def test_boundary_of_a_compiled_permits_block() -> None:
    permits = _permits(
        '  fs: {read: ["./a/**"], write: ["${{ inputs.x }}", "out/*"]}\n  net: {http: ["h.example"]}\n'
        '  exec: ["git"]\n  tools: ["nika:*", "!nika:write"]\n  env: ["HOME"]\n'
    )
    assert effects.boundary_of(permits) == Boundary(  # type: ignore[arg-type]
        True,
        ("./a/**",),
        ("out/*",),  # a template entry grants nothing
        ("h.example",),
        ("git",),
        (ToolRule("nika:*", False, 0), ToolRule("nika:write", True, 1)),
        ("HOME",),
    )
    assert effects.boundary_of(_permits("  exec: true\n")).exec is True  # type: ignore[arg-type]
    assert effects.boundary_of(_permits("  env: [HOME]\n")) == Boundary(True, env=("HOME",))  # type: ignore[arg-type]
    assert effects.boundary_of(None) == Boundary(False)


def test_a_wildcard_free_entry_covers_what_lies_beneath_it() -> None:
    """01 §permits reads fs globs gitignore-style: a pattern naming a directory covers its contents,
    so `write: ["./assets/og"]` (the spec's valid image-generate fixture) covers the files landed in
    it, at check and at run alike (one judge). Wildcards keep their one-segment reach."""
    assert match_path("./assets/og", "assets/og") and match_path("./assets/og", "assets/og/hero-1.png")
    assert match_path("assets/og", "./assets/og/deep/x.png")
    assert not match_path("./assets/og", "assets/ogre.png") and not match_path("./assets/og", "assets")
    assert not match_path("./assets/*", "assets/og/x.png")  # `*` never crosses `/`
    assert not match_path("/srv/data", "srv/data/x") and match_path("/srv/data", "/srv/data/x")
    assert not match_path("./a", "a/../../etc/passwd")  # canonical first: the climb leaves the grant
