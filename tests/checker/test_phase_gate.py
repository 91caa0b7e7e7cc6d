"""Every code in its phase, observed: `nika check` refuses only what the spec makes a check-time error.

A corpus that provokes every code the checker emits goes through the checker: the golden cases
(``cases/**``), the ``Refused:``/``Accepted:`` example pair of every registry entry, and the
workflows that need a second file (a child workflow, a skill, a decision bundle, a document over a
cap), written here into a temporary folder. The test reads what comes out: any **error** whose code
the registry places at ``run`` fails it (spec 05 places those at evaluation; a workflow carrying
one is valid, and the check may only warn that every run fails there). It does not decide from the
registry which rules may emit what: it observes the findings.

``cases/runfail/`` holds workflows whose every run fails by design at evaluation: each one is
valid at check (no error at all), and says so with its run code as a warning.
"""

from __future__ import annotations

import contextlib
import json
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from checker import compile_text
from checker.core.codes import RUN_FAILS, lookup, registry
from checker.core.diagnostics import Diagnostic
from checker.project.files import compile_path
from tests.checker.run_failures import is_run_failure
from tests.checker.test_teaching_examples import examples, place

CASES = Path(__file__).parent / "cases"
RUNFAIL = CASES / "runfail"
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "decide"))
from decide_fixtures import BUNDLE  # noqa: E402

# Codes no workflow makes `nika check` emit, each for its reason. The test fails when one of them
# shows up (then it leaves this list), so the list can only shrink.
NEVER_AT_CHECK = {
    # raised by the run only: what a provider, a process, a file, the network or a human does
    **dict.fromkeys(
        [
            "NIKA-TYPE-101",
            "NIKA-VAR-002",
            "NIKA-VAR-004",
            "NIKA-VAR-009",
            "NIKA-INFER-001",
            "NIKA-INFER-002",
            "NIKA-INFER-003",
            "NIKA-PROVIDER-001",
            "NIKA-EXEC-001",
            "NIKA-EXEC-002",
            "NIKA-AGENT-001",
            "NIKA-AGENT-002",
            "NIKA-AGENT-005",
            "NIKA-AGENT-OUTPUT-001",
            "NIKA-MCP-001",
            "NIKA-MCP-002",
            "NIKA-TIMEOUT-001",
            "NIKA-CANCEL-001",
            "NIKA-SEC-002",
            "NIKA-SEC-003",
            "NIKA-SEC-011",
            "NIKA-LOCK-001",
            "NIKA-BUILTIN-ASSERT-001",
            "NIKA-BUILTIN-PROMPT-001",
            "NIKA-BUILTIN-WAIT-001",
            "NIKA-BUILTIN-WAIT-002",
            "NIKA-BUILTIN-READ-001",
            "NIKA-BUILTIN-READ-002",
            "NIKA-BUILTIN-READ-003",
            "NIKA-BUILTIN-WRITE-001",
            "NIKA-BUILTIN-WRITE-002",
            "NIKA-BUILTIN-EDIT-001",
            "NIKA-BUILTIN-EDIT-002",
            "NIKA-BUILTIN-GLOB-001",
            "NIKA-BUILTIN-GREP-001",
            "NIKA-BUILTIN-JQ-001",
            "NIKA-BUILTIN-JSON_DIFF-001",
            "NIKA-BUILTIN-VALIDATE-001",
            "NIKA-BUILTIN-VALIDATE-002",
            "NIKA-BUILTIN-JSON_MERGE_PATCH-001",
            "NIKA-BUILTIN-CONVERT-002",
            "NIKA-BUILTIN-FETCH-001",
            "NIKA-BUILTIN-NOTIFY-001",
            "NIKA-BUILTIN-NOTIFY-002",
            "NIKA-BUILTIN-CHART-008",
            "NIKA-IMPL-002",
            "NIKA-IMPL-003",
            *(f"NIKA-BUILTIN-IMAGE_GENERATE-00{n}" for n in range(1, 8)),
            *(f"NIKA-BUILTIN-IMAGE_FX-00{n}" for n in range(1, 7)),
            *(f"NIKA-BUILTIN-TTS_GENERATE-00{n}" for n in range(1, 8)),
        ],
        "the run raises it",
    ),
    "NIKA-VAR-007": "no literal is bytes: only a tool's output is",
    "NIKA-BUILTIN-CHART-007": "a chart over the point cap needs more rows than a case should hold",
    "NIKA-BUILTIN-CHART-003": "a non-finite number cannot be written in the YAML profile (NIKA-YAML-008)",
    "NIKA-INVOKE-002": "an MCP tool's schema is known only at run time",
    "NIKA-SEC-010": "the static one-prompt-many-effect-classes refusal is not built",
    "NIKA-ASSERT-001": "`assert:` (spec 15) is not in the grammar",
    "NIKA-PORT-001": "judges gateway artifacts, not a workflow",
    "NIKA-PORT-002": "judges a policy lowering onto a backend, not a workflow",
    "NIKA-TYPE-005": "reserved for `secret<T>`, which v1 does not have",
    "NIKA-IMPL-001": "a checker crash: a bug, never provoked on purpose",
}

HEAD = "nika: v1\nworkflow: {id: w}\n"
CHILD = (
    "nika: v1\nworkflow: {id: child}\npermits: {exec: [echo]}\ninputs:\n  url: {type: string, required: true}\n"
    'tasks:\n  get:\n    exec: {command: ["echo", "${{ inputs.url }}"]}\n'
)


