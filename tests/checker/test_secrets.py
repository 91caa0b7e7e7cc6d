"""Secret flow: SEC-006 (unsanctioned sink) and SEC-007 (the workflow boundary), with witnesses."""

from __future__ import annotations

import pytest

from tests.checker.authority_helpers import codes, diags, wf

SECRET = "secrets:\n  tok:\n    source: env\n    key: TOKEN\n{egress}"
PERMITS = 'permits: { exec: ["curl"], tools: ["nika:fetch", "nika:notify"], net: { http: ["api.example.com"] } }\n'


def head(egress: str = "") -> str:
    return PERMITS + SECRET.format(egress=egress)


EXEC = '  call:\n    exec: { command: ["curl", "-H", "Bearer ${{ secrets.tok }}", "https://api.example.com"] }\n'
FETCH = (
    '  call:\n    invoke:\n      tool: "nika:fetch"\n'
    '      args: { url: "%s", headers: { Authorization: "Bearer ${{ secrets.tok }}" } }\n'
)


def test_a_secret_in_an_exec_payload_needs_an_egress_rule() -> None:
    (d,) = diags(wf(EXEC, head()))
    assert d.code == "NIKA-SEC-006" and 'to: "exec"' in (d.help or "")
    assert d.related and d.related[0].message == "secret `tok`"
    assert codes(wf(EXEC, head('    egress: [{ to: "exec" }]\n'))) == []
    # a clearance for one sink never authorizes another
    assert codes(wf(EXEC, head('    egress: [{ to: "nika:fetch" }]\n'))) == ["NIKA-SEC-006"]


@pytest.mark.parametrize(
    ("egress", "url", "want"),
    [
        ('[{ to: "nika:fetch", host: "api.example.com" }]', "https://api.example.com/v1", []),
        ('[{ to: "nika:fetch", host: "other.example.com" }]', "https://api.example.com/v1", ["NIKA-SEC-006"]),
        ('[{ to: "nika:fetch" }]', "https://api.example.com/v1", []),
        # egress narrows the boundary: a host outside net.http never clears (and is itself SEC-004)
        ('[{ to: "nika:fetch", host: "b.example.com" }]', "https://b.example.com/v1", ["NIKA-SEC-004", "NIKA-SEC-006"]),
    ],
)
def test_network_sinks_check_the_host(egress: str, url: str, want: list[str]) -> None:
    assert codes(wf(FETCH % url, head(f"    egress: {egress}\n"))) == want


def test_host_from_self_needs_the_bare_secret_as_destination() -> None:
    h = head('    egress: [{ to: "nika:notify", host_from_self: true }]\n')
    ok = '  n:\n    invoke:\n      tool: "nika:notify"\n'
    ok += '      args: { channel: webhook, target: "${{ secrets.tok }}", message: hi }\n'
    assert codes(wf(ok, h)) == []
    bad = ok.replace('"${{ secrets.tok }}"', '"https://x/${{ secrets.tok }}"')
    assert codes(wf(bad, h)) == ["NIKA-SEC-006"]


def test_prompts_are_sinks_but_model_output_does_not_re_leak() -> None:
    body = (
        '  ask:\n    infer: { prompt: "key ${{ secrets.tok }}" }\n'
        '  use:\n    with: { a: "${{ tasks.ask.output }}" }\n    exec: { command: ["curl", "${{ with.a }}"] }\n'
    )
    assert codes(wf(body, head())) == ["NIKA-SEC-006"]
    assert codes(wf(body, head('    egress: [{ to: "infer" }]\n'))) == []


def test_a_sanctioned_send_still_taints_the_capture() -> None:
    body = (
        EXEC
        + '  show:\n    with: { r: "${{ tasks.call.output }}" }\n'
        + '    invoke: { tool: "nika:fetch", args: { url: "https://api.example.com/${{ with.r }}" } }\n'
    )
    (d,) = diags(wf(body, head('    egress: [{ to: "exec" }]\n')))
    assert d.code == "NIKA-SEC-006" and d.task == "show"
    chain = [lab.message for lab in d.related]
    assert chain[0] == "secret `tok`" and any("tasks.call.output" in m for m in chain)


def test_outputs_are_the_boundary() -> None:
    body = EXEC
    out = "outputs:\n  result: ${{ tasks.call.output }}\n"
    text = wf(body, head('    egress: [{ to: "exec" }]\n')) + out
    (d,) = diags(text)
    assert d.code == "NIKA-SEC-007" and d.related
    assert codes(wf(body, head('    egress: [{ to: "exec" }, { to: "outputs" }]\n')) + out) == []


def test_a_value_without_secrets_is_never_a_leak() -> None:
    body = '  call:\n    exec: { command: ["curl", "https://api.example.com"] }\n'
    assert codes(wf(body, head()) + "outputs:\n  r: ${{ tasks.call.output }}\n") == []


def test_many_tasks_stay_linear() -> None:
    n = 400
    body = "".join(
        f'  t{i}:\n    with: {{ p: "${{{{ tasks.t{i - 1}.output }}}}" }}\n'
        + '    exec: { command: ["curl", "${{ with.p }}"] }\n'
        if i
        else '  t0:\n    exec: { command: ["curl", "${{ secrets.tok }}"] }\n'
        for i in range(n)
    )
    found = codes(wf(body, head()))
    assert found.count("NIKA-SEC-006") == n
