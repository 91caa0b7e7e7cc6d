"""The lint families: one-obvious-way/* and native-first/* — each rule fires on its discouraged form,
stays silent on the canonical one, and reports in task order."""

from __future__ import annotations

import pytest

from checker.core.codes import lints
from checker.core.diagnostics import Severity
from checker.core.source import Span
from checker.engine.pipeline import compile_text
from checker.rules.lint_native import classify
from checker.rules.lint_obvious import fits_type_grammar
from checker.rules.support.commands import shell_commands

# Broad grants: these tests judge lints, not authority.
HEAD = (
    'nika: v1\nworkflow:\n  id: t\npermits:\n  exec: true\n  tools: ["nika:*"]\n'
    '  fs: {read: ["**"], write: ["**"]}\n  net: {http: ["*"]}\ntasks:\n'
)


def lint_pairs(tasks_yaml: str, prefix: str = "") -> list[tuple[str, str | None]]:
    wf = compile_text(HEAD + tasks_yaml)
    return [
        (d.rule, d.task)
        for d in wf.diagnostics
        if d.rule and d.rule.startswith(("one-obvious-way/", "native-first/")) and d.rule.startswith(prefix)
    ]


def task(name: str, body: str) -> str:
    return f"  {name}:\n" + "".join(f"    {line}\n" for line in body.strip("\n").splitlines())


def test_every_emitted_rule_is_registered_as_a_warning() -> None:
    wf = compile_text(
        HEAD
        + task("a", 'exec: { command: ["wget", "https://x.example"] }\non_error: { skip: true }')
        + task("b", 'after: { a: terminal }\nexec: { command: ["./b.sh"] }')
    )
    rules = {d.rule for d in wf.diagnostics if d.code is None}
    # `fs.write: ["**"]` beside a run of wget covers its `.wgetrc` (authority/002)
    assert rules == {"native-first/001", "one-obvious-way/002", "authority/002"}
    for d in wf.diagnostics:
        if d.code is not None:
            continue  # a coded finding (a NIKA-DRIFT-001 hint on the fixture's permits), not a lint
        assert d.rule in lints() and d.severity is Severity.WARNING and d.namespace == d.rule.split("/")[0]


# -- /002 ----------------------------------------------------------------------------------------

READ_V = 'with: { v: "${{ tasks.src.output }}" }\n'
USE_V = 'exec: { command: ["./t.sh", "${{ with.v }}"] }'


def test_002_fires_when_no_dependent_decides_about_the_skip() -> None:
    y = task("src", 'exec: { command: ["./s.sh"] }\non_error: { skip: true }')
    y += task("tidy", 'after: { src: terminal }\nexec: { command: ["./t.sh"] }')
    assert lint_pairs(y) == [("one-obvious-way/002", "src")]


@pytest.mark.parametrize(
    "consumer",
    [
        'after: { src: success }\nexec: { command: ["./t.sh"] }',
        'after: { src: failure }\nexec: { command: ["./t.sh"] }',
        'after: { src: skipped }\nexec: { command: ["./t.sh"] }',
        READ_V + "after: { src: success }\n" + USE_V,
        READ_V + "when: ${{ with.v != null }}\n" + USE_V,
        'with: { s: "${{ tasks.src.status }}" }\nexec: { command: ["./t.sh", "${{ with.s }}"] }',
    ],
)
def test_002_is_silent_when_a_dependent_acknowledges(consumer: str) -> None:
    y = task("src", 'exec: { command: ["./s.sh"] }\non_error: { skip: true }') + task("use", consumer)
    assert lint_pairs(y) == []


@pytest.mark.parametrize(
    "consumer",
    [
        # a `with:` read alone: the body gets the `null` a skip leaves, nothing was decided
        READ_V + USE_V,
        # a guard on another value is no guard on this one
        'with: { v: "${{ tasks.src.output }}", w: 1 }\nwhen: ${{ with.w > 0 }}\n' + USE_V,
        # a fan-out over the read: a skip makes it a NIKA-VAR-006 at run
        'with: { vs: "${{ tasks.src.output }}" }\nfor_each: ${{ with.vs }}\n'
        'exec: { command: ["./t.sh", "${{ item }}"] }',
    ],
)
def test_002_fires_on_a_with_read_that_decides_nothing(consumer: str) -> None:
    y = task("src", 'exec: { command: ["./s.sh"] }\non_error: { skip: true }') + task("use", consumer)
    assert lint_pairs(y) == [("one-obvious-way/002", "src")]


