"""The two "done when" suites of the Dask executor, on a real LocalCluster (two single-threaded
worker processes, `processes=True`; the test process's one cluster, see ``dask_session`` in
conftest.py), each judged against the local executor.

1. Every runtime conformance case of the pinned suite, run the way the scorer runs it (``nika run
   FILE --output-format json``, its ``run.json`` vars and env) with ``--executor dask --scheduler
   ADDRESS``: the same workflow state, task statuses, outputs, error codes and messages, and the
   same journal events as ``--executor local``. Equal to local, not to ``expected-run.json``: the
   runtime section's score is the local executor's (37/38; its miss,
   ``for-each/001-null-placeholder``, is a stale fixture that fails the same way on both). The
   local run is also refused by no case and fails no task with a check-phase code.
2. The check ≡ run differential (test_check_run_differential.py) where the Dask executor moves the
   run-time verdict: a builtin's paths are judged on the worker, by the judge rebuilt from the grant
   the driver sent. Its `fs` cases (the same strategies, seeded) are judged on a worker, and run
   end to end on both executors. The `exec`, `shell` and `tools` verdicts are taken in the driver
   before an effect is handed over (runtime/verbs/exec.py, runtime/verbs/invoke.py), whichever the
   executor; their admitted `exec` cases are not run end to end here (their drawn argv include
   `rm` and `env`).
"""

from __future__ import annotations

import io
import json
import shutil
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from test_check_run_differential import STATIC, _agree, _compile, literal_path, path_text

from checker.core.codes import lookup
from checker.project.files import compile_path
from nika.commands.run import run_command
from runtime.engine.dask_executor import DaskSession
from runtime.errors import TaskError
from runtime.tools.process_runner import EXIT_CODE

pytestmark = pytest.mark.xdist_group("dask")  # the cluster of test_dask_executor.py, on one worker

SUITE = Path(__file__).resolve().parents[3] / "shared" / "nika-spec"
RUNTIME = SUITE / "conformance" / "tests" / "runtime"
needs_suite = pytest.mark.skipif(not RUNTIME.is_dir(), reason=f"conformance suite not found at {SUITE}")


@pytest.fixture
def session(dask_session: DaskSession) -> DaskSession:
    return dask_session


def _cases() -> list[Path]:
    return sorted(p.parent for p in RUNTIME.rglob("expected-run.json")) if RUNTIME.is_dir() else []


def _nika_run(case: Path, work: Path, monkeypatch: pytest.MonkeyPatch, **opts: Any) -> dict[str, Any]:
    """``nika run input.nika.yaml --output-format json`` from a copy of the case, as the scorer runs it."""
    shutil.copytree(case, work)
    spec = json.loads((work / "run.json").read_text() or "{}") if (work / "run.json").exists() else {}
    with monkeypatch.context() as m:
        m.chdir(work)
        for name, value in spec.get("env", {}).items():
            m.setenv(name, str(value))
        m.setenv("FAKE_API_KEY_FOR_TEST", "dummy-key-for-conformance")
        out, err = io.StringIO(), io.StringIO()
        run_command(
            "input.nika.yaml",
            output_format="json",
            var_pairs=[f"{k}={json.dumps(v)}" for k, v in spec.get("vars", {}).items()],
            trace_dir=str(work / "traces"),
            out=out,
            err=err,
            **opts,
        )
    assert out.getvalue(), err.getvalue()
    return json.loads(out.getvalue().replace(str(work), "<work>"))


def _settled(rep: dict[str, Any]) -> tuple[Any, ...]:
    """What a conformance case is judged on, and the events the run journaled (but where the
    Dask executor says which worker ran an effect, which the local executor has no word for)."""
    tasks = {
        tid: (r["status"], r["output"], r["error"] and (r["error"]["code"], r["error"]["message"]))
        for tid, r in rep["tasks"].items()
    }
    events = Counter(
        (e["type"], e.get("task")) for e in rep["events"] if not str(e.get("phase", "")).startswith("dask_")
    )
    return rep["workflow_state"], tasks, rep["outputs"], events


