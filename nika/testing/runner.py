"""Run one test case: admit the workflow as ``nika run`` does, run it in-process under the mock
provider with the case's scripted replies and mocked task results, and compare the expectations.

The run is hermetic: its engine environment is only the case's ``env:`` (no provider key or
engine variable of the shell leaks in), no trace is written, and every model call is answered by
``mock/…``: by the task's scripted replies when the case gives them, else by the case's ``model:``.
"""

from __future__ import annotations

import asyncio
import json
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from nika.testing.spec import Case, TestFile


@dataclass
class CaseResult:
    file: Path
    case: Case
    outcome: str  # passed | failed | error
    problems: list[str] = field(default_factory=list)
    seconds: float = 0.0
    actual: dict[str, Any] | None = None  # status, tasks, outputs, error: what --update writes
    internal: bool = False  # the engine failed (exit 3), not the workflow

    @property
    def id(self) -> str:
        return f"{self.file}::{self.case.name}"


def run_file(test: TestFile) -> list[CaseResult]:
    compiled, refusal = _admit(test)
    return [_run_case(test, case, compiled, refusal) for case in test.cases]


def _workflow_path(test: TestFile) -> Path:
    """The working directory first (as every relative path), else beside the test file."""
    given = Path(test.workflow)
    if given.is_absolute() or given.exists():
        return given
    beside = test.path.parent / given
    return beside if beside.exists() else given


def _admit(test: TestFile) -> tuple[Any, str | None]:
    """The compiled workflow, or why ``nika run`` would refuse it (the same verdict)."""
    from checker.project.admission import admit
    from checker.project.finalize import SettingsError
    from runtime.engine.inputs import compile_file, unsupported_run_block

    path = str(_workflow_path(test))
    compiled, why = compile_file(path)
    if compiled is None:
        return None, f"{path}: {why}"
    try:
        verdict = admit(compiled, path)
    except SettingsError as exc:
        return None, f"configuration error in {exc}"
    if verdict.refused or compiled.workflow is None or compiled.graph is None:
        first = next((d for d in compiled.diagnostics if d.is_error), None)
        detail = f": {first.code} {first.message}" if first is not None else ""
        return None, f"`nika check {path}` refuses the workflow{detail}"
    unsupported = unsupported_run_block(compiled.workflow)
    if unsupported is not None:
        return None, f"{path}: {unsupported} [NIKA-IMPL-002]"
    return compiled, None


def _run_case(test: TestFile, case: Case, compiled: Any, refusal: str | None) -> CaseResult:
    from runtime.engine.inputs import InputError, bind_inputs

    t0 = time.monotonic()
    result = CaseResult(test.path, case, "passed")
    if compiled is None:
        actual: dict[str, Any] = {"status": "refused", "error": refusal}
    else:
        unknown = [t for t in (*case.replies, *case.mocks) if t not in compiled.workflow.tasks]
        if unknown:
            return _error(result, t0, _unknown_task(unknown[0], compiled.workflow.tasks))
        try:
            inputs = bind_inputs(compiled.workflow, case.vars, what="vars:")
        except InputError as exc:
            actual = {"status": "refused", "error": str(exc)}
        else:
            try:
                actual = _execute(compiled, inputs, case, result)
            except Exception as exc:  # an engine bug: this case errors, the other cases still run
                result.internal = True
                return _error(
                    result, t0, f"internal error (NIKA-IMPL-001) running the case: {type(exc).__name__}: {exc}"
                )
    result.actual = actual
    if actual["status"] == "refused" and case.expect.get("status") != "refused":
        return _error(result, t0, f"refused before the run: {actual['error']}")
    result.problems += compare(case.expect, actual)
    if result.problems:
        result.outcome = "failed"
    result.seconds = time.monotonic() - t0
    return result


def _error(result: CaseResult, t0: float, message: str) -> CaseResult:
    result.outcome = "error"
    result.problems.append(message)
    result.seconds = time.monotonic() - t0
    return result


def _unknown_task(tid: str, tasks: Any) -> str:
    from checker.core.suggest import did_you_mean

    near = did_you_mean(tid, tasks)
    return f"replies or mocks name task `{tid}`, which the workflow does not have" + (
        f"; did you mean `{near}`?" if near else ""
    )


def _execute(compiled: Any, inputs: dict[str, Any], case: Case, result: CaseResult) -> dict[str, Any]:
    from runtime.engine.options import Options

    options = Options(model=case.model, trace_dir=None, interactive=False, engine_env=dict(case.env))
    from nika.testing.harness import TestRun
    from runtime.verbs import VERBS

    run = TestRun(compiled, inputs, options, verbs=VERBS, workdir=Path.cwd(), case=case)
    report = asyncio.run(run.execute()).report()
    for tid, steps in case.replies.items():
        used = run.replies_used(tid)
        if used < len(steps):
            result.problems.append(f"task `{tid}` has {len(steps)} scripted replies and the run used {used}")
    return {
        "status": report["workflow_state"],
        "error": report["error"],
        "tasks": report["tasks"],
        "outputs": report["outputs"],
    }


def compare(expect: dict[str, Any], actual: dict[str, Any]) -> list[str]:
    """What differs between the expectations and the run, one line each (empty: the case passes)."""
    problems: list[str] = []
    want = expect.get("status", "success")
    if actual["status"] != want:
        problems.append(f"status: expected {want}, got {actual['status']}{_why(actual)}")
    if "error" in expect:
        got = _code(actual.get("error"))
        if expect["error"] != got:
            problems.append(f"error: expected {_show(expect['error'])}, got {_show(got)}")
    tasks = actual.get("tasks") or {}
    for tid, exp in (expect.get("tasks") or {}).items():
        record = tasks.get(tid)
        if record is None:
            problems.append(f"tasks.{tid}: the workflow has no task `{tid}`")
            continue
        exp = {"status": exp} if isinstance(exp, str) else exp
        if "status" in exp and exp["status"] != record["status"]:
            problems.append(f"tasks.{tid}.status: expected {exp['status']}, got {record['status']}{_why(record)}")
        if "output" in exp and exp["output"] != record["output"]:
            problems.append(f"tasks.{tid}.output: expected {_show(exp['output'])}, got {_show(record['output'])}")
        if "error" in exp and exp["error"] != _code(record.get("error")):
            problems.append(f"tasks.{tid}.error: expected {_show(exp['error'])}, got {_show(_code(record['error']))}")
    if "outputs" in expect:
        problems += _diff_outputs(expect["outputs"] or {}, actual.get("outputs") or {})
    return problems


def _diff_outputs(want: dict[str, Any], got: dict[str, Any]) -> list[str]:
    out = []
    for key in want:
        if key not in got:
            out.append(f"outputs.{key}: expected {_show(want[key])}, but the run has no such output")
        elif want[key] != got[key]:
            out.append(f"outputs.{key}: expected {_show(want[key])}, got {_show(got[key])}")
    out += [f"outputs.{key}: not expected, got {_show(got[key])}" for key in got if key not in want]
    return out


def _code(error: Any) -> Any:
    return error.get("code") if isinstance(error, dict) else error


def _why(record: dict[str, Any]) -> str:
    err = record.get("error")
    if isinstance(err, dict) and err.get("code"):
        return f" ({err['code']}: {err.get('message', '')})"
    return f" ({err})" if isinstance(err, str) else ""


def _show(value: Any) -> str:
    text = json.dumps(value, ensure_ascii=False, default=str)
    return text if len(text) <= 200 else text[:197] + "..."