def test_002_fires_through_a_child_workflows_args(tmp_path, monkeypatch) -> None:
    """The `null` of a skip reaches the child as an argument: the call has decided nothing."""
    from checker.project.files import compile_path

    (tmp_path / "child.nika.yaml").write_text(
        "nika: v1\nworkflow: {id: child}\ninputs: {text: {type: string}}\npermits: {tools: ['nika:log']}\n"
        "tasks:\n  say:\n    invoke: {tool: 'nika:log', args: {message: '${{ inputs.text }}'}}\n"
    )
    parent = HEAD + task("src", 'exec: { command: ["./s.sh"] }\non_error: { skip: true }')
    call = READ_V + 'invoke: { workflow: "./child.nika.yaml", args: { text: "${{ with.v }}" } }'
    (tmp_path / "parent.nika.yaml").write_text(parent + task("call", call))
    (tmp_path / "guarded.nika.yaml").write_text(parent + task("call", call + "\nwhen: ${{ with.v != null }}"))
    monkeypatch.chdir(tmp_path)
    for name, want in (("parent", [("one-obvious-way/002", "src")]), ("guarded", [])):
        compiled, why = compile_path(f"{name}.nika.yaml")
        assert compiled is not None, why
        assert [(d.rule, d.task) for d in compiled.diagnostics if d.rule == "one-obvious-way/002"] == want, name


def test_002_is_silent_on_a_skippable_leaf() -> None:
    assert lint_pairs(task("src", 'exec: { command: ["./s.sh"] }\non_error: { skip: true }')) == []


# -- /003 and /004 -------------------------------------------------------------------------------

FETCH = 'invoke: { tool: "nika:fetch", args: { url: "https://api.example.org/v1" } }'


def test_003_fires_on_a_failure_branch_that_repeats_the_task() -> None:
    y = task("get", FETCH) + task("get2", "after: { get: failure }\n" + FETCH)
    assert lint_pairs(y) == [("one-obvious-way/003", "get2")]


def test_003_is_silent_when_the_branch_does_other_work() -> None:
    other = 'invoke: { tool: "nika:fetch", args: { url: "https://backup.example.org/v1" } }'
    assert lint_pairs(task("get", FETCH) + task("alt", "after: { get: failure }\n" + other)) == []


def test_003_is_silent_on_a_success_chain_of_identical_bodies() -> None:
    assert (
        lint_pairs(task("get", FETCH) + task("again", "after: { get: success }\n" + FETCH), "one-obvious-way/003") == []
    )


@pytest.mark.parametrize(
    "body",
    [
        'exec: { command: ["printf", "%s", "none"] }',
        'exec: { shell: "echo fallback" }',
        'invoke: { tool: "nika:jq", args: { input: [], expression: "{n: 0}" } }',
    ],
)
def test_004_fires_on_a_task_that_only_supplies_a_value(body: str) -> None:
    y = task("get", FETCH) + task("dflt", "after: { get: failure }\n" + body)
    assert lint_pairs(y) == [("one-obvious-way/004", "dflt")]


@pytest.mark.parametrize(
    "body",
    [
        'exec: { shell: "echo failed > status.txt" }',
        'invoke: { tool: "nika:jq", args: { input: "${{ inputs.seed }}", expression: "." } }',
        'exec: { command: ["./rollback.sh"] }',
    ],
)
def test_004_is_silent_on_real_failure_work(body: str) -> None:
    y = "inputs:\n  seed: { type: string, default: x }\n"
    wf = compile_text(
        HEAD.replace("tasks:\n", y + "tasks:\n") + task("get", FETCH) + task("f", "after: { get: failure }\n" + body)
    )
    assert [d.rule for d in wf.diagnostics if d.rule == "one-obvious-way/004"] == []


def test_004_is_silent_on_echo_after_success() -> None:
    assert (
        lint_pairs(task("get", FETCH) + task("say", 'after: { get: success }\nexec: { command: ["echo", "ok"] }')) == []
    )


# -- /005 ----------------------------------------------------------------------------------------


def test_005_fires_on_terminal_after_on_every_other_task() -> None:
    y = task("x", 'exec: { command: ["./x.sh"] }') + task("y", 'after: { x: success }\nexec: { command: ["./y.sh"] }')
    y += task("z", 'exec: { command: ["./z.sh"] }')
    y += task("sweep", 'after: { y: terminal, z: terminal }\nexec: { command: ["./sweep.sh"] }')
    assert lint_pairs(y, "one-obvious-way/005") == [("one-obvious-way/005", "sweep")]


def test_005_is_silent_on_a_report_task_that_reads_outcomes() -> None:
    y = task("x", 'exec: { command: ["./x.sh"] }') + task("z", 'exec: { command: ["./z.sh"] }')
    y += task(
        "report",
        'after: { x: terminal, z: terminal }\nwith: { sx: "${{ tasks.x.status }}" }\n'
        'exec: { command: ["./report.sh", "${{ with.sx }}"] }',
    )
    assert lint_pairs(y) == []