def _call(body: str, permits: str = "permits: {exec: [echo]}\n") -> str:
    return f"nika: v1\nworkflow: {{id: parent}}\n{permits}tasks:\n  call:\n{body}"


def _decide(bundle: str, evidence: str) -> str:
    return (
        HEAD + 'permits: {tools: ["nika:decide"], fs: {read: ["./*.json"]}}\ntasks:\n  gate:\n    invoke:\n'
        f'      tool: "nika:decide"\n      args: {{bundle: {bundle}, evidence: {evidence}}}\n'
    )


def _with_files(tmp: Path) -> Iterator[tuple[str, list[Diagnostic]]]:
    """The workflows whose codes need a second file, or more bytes than a case file should hold."""
    float_weight = json.loads(json.dumps(BUNDLE))
    float_weight["rules"]["dimensions"]["risk"]["terms"][0]["weight_bp"] = 0.25
    misfit = '{t: "2026", evidence: [{key: open_incidents, value: "1", source: pager, integrity: verified}]}'
    files = {
        "child.nika.yaml": CHILD,
        "bad.bundle.json": json.dumps(float_weight),
        "good.bundle.json": json.dumps(BUNDLE),
        "BAD.md": "no frontmatter\n",
    }
    docs = {
        "comp-002": _call('    invoke: {workflow: "./child.nika.yaml", args: {url: "u"}}\n', "permits: {exec: [ls]}\n"),
        "comp-003": _call('    invoke: {workflow: "./comp-003.nika.yaml"}\n'),
        "comp-004": _call('    invoke: {workflow: "./child.nika.yaml", args: {url: 42}}\n'),
        "agent-004": HEAD + 'tasks:\n  a:\n    agent: {model: mock/echo, prompt: "p", skills: ["BAD.md"]}\n',
        "decide-001": _decide('"./bad.bundle.json"', "{t: '2026', evidence: []}"),
        "decide-002": _decide('"./good.bundle.json"', misfit),
        "yaml-005": HEAD
        + 'const:\n  big: "'
        + "x" * 70_000
        + '"\ntasks:\n  t: {infer: {model: mock/echo, prompt: p}}\n',
        "yaml-010": HEAD + "const:\n" + "".join(f'  k{i}: "{"y" * 1000}"\n' for i in range(1100)),
    }
    for name, text in files.items():
        (tmp / name).write_text(text)
    for name, text in docs.items():
        (tmp / f"{name}.nika.yaml").write_text(text)
        with contextlib.chdir(tmp):  # relative paths resolve from the working directory (spec 02)
            compiled, why = compile_path(f"{name}.nika.yaml")
        assert compiled is not None, why
        yield name, list(compiled.diagnostics)


def _corpus(tmp: Path) -> Iterator[tuple[str, list[Diagnostic]]]:
    for path in sorted(CASES.rglob("*.nika.yaml")):
        yield str(path.relative_to(CASES)), list(compile_text(path.read_text(encoding="utf-8"), str(path)).diagnostics)
    for code, info in sorted(registry().items()):
        for kind, example in examples(info.teaching).items():
            doc = compile_text(place(example)[0], "teaching.nika.yaml")
            yield f"teaching {code} ({kind})", list(doc.diagnostics)
    yield from _with_files(tmp)


@pytest.fixture(scope="module")
def observed(tmp_path_factory: pytest.TempPathFactory) -> list[tuple[str, list[Diagnostic]]]:
    return list(_corpus(tmp_path_factory.mktemp("phase")))


def test_no_error_at_check_has_a_run_phase_code(observed) -> None:
    """Spec 05: a code of phase `run` is raised by the run; the check refusing with it refuses a
    workflow the spec calls valid (the worst checker bug: an author who follows the spec is blocked)."""
    bad = [
        (where, d.code, d.message[:90])
        for where, found in observed
        for d in found
        if d.is_error and d.code and lookup(d.code).phase == "run"
    ]
    assert bad == []


def test_the_corpus_provokes_every_code_the_check_emits(observed) -> None:
    seen = {d.code for _, found in observed for d in found if d.code}
    assert not (seen & set(NEVER_AT_CHECK)), (
        f"now emitted at check, drop from NEVER_AT_CHECK: {seen & set(NEVER_AT_CHECK)}"
    )
    missing = set(registry()) - set(NEVER_AT_CHECK) - seen
    assert not missing, f"no corpus workflow provokes {sorted(missing)}"


def test_a_run_phase_code_at_check_is_the_every_run_fails_warning(observed) -> None:
    """What the check says of a run-phase code is a warning that every run fails there."""
    said = [(w, d) for w, found in observed for d in found if d.code and lookup(d.code).phase == "run"]
    assert said, "the corpus shows no certain run failure at all"
    assert all(is_run_failure(d) for _, d in said), [(w, d.code, d.severity) for w, d in said if not is_run_failure(d)]
    assert all(d.message.startswith(RUN_FAILS) for _, d in said)


@pytest.mark.parametrize("path", sorted(RUNFAIL.glob("*.nika.yaml")), ids=lambda p: p.name)
def test_a_workflow_that_fails_by_design_at_run_is_valid_at_check(path: Path) -> None:
    found = compile_text(path.read_text(encoding="utf-8"), str(path)).diagnostics
    assert [d for d in found if d.is_error] == []
    assert any(is_run_failure(d) for d in found), "a runfail case shows the failure it is about"
