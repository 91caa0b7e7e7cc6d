"""check ≡ run on whole workflows: what `nika check` refuses, `nika run` refuses the same way with
no effect; what it admits, `nika run` never refuses on a literal the checker could have judged.

Hypothesis builds small workflows (a ``permits:`` block drawn from a few grants, one to three
tasks of ``exec:`` (argv or shell) and ``invoke:`` of ``nika:read``/``nika:write``/``nika:glob``,
every path and program a literal) in a sandbox: ``root/sandbox`` is the working directory, with
``data/a.txt``, ``secret.txt``, ``bin/echo`` and the workflow in ``flows/``; ``root/outside`` is a
folder no grant covers. The spec's templates are mutated too (their ``permits:`` block cut down,
dropped or replaced) and run with a recording executor that performs nothing.

Each case goes through the checker's admission (as `nika check` judges the file) and through
`nika run` in process (``run_command``, mock provider, the sandbox as cwd), with the run's
executor recording every effect that crossed the seam. Asserted:

(a) a static refusal is a run refusal (exit 2) with the same error codes, no effect performed and
    no file changed, inside or outside the sandbox;
(b) an admitted workflow of literals never fails a task with NIKA-SEC-004/NIKA-SEC-001 (a code the
    checker would have raised on the same literal);
(c) every performed effect belongs to a task with no static permit or blocklist finding.

Seeded (``derandomize``): 25 generated workflows and 40 mutated templates in the default suite, 60
and 100 in `.ci/run campaigns` (tests/suite_size.py); ``NIKA_DIFF_EXAMPLES`` sets both counts for
a longer run. Spec: 01 §permits, 02 §exec, 10 (check ≡ run).
"""

from __future__ import annotations

import io
import json
import os
import stat
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, ClassVar
from unittest import mock

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from suite_size import examples

from checker.project.admission import admit
from nika.commands.run import run_command
from runtime.engine import executor as executor_mod
from runtime.engine.executor import EffectCall, EffectResult, LocalExecutor
from runtime.engine.inputs import compile_file

SPEC = Path(__file__).resolve().parents[2] / ".." / "shared" / "nika-spec"
STATIC = {"NIKA-SEC-004", "NIKA-SEC-001"}
LONG_RUN = os.environ.get("NIKA_DIFF_EXAMPLES")  # a long run: NIKA_DIFF_EXAMPLES=3000


def _settings(examples: int) -> settings:
    return settings(
        max_examples=int(LONG_RUN or examples),
        derandomize=True,
        deadline=None,
        suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
    )


SETTINGS = _settings(examples(60, 25))  # a generated case performs its effects for real (processes, files)
DRY_SETTINGS = _settings(examples(100, 40))  # a mutated template's effects are only recorded

# -- the grammar slice -----------------------------------------------------------------------------

READ_GRANTS = ["./data/**", "./**", "./data/a.txt", "./out/**", "../outside/**"]
WRITE_GRANTS = ["./out/**", "./data/**", "./out/b.txt"]
PROGRAMS = ["echo", "cat", "ls", "true", "/bin/echo", "./bin/echo", "sudo", "env"]
ARGS = ["hi", "./data/a.txt", "./secret.txt", "-n", "../outside/o.txt"]
SHELL = ["echo hi", "cat ./data/a.txt", "echo x > ./out/s.txt", "ls ./data | cat", "sudo -n true", "env sudo true"]
READ_PATHS = ["./data/a.txt", "./secret.txt", "../outside/o.txt", "./data/../secret.txt", "data/a.txt", "./out/b.txt"]
WRITE_PATHS = ["./out/b.txt", "./data/new.txt", "./secret.txt", "../outside/w.txt", "./out/../s2.txt"]
GLOBS = ["./data/*.txt", "./**/*.txt", "../outside/*.txt", "./out/*", "./data"]


def _sub(xs: list[str]) -> st.SearchStrategy[list[str]]:
    return st.lists(st.sampled_from(xs), max_size=3, unique=True)


GENEROUS = {"fs": {"read": ["./**"], "write": ["./out/**", "./data/**"]}, "exec": True, "tools": ["nika:*"]}
drawn = st.fixed_dictionaries(
    {},
    optional={
        "fs": st.fixed_dictionaries({}, optional={"read": _sub(READ_GRANTS), "write": _sub(WRITE_GRANTS)}),
        "exec": st.one_of(st.just(True), _sub([*PROGRAMS[:4], "sudo"])),
        "tools": _sub(["nika:read", "nika:write", "nika:glob", "nika:*"]),
    },
)
permits = st.one_of(st.none(), st.just(GENEROUS), drawn, drawn.map(lambda p: {**GENEROUS, **p}))
task = st.one_of(
    st.builds(lambda p, a: {"exec": {"command": [p, *a]}}, st.sampled_from(PROGRAMS), _sub(ARGS)),
    st.builds(lambda line: {"exec": {"shell": line}}, st.sampled_from(SHELL)),
    st.builds(lambda p: {"invoke": {"tool": "nika:read", "args": {"path": p}}}, st.sampled_from(READ_PATHS)),
    st.builds(
        lambda p: {"invoke": {"tool": "nika:write", "args": {"path": p, "content": "x", "create_dirs": True}}},
        st.sampled_from(WRITE_PATHS),
    ),
    st.builds(lambda g: {"invoke": {"tool": "nika:glob", "args": {"pattern": g}}}, st.sampled_from(GLOBS)),
)
workflow = st.builds(
    lambda p, ts: {
        "nika": "v1",
        "workflow": {"id": "diff"},
        **({"permits": p} if p is not None else {}),
        "tasks": {f"t{i}": t for i, t in enumerate(ts)},
    },
    permits,
    st.lists(task, min_size=1, max_size=2),
)

