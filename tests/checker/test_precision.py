"""Static precision: what the spec allows is never refused, what the spec makes static is caught.

Each test names the sentence that decides it (in our words, with its section).
"""

from __future__ import annotations

import textwrap

from checker import compile_text


def codes(text: str) -> list[str]:
    compiled = compile_text(textwrap.dedent(text), "wf.nika.yaml")
    return sorted(d.code or d.rule or "" for d in compiled.diagnostics)


def errors(text: str) -> list[str]:
    compiled = compile_text(textwrap.dedent(text), "wf.nika.yaml")
    return sorted(d.code or "" for d in compiled.diagnostics if d.is_error)


# -- a gate is not a transmission (NEP-0002 v2.0, rule) -----------------------------------------

TRIFECTA = """\
nika: v1
workflow: { id: t }
permits:
  fs: { read: ["./data/**"] }
  net: { http: ["api.example.com"] }
  tools: ["nika:fetch", "nika:read"]
tasks:
  page:
    invoke: { tool: "nika:fetch", args: { url: "https://api.example.com/status" } }
  report:
    with:
      body: ${{ tasks.page.output }}
    when: WHEN
    invoke: { tool: "nika:fetch", args: { url: "https://api.example.com/ping", method: POST, body: BODY } }
"""


def test_gate_only_read_carries_no_taint_into_the_effect() -> None:
    """NEP-0002 v2.0 (rule): SEC-009 is for each egress-capable task "whose effect surface the
    untrusted content reaches"; a `with:` value read only by `when:` decides whether the effect
    happens and never reaches its surface (10-authority §taint: taint follows values into
    arguments, NEP-0004 likewise speaks of values reaching an argument)."""
    text = TRIFECTA.replace("WHEN", "${{ with.body != '' }}").replace(", body: BODY", "")
    assert errors(text) == []


def test_the_same_value_in_the_effect_is_still_refused() -> None:
    """Mutation: the gated value also flows into the request body: a realized flow (NEP-0002)."""
    text = TRIFECTA.replace("WHEN", "${{ with.body != '' }}").replace("BODY", '"${{ with.body }}"')
    assert "NIKA-SEC-009" in errors(text)


def test_a_binding_read_by_gate_and_by_effect_is_content() -> None:
    text = TRIFECTA.replace("WHEN", "${{ has(with.body) }}").replace("BODY", '"x ${{ with.body }}"')
    assert "NIKA-SEC-009" in errors(text)


# -- agent tools: targets known only at run time (01 §permits, enforcement 2.) ------------------

AGENT = """\
nika: v1
workflow: { id: a }
model: mock/echo
permits:
  tools: ["nika:read", "nika:fetch"]
FS
tasks:
  look:
    agent:
      prompt: "Read the notes"
      tools: ["nika:read", "nika:fetch"]
"""


def test_agent_fs_tool_without_fs_grant_is_judged_at_the_effect() -> None:
    """01 §permits (enforcement, 2.): any effect escaping the declared set fails the task at run
    time with SEC-004, the dynamic cases a static check cannot see; an agent picks its paths and
    URLs at run time, so nothing about them is static (the run-time half is
    tests/runtime/test_agent_dynamic_targets.py)."""
    assert errors(AGENT.replace("FS\n", "")) == []
    assert errors(AGENT.replace("FS", '  fs: { read: ["./docs/**"] }')) == []


def test_agent_tool_outside_permits_tools_is_still_static() -> None:
    """01 §permits: an agent may never be granted a tool outside `permits` (static: the whitelist
    is literal)."""
    text = AGENT.replace("FS\n", "").replace('tools: ["nika:read", "nika:fetch"]\ntasks', 'tools: ["nika:read"]\ntasks')
    assert errors(text) == ["NIKA-SEC-004"]


def test_literal_read_outside_the_grant_is_still_static() -> None:
    text = """\
    nika: v1
    workflow: { id: r }
    permits:
      tools: ["nika:read"]
      fs: { read: ["./docs/**"] }
    tasks:
      r:
        invoke: { tool: "nika:read", args: { path: "./secret.txt" } }
    """
    assert errors(text) == ["NIKA-SEC-004"]


# -- `dir/**` covers `dir` (01 §permits fs; stdlib nika:grep / nika:glob) -------------------------

SRC = """\
nika: v1
workflow: { id: g }
permits:
  fs: { read: ["GRANT"] }
  tools: ["nika:grep", "nika:glob"]
tasks:
  hits:
    invoke: { tool: "nika:grep", args: { pattern: "TODO", path: "PATH" } }
  files:
    invoke: { tool: "nika:glob", args: { pattern: "./src/**/*.py" } }
"""


def test_grep_over_the_granted_folder_itself() -> None:
    """01 §permits: `fs.read` globs are gitignore-style path globs and the spec's examples grant
    `./dir/**` to search the folder `./dir`; the folder is part of what the grant covers."""
    for grant, path in [
        ("./src/**", "./src"),
        ("./src/**", "src"),
        ("./src/**", "./src/"),
        ("src/**", ".//src"),
        ("./src/**", "./src/lib"),
    ]:
        assert errors(SRC.replace("GRANT", grant).replace("PATH", path)) == [], (grant, path)


def test_grep_beside_the_granted_folder_is_refused() -> None:
    for grant, path in [("./src/**", "./srcx"), ("./src/**", "."), ("./src/**", "./src/../etc")]:
        assert errors(SRC.replace("GRANT", grant).replace("PATH", path)) == ["NIKA-SEC-004"], (grant, path)