def test_005_is_silent_on_a_single_terminal_edge() -> None:
    y = task("x", 'exec: { command: ["./x.sh"] }') + task(
        "after_x", 'after: { x: terminal }\nexec: { command: ["./c.sh"] }'
    )
    assert lint_pairs(y) == []


# -- /006 ----------------------------------------------------------------------------------------


def test_006_fires_on_a_timeout_wrapper_in_a_fan_out_shell_line() -> None:
    y = task("each", 'for_each: ["a", "b"]\nexec: { shell: "timeout 5 ./probe.sh ${{ item }}" }')
    assert lint_pairs(y) == [("one-obvious-way/006", "each")]


def test_006_is_silent_with_the_task_level_timeout() -> None:
    assert (
        lint_pairs(
            task("each", 'for_each: ["a", "b"]\ntimeout: "5s"\nexec: { command: ["./probe.sh", "${{ item }}"] }')
        )
        == []
    )


# -- /007 ----------------------------------------------------------------------------------------


def _chain(n: int, bodies: list[str]) -> str:
    out = ""
    for i in range(n):
        after = f"after: {{ s{i - 1}: success }}\n" if i else ""
        out += task(f"s{i}", after + bodies[i])
    return out


def test_007_fires_once_on_the_first_of_numbered_sequential_shards() -> None:
    bodies = [f'exec: {{ command: ["./load.sh", "--from", "{i * 100}", "--to", "{i * 100 + 99}"] }}' for i in range(4)]
    assert lint_pairs(_chain(4, bodies)) == [("one-obvious-way/007", "s0")]


def test_007_is_silent_on_parallel_or_different_steps() -> None:
    bodies = [f'exec: {{ command: ["./load.sh", "{i}"] }}' for i in range(3)]
    parallel = "".join(task(f"p{i}", b) for i, b in enumerate(bodies))
    assert lint_pairs(parallel) == []
    steps = [
        'exec: { command: ["./load.sh", "x"] }',
        'exec: { command: ["./load.sh", "y"] }',
        'exec: { command: ["./load.sh", "z"] }',
    ]
    assert lint_pairs(_chain(3, steps)) == []  # not slices of one job: the words differ, not the numbers


# -- /009 ----------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("jq", "fires"),
    [(".items[]", True), (".a | .[]?", True), ("[.items[]]", False), (".items[2]", False), (".items[].id", False)],
)
def test_009_trailing_iterator(jq: str, fires: bool) -> None:
    y = task("r", f'invoke: {{ tool: "nika:read", args: {{ path: "x.json" }} }}\noutput:\n  v: "{jq}"')
    assert lint_pairs(y) == ([("one-obvious-way/009", "r")] if fires else [])


# -- /010 ----------------------------------------------------------------------------------------


def test_010_fires_on_terminal_beside_a_value_edge_and_offers_a_safe_removal() -> None:
    src = (
        HEAD
        + task("a", 'exec: { command: ["./a.sh"] }')
        + task(
            "b",
            'after:\n  a: terminal\nwith: { v: "${{ tasks.a.output }}" }\n'
            'exec: { command: ["./b.sh", "${{ with.v }}"] }',
        )
    )
    wf = compile_text(src)
    [d] = [d for d in wf.diagnostics if d.rule == "one-obvious-way/010"]
    assert d.task == "b" and d.fixes[0].applicability == "safe"
    from checker.rules.support.fixes import apply_fixes

    fixed = apply_fixes(src, [d]).text
    assert "terminal" not in fixed and "after" not in fixed
    assert compile_text(fixed).clean


@pytest.mark.parametrize(
    "after",
    ["after: { a: success }", "after: { a: skipped }"],
)
def test_010_is_silent_when_after_tightens_the_gate(after: str) -> None:
    y = task("a", 'exec: { command: ["./a.sh"] }') + task(
        "b", after + '\nwith: { v: "${{ tasks.a.output }}" }\nexec: { command: ["./b.sh", "${{ with.v }}"] }'
    )
    assert lint_pairs(y) == []


def test_010_is_silent_on_the_status_observation_idiom() -> None:
    y = task("a", 'exec: { command: ["./a.sh"] }') + task(
        "b",
        'after: { a: terminal }\nwith: { s: "${{ tasks.a.status }}" }\nexec: { command: ["./b.sh", "${{ with.s }}"] }',
    )
    assert lint_pairs(y) == []


