"""The effect table's runtime API: concrete requirements judged against a plain permits mapping."""

from __future__ import annotations

from checker.contracts import effects
from checker.contracts.effects import Boundary, Need


def test_requirements_read_the_table() -> None:
    assert effects.requirements("nika:read", {"path": "./a"}) == [
        Need("fs.read"),
        Need("tools"),
        Need("fs.read", "./a", "path"),
    ]
    assert effects.requirements("nika:jq", {"expression": "."}) == []
    got = effects.requirements(
        "nika:fetch", {"url": "https://x.example/", "multipart": [{"name": "f", "path": "./up"}]}
    )
    assert Need("net", "https://x.example/", "url") in got and Need("fs.read", "./up", "multipart[].path") in got
    # a conditional target: notify's target is a URL only for the webhook channel
    assert not any(n.value for n in effects.requirements("nika:notify", {"channel": "email", "target": "a@b"}))
    assert effects.tool_effects("mcp:srv/t").ingress and effects.tool_effects("mcp:srv/t").egress


def test_a_boundary_from_plain_data() -> None:
    b = Boundary.from_data({"fs": {"read": ["./data/**"]}, "tools": ["nika:*", "!nika:write"], "exec": ["git"]})
    assert b.check("fs.read", "data/../data/x") is None
    assert b.check("fs.read", "../etc/passwd") is not None
    assert b.check("fs.write", "data/x") is not None
    assert b.check("tools", "nika:read") is None and b.check("tools", "nika:write").rule is not None  # type: ignore[union-attr]
    assert b.check("exec", "git") is None and b.check("exec", "sh") is not None
    assert Boundary.from_data(None).check("fs.read", "x") is not None


def test_floors_and_canonical_forms() -> None:
    assert effects.url_host("https://User@API.Example.COM.:8443/p?q") == "api.example.com"
    assert effects.url_host("http://[::1]:80/") == "::1"
    assert effects.canonical_host("bücher.example") == "xn--bcher-kva.example"
    for host in (
        "10.0.0.1",
        "172.16.5.5",
        "192.168.1.1",
        "169.254.169.254",
        "100.64.1.1",
        "fd00::1",
        "::ffff:10.0.0.1",
        "0.0.0.0",
        "127.1",
    ):
        assert effects.floor_reason(host) is not None, host
    for host in ("example.com", "8.8.8.8", "2606:4700::1111"):
        assert effects.floor_reason(host) is None, host
    assert effects.is_exact_loopback("127.0.0.1") and not effects.is_exact_loopback("127.1")
    assert effects.dangerous_env("LD_AUDIT") and effects.dangerous_env("IFS") and not effects.dangerous_env("HOME")
    assert effects.judge_env_value("HOME", untrusted=True) and not effects.judge_env_value("HOME", untrusted=False)
    assert effects.code_bearing("https://x/a/b.PKL") == ("serialized-executable", ".pkl")
    assert effects.code_bearing("https://x/lib.so.1") == ("native", ".so")
    assert effects.code_bearing("https://x/model.pt.2") is None
