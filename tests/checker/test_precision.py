"""Static precision: what the spec allows is never refused, what the spec makes static is caught.

Each test names the sentence that decides it (in our words, with its section).
"""

from __future__ import annotations

import textwrap

from checker import compile_text
from tests.checker.run_failures import is_run_failure


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


# -- misses: for_each over a literal non-array (03 §for_each) -----------------------------------

FAN = """\
nika: v1
workflow: { id: f }
const:
  word: "abc"
  items: ["a", "b"]
  n: { type: integer, value: 3 }
inputs:
  xs: { type: string, default: "q" }
  ys: { type: { array: string }, default: [] }
permits:
  tools: ["nika:log"]
tasks:
  t:
    for_each: FE
    invoke: { tool: "nika:log", args: { message: "${{ item }}" } }
"""


def test_for_each_over_a_literal_non_array_warns_with_the_run_code() -> None:
    """03 §for_each: the collection must be an array; a string, number, object or null is an
    evaluation error, NIKA-VAR-006. A literal or `const:` value is known at check, so the check
    warns with the run-time code now (the file stays valid); so does a typed input whose type is
    never a list."""
    for fe in ['"abc"', "${{ const.word }}", "${{ const.n }}", "'${{ const.word }}-x'", "${{ inputs.xs }}"]:
        compiled = compile_text(FAN.replace("FE", fe), "wf.nika.yaml")
        assert not any(d.is_error for d in compiled.diagnostics), fe  # valid: the failure is the run's
        assert [d.code for d in compiled.diagnostics if is_run_failure(d)] == ["NIKA-VAR-006"], fe


def test_for_each_over_an_array_or_a_run_time_value_is_accepted() -> None:
    """Where the value may be a list (an input of a list type, given at launch), the check is silent."""
    for fe in ['["a", "b"]', "${{ const.items }}", "${{ inputs.ys }}", '"${{ [1, 2] }}"']:
        assert errors(FAN.replace("FE", fe)) == [], fe


# -- misses: infer/agent with no model anywhere (02 §infer; NIKA-PROVIDER-002 at run) ----------

NOMODEL = """\
nika: v1
workflow: { id: m }
MODEL
tasks:
  ask:
    infer: { prompt: "hi" }
  loop:
    agent: { prompt: "go", tools: ["nika:done"] }
"""


def test_no_model_anywhere_is_a_warning_at_check() -> None:
    """The run fails an `infer:`/`agent:` with no task or workflow model with NIKA-PROVIDER-002
    unless `nika run --model` supplies one; the check cannot know the flag, so it warns (never an
    error: the flag makes the file valid)."""
    compiled = compile_text(NOMODEL.replace("MODEL\n", ""), "wf.nika.yaml")
    found = [(d.code, d.severity.value) for d in compiled.diagnostics]
    assert found == [("NIKA-PROVIDER-002", "warning"), ("NIKA-PROVIDER-002", "warning")]
    assert codes(NOMODEL.replace("MODEL", "model: mock/echo")) == []
    assert codes(NOMODEL.replace("MODEL\n", "").replace('{ prompt: "hi" }', '{ prompt: "hi", model: mock/echo }')) == [
        "NIKA-PROVIDER-002"
    ]


# -- misses: the data-as-code sink as a server reads the path (10 §data-as-code, NEP-0006) -----

FETCH = """\
nika: v1
workflow: { id: u }
const:
  base: "https://example.com/files"
inputs:
  name: { type: string }
permits:
  net: { http: ["example.com", "[::1]"] }
  tools: ["nika:fetch"]
tasks:
  get:
    invoke: { tool: "nika:fetch", args: { url: "URL" } }
"""


def test_code_bearing_extension_after_decoding_and_trailing_dots() -> None:
    """10 §data-as-code sink: a fetch whose resolved URL path names a code-bearing class, matched
    case-insensitively on the path's final extension, is refused with SEC-008. The path is the one
    the server serves: percent-encoding (once or twice) and the trailing dots servers drop do not
    change the artifact."""
    for url in [
        "https://example.com/x.py",
        "https://example.com/x.py.",
        "https://example.com/x.py..",
        "https://example.com/x%2epy",
        "https://example.com/x%2epy%2e",
        "https://example.com/x%252epy",
        "https://example.com/x%25252Epy",
        "https://example.com/a%2Fx.PKL",
        "https://user:pw@example.com:8443/x.SH.?q=1",
        "https://[::1]:8080/x.py%2E",
        "https://example.com//dir//x.ipynb",
        "${{ const.base }}/x.py.",
        "https://example.com/x.py?download=1",
    ]:
        assert errors(FETCH.replace("URL", url)) == ["NIKA-SEC-008"], url


def test_inert_and_partly_literal_urls_are_judged_from_what_is_known() -> None:
    """The query carries no verdict either way (10 §data-as-code); a URL with an untrusted island is not
    resolvable at check and defers to the run-time twin (SEC-004), so the check stays silent."""
    for url in [
        "https://example.com/x.json?f=a.py",
        "https://example.com/x.python",
        "https://example.com/x.py/",
        "https://example.com/${{ inputs.name }}.py",
        "https://example.com/x%2ejson",
    ]:
        assert errors(FETCH.replace("URL", url)) == [], url


# -- the one-obvious-way /002 lint (03 §one obvious way, §for_each) ------------------------------

SKIP = """\
nika: v1
workflow: { id: s }
model: mock/echo
permits:
  tools: ["nika:log"]
tasks:
  x:
    infer: { prompt: "list" }
    on_error: { skip: true }
  use:
USE
"""


def _lints(use: str) -> list[str]:
    text = SKIP.replace("USE", textwrap.indent(textwrap.dedent(use).strip("\n"), "    "))
    return [c for c in codes(text) if c.startswith("one-obvious-way/")]


def test_skip_lint_on_each_shape() -> None:
    """03 §one obvious way /002: a skippable producer's dependents decide the skip path. An
    `after: {x: success}` decides it (a skip cancels the task), so does a `when:` guard on the
    `null` a skip passes; a `with:` read alone does not (issue 39: the body is handed `null` with no
    decision taken), and a fan-out over it is a NIKA-VAR-006 at run (03 §for_each)."""
    flagged = [
        'after: { x: terminal }\ninvoke: { tool: "nika:log", args: { message: "done" } }',
        'with: { xs: "${{ tasks.x.output }}" }\nfor_each: ${{ with.xs }}\n'
        'invoke: { tool: "nika:log", args: { message: "${{ item }}" } }',
        'with: { v: "${{ tasks.x.output }}" }\ninvoke: { tool: "nika:log", args: { message: "${{ with.v }}" } }',
    ]
    clean = [
        'with: { v: "${{ tasks.x.output }}" }\nwhen: ${{ with.v != null }}\n'
        'invoke: { tool: "nika:log", args: { message: "${{ with.v }}" } }',
        'after: { x: success }\ninvoke: { tool: "nika:log", args: { message: "done" } }',
        'with: { xs: "${{ tasks.x.output }}" }\nwhen: ${{ with.xs != null }}\nfor_each: ${{ with.xs }}\n'
        'invoke: { tool: "nika:log", args: { message: "${{ item }}" } }',
        'after: { x: success }\nwith: { xs: "${{ tasks.x.output }}" }\nfor_each: ${{ with.xs }}\n'
        'invoke: { tool: "nika:log", args: { message: "${{ item }}" } }',
    ]
    for use in flagged:
        assert _lints(use) == ["one-obvious-way/002"], use
    for use in clean:
        assert _lints(use) == [], use