# -- /011 and /012 -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("schema", "fits"),
    [
        (
            {
                "type": "object",
                "properties": {"a": {"type": "string"}},
                "required": ["a"],
                "additionalProperties": False,
            },
            True,
        ),
        ({"type": "array", "items": {"type": "integer", "minimum": 0}}, True),
        ({"type": "object", "additionalProperties": {"type": "number"}}, True),
        ({"anyOf": [{"type": "string"}, {"type": "null"}]}, True),
        ({"type": "string", "enum": ["x", "y"]}, True),
        ({"type": "object"}, False),  # any object: no v1 type says that
        ({"type": "string", "description": "kept for the model"}, False),
        ({"oneOf": [{"type": "string"}, {"type": "integer"}]}, False),
        ({"type": "string", "pattern": "(a)\\1"}, False),
        ({"type": "array"}, False),
    ],
)
def test_011_fit_of_a_schema(schema: dict, fits: bool) -> None:
    assert fits_type_grammar(schema) is fits


def test_011_fires_only_without_returns() -> None:
    body = 'infer:\n  prompt: "p"\n  schema: { type: object, properties: { t: { type: string } }, required: [t] }'
    assert lint_pairs(task("x", body), "one-obvious-way/011") == [("one-obvious-way/011", "x")]


def test_012_fires_on_each_repetition_of_an_inline_object() -> None:
    ret = "returns: { object: { title: string, n: integer } }"
    y = "".join(task(n, f'infer: {{ prompt: "p" }}\n{ret}') for n in ("one", "two", "three"))
    y += task("other", 'infer: { prompt: "p" }\nreturns: { object: { title: string } }')
    assert lint_pairs(y, "one-obvious-way/012") == [("one-obvious-way/012", "two"), ("one-obvious-way/012", "three")]


# -- native-first ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("command", "rule"),
    [
        ('command: ["/usr/bin/curl", "-s", "https://x.example"]', "native-first/001"),
        ('command: ["node", "-e", "fetch(process.argv[1]).then(r => r.text())"]', "native-first/001"),
        ("shell: \"bash -c 'wget -q https://x.example'\"", "native-first/001"),
        ('command: ["mkdir", "-p", "out"]', "native-first/002"),
        ('shell: "sed -i s/a/b/ notes.txt"', "native-first/003"),
        ('shell: "curl https://api.example.com/v1/images/generations -d @r.json"', "native-first/004"),
        ('command: ["python3", "-u", "tools/build.py"]', "native-first/005"),
        ('shell: "cat list.txt | python scripts/x.py | jq ."', "native-first/005"),  # helper wins
        ('shell: "ls out && cat out/a | jq ."', "native-first/002"),  # file beats data
    ],
)
def test_native_first_classes_and_priority(command: str, rule: str) -> None:
    assert lint_pairs(task("t", f"exec: {{ {command} }}")) == [(rule, "t")]


@pytest.mark.parametrize(
    "command",
    [
        'command: ["cargo", "build"]',
        'command: ["nika", "run", "child.nika.yaml"]',
        'command: ["${{ inputs.tool }}", "https://x.example"]',
        'command: ["python", "-m", "pytest"]',
        'command: ["./curl-wrapper.sh"]',
        'shell: "git log --oneline | wc -l"',
    ],
)
def test_native_first_silent_on_genuine_or_computed_commands(command: str) -> None:
    wf = compile_text(
        HEAD.replace("tasks:\n", "inputs:\n  tool: { type: string, default: x }\ntasks:\n")
        + task("t", f"exec: {{ {command} }}")
    )
    assert [d.rule for d in wf.diagnostics if d.rule and d.rule.startswith("native-first/")] == []


def test_at_most_one_native_first_finding_per_task_and_task_order() -> None:
    y = task("b_first", 'exec: { shell: "curl -s https://x.example | jq . | tee out.json" }')
    y += task("a_second", 'exec: { command: ["cat", "x"] }')
    assert lint_pairs(y) == [("native-first/001", "b_first"), ("native-first/002", "a_second")]


def test_classify_reports_what_matched() -> None:
    wf = compile_text(HEAD + task("t", 'exec: { command: ["xh", "get", "x.example"] }'))
    verb = wf.workflow.tasks["t"].verb  # type: ignore[union-attr]
    found = classify(verb)  # type: ignore[arg-type]
    assert found is not None and found[0] == "001" and found[2] == "xh"


def test_shell_splitting_keeps_quoted_separators_and_drops_redirect_targets() -> None:
    cmds = shell_commands("A=1 env curl 'x;y' > out.txt; echo ${{ with.v }}", Span(0, 0))
    assert [c.words for c in cmds] == [("curl", "x;y"), ("echo", None)]
    assert cmds[0].redirects and not cmds[1].redirects
    assert shell_commands('echo "unterminated', Span(0, 0)) == []