# -- the harness -----------------------------------------------------------------------------------


class Recorder:
    """Every effect that crossed the executor seam; performs through the local executor unless dry."""

    calls: ClassVar[list[EffectCall]] = []
    dry: ClassVar[bool] = False

    def __init__(self, host: Any) -> None:
        self.name = "recorder"
        self.local = LocalExecutor(host)

    async def perform(self, call: EffectCall) -> EffectResult:
        Recorder.calls.append(call)
        if Recorder.dry:
            return EffectResult(output="recorded")
        return await self.local.perform(call)


@contextmanager
def _in(directory: Path) -> Iterator[None]:
    before = os.getcwd()
    os.chdir(directory)
    try:
        yield
    finally:
        os.chdir(before)


def _sandbox(root: Path) -> Path:
    box = root / "sandbox"
    (box / "data").mkdir(parents=True)
    (box / "flows").mkdir()
    (box / "bin").mkdir()
    (box / "data" / "a.txt").write_text("A")
    (box / "secret.txt").write_text("S")
    echo = box / "bin" / "echo"
    echo.write_text('#!/bin/sh\necho "$@"\n')
    echo.chmod(echo.stat().st_mode | stat.S_IXUSR)
    (root / "outside").mkdir()
    (root / "outside" / "o.txt").write_text("O")
    return box


def _snapshot(root: Path) -> dict[str, bytes]:
    out = {}
    for p in sorted(root.rglob("*")):
        if p.is_file() and "traces" not in p.parts and ".nika" not in p.parts:
            out[str(p.relative_to(root))] = p.read_bytes()
    return out


def _static(path: str) -> tuple[bool, set[str], dict[str, set[str]]]:
    compiled, why = compile_file(path)
    assert compiled is not None, why
    verdict = admit(compiled, path)
    per_task: dict[str, set[str]] = {}
    for d in compiled.diagnostics:
        if d.task is not None and d.code is not None:
            per_task.setdefault(d.task, set()).add(d.code)
    return verdict.refused, {d.code for d in verdict.errors if d.code}, per_task


def _run(root: Path, box: Path, rel: str, model: str | None = None) -> tuple[int, dict[str, Any]]:
    out, err = io.StringIO(), io.StringIO()
    with _in(box):
        code = run_command(rel, output_format="json", model=model, trace_dir=str(root / "traces"), out=out, err=err)
    return code, json.loads(out.getvalue())


def check_and_run(root: Path, text: str, *, literal: bool, model: str | None = None) -> None:
    box = _sandbox(root)
    (box / "flows" / "w.nika.yaml").write_text(text)
    refused, codes, per_task = _static(str(box / "flows" / "w.nika.yaml"))
    before = _snapshot(root)
    Recorder.calls = []
    with mock.patch.dict(executor_mod.EXECUTORS, {"local": Recorder}):
        exit_code, report = _run(root, box, "flows/w.nika.yaml", model)
    if refused:  # (a)
        assert exit_code == 2 and report["workflow_state"] == "refused", (text, report)
        run_codes = {f["code"] for f in report["findings"] if f.get("severity") == "error"}
        assert run_codes == codes, (text, run_codes, codes)
        assert Recorder.calls == [], text
        assert _snapshot(root) == before, text
        return
    if report["workflow_state"] == "refused":  # admitted, then stopped before any effect: only inputs may
        assert not literal and not report["findings"] and report["error"]["code"] is None, (text, report)
        assert Recorder.calls == [] and _snapshot(root) == before, text
        return
    for tid, rec in report["tasks"].items():
        error = rec.get("error") or {}
        if literal:  # (b)
            assert error.get("code") not in STATIC, (text, tid, error)
    for call in Recorder.calls:  # (c)
        assert not per_task.get(call.task_id, set()) & STATIC, (text, call)


# -- the properties --------------------------------------------------------------------------------


@SETTINGS
@given(wf=workflow)
def test_generated_workflows_check_as_they_run(tmp_path_factory: pytest.TempPathFactory, wf: dict[str, Any]) -> None:
    Recorder.dry = False
    check_and_run(tmp_path_factory.mktemp("w"), json.dumps(wf), literal=True)


def _templates() -> list[Path]:
    folder = SPEC / "templates"
    return sorted(folder.glob("*.nika.yaml")) if folder.is_dir() else []


def _mutate(text: str, how: int) -> str:
    """The template with its ``permits:`` block dropped (0), emptied (1) or cut to fs only (2)."""
    lines = text.splitlines()
    start = next((i for i, line in enumerate(lines) if line.startswith("permits:")), None)
    if start is None:
        return text
    end = start + 1
    while end < len(lines) and (lines[end].startswith((" ", "#")) or not lines[end].strip()):
        end += 1
    block = {0: [], 1: ["permits: {}"], 2: ['permits: { fs: { read: ["./**"] } }']}[how]
    return "\n".join([*lines[:start], *block, *lines[end:]]) + "\n"


@pytest.mark.skipif(not _templates(), reason="the pinned spec's templates/ is not present (../shared/nika-spec)")
@DRY_SETTINGS
@given(data=st.data())
def test_mutated_templates_check_as_they_run(tmp_path_factory: pytest.TempPathFactory, data: st.DataObject) -> None:
    template = data.draw(st.sampled_from(_templates()))
    how = data.draw(st.sampled_from([0, 1, 2, 3]))
    text = template.read_text()
    Recorder.dry = True  # nothing leaves the sandbox: the recorder answers every effect itself
    mutated = text if how == 3 else _mutate(text, how)
    check_and_run(tmp_path_factory.mktemp("m"), mutated, literal=False, model="mock/echo")
