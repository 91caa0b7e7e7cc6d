"""What ``nika:inspect`` reads of its own run (stdlib §nika:inspect): one view at a time.

* ``cost`` — ``{total_usd, by_task, by_provider}``: the run's cost meter so far
  (:class:`runtime.providers.cost.CostMeter`, the one price table); ``null`` where a call could not be
  priced (unknown, never 0).
* ``records`` — ``{tasks: [{id, status, started_at, ended_at, duration_ms, attempts, cost_usd,
  error_code}]}``: every task in declaration order, ``running`` while it is in flight. Statuses
  and timings only: a task's output and error message are read through ``with:`` (a data edge the
  checker orders and judges for taint and secret flow), never around it.
* ``dag_info`` — ``{nodes, edges, waves}``: the canonical projection's nodes and edges
  (:func:`checker.views.projection.project`, what ``nika inspect --format json`` prints) and the
  waves read from them. Static: the same for every run of the file.
* ``threads`` — ``{active, queued, completed}``: tasks in flight, tasks not started yet (a task
  parked at a human gate included), tasks settled. Advisory: the counts follow this engine's
  scheduling (a Dask executor's workers are not counted).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from checker.model.workflow import CompiledWorkflow, Workflow
    from runtime.engine.records import TaskRecord
    from runtime.providers.cost import CostMeter


class InspectedRun(Protocol):
    """What the views read of the run (:class:`runtime.engine.run.Run`)."""

    wf: Workflow
    compiled: CompiledWorkflow
    records: dict[str, TaskRecord]
    meter: CostMeter
    _dag_info: dict[str, Any] | None

    @property
    def in_flight(self) -> frozenset[str]: ...


def view(run: InspectedRun, name: str) -> dict[str, Any]:
    """The ``name`` view of ``run`` (one of the stdlib's four; ``nika:inspect`` validated it)."""
    if name == "cost":
        return _cost(run)
    if name == "records":
        return {"tasks": [_record(run, tid) for tid in run.wf.tasks]}
    if name == "dag_info":
        return dag_info(run)
    return _threads(run)


def _cost(run: InspectedRun) -> dict[str, Any]:
    m = run.meter
    by_task: dict[str, float | None] = {t: round(usd, 9) for t, usd in m.by_task.items()}
    by_task.update(dict.fromkeys(m.unknown))
    by_provider: dict[str, float | None] = {p: round(usd, 9) for p, usd in m.by_provider.items()}
    by_provider.update(dict.fromkeys(m.unknown_providers))
    return {"total_usd": m.total(), "by_task": by_task, "by_provider": by_provider}


def _record(run: InspectedRun, tid: str) -> dict[str, Any]:
    rec = run.records[tid]
    status = "running" if rec.status == "pending" and tid in run.in_flight else rec.status
    cost, known = run.meter.task_cost(tid)
    return {
        "id": tid,
        "status": status,
        "started_at": rec.started_at,
        "ended_at": rec.ended_at,
        "duration_ms": rec.duration_ms,
        "attempts": rec.attempts,
        "cost_usd": cost if known else None,
        "error_code": rec.error.get("code") if rec.error else None,
    }


def dag_info(run: InspectedRun) -> dict[str, Any]:
    """The projection's nodes and edges and the waves they make (computed once per run)."""
    cached = getattr(run, "_dag_info", None)
    if cached is None:
        from checker.views.projection import project, waves_of

        # an admitted run's workflow passed `nika check`: its draft is the projection
        p = project(run.compiled)
        g = p.graph or p.draft
        assert g is not None  # a run has a model
        doc = g.to_json()
        cached = {"nodes": doc["nodes"], "edges": doc["edges"], "waves": waves_of(doc)}
        run._dag_info = cached
    return {k: _copy(v) for k, v in cached.items()}


def _copy(v: Any) -> Any:
    """A fresh copy, so a task that edits its output cannot change what the next call returns."""
    if isinstance(v, dict):
        return {k: _copy(x) for k, x in v.items()}
    if isinstance(v, list):
        return [_copy(x) for x in v]
    return v


def _threads(run: InspectedRun) -> dict[str, Any]:
    active = len(run.in_flight)
    completed = sum(1 for r in run.records.values() if r.status != "pending")
    return {"active": active, "queued": len(run.records) - active - completed, "completed": completed}
