"""The executor seam (runtime/engine/executor.py) and the verb context (runtime/engine/context.py).

A verb builds its effect as plain data and hands it to the run's executor; the gates, the permit
judge, retries and the trace stay in the driver. These tests swap the executor through
``Options.executor`` and watch what crosses the seam.
"""

from __future__ import annotations

import inspect
from pathlib import Path
from typing import Any

import pytest
from rt_helpers import run_yaml, statuses

from checker.core import records
from checker.core.records import record_fields
from runtime.engine.context import VerbContext
from runtime.engine.executor import (
    EffectCall,
    EffectResult,
    ExecEffect,
    ExecutorHost,
    LocalExecutor,
    ModelEffect,
    ToolEffect,
    make_executor,
)

WF = """
nika: v1
workflow: { id: seam }
permits: { fs: { write: ["./out/**"] }, exec: ["echo"], tools: ["nika:write"] }
tasks:
  a:
    exec: { command: ["echo", "hi"] }
  w:
    invoke: { tool: "nika:write", args: { path: "./out/x.txt", content: "x", create_dirs: true } }
  m:
    infer: { model: mock/echo, prompt: "hello" }
"""


class Recording:
    """An executor that performs nothing: it records each call and answers a canned record."""

    name = "recording"

    def __init__(self, host: ExecutorHost, calls: list[EffectCall], **answers: EffectResult) -> None:
        self.host, self.calls, self.answers = host, calls, answers

    async def perform(self, call: EffectCall) -> EffectResult:
        self.calls.append(call)
        return self.answers.get(call.task_id, EffectResult(output=f"done:{call.task_id}", tokens_in=3, tokens_out=4))


def _recording(calls: list[EffectCall], **answers: EffectResult) -> Any:
    return lambda host: Recording(host, calls, **answers)


def test_every_effect_crosses_the_seam_as_plain_data(tmp_path: Path) -> None:
    calls: list[EffectCall] = []
    result = run_yaml(WF, tmp_path, executor=_recording(calls))
    assert statuses(result) == {"a": "success", "w": "success", "m": "success"}
    by_task = {c.task_id: c for c in calls}
    assert isinstance(by_task["a"], ExecEffect) and by_task["a"].call.argv == ["echo", "hi"]
    assert by_task["a"].call.executable and by_task["a"].call.executable.endswith("/echo")
    assert isinstance(by_task["w"], ToolEffect) and by_task["w"].tool == "nika:write"
    assert dict(by_task["w"].args) == {"path": "./out/x.txt", "content": "x", "create_dirs": True}
    assert isinstance(by_task["m"], ModelEffect) and by_task["m"].request.prompt == "hello"
    # the executor performed nothing: no file written; the outputs are its answers
    assert not (tmp_path / "out" / "x.txt").exists()
    assert result.tasks["a"].output == "done:a" and result.tasks["m"].output == "done:m"
    # the driver judged before handing over: the witnesses are in the trace
    gates = {(e["task"], e["plane"]) for e in result.events if e["type"] == "permit.checked"}
    assert ("a", "exec") in gates and ("w", "tool") in gates
    model = next(e for e in result.events if e["type"] == "verb.invoked" and e.get("task") == "m")
    assert (model["tokens_in"], model["tokens_out"]) == (3, 4)


def test_a_refused_effect_never_reaches_the_executor(tmp_path: Path) -> None:
    calls: list[EffectCall] = []
    wf = WF.replace('["echo", "hi"]', '["${{ inputs.prog }}", "hi"]').replace(
        "tasks:", "inputs: { prog: { type: string, default: echo } }\ntasks:"
    )
    result = run_yaml(wf, tmp_path, {"prog": "rm"}, executor=_recording(calls))
    assert result.tasks["a"].status == "failure" and result.tasks["a"].error["code"] == "NIKA-SEC-004"
    assert "a" not in {c.task_id for c in calls}


def test_an_error_record_becomes_the_task_failure_and_retry_stays_in_the_driver(tmp_path: Path) -> None:
    calls: list[EffectCall] = []
    busy = EffectResult(error={"code": "NIKA-PROVIDER-003", "message": "busy", "transient": True, "details": {}})
    wf = WF.replace(
        'infer: { model: mock/echo, prompt: "hello" }',
        'infer: { model: mock/echo, prompt: "hello" }\n    retry: { max_attempts: 3, backoff_ms: 1, jitter: false }',
    )
    result = run_yaml(wf, tmp_path, executor=_recording(calls, m=busy))
    rec = result.tasks["m"]
    assert rec.status == "failure" and rec.error["code"] == "NIKA-PROVIDER-003" and rec.error["message"] == "busy"
    assert [c.task_id for c in calls].count("m") == 3  # the driver retried; the executor performed thrice
    assert sum(1 for e in result.events if e["type"] == "task.retrying" and e["task"] == "m") == 2


def test_witnesses_an_executor_reports_are_journaled_by_the_driver(tmp_path: Path) -> None:
    calls: list[EffectCall] = []
    witness = {"task": "w", "plane": "fs", "gate": "fs.write", "ok": True, "why": "r"}
    seen = EffectResult(output="ok", witness=(witness,))
    result = run_yaml(WF, tmp_path, executor=_recording(calls, w=seen))
    frames = [e for e in result.events if e["type"] == "permit.checked" and e["task"] == "w" and e["plane"] == "fs"]
    assert frames and frames[-1]["decision"] == "allow" and frames[-1]["why"] == "r"


def test_the_local_executor_is_the_default_and_performs(tmp_path: Path) -> None:
    result = run_yaml(WF, tmp_path)
    assert statuses(result) == {"a": "success", "w": "success", "m": "success"}
    assert result.tasks["a"].output == "hi"
    assert (tmp_path / "out" / "x.txt").read_text() == "x"


def test_an_unknown_executor_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="executor `dask` is not available in this build"):
        make_executor("dask", None)  # type: ignore[arg-type]
    assert make_executor("local", None).name == "local"  # type: ignore[arg-type]
    assert isinstance(make_executor("local", None), LocalExecutor)  # type: ignore[arg-type]


def test_verbs_receive_the_context_never_the_run() -> None:
    from runtime.agent import run_agent
    from runtime.verbs.exec import run_exec_verb
    from runtime.verbs.infer import run_infer
    from runtime.verbs.invoke import call_tool, run_invoke

    for fn in (run_exec_verb, run_infer, run_invoke, run_agent, call_tool):
        first = next(iter(inspect.signature(fn).parameters.values()))
        assert first.annotation == "VerbContext", fn.__qualname__
    assert record_fields(VerbContext) and VerbContext.__setattr__ is records._frozen_setattr  # frozen
    names = {f.name for f in record_fields(VerbContext)}
    assert not any(n.startswith("_") for n in names) and "run" not in names
