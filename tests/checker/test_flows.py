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
