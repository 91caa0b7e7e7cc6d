"""The canonical projection (spec 16, 03 §graph projection): one producer, its field set and
presence rules, its order, its bytes, and when there is none."""

from __future__ import annotations

import json

import pytest

from checker import compile_text
from checker.views.certificate import parse_prices
from checker.views.projection import REASONS, canonical, project, semantic_document, waves_of

FLOW = """nika: v1
workflow: { id: flow }
model: mock/echo
permits:
  fs: { read: ["./in/**", "./notes.md"], write: ["./out/**"] }
  net: { http: ["example.com", "*"] }
  exec: true
  tools: ["nika:read", "nika:write", "nika:fetch", "mcp:files/list"]
tasks:
  notes:
    invoke: { tool: "nika:read", args: { path: ./notes.md } }
  page:
    invoke: { tool: "nika:fetch", args: { url: "https://example.com/a" } }
  picked:
    with: { name: "${{ tasks.notes.output }}" }
    invoke: { tool: "nika:read", args: { path: "./in/${{ with.name }}" } }
  listing:
    invoke: { tool: "mcp:files/list", args: {} }
  think:
    with:
      page: "${{ tasks.notes.output }}"
      seen: "${{ tasks.page.status }}"
    for_each: ["fr", "de", "es"]
    when: "${{ with.seen == 'success' }}"
    infer: { prompt: "${{ with.page }} in ${{ item }}", model: "openai/gpt-4o-mini", max_tokens: 1000 }
    retry: { max_attempts: 2 }
    timeout: 1m30s
    output:
      first: ".[0]"
      rest: ".[1:]"
  save:
    with: { text: "${{ tasks.think.output }}", picked: "${{ tasks.picked.output }}" }
    invoke: { tool: "nika:write", args: { path: ./out/notes.md, content: "${{ with.text }}" } }
    on_error:
      recover: "${{ tasks.notes.output }}"
  shout:
    after: { save: success }
    exec: { shell: "echo done" }
  why:
    with: { err: "${{ tasks.save.error }}" }
    exec: { command: ["echo", "${{ with.err }}"] }
"""


def _nodes(text: str = FLOW, prices: str = "") -> dict[str, dict[str, object]]:
    p = project(compile_text(text), parse_prices(prices) if prices else None)
    doc = p.document()
    assert doc is not None, [d.code for d in compile_text(text).diagnostics if d.is_error]
    return {n["id"]: n for n in doc["nodes"]}


def test_the_flow_is_clean() -> None:
    compiled = compile_text(FLOW)
    assert compiled.clean, [(d.code, d.message) for d in compiled.diagnostics if d.is_error]


def test_nodes_come_in_wave_order_with_the_spec_field_set() -> None:
    p = project(compile_text(FLOW))
    doc = p.document()
    assert doc is not None and doc["graph_format"] == 2 and doc["workflow"] == "flow"
    assert [n["id"] for n in doc["nodes"]] == ["notes", "page", "listing", "picked", "think", "save", "shout", "why"]
    assert waves_of(doc) == [["notes", "page", "listing"], ["picked", "think"], ["save"], ["shout", "why"]]
    always = {"id", "verb", "permits", "when", "fan_out", "cost_interval"}
    optional = {"tool", "model", "retry_max_attempts", "timeout_ms", "on_error", "outputs"}
    for n in doc["nodes"]:
        assert always <= set(n) <= always | optional, n


def test_declared_policy_is_projected_only_where_declared() -> None:
    n = _nodes()
    think = n["think"]
    assert think["model"] == "openai/gpt-4o-mini" and "tool" not in think
    assert think["when"] == "${{ with.seen == 'success' }}"
    assert think["fan_out"] == {"kind": "list", "count": 3}
    assert think["retry_max_attempts"] == 2 and think["timeout_ms"] == 90_000
    assert think["outputs"] == ["first", "rest"]
    assert n["save"]["on_error"] == "recover"
    plain = n["notes"]
    assert plain["when"] is None and plain["fan_out"] is None and plain["cost_interval"] is None
    assert not {"retry_max_attempts", "timeout_ms", "on_error", "outputs", "model"} & set(plain)
    assert n["shout"]["verb"] == "exec" and "tool" not in n["shout"]


def test_permits_are_each_task_s_share_of_the_inferred_block() -> None:
    n = _nodes()
    assert n["notes"]["permits"] == ["fs.read:./notes.md", "tool:nika:read"]
    assert n["page"]["permits"] == ["net.http:example.com", "tool:nika:fetch"]
    assert n["picked"]["permits"] == ["fs.read:in/**", "tool:nika:read"]  # a computed path: its widest folder
    assert n["listing"]["permits"] == ["tool:mcp:files/list"]
    assert n["save"]["permits"] == ["fs.write:./out/notes.md", "tool:nika:write"]
    assert n["shout"]["permits"] == ["exec:*"]  # a shell line needs `exec: true`
    assert n["why"]["permits"] == ["exec:echo"]
    assert n["think"]["permits"] == []


