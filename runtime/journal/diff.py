"""Two runs compared task by task: which changed input, output, status or cost (``nika trace diff``).

Inputs compare by the ``input_hash`` the terminal task frame carries (17 §kinds); a journal
without it says « unrecorded » for that column, never "same". Outputs compare by value.
"""

from __future__ import annotations

from typing import Any

from runtime.journal.read import UNRECORDED, RunView, TaskView

ASPECTS = ("status", "input", "output", "cost", "tokens")


def diff_runs(a: RunView, b: RunView) -> dict[str, Any]:
    tasks: list[dict[str, Any]] = []
    for tid in [*a.tasks, *(t for t in b.tasks if t not in a.tasks)]:
        ta, tb = a.tasks.get(tid), b.tasks.get(tid)
        if ta is None or tb is None:
            tasks.append({"task": tid, "only_in": "a" if tb is None else "b", "changed": []})
            continue
        tasks.append(_task_diff(ta, tb))
    notes = []
    if a.workflow != b.workflow:
        notes.append(f"different workflows: `{a.workflow}` and `{b.workflow}`")
    elif a.workflow_sha256 != b.workflow_sha256:
        notes.append("the workflow file changed between the runs (its sha256 differs)")
    return {
        "a": a.summary(),
        "b": b.summary(),
        "notes": notes,
        "state": {"a": a.state, "b": b.state, "changed": a.state != b.state},
        "outputs": _compare(a.outputs, b.outputs),
        "tasks": tasks,
        "changed_tasks": [t["task"] for t in tasks if t.get("changed") or t.get("only_in")],
    }


def _task_diff(a: TaskView, b: TaskView) -> dict[str, Any]:
    ia = a.input_hash if a.input_hash is not None else UNRECORDED
    ib = b.input_hash if b.input_hash is not None else UNRECORDED
    aspects = {
        "status": _compare(a.status, b.status),
        "input": _compare(ia, ib),
        "output": _compare(a.output, b.output),
        "cost": _compare(
            a.cost_usd if a.cost_usd is not None else UNRECORDED, b.cost_usd if b.cost_usd is not None else UNRECORDED
        ),
        "tokens": _compare(list(a.tokens()), list(b.tokens())),
    }
    if a.error_code != b.error_code:
        aspects["status"]["changed"] = True
    return {
        "task": a.id,
        "changed": [k for k, v in aspects.items() if v["changed"]],
        "unrecorded": [k for k, v in aspects.items() if v["changed"] is None],
        **aspects,
        "error_code": {"a": a.error_code, "b": b.error_code},
    }


def _compare(x: Any, y: Any) -> dict[str, Any]:
    """``changed`` is ``None`` when either side is unrecorded: unknown, not equal."""
    if x is UNRECORDED or y is UNRECORDED:
        return {"a": _shown(x), "b": _shown(y), "changed": None}
    return {"a": x, "b": y, "changed": x != y}


def _shown(v: Any) -> Any:
    return "unrecorded" if v is UNRECORDED else v
