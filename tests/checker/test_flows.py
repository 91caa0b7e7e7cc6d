"""The lethal trifecta (SEC-009) and unordered shared writes (SEC-012)."""

from __future__ import annotations

from tests.checker.authority_helpers import codes, diags, wf

ALL3 = 'permits: { fs: { read: ["./data/**"] }, net: { http: ["example.com"] }, exec: ["echo"], tools: ["nika:*"] }\n'
FETCH = '  page:\n    invoke: { tool: "nika:fetch", args: { url: "https://example.com/" } }\n'
SUM = '  sum:\n    with: { p: "${{ tasks.page.output }}" }\n    infer: { prompt: "${{ with.p }}" }\n'
SEND = '  send:\n    with: { s: "${{ tasks.sum.output }}" }\n    exec: { command: ["echo", "${{ with.s }}"] }\n'


def test_trifecta_through_a_model_summary() -> None:
    (d,) = diags(wf(FETCH + SUM + SEND, ALL3))
    assert d.code == "NIKA-SEC-009" and d.task == "send" and "page → sum → send" in d.message


def test_dropping_a_leg_clears_it() -> None:
    assert codes(wf(FETCH + SUM + SEND, ALL3.replace('fs: { read: ["./data/**"] }, ', ""))) == []
    independent = SEND.replace('with: { s: "${{ tasks.sum.output }}" }\n    ', "").replace("${{ with.s }}", "x")
    assert codes(wf(FETCH + SUM + independent, ALL3)) == []


def test_a_blocking_gate_on_every_path_clears_it() -> None:
    gate = '  human:\n    invoke: { tool: "nika:prompt", args: { message: "send?" } }\n'
    gated = SEND.replace("    exec:", "    after: { human: success }\n    exec:")
    assert codes(wf(FETCH + SUM + gate + gated, ALL3)) == []
    # a prompt with a default answers itself: it is not a gate
    soft = gate.replace('message: "send?"', 'message: "send?", default: true')
    assert codes(wf(FETCH + SUM + soft + gated, ALL3)) == ["NIKA-SEC-009"]


def test_shared_writes() -> None:
    w = '  {id}:\n    invoke: {{ tool: "nika:write", args: {{ path: "{p}", content: "x" }} }}\n'
    head = 'permits: { fs: { write: ["./out/**"] }, tools: ["nika:write"] }\n'
    two = w.format(id="a", p="./out/log.txt") + w.format(id="b", p="out//log.txt")
    assert codes(wf(two, head)) == ["NIKA-SEC-012"]
    ordered = two + "    after: { a: success }\n"
    assert codes(wf(ordered, head)) == []
    assert codes(wf(w.format(id="a", p="./out/a") + w.format(id="b", p="./out/b"), head)) == []
    fan = '  f:\n    for_each: [1, 2]\n    invoke: { tool: "nika:write", args: { path: "./out/x", content: "y" } }\n'
    assert codes(wf(fan, head)) == ["NIKA-SEC-012"]


# -- NEP-0002 v2.0 readings (issue 39) -----------------------------------------------------------

NET = (
    'permits: { fs: { read: ["./data/**"], write: ["./out/**"] }, net: { http: ["example.com"] }, tools: ["nika:*"] }\n'
)
WRITE = (
    '  save:\n    with: { p: "${{ tasks.page.output }}" }\n'
    '    invoke: { tool: "nika:write", args: { path: ./out/p.html, content: "${{ with.p }}" } }\n'
)


def test_an_in_workspace_writer_the_feed_reaches_is_egress_capable() -> None:
    """NEP-0002 v2.0: egress capability is read per the one effect table; every fs-writing builtin
    is egress-capable (the legs decide whether the workflow can send at all), so with leg ③
    armed by `net.http` the untrusted feed flowing into `nika:write` in the workspace is found,
    witness-named `source → sink`."""
    (d,) = diags(wf(FETCH + WRITE, NET))
    assert (d.code, d.task) == ("NIKA-SEC-009", "save") and "page → save" in d.message


def test_every_fs_writing_builtin_is_egress_capable() -> None:
    from checker.contracts import effects
    from checker.rules.trifecta import _egress_capable

    writers = {t for t in ("nika:write", "nika:edit", "nika:chart", "nika:image_fx", "nika:image_generate",
                           "nika:tts_generate") if "fs.write" in effects.tool_effects(t).needs}  # fmt: skip
    assert len(writers) == 6 and all(_egress_capable(t) for t in writers)
    assert not _egress_capable("nika:read") and not _egress_capable("nika:jq")


MCP = 'permits: { fs: { read: ["./data/**"], write: ["WRITE"] }, tools: ["mcp:web/*", "nika:write"] }\n'
MCP_FEED = '  page:\n    invoke: { tool: "mcp:web/get", args: { q: "x" } }\n'


def test_a_home_anchored_write_glob_escapes_the_workspace() -> None:
    """Leg ③: a `~`-anchored `fs.write` glob leaves the workspace exactly as `../` and `/` do."""
    save = WRITE.replace("./out/p.html", "~/drop/p.html")
    assert codes(wf(MCP_FEED + save, MCP.replace("WRITE", "~/drop/**"))) == ["NIKA-SEC-009"]
    assert codes(wf(MCP_FEED + save.replace("~/drop", "./out"), MCP.replace("WRITE", "./out/**"))) == []


def test_a_recovery_read_does_not_reach_the_effect_but_flows_on() -> None:
    """An `on_error.recover` read replaces the task's output; it never reaches the task's own effect
    (no finding there), but the output it may become does reach the tasks that read it."""
    fallback = (
        '  mirror:\n    exec: { command: ["echo", "cached"] }\n    on_error: { recover: "${{ tasks.page.output }}" }\n'
    )
    head = ALL3
    assert codes(wf(FETCH + fallback, head)) == []
    reader = (
        '  send:\n    with: { m: "${{ tasks.mirror.output }}" }\n    exec: { command: ["echo", "${{ with.m }}"] }\n'
    )
    (d,) = diags(wf(FETCH + fallback + reader, head))
    assert (d.code, d.task) == ("NIKA-SEC-009", "send")


def test_a_binding_the_action_never_reads_does_not_reach_it() -> None:
    unread = '  send:\n    with: { p: "${{ tasks.page.output }}" }\n    exec: { command: ["echo", "fixed"] }\n'
    assert codes(wf(FETCH + unread, ALL3)) == []
    read = unread.replace('"fixed"', '"${{ with.p }}"')
    assert codes(wf(FETCH + read, ALL3)) == ["NIKA-SEC-009"]
    gate_only = unread.replace("    exec:", "    when: ${{ with.p != '' }}\n    exec:")
    assert codes(wf(FETCH + gate_only, ALL3)) == []  # the gate-only read stays precise