def test_edges_one_per_binding_producer_and_kind_in_source_order() -> None:
    doc = project(compile_text(FLOW)).document()
    assert doc is not None
    assert doc["edges"] == [
        {"from": "notes", "to": "picked", "kind": "value", "binding": "name"},
        {"from": "notes", "to": "think", "kind": "value", "binding": "page"},
        {"from": "page", "to": "think", "kind": "terminal-observation", "binding": "seen"},
        {"from": "think", "to": "save", "kind": "value", "binding": "text"},
        {"from": "picked", "to": "save", "kind": "value", "binding": "picked"},
        {"from": "notes", "to": "save", "kind": "recovery"},
        {"from": "save", "to": "shout", "kind": "control", "predicate": "success"},
        {"from": "save", "to": "why", "kind": "failure-observation", "binding": "err"},
    ]


def test_cost_interval_only_for_priced_capped_model_tasks(monkeypatch: pytest.MonkeyPatch) -> None:
    from checker.contracts.catalog import lookup

    # by default the model catalog prices it (shipped data), never NIKA_PRICES from the environment
    monkeypatch.setenv("NIKA_PRICES", '{"openai/gpt-4o-mini": {"input": 100, "output": 100}}')
    row = lookup("openai/gpt-4o-mini")
    assert row is not None and row.output is not None
    worst = round(1000 * row.output / 1e6 * 2 * 3, 10)
    assert _nodes()["think"]["cost_interval"] == [round(worst / 2, 10), worst]
    unlisted = FLOW.replace("openai/gpt-4o-mini", "openai/not-a-catalogued-model")
    assert _nodes(unlisted)["think"]["cost_interval"] is None  # no price: unpriced, never a made-up 0
    priced = _nodes(prices='{"openai/gpt-4o-mini": {"input": 0.15, "output": 0.5}}')
    # worst case: 1,000 tokens × $0.50/M × 2 attempts × 3 items; the minimum path one attempt per item
    assert priced["think"]["cost_interval"] == [0.0015, 0.003]
    uncapped = FLOW.replace(", max_tokens: 1000", "")
    assert _nodes(uncapped, '{"openai/gpt-4o-mini": {"input": 0.15, "output": 0.6}}')["think"]["cost_interval"] is None
    mock = FLOW.replace('model: "openai/gpt-4o-mini", ', "")
    assert _nodes(mock)["think"]["cost_interval"] == [0, 0]  # mock calls no model: a real $0


def test_the_bytes_are_canonical_and_deterministic() -> None:
    a = project(compile_text(FLOW)).canonical()
    b = project(compile_text(FLOW)).canonical()
    assert a == b and a is not None
    assert a == json.dumps(json.loads(a), sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    assert canonical(json.loads(a)) == a


def test_no_graph_without_a_clean_check_and_the_reason_is_one_word() -> None:
    broken = FLOW.replace("after: { save: success }", "after: { sav: success }")
    p = project(compile_text(broken))
    assert p.graph is None and p.reason == "findings" and p.canonical() is None
    assert p.draft is not None and p.draft.nodes[0].id == "notes"  # drawings still have it
    assert set(p.spans) == set(compile_text(broken).workflow.tasks)  # type: ignore[union-attr]
    nothing = project(compile_text("- a\n- list\n"))
    assert (nothing.graph, nothing.reason, nothing.draft, dict(nothing.spans)) == (None, "parse", None, {})
    assert set(REASONS) == {"parse", "findings"}


def test_warnings_do_not_block_the_projection() -> None:
    warned = FLOW + '  fallback:\n    after: { think: failure }\n    exec: { command: ["echo", "none"] }\n'
    compiled = compile_text(warned)
    assert compiled.clean and any(not d.is_error for d in compiled.diagnostics)
    assert project(compiled).graph is not None


def test_the_semantic_document_wraps_the_projection_verbatim() -> None:
    compiled = compile_text(FLOW)
    p = project(compiled)
    doc = semantic_document(p, lambda src, span: [span.start, span.end], compiled.source)
    assert list(doc) == ["semantic_document_format", "graph", "spans"]
    assert canonical(doc["graph"]) == p.canonical() and list(doc["graph"]) == sorted(doc["graph"])
    start, end = doc["spans"]["notes"]
    assert FLOW[start:end] == "notes"  # the task's id token
    unbuilt = semantic_document(project(compile_text("[]")), lambda s, sp: None, compiled.source)
    assert unbuilt == {"semantic_document_format": 1, "graph": None, "reason": "parse", "spans": {}}
