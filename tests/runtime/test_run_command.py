"""`nika run` end to end: admission (check ≡ run), --var, --dry-run, exit codes, the JSON report,
the journal and `nika trace verify`, child workflows."""

from __future__ import annotations

import io
import json
import shutil
from pathlib import Path

import pytest
from suite_size import CAMPAIGN

from checker.core.codes import lookup
from checker.project.files import compile_path
from nika.commands.run import run_command
from nika.commands.trace import trace_verify
from runtime.journal.write import verify

SUITE = Path(__file__).resolve().parents[3] / "shared" / "nika-spec"
needs_suite = pytest.mark.skipif(not SUITE.is_dir(), reason=f"conformance suite not found at {SUITE}")


def nika_run(path: Path, *args: str, fmt: str = "json", **kw) -> tuple[int, dict | str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = run_command(str(path), output_format=fmt, trace_dir=str(path.parent / "traces"), out=out, err=err, **kw)
    text = out.getvalue()
    return code, (json.loads(text) if fmt == "json" and text.strip() else text), err.getvalue()


GREET = """\
nika: v1
workflow: { id: greet }
model: mock/echo
inputs:
  name: { type: string, required: true }
  times: { type: integer, default: 2 }
permits: { exec: ["echo"] }
tasks:
  hello:
    infer: { prompt: "Hi ${{ inputs.name }} x${{ inputs.times }}" }
  shout:
    with: { msg: "${{ tasks.hello.output }}" }
    exec: { command: ["echo", "${{ with.msg }}!"] }
outputs:
  said: "${{ tasks.shout.output }}"
"""


@pytest.fixture
def greet(tmp_path: Path) -> Path:
    p = tmp_path / "greet.nika.yaml"
    p.write_text(GREET)
    return p


def test_a_run_reports_json_and_leaves_a_clean_journal(greet):
    code, rep, _ = nika_run(greet, var_pairs=["name=Ada"])
    assert code == 0
    assert rep["workflow_state"] == "success"
    assert rep["outputs"] == {"said": "Hi Ada x2!"}
    assert set(rep["tasks"]["hello"]) >= {"status", "output", "error", "started_at", "ended_at", "duration_ms"}
    types = {(e["type"], e["task"]) for e in rep["events"]}
    assert ("task.started", "hello") in types and ("task.completed", "shout") in types
    journal = Path(rep["trace"]).read_bytes()
    assert verify(journal)["verdict"] == "clean"
    lines = journal.splitlines()
    lines[1] = lines[1].replace(b"hello", b"hallo")
    assert verify(b"\n".join(lines))["verdict"] == "forged"
    assert verify(b"\n".join(lines[:1] + lines[2:]))["verdict"] == "forged"


def test_vars_are_json_when_they_parse_and_checked_against_inputs(greet):
    assert nika_run(greet, var_pairs=["name=Ada", "times=3"])[1]["outputs"] == {"said": "Hi Ada x3!"}
    shutil.rmtree(greet.parent / "traces")
    for bad in (["times=3"], ["name=Ada", "nmae=x"], ["name=Ada", "times=three"], ["name"]):
        code, rep, err = nika_run(greet, var_pairs=bad)
        assert code == 2, bad
        assert rep["workflow_state"] == "refused" and rep["error"]["message"]
        assert len(err.strip().splitlines()) == 1
    assert not (greet.parent / "traces").exists()


def test_text_output_prints_outputs_on_stdout_and_progress_on_stderr(greet):
    code, out, err = nika_run(greet, fmt="text", var_pairs=["name=Ada"])
    assert code == 0
    assert json.loads(out) == {"said": "Hi Ada x2!"}
    assert "hello" in err and "workflow success" in err


def test_dry_run_prints_the_plan_without_effects(greet, tmp_path):
    code, out, _ = nika_run(greet, fmt="text", var_pairs=["name=Ada"], dry_run=True)
    assert code == 0 and "wave 1:" in out and "exec echo" in out and "hello -> shout" in out
    code, plan, _ = nika_run(greet, var_pairs=["name=Ada"], dry_run=True)
    assert plan["waves"] == [["hello"], ["shout"]]
    assert not (tmp_path / "traces").exists()


def test_failure_exits_1(tmp_path):
    p = tmp_path / "f.nika.yaml"
    p.write_text(
        'nika: v1\nworkflow: { id: f }\npermits: { exec: ["false"] }\ntasks:\n  t:\n    exec: { command: ["false"] }\n'
    )
    code, rep, _ = nika_run(p)
    assert code == 1 and rep["tasks"]["t"]["error"]["code"] == "NIKA-EXEC-001"


def test_check_refusal_prints_the_findings_and_exits_2(tmp_path):
    p = tmp_path / "bad.nika.yaml"
    p.write_text(
        "nika: v1\nworkflow: { id: bad }\npermits: { exec: true }\ntasks:\n"
        "  a:\n    exec: { command: [touch, effect.txt] }\n"
        "  b:\n    after: { nope: success }\n    exec: { command: [echo] }\n"
    )
    code, out, err = nika_run(p, fmt="text")
    assert code == 2 and "NIKA-DAG-002" in err and out == ""
    assert not (tmp_path / "effect.txt").exists() and not (tmp_path / "traces").exists()


def test_trace_verify_command(greet, capsys):
    _code, rep, _ = nika_run(greet, var_pairs=["name=Ada"])
    out = io.StringIO()
    assert trace_verify(rep["trace"], "json", out) == 0
    assert json.loads(out.getvalue())["verdict"] == "clean"


def test_child_workflows_run_with_their_own_scope(tmp_path):
    (tmp_path / "child.nika.yaml").write_text(
        "nika: v1\nworkflow: { id: child }\nmodel: mock/echo\n"
        "inputs:\n  who: { type: string, required: true }\n"
        'tasks:\n  t:\n    infer: { prompt: "child says ${{ inputs.who }}" }\n'
        'outputs:\n  said: "${{ tasks.t.output }}"\n'
    )
    parent = tmp_path / "parent.nika.yaml"
    parent.write_text(
        "nika: v1\nworkflow: { id: parent }\ntasks:\n"
        '  call:\n    invoke: { workflow: "./child.nika.yaml", args: { who: "hi" } }\n'
    )
    code, rep, _ = nika_run(parent)
    assert rep["tasks"]["call"]["output"] == {"said": "child says hi"}
    assert code == 0
    # a literal argument that does not fit the child's input is the checker's finding: refused before any effect
    bad = tmp_path / "bad.nika.yaml"
    bad.write_text(
        "nika: v1\nworkflow: { id: bad }\ntasks:\n"
        '  bad_args:\n    invoke: { workflow: "./child.nika.yaml", args: { who: 3 } }\n'
    )
    code, rep, _ = nika_run(bad)
    assert code == 2 and [f["code"] for f in rep["findings"]] == ["NIKA-COMP-004"]


# -- conformance-driven: trace verdicts and check ≡ run -----------------------------------------


@needs_suite
@pytest.mark.parametrize("case", sorted((SUITE / "conformance/tests/runtime/trace").glob("0*")), ids=lambda p: p.name)
def test_trace_fixtures(case):
    want = json.loads((case / "expected-verify.json").read_text())["verdict"]
    assert verify((case / "trace.ndjson").read_bytes())["verdict"] == want


def _suite_workflows() -> list[Path]:
    if not SUITE.is_dir():
        return []
    conf = SUITE / "conformance"
    return sorted({*conf.rglob("input.yaml"), *conf.rglob("*.nika.yaml")})


@needs_suite
def test_check_equals_run_on_every_refused_suite_workflow(tmp_path):
    """Every suite workflow `nika check` refuses, `nika run` refuses: exit 2, the same error codes,
    no journal, no effect."""
    refused = 0
    for wf in _suite_workflows():
        compiled, _why = compile_path(str(wf))
        if compiled is None or compiled.clean:
            continue
        refused += 1
        want = sorted({d.code or d.namespace for d in compiled.diagnostics if d.is_error})
        out = io.StringIO()
        code = run_command(str(wf), output_format="json", trace_dir=str(tmp_path / "t"), out=out, err=io.StringIO())
        rep = json.loads(out.getvalue())
        got = sorted({f["code"] or f["namespace"] for f in rep["findings"] if f["severity"] == "error"})
        assert (code, got) == (2, want), wf
        assert rep["tasks"] == {} and not (tmp_path / "t").exists(), wf
    assert refused > 100


@needs_suite
def test_the_runtime_raises_no_code_the_checker_owns(tmp_path):
    """For runtime fixtures both run: no task fails with a check-phase code. The default suite
    takes a sample of each family (``gates/``, ``permits/``, …); `.ci/run campaigns` every case,
    and test_dask_conformance.py asserts the same on every case's local run."""
    cases = sorted(p.parent for p in (SUITE / "conformance/tests/runtime").rglob("expected-run.json"))
    if not CAMPAIGN:
        families: dict[str, list[Path]] = {}
        for case in cases:
            families.setdefault(case.parent.name, []).append(case)
        cases = [c for members in families.values() for c in members[:: -(-len(members) // 3)]]
    assert len(cases) >= 5
    for case in cases:
        work = tmp_path / case.name
        shutil.copytree(case, work)
        out = io.StringIO()
        run_command(
            str(work / "input.nika.yaml"), output_format="json", trace_dir=str(work / "t"), out=out, err=io.StringIO()
        )
        rep = json.loads(out.getvalue())
        assert rep["workflow_state"] != "refused", case
        for tid, rec in rep["tasks"].items():
            if rec["error"]:
                assert lookup(rec["error"]["code"]).phase != "check", (case.name, tid, rec["error"]["code"])


def test_vars_are_judged_by_the_full_type(tmp_path):
    """`--var` values meet the same fit predicate as the checker's defaults: object fields and
    string patterns count (they were once let through)."""
    p = tmp_path / "typed.nika.yaml"
    p.write_text(
        "nika: v1\nworkflow: { id: typed }\ntypes:\n  Point: { object: { x: integer, y: integer } }\n"
        "inputs:\n  p: { type: Point, required: true }\n"
        '  code: { type: { string: { pattern: "^[A-Z]{3}$" } }, default: ABC }\n'
        'tasks:\n  t: { infer: { model: mock/echo, prompt: "x" } }\n'
    )
    for bad in (['p={"x": 1}'], ['p={"x": 1, "y": 2, "z": 3}'], ['p={"x": 1, "y": 2}', "code=abc"]):
        code, rep, _ = nika_run(p, var_pairs=bad)
        assert code == 2 and rep["workflow_state"] == "refused", bad
    code, rep, _ = nika_run(p, var_pairs=['p={"x": 1, "y": 2}', "code=XYZ"])
    assert code == 0 and rep["workflow_state"] == "success"


EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


@pytest.mark.parametrize("name", ["code-review-agent", "translate-fanout", "deploy-gate"])
def test_offline_examples_run_with_the_mock_provider(
    name: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The shipped examples that need neither network nor a git checkout run to success as
    shipped (mock provider), from their own folder (their relative paths resolve from the working
    directory, spec 02 §Agent Skills); the agent finishes at once: the mock calls `nika:done`."""
    src = EXAMPLES / f"{name}.nika.yaml"
    work = tmp_path / "ex"
    shutil.copytree(EXAMPLES, work)
    monkeypatch.chdir(work)
    code, report, err = nika_run(work / src.name)
    assert code == 0, err
    assert isinstance(report, dict) and report["workflow_state"] == "success"


# -- relative paths resolve from the working directory (spec 02 §Agent Skills, "Resolution") ----

PROJECT_FLOW = """\
nika: v1
workflow: { id: copy }
permits:
  fs: { read: ["./data/**"], write: ["./out/**"] }
  tools: ["nika:read", "nika:write"]
tasks:
  load:
    invoke: { tool: "nika:read", args: { path: "./data/in.json" } }
  save:
    with: { body: "${{ tasks.load.output }}" }
    invoke: { tool: "nika:write", args: { path: "./out/copy.txt", content: "${{ with.body }}", create_dirs: true } }
"""


def test_run_from_the_project_root_reads_and_writes_relative_to_the_working_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Spec 02 §Agent Skills (Resolution): relative paths resolve from the working directory,
    like every other relative path in the language; so `nika run flows/x.nika.yaml` started in a
    project root reads `./data/in.json` from that root and writes `./out/…` there, never beside
    the workflow file (a decoy `flows/data/in.json` must not be read)."""
    (tmp_path / "flows" / "data").mkdir(parents=True)
    (tmp_path / "data").mkdir()
    (tmp_path / "data" / "in.json").write_text('{"from": "root"}')
    (tmp_path / "flows" / "data" / "in.json").write_text('{"from": "flows"}')
    (tmp_path / "flows" / "x.nika.yaml").write_text(PROJECT_FLOW)
    monkeypatch.chdir(tmp_path)
    code, rep, err = nika_run(Path("flows/x.nika.yaml"))
    assert code == 0, (rep, err)
    assert "root" in json.dumps(rep["tasks"]["load"]["output"])
    assert "root" in (tmp_path / "out" / "copy.txt").read_text()
    assert not (tmp_path / "flows" / "out").exists()


CALLER = """\
nika: v1
workflow: { id: caller }
model: mock/echo
tasks:
  call:
    invoke: { workflow: "%s", args: { who: "hi" } }
"""

CALLEE = """\
nika: v1
workflow: { id: callee }
model: mock/echo
inputs: { who: { type: string, required: true } }
tasks:
  t: { infer: { prompt: "%s ${{ inputs.who }}" } }
outputs: { said: "${{ tasks.t.output }}" }
"""


def test_a_child_workflow_path_resolves_from_the_working_directory_at_check_and_at_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Spec 02 §Agent Skills (Resolution) and spec 14 law 1: a child workflow path is a
    relative path like any other, resolved from the working directory. From the project root,
    `flows/parent` calling `flows/child.nika.yaml` runs that file; a same-named file beside the
    parent and one in the root are told apart by where the run was started."""
    (tmp_path / "flows").mkdir()
    (tmp_path / "flows" / "parent.nika.yaml").write_text(CALLER % "flows/child.nika.yaml")
    (tmp_path / "flows" / "child.nika.yaml").write_text(CALLEE % "flows-child")
    monkeypatch.chdir(tmp_path)
    compiled, why = compile_path("flows/parent.nika.yaml")
    assert compiled is not None and not [d for d in compiled.diagnostics if d.is_error], why
    code, rep, err = nika_run(Path("flows/parent.nika.yaml"))
    assert code == 0, (rep, err)
    assert "flows-child" in json.dumps(rep["tasks"]["call"]["output"])
    # `./child.nika.yaml` from the root: the root's file wins over the one beside the parent
    (tmp_path / "flows" / "near.nika.yaml").write_text(CALLER % "./child.nika.yaml")
    (tmp_path / "child.nika.yaml").write_text(CALLEE % "root-child")
    code, rep, err = nika_run(Path("flows/near.nika.yaml"))
    assert code == 0, (rep, err)
    assert "root-child" in json.dumps(rep["tasks"]["call"]["output"])


def test_a_missing_child_is_refused_by_check_and_run_with_the_same_code(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Spec 14 law 1 (the callee is resolvable before the run) with spec 02's resolution rule:
    a child that exists neither from the working directory nor beside the parent is
    NIKA-COMP-001 at `nika check`, and `nika run` refuses the same workflow with the same code
    before any task runs."""
    (tmp_path / "flows").mkdir()
    (tmp_path / "flows" / "parent.nika.yaml").write_text(CALLER % "flows/nowhere.nika.yaml")
    monkeypatch.chdir(tmp_path)
    compiled, _ = compile_path("flows/parent.nika.yaml")
    assert compiled is not None
    assert [d.code for d in compiled.diagnostics if d.is_error] == ["NIKA-COMP-001"]
    code, rep, err = nika_run(Path("flows/parent.nika.yaml"))
    assert code == 2 and rep["workflow_state"] == "refused", (rep, err)
    assert "NIKA-COMP-001" in json.dumps(rep)


def test_thinking_on_a_provider_that_cannot_send_it_is_refused_before_any_effect(tmp_path):
    """`infer.thinking:` passes the checker (a `build/unavailable` warning) but the `groq` adapter
    sends no reasoning parameter: the run refuses with NIKA-IMPL-002 naming the task, field and
    provider, before the first task runs — never runs as if the field were absent (the earlier
    task would otherwise leave its marker file). `vision:` is sent by every wire and runs."""
    marker = tmp_path / "marker.txt"
    wf = tmp_path / "f.nika.yaml"
    field = "thinking"
    wf.write_text(
        "nika: v1\nworkflow: { id: f }\nmodel: groq/llama\n"
        f'permits: {{ exec: ["touch"] }}\ntasks:\n  first:\n    exec: {{ command: ["touch", "{marker}"] }}\n'
        '  look:\n    after: { first: success }\n    infer:\n      prompt: "describe"\n'
        f"      {field}: {{ enabled: true }}\n"
    )
    code, report, _ = nika_run(wf)
    assert code == 2 and not marker.exists()
    assert f"`look`'s `infer.{field}:` on `groq`" in json.dumps(report) and "NIKA-IMPL-002" in json.dumps(report)
    assert f"`look`'s `infer.{field}:`" in json.dumps(report) and "NIKA-IMPL-002" in json.dumps(report)