@needs_suite
@pytest.mark.parametrize("case", _cases(), ids=lambda p: str(p.relative_to(RUNTIME)))
def test_the_runtime_conformance_case_runs_alike_on_dask(
    case: Path, session: DaskSession, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    local = _nika_run(case, tmp_path / "local", monkeypatch, executor="local")
    # the runtime raises no code the checker owns (the whole corpus; test_run_command.py keeps a sample)
    assert local["workflow_state"] != "refused"
    for tid, rec in local["tasks"].items():
        if rec["error"]:
            assert lookup(rec["error"]["code"]).phase != "check", (tid, rec["error"]["code"])
    workers = set(session.worker_addresses())
    dask = _nika_run(case, tmp_path / "dask", monkeypatch, executor="dask", scheduler=session.address)
    workers |= set(session.worker_addresses())  # the cluster's workers over the run (one may be replaced)
    assert _settled(dask) == _settled(local)
    # every process the case spawned was spawned on a worker of the cluster
    compiled, _why = compile_path(str(case / "input.nika.yaml"))
    assert compiled is not None and compiled.workflow is not None
    spawned = {
        tid
        for tid, r in local["tasks"].items()
        if compiled.workflow.tasks[tid].verb_kind == "exec"
        and (r["status"] == "success" or (r["error"] or {}).get("code") == EXIT_CODE)
    }
    placed = {e["task"]: e["worker"] for e in dask["events"] if e.get("phase") == "dask_effect"}
    assert spawned <= set(placed) and set(placed.values()) <= workers, (placed, workers)


def test_the_runtime_section_is_all_there() -> None:
    if not RUNTIME.is_dir():
        pytest.skip(f"conformance suite not found at {SUITE}")
    assert len(_cases()) >= 38  # a suite that lost its cases would pass the cases above vacuously


# -- check ≡ run where the worker decides ------------------------------------------------------

FS_CASES = settings(
    max_examples=150, derandomize=True, deadline=None, database=None, suppress_health_check=list(HealthCheck)
)


@pytest.fixture(scope="module")
def fs_cases(tmp_path_factory: pytest.TempPathFactory) -> list[tuple[Path, str, str, set[str], Any]]:
    """The differential's `fs` cases (drawn once for the module): (workdir, path, mode, static codes, compiled) for each
    drawn grant the checker takes as a permits question."""
    cases: list[tuple[Path, str, str, set[str], Any]] = []

    @FS_CASES
    @given(grants=st.lists(path_text, min_size=0, max_size=3), path=literal_path, write=st.booleans())
    def draw(grants: list[str], path: str, write: bool) -> None:
        tmp = tmp_path_factory.mktemp("fs")
        mode = "write" if write else "read"
        permits = f"permits: {{ fs: {{ {mode}: {json.dumps(grants)} }}, tools: [nika:read, nika:write] }}"
        call = "nika:write" if write else "nika:read"
        extra = ', content: "x"' if write else ""
        body = f"    invoke: {{ tool: {call}, args: {{ path: {json.dumps(path)}{extra} }} }}\n"
        codes, compiled = _compile(tmp, permits, body)
        if compiled.workflow is not None and not codes - STATIC:
            cases.append((tmp, path, mode, codes, compiled))

    draw()
    return cases


def judge_on_worker(cases: list[tuple[list[Any], str, str, str]]) -> tuple[str, list[tuple[str | None, str]]]:
    """On a Dask worker: each (grant as sent, workdir, path, mode) judged by the worker's judge."""
    from distributed import get_worker

    from runtime.engine.dask_worker import grant_boundary

    verdicts: list[tuple[str | None, str]] = []
    for grant, workdir, path, mode in cases:
        boundary = grant_boundary(grant, Path(workdir), [])
        try:
            verdicts.append((None, str(boundary.resolve("t", path, mode))))
        except TaskError as exc:
            verdicts.append((exc.code, exc.message))
    return str(get_worker().address), verdicts


def test_every_fs_literal_is_judged_on_a_worker_as_check_judges_it(session: DaskSession, fs_cases: list[Any]) -> None:
    from runtime.guard.permits import Boundary

    cases = fs_cases
    assert len(cases) > 100
    sent = [([c.workflow.permits], str(tmp), path, mode) for tmp, path, mode, _codes, c in cases]
    future = session.client.submit(judge_on_worker, sent, pure=False)
    worker, verdicts = future.result(timeout=30)
    assert worker.startswith("tcp://") and worker in session.worker_addresses()
    for (tmp, path, mode, codes, compiled), (code, said) in zip(cases, verdicts, strict=True):
        _agree(codes, code)
        driver = Boundary(compiled.workflow.permits, tmp)
        try:
            here: tuple[str | None, str] = (None, str(driver.resolve("t", path, mode)))
        except TaskError as exc:
            here = (exc.code, exc.message)
        assert (code, said) == here, (path, mode)


def test_the_fs_cases_run_end_to_end_alike_on_dask(session: DaskSession, fs_cases: list[Any]) -> None:
    """Each drawn case as a run: the builtin performed on a worker refuses (or not) as check
    does, with the local executor's record."""
    import asyncio

    from runtime.engine.options import Options
    from runtime.engine.run import Run
    from runtime.verbs import VERBS

    cases = fs_cases[:40]
    refused = 0
    for tmp, path, _mode, codes, compiled in cases:  # a refused one too: the run-time judge is the question
        records = []
        for name, executor in (("local", "local"), ("dask", session.executor)):
            (tmp / name).mkdir()
            opts = Options(trace_dir=None, executor=executor)
            r = asyncio.run(Run(compiled, {}, opts, verbs=VERBS, workdir=tmp / name).execute()).tasks["t"]
            error = r.error and (r.error["code"], r.error["message"].replace(str(tmp / name), "<work>"))
            records.append((r.status, r.output, error))
        assert records[1] == records[0], path
        code = records[1][2] and records[1][2][0]
        _agree(codes, code if code in STATIC else None)
        refused += bool(codes & STATIC)
    assert 0 < refused < len(cases)
