"""Reading a run journal back (spec 17 §the fold law): one pass over the frames folds a run view.

The bytes are read by the one reader (:mod:`runtime.journal.scan`), whose damage class (whole,
truncated, torn, empty, forged; or incomplete, by the run's own mark) rides the view. The fold is
tolerant by law (17 §additive law): an unknown kind, member or field is ignored, never guessed at,
and a line that does not parse (the torn last line of a killed run) is counted and skipped.
Integrity is judged by :func:`runtime.journal.write.verify`, from the same reading.

Every reader of journal lines goes through the one line reader (:func:`read_frame`, that is
:func:`runtime.journal.scan.parse_line`: the fold, the retention look, the verifier, ``--resume``): a
frame nested deeper than the JSON reader can follow is not a traceback but what its bytes still tell
(``chain`` and ``kind``), marked as such.

A run is named by its journal file, or by its *run id*, the file's stem
(``20261202T015824Z-c7bcb78ffc7a``), or any unambiguous prefix of the stem or of its short id
(the part after the dash): :mod:`runtime.journal.find` resolves those names.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from checker.core.records import field, record
from runtime.journal.iterations import IterationFold

TERMINAL_STATE = {
    "workflow_completed": "success",
    "workflow_failed": "failure",
    "workflow_cancelled": "cancelled",
    "workflow_paused": "paused",
}
TASK_TERMINAL = {
    "task_completed": "success",
    "task_failed": "failure",
    "task_skipped": "skipped",
    "task_cancelled": "cancelled",
    "task_cache_hit": "success",
}
UNFINISHED = "unfinished"  # no terminal workflow frame: killed, torn, or still running
UNRECORDED = object()  # a value the journal does not carry (17 §additive law: « unrecorded »)


def event_of(frame: dict[str, Any]) -> dict[str, Any]:
    """The event a frame was (the shape ``Options.on_event`` receives, ``runtime.engine.run.Run.emit``)."""
    event: dict[str, Any] = {"type": str(frame.get("kind", "")).replace("_", ".", 1)}
    fields = frame.get("fields")
    for f in fields if isinstance(fields, list) else []:
        if isinstance(f, dict) and isinstance(f.get("key"), str):
            event.setdefault(f["key"], f.get("value"))
    event.setdefault("task", None)
    event["at"] = frame.get("timestamp")
    return event


@record(frozen=False, slots=False)
class ModelCall:
    task: str
    provider: str | None
    model: str | None
    tokens_in: int | None
    tokens_out: int | None
    duration_ms: float | None
    at: int | None
    error_code: str | None = None
    turn: int | None = None
    cost_usd: float | None = None

    def to_json(self) -> dict[str, Any]:
        return dict(self.__dict__)


@record(frozen=False, slots=False)
class TaskView:
    id: str
    status: str = "pending"
    note: str | None = None
    started: int | None = None  # unix ns
    ended: int | None = None
    duration_ms: float | None = None
    error_code: str | None = None
    message: str | None = None
    output: Any = UNRECORDED
    attempts: int | None = None
    input_hash: str | None = None
    retries: list[dict[str, Any]] = field(default_factory=list)
    model_calls: list[ModelCall] = field(default_factory=list)
    tool_calls: list[dict[str, Any]] = field(default_factory=list)
    cost_usd: float | None = None
    cache_hit: bool = False

    def tokens(self) -> tuple[int, int]:
        return (
            sum(c.tokens_in or 0 for c in self.model_calls),
            sum(c.tokens_out or 0 for c in self.model_calls),
        )

    def to_json(self) -> dict[str, Any]:
        tin, tout = self.tokens()
        return {
            "id": self.id,
            "status": self.status,
            "note": self.note,
            "started_ns": self.started,
            "ended_ns": self.ended,
            "duration_ms": self.duration_ms,
            "error": {"code": self.error_code, "message": self.message} if self.error_code else None,
            "output": None if self.output is UNRECORDED else self.output,
            "output_recorded": self.output is not UNRECORDED,
            "attempts": self.attempts,
            "input_hash": self.input_hash,
            "retries": self.retries,
            "model_calls": [c.to_json() for c in self.model_calls],
            "tool_calls": self.tool_calls,
            "tokens_in": tin,
            "tokens_out": tout,
            "cost_usd": self.cost_usd,
            "cache_hit": self.cache_hit,
        }


@record(frozen=False, slots=False)
class RunView:
    path: Path
    run_id: str
    size: int = 0
    frames: int = 0
    torn_lines: list[int] = field(default_factory=list)
    deep_lines: list[int] = field(default_factory=list)  # frames nested too deeply to read whole
    workflow: str | None = None
    workflow_sha256: str | None = None
    source: str | None = None
    state: str = UNFINISHED
    started: int | None = None
    ended: int | None = None
    tasks: dict[str, TaskView] = field(default_factory=dict)
    events: list[dict[str, Any]] = field(default_factory=list)
    outputs: Any = UNRECORDED
    error_code: str | None = None
    paused_task: str | None = None
    prologue: dict[str, Any] = field(default_factory=dict)
    run_cost: Any = UNRECORDED  # the terminal frame's `cost_usd` (runtime.providers.cost): null = unknown
    damage: str = "whole"  # the one reader's class (runtime.journal.scan), or "incomplete" (the run's mark)
    incomplete: dict[str, Any] | None = None  # the mark its run left when it could not write the journal
    iterations: IterationFold = field(default_factory=IterationFold)  # each for_each's iterations

    @property
    def virtual_clock(self) -> bool:
        """The run declared ``clock: virtual`` (NEP-0010): its timestamps say nothing of when it ran."""
        return self.prologue.get("clock") == "virtual"

    @property
    def duration_ms(self) -> float | None:
        if self.started is None or self.ended is None:
            return None
        return round((self.ended - self.started) / 1e6, 3)

    @property
    def cost_usd(self) -> float | None:
        """The run's spend: the terminal frame's total when it carries one (``None``: a model had no
        price), else the sum of the tasks whose cost is known; ``None`` when none is."""
        if self.run_cost is not UNRECORDED:
            return self.run_cost
        known = [t.cost_usd for t in self.tasks.values() if t.cost_usd is not None]
        return round(sum(known), 6) if known else None

    def model_calls(self) -> list[ModelCall]:
        return [c for t in self.tasks.values() for c in t.model_calls]

    def summary(self) -> dict[str, Any]:
        """The one-line facts ``nika trace ls`` shows."""
        counts: dict[str, int] = {}
        for t in self.tasks.values():
            counts[t.status] = counts.get(t.status, 0) + 1
        return {
            "run": self.run_id,
            "path": str(self.path),
            "workflow": self.workflow,
            "state": self.state,
            "started_ns": self.started,
            "duration_ms": self.duration_ms,
            "tasks": len(self.tasks),
            "task_states": counts,
            "cost_usd": self.cost_usd,
            "size": self.size,
            "paused_task": self.paused_task,
            "virtual_clock": self.virtual_clock,
            "depth": self.prologue.get("depth") if isinstance(self.prologue.get("depth"), int) else None,
            "damage": self.damage,
            "incomplete_from": self.incomplete.get("from_frame") if self.incomplete else None,
        }

    def to_json(self) -> dict[str, Any]:
        return {
            **self.summary(),
            "frames": self.frames,
            "torn_lines": self.torn_lines,
            "deep_lines": self.deep_lines,
            "workflow_sha256": self.workflow_sha256,
            "source": self.source,
            "ended_ns": self.ended,
            "error_code": self.error_code,
            "outputs": None if self.outputs is UNRECORDED else self.outputs,
            "outputs_recorded": self.outputs is not UNRECORDED,
            "task_records": {tid: {**t.to_json(), **self.iterations_of(tid)} for tid, t in self.tasks.items()},
        }

    def iterations_of(self, tid: str) -> dict[str, Any]:
        """``{"items": N, "iterations": [row, …]}`` for a ``for_each`` task (:mod:`runtime.journal.iterations`)."""
        rows = self.iterations.of(tid)
        if not rows:
            return {}
        return {"items": self.iterations.sizes.get(tid), "iterations": rows}


def read_run(path: Path) -> RunView:
    """Fold the journal at ``path`` (raises ``OSError`` when it cannot be read), read by the one
    reader (:func:`runtime.journal.scan.scan`): its damage class rides the view."""
    from runtime.journal.incomplete import read_mark
    from runtime.journal.scan import scan

    data = path.read_bytes()
    s = scan(data)
    view = RunView(path=path, run_id=path.name.removesuffix(".ndjson"), size=len(data), damage=s.damage)
    view.torn_lines = list(s.unparsed)
    view.deep_lines = list(s.deep)
    mark = read_mark(path)
    if mark is not None and s.damage != "forged":
        view.damage, view.incomplete = "incomplete", mark
    for frame in s.frames:
        view.frames += 1
        event = event_of(frame)
        view.events.append(event)
        fold_event(view, str(frame.get("kind", "")), event)
    return view


def fold_event(view: RunView, kind: str, ev: dict[str, Any]) -> None:
    """Fold one event (of journal kind ``kind``) into ``view``."""
    at = ev.get("at") if isinstance(ev.get("at"), int) else None
    if view.started is None:
        view.started = at
    if at is not None:
        view.ended = at
    if kind == "workflow_started" and not view.prologue:
        view.prologue = {k: v for k, v in ev.items() if k not in ("type", "at", "task")}
        view.workflow = _str(ev.get("workflow"))
        view.workflow_sha256 = _str(ev.get("workflow_sha256"))
        view.source = _str(ev.get("source"))
        return
    if kind in TERMINAL_STATE:
        view.state = TERMINAL_STATE[kind]
        if "outputs" in ev:
            view.outputs = parsed_field(ev["outputs"])
        view.error_code = _str(ev.get("error_code"))
        if "cost_usd" in ev and (ev["cost_usd"] is None or _num(ev["cost_usd"]) is not None):
            view.run_cost = _num(ev["cost_usd"])
        if kind == "workflow_paused":
            view.paused_task = _str(ev.get("task"))
            _paused(view, ev)
        return
    tid = ev.get("task")
    if not isinstance(tid, str) or not tid:
        return
    if kind == "task_scheduled":
        view.tasks.setdefault(tid, TaskView(tid))
        return
    _fold_task(view, kind, tid, ev, at)


def _paused(view: RunView, ev: dict[str, Any]) -> None:
    """The tasks a paused run waits on are ``paused``, not ``running`` (a child's, ``TASK/STEP``: its caller)."""
    prompts = parsed_field(ev.get("prompts"))
    waiting = {p.get("task") for p in prompts if isinstance(p, dict)} if isinstance(prompts, list) else set()
    waiting.add(ev.get("task"))
    for tid in waiting:
        if isinstance(tid, str) and tid:
            task = view.tasks.get(tid.split("/", 1)[0])
            if task is not None and task.status in ("running", "pending"):
                task.status = "paused"


def _fold_task(view: RunView, kind: str, tid: str, ev: dict[str, Any], at: int | None) -> None:
    if view.iterations.add(ev) is not None:  # one for_each iteration settled: not the task's own frame
        view.tasks.setdefault(tid, TaskView(tid))
        return
    if kind in ("verb_invoked", "tool_invoked", "cost_incurred", "agent_budget_checkpoint"):
        owner = tid.split(".on_finally[", 1)[0]  # a cleanup step's events belong to its task
        task = view.tasks.setdefault(owner, TaskView(owner))
        _fold_call(task, kind, tid, ev, at)
        return
    task = view.tasks.setdefault(tid, TaskView(tid))
    if kind == "task_started":
        task.status = "running"
        task.started = at
        task.note = _str(ev.get("note"))
    elif kind in TASK_TERMINAL:
        task.status = TASK_TERMINAL[kind]
        task.cache_hit = kind == "task_cache_hit"
        task.ended = at
        task.note = _str(ev.get("note")) or task.note
        task.duration_ms = _num(ev.get("duration_ms"))
        task.error_code = _str(ev.get("error_code"))
        task.message = _str(ev.get("message"))
        task.input_hash = _str(ev.get("input_hash"))
        if "output" in ev:
            task.output = parsed_field(ev["output"])
        outcome = parsed_field(ev.get("outcome"))
        if isinstance(outcome, dict) and isinstance(outcome.get("payload"), dict):
            attempts = outcome["payload"].get("attempts")
            task.attempts = attempts if isinstance(attempts, int) else None
    elif kind == "task_retrying":
        task.retries.append({k: ev.get(k) for k in ("attempt", "error_code", "delay_ms", "index", "at")})


def _fold_call(task: TaskView, kind: str, tid: str, ev: dict[str, Any], at: int | None) -> None:
    if kind == "cost_incurred":
        _add_cost(task, ev.get("cost_usd"))
        return
    if kind == "agent_budget_checkpoint":  # the loop's total, when no finer frame priced it
        if task.cost_usd is None:
            _add_cost(task, ev.get("cost_usd"))
        return
    if kind == "verb_invoked" and ev.get("phase") == "model_call":
        call = ModelCall(
            task=tid,
            provider=_str(ev.get("provider")),
            model=_str(ev.get("model")),
            tokens_in=_int(ev.get("tokens_in")),
            tokens_out=_int(ev.get("tokens_out")),
            duration_ms=_num(ev.get("duration_ms")),
            at=at,
            error_code=_str(ev.get("error_code")),
            turn=_int(ev.get("turn")),
            cost_usd=_num(ev.get("cost_usd")),
        )
        task.model_calls.append(call)
        _add_cost(task, call.cost_usd)
        return
    if kind == "tool_invoked":
        call = {k: v for k, v in ev.items() if k not in ("type",)}
        task.tool_calls.append(call)


def _add_cost(task: TaskView, usd: Any) -> None:
    value = _num(usd)
    if value is not None:
        task.cost_usd = round((task.cost_usd or 0.0) + value, 6)


def parsed_field(value: Any) -> Any:
    """A field carried as serialized JSON (17 §frame: object-as-string) read back; else as is (a
    value nested too deeply to read back stays the text it was written as)."""
    if isinstance(value, str):
        try:
            return json.loads(value)
        except (ValueError, RecursionError):
            return value
    return value


def read_frame(line: bytes) -> tuple[dict[str, Any] | None, bool]:
    """One journal line as ``(frame, too_deep)``: the one line reader's
    (:func:`runtime.journal.scan.parse_line`), so no reader ever meets a RecursionError."""
    from runtime.journal.scan import parse_line

    return parse_line(line)


def _str(v: Any) -> str | None:
    return v if isinstance(v, str) else None


def _num(v: Any) -> float | None:
    return float(v) if isinstance(v, int | float) and not isinstance(v, bool) else None


def _int(v: Any) -> int | None:
    return v if isinstance(v, int) and not isinstance(v, bool) else None
