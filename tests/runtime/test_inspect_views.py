"""`nika:inspect` reads its own run (stdlib §nika:inspect): the four views, through a real run.

`dag_info` is the canonical projection's nodes and edges (what `nika inspect --format json`
prints), `cost` the run's meter, `records` the task records without outputs, `threads` the
scheduler's counts.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

from checker import compile_text
from checker.views.projection import project, waves_of

WORKFLOW = """nika: v1
workflow: { id: insp }
model: mock/echo
permits:
  tools: ["nika:inspect"]
tasks:
  think:
    infer: { prompt: "hello", max_tokens: 50 }
  cost:
    after: { think: success }
    invoke: { tool: "nika:inspect", args: { view: cost } }
  records:
    after: { cost: success }
    invoke: { tool: "nika:inspect", args: { view: records } }
  dag:
    invoke: { tool: "nika:inspect", args: { view: dag_info } }
  threads:
    after: { records: success, dag: success }
    invoke: { tool: "nika:inspect", args: { view: threads } }
"""


def _run(tmp_path: Path) -> dict[str, object]:
    from runtime.engine.options import Options
    from runtime.engine.run import Run
    from runtime.verbs import VERBS

    compiled = compile_text(WORKFLOW, str(tmp_path / "insp.nika.yaml"), str(tmp_path))
    assert compiled.clean and compiled.workflow is not None
    run = Run(compiled, {}, Options(trace_dir=None, engine_env={}), verbs=VERBS, workdir=tmp_path)
    result = asyncio.run(run.execute())
    assert result.workflow_state == "success", {t: r.error for t, r in result.tasks.items()}
    return {tid: rec.output for tid, rec in result.tasks.items()}


def test_the_four_views_of_a_run(tmp_path: Path) -> None:
    out = _run(tmp_path)
    # dag_info: the projection's own nodes and edges, and the waves they make
    doc = project(compile_text(WORKFLOW)).document()
    assert doc is not None
    assert json.loads(json.dumps(out["dag"])) == {"nodes": doc["nodes"], "edges": doc["edges"], "waves": waves_of(doc)}
    # cost: the mock provider calls no model, so the spend is a known $0, per task and per provider
    assert out["cost"] == {"total_usd": 0.0, "by_task": {"think": 0.0}, "by_provider": {"mock": 0.0}}
    # records: every task, the caller running, the ones after it not started; no outputs
    rows = {r["id"]: r for r in out["records"]["tasks"]}  # type: ignore[index]
    assert list(rows) == ["think", "cost", "records", "dag", "threads"]
    assert rows["think"]["status"] == "success" and rows["think"]["attempts"] == 1
    assert rows["records"]["status"] == "running" and rows["threads"]["status"] == "pending"
    assert all(set(r) == {"id", "status", "started_at", "ended_at", "duration_ms", "attempts", "cost_usd", "error_code"}
               for r in rows.values())  # fmt: skip
    # threads: the caller is in flight, the four others settled
    assert out["threads"] == {"active": 1, "queued": 0, "completed": 4}


def test_inspect_is_no_longer_noted_as_unbuilt() -> None:
    compiled = compile_text(WORKFLOW)
    assert not [d for d in compiled.diagnostics if d.rule == "build/unavailable"]
