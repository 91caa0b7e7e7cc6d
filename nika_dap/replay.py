"""A recorded run under the debugger: the journal's frames, read through the one journal reader
(:mod:`runtime.journal.scan`), are the points a session stops at; nothing is run again.

A point is a task's terminal frame (or one ``for_each`` iteration's). ``continue``/``next`` move
forward, ``stepBack``/``reverseContinue`` backward; at each point the Variables view shows the
task's recorded ``with:`` (masked when it was written), its output or error, its permit decisions,
and the run so far: what settled, what it cost, how the recorded run ended.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from nika_dap.live import EXIT, LaunchError
from nika_dap.views import Handles, TaskLines, task_at, task_lines

TERMINAL_TASK = {
    "task_completed": "success",
    "task_failed": "failure",
    "task_skipped": "skipped",
    "task_cancelled": "cancelled",
    "task_cache_hit": "success",
}
MAX_TRACE_BYTES = 256 * 1024 * 1024


def _json(text: Any) -> Any:
    if not isinstance(text, str):
        return text
    try:
        return json.loads(text)
    except ValueError:
        return text


@dataclass
class Point:
    index: int  # the frame's position in the journal
    task: str
    iteration: int | None
    status: str
    fields: dict[str, Any]


class Replay:
    """The points of one journal and where the session stands among them."""

    def __init__(self, trace: str, program: str | None, workdir: Path) -> None:
        from runtime.journal.scan import frame_fields, scan

        path = Path(workdir, trace)
        try:
            with path.open("rb") as f:
                data = f.read(MAX_TRACE_BYTES + 1)
        except OSError as exc:
            raise LaunchError(f"cannot read the trace {trace}: {(exc.strerror or str(exc)).lower()}") from None
        if len(data) > MAX_TRACE_BYTES:
            raise LaunchError(f"the trace {trace} is larger than {MAX_TRACE_BYTES} bytes")
        s = scan(data)
        if s.damage == "forged":
            raise LaunchError(f"the trace {trace} is forged (its hash chain is broken): nothing in it is trusted")
        if s.damage == "empty":
            raise LaunchError(f"the trace {trace} holds no frame")
        self.fields = [frame_fields(f) for f in s.frames]
        self.kinds = [str(f.get("kind")) for f in s.frames]
        self.damage = s.damage
        prologue = self.fields[0] if self.kinds and self.kinds[0] == "workflow_started" else {}
        self.workflow = str(prologue.get("workflow") or "")
        self.source = program or prologue.get("source")
        self.workdir = workdir
        self.lines: list[TaskLines] = []
        if isinstance(self.source, str):
            from runtime.engine.inputs import compile_file

            compiled, _ = compile_file(str(Path(workdir, self.source)), named=False)
            if compiled is not None:
                self.lines = task_lines(compiled)
        self.points: list[Point] = []
        for i, (kind, fl) in enumerate(zip(self.kinds, self.fields, strict=True)):
            task = fl.get("task")
            if not isinstance(task, str):
                continue
            if kind in TERMINAL_TASK and "index" not in fl:
                self.points.append(Point(i, task, None, TERMINAL_TASK[kind], fl))
            elif kind in ("checkpoint_written", "task_cache_hit") and isinstance(fl.get("index"), int):
                self.points.append(Point(i, task, fl["index"], str(fl.get("status") or "success"), fl))
        self.end = next(
            (
                fl
                for k, fl in zip(self.kinds, self.fields, strict=True)
                if k.startswith("workflow_") and k != "workflow_started"
            ),
            {},
        )
        self.state = str(self.end.get("state") or ("paused" if "workflow_paused" in self.kinds else "unfinished"))
        self.at = -1
        self.breakpoints: dict[int, tuple[int, str | None]] = {}  # id -> (line, task)
        self.exceptions = False
        self.handles = Handles()

    # -- moving ------------------------------------------------------------------------------

    def set_breakpoints(self, wanted: list[dict[str, Any]], next_id: Any) -> list[dict[str, Any]]:
        self.breakpoints = {}
        answer = []
        for b in wanted:
            line = int(b.get("line", 0))
            owner = task_at(self.lines, line)
            n = next_id()
            self.breakpoints[n] = (line, owner.task if owner else None)
            shown: dict[str, Any] = {"id": n, "verified": owner is not None, "line": owner.key_line if owner else line}
            if owner is None:
                shown["message"] = "no task on this line: a breakpoint goes on a task's key or inside its body"
            if b.get("condition"):
                shown["message"] = "conditions are not judged in a replay (the scope was not recorded)"
            answer.append(shown)
        return answer

    def _stops_at(self, p: Point) -> list[int] | None:
        hits = [n for n, (_line, task) in self.breakpoints.items() if task == p.task]
        if hits:
            return hits
        if self.exceptions and (p.status == "failure" or "error_code" in p.fields):  # failed (on_error: decided after)
            return []
        return None

    def move(self, how: str) -> tuple[str, list[int]] | None:
        """Where ``how`` (continue, next, stepBack, reverseContinue, entry) lands: the stop reason
        and the breakpoints hit, or ``None`` past the last point (the session ends)."""
        n = len(self.points)
        if how == "entry":
            self.at = 0 if n else -1
            return ("entry", []) if n else None
        if how == "next":
            self.at += 1
            return ("step", []) if self.at < n else None
        if how == "stepBack":
            self.at = max(0, self.at - 1)
            return ("step", [])
        step = 1 if how in ("continue", "start") else -1
        i = self.at + step
        while 0 <= i < n:
            hits = self._stops_at(self.points[i])
            if hits is not None:
                self.at = i
                failed = not hits
                return ("exception" if failed else "breakpoint", hits)
            i += step
        if step < 0:
            self.at = 0
            return ("entry", []) if n else None
        self.at = n
        return None

    @property
    def exit_code(self) -> int:
        return EXIT.get(self.state, 1)

    # -- views -------------------------------------------------------------------------------

    def current(self) -> Point | None:
        return self.points[self.at] if 0 <= self.at < len(self.points) else None

    def stack(self) -> list[dict[str, Any]]:
        p = self.current()
        if p is None:
            return []
        line = next((t.key_line for t in self.lines if t.task == p.task), 1)
        name = p.task if p.iteration is None else f"{p.task} [iteration {p.iteration}]"
        frame: dict[str, Any] = {"id": 1, "name": f"{self.workflow} › {name}", "line": line, "column": 1}
        if isinstance(self.source, str):
            frame["source"] = {"name": os.path.basename(self.source), "path": str(Path(self.workdir, self.source))}
        return [frame]

    def snapshot(self) -> dict[str, Any]:
        p = self.current()
        if p is None:
            return {}
        fl = p.fields
        task: dict[str, Any] = {"id": p.task, "status": p.status}
        if p.iteration is not None:
            task["index"], task["item"] = p.iteration, _json(fl.get("item"))
        for key in ("with", "output", "outcome"):
            if key in fl:
                task[key] = _json(fl[key])
        for key in ("error_code", "message", "duration_ms", "cost_usd", "output_masked"):
            if key in fl:
                task[key] = fl[key]
        task["permits"] = [
            {k: fl2.get(k) for k in ("plane", "gate", "decision", "why") if k in fl2}
            for k2, fl2 in zip(self.kinds[: p.index], self.fields[: p.index], strict=True)
            if k2 == "permit_checked" and fl2.get("task") == p.task
        ]
        settled: dict[str, Any] = {}
        cost = 0.0
        for q in self.points[: self.at + 1]:
            if q.iteration is None:
                settled[q.task] = {"status": q.status, "output": _json(q.fields.get("output"))}
                c = q.fields.get("cost_usd")
                cost += float(c) if isinstance(c, int | float) else 0.0
        run = {
            "workflow": self.workflow,
            "point": f"{self.at + 1} of {len(self.points)}",
            "cost_so_far_usd": round(cost, 6),
            "recorded_outcome": self.state,
            "recorded_cost_usd": self.end.get("cost_usd"),
            "journal": self.damage,
        }
        return {"task": task, "run": run, "tasks": settled}

    def scopes(self) -> list[dict[str, Any]]:
        snap = self.snapshot()
        names = {"task": "Task", "run": "Run", "tasks": "Settled tasks"}
        return [
            {
                "name": names[k],
                "variablesReference": self.handles.ref(snap.get(k) or {"(empty)": None}),
                "expensive": False,
            }
            for k in names
        ]
