"""``nika run FILE --resume TRACE``: the trace IS the checkpoint (ADR-099).

:func:`open_resume` reads the journal being resumed and refuses, before any effect, what must not
be resumed: an unreadable or forged journal (it is verified first; a journal cut short by a kill
is truncated, not tampered, and resumes), another workflow's journal, an unknown ``--from`` task,
an ``--answer`` for a task that never paused, and a trace another resume holds (an exclusive,
non-blocking ``flock`` on the trace, released by the kernel however the holder ends).

The :class:`ResumeIndex` it returns answers one question per task: does the journal hold a
completed record (``task_completed``, or a ``task_cache_hit`` a previous resume wrote) whose
definition hash and resolved-input hash both match the task now? ``for_each`` iterations are
matched one by one (``checkpoint_written`` frames carry them). ``--from TASK`` forces that task
and its transitive dependents to re-run. A journal written before tasks carried hashes cannot be
matched: that is said, and every task re-runs.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from checker.model.workflow import CompiledWorkflow
from runtime.journal.read import parsed_field

RESUME_FIELDS = ("definition_hash", "input_hash")
CHANGED = "the workflow file changed since this trace"


class ResumeRefused(Exception):
    """The trace cannot be resumed: a one-line reason."""


@dataclass(frozen=True)
class Hit:
    """A completed record the resumed task matches: its output and where it was read."""

    output: Any
    ref: dict[str, Any]


@dataclass
class ResumeIndex:
    path: Path
    run_nonce: str | None = None
    completed: dict[str, dict[str, Any]] = field(default_factory=dict)
    iterations: dict[tuple[str, str], dict[str, Any]] = field(default_factory=dict)
    # task -> the prompts it paused on, each with its ticket (one per for_each iteration that asked)
    paused: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    approvals_used: int = 0
    depth: int = 0  # the prologue's: > 0 for a child workflow's run (resumed by its caller's resume)
    forced: frozenset[str] = frozenset()
    # `--task ID --item N` (runtime.durable.selection): these iterations run again, the task's others are reused
    forced_items: dict[str, frozenset[int]] = field(default_factory=dict)
    # a watch session's re-run (nika/commands/run_watch.py): a task that runs again forces what depends on it
    cascade: bool = False
    notes: list[str] = field(default_factory=list)
    _lock: Any = None

    def lookup(self, tid: str, definition: str, inputs: str) -> Hit | None:
        if tid in self.forced or tid in self.forced_items:
            return None
        rec = self.completed.get(tid)
        if rec is None or rec.get("definition_hash") != definition or rec.get("input_hash") != inputs:
            return None
        return Hit(rec["output"], rec["ref"])

    def lookup_iteration(self, tid: str, definition: str, iteration: str, index: int | None = None) -> Hit | None:
        if tid in self.forced or index in self.forced_items.get(tid, ()):
            return None
        rec = self.iterations.get((tid, iteration))
        if rec is None or rec.get("definition_hash") != definition:
            return None
        return Hit(rec["output"], rec["ref"])

    def paused_prompt(self, tid: str, shown_hash: str) -> dict[str, Any] | None:
        """The prompt ``tid`` paused on for this content (else its first, to judge a mismatch)."""
        prompts = self.paused.get(tid) or []
        same = [p for p in prompts if p.get("shown_hash") == shown_hash]
        return (same or prompts or [None])[0]

    def release(self) -> None:
        if self._lock is not None:
            self._lock.close()
            self._lock = None


def open_resume(
    trace: str,
    compiled: CompiledWorkflow,
    from_task: str | None = None,
    answers: dict[str, Any] | None = None,
    model: str | None = None,
    *,
    child: bool = False,
) -> ResumeIndex:
    """Read, verify, match and lock ``trace`` for a resume of ``compiled`` (``child``: by the task of
    the run that called it, ``runtime.verbs.invoke``); raises :class:`ResumeRefused`."""
    path = Path(trace)
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise ResumeRefused(f"--resume {trace}: {(exc.strerror or str(exc)).lower()}") from None
    frames = _verified_frames(trace, data)
    wf = compiled.workflow
    assert wf is not None and compiled.graph is not None
    index = ResumeIndex(path)
    _prologue(index, trace, frames[0], wf.id, compiled.source.text)
    for n, frame in enumerate(frames, 1):
        _fold(index, path, n, frame)
    if index.notes and index.notes[0].startswith(CHANGED):
        index.notes[0] = _what_changed(index, compiled, model)
    if from_task is not None:
        if from_task not in wf.tasks:
            known = ", ".join(sorted(wf.tasks))
            raise ResumeRefused(f"--from `{from_task}`: the workflow has no such task (its tasks: {known})")
        index.forced = frozenset(descendants(compiled, from_task))
    if index.paused and index.depth > 0 and not child:  # its caller resumes it, or its effects could run twice
        raise ResumeRefused(
            f"--resume {trace}: this journal is a child workflow's run paused on a prompt; resume the journal of "
            f"the run that called it, with --answer CALLER_TASK/{min(index.paused)}=VALUE"
        )
    for tid in answers or {}:
        if tid not in index.paused:
            where = ", ".join(sorted(index.paused)) or "none"
            raise ResumeRefused(f"--answer {tid}=…: the trace holds no paused prompt for `{tid}` (paused: {where})")
    hashed = any(all(k in r for k in RESUME_FIELDS) for r in index.completed.values())
    if not hashed and any(_kind(f) == "task_completed" for f in frames):
        index.notes.append("this trace carries no task hashes (older, or another engine): every task re-runs")
    index._lock = _lock(path)
    return index


def _verified_frames(trace: str, data: bytes) -> list[dict[str, Any]]:
    from runtime.journal.read import read_frame
    from runtime.journal.write import verify

    if data and not data.endswith(b"\n"):  # a kill mid-line leaves a torn last line: truncation, not tampering
        data = data[: data.rfind(b"\n") + 1]
    verdict = verify(data)
    if verdict["verdict"] == "forged":
        first = verdict["problems"][0] if verdict["problems"] else {"line": "?", "problem": "forged"}
        raise ResumeRefused(
            f"--resume {trace}: the journal fails verification (line {first['line']}: {first['problem']}); "
            "a tampered trace is never resumed"
        )
    frames = [frame for line in data.split(b"\n") if line and (frame := read_frame(line)[0]) is not None]
    if not frames or _kind(frames[0]) != "workflow_started":
        raise ResumeRefused(f"--resume {trace}: the journal does not open with its prologue")
    return frames


def _prologue(index: ResumeIndex, trace: str, first: dict[str, Any], wf_id: str, source: str) -> None:
    import hashlib

    pro = _fields(first)
    if pro.get("workflow") != wf_id:
        raise ResumeRefused(
            f"--resume {trace}: the trace is a run of workflow `{pro.get('workflow')}`, not `{wf_id}`; "
            "resume a trace of this workflow"
        )
    index.run_nonce = pro.get("run_nonce") if isinstance(pro.get("run_nonce"), str) else None
    depth = pro.get("depth")
    index.depth = depth if isinstance(depth, int) and not isinstance(depth, bool) else 0
    carried = pro.get("approvals_carried")
    index.approvals_used = carried if isinstance(carried, int) and not isinstance(carried, bool) else 0
    if pro.get("workflow_sha256") != hashlib.sha256(source.encode("utf-8")).hexdigest():
        index.notes.append(CHANGED)


def _fold(index: ResumeIndex, path: Path, n: int, frame: dict[str, Any]) -> None:
    kind = _kind(frame)
    f = _fields(frame)
    tid = f.get("task")
    if not isinstance(tid, str):
        return
    ref = {"trace": path.name, "line": n, "frame": (frame.get("id") or {}).get("uuid")}
    if kind in ("task_completed", "task_cache_hit") and f.get("index") is None:
        if f.get("output_masked") is True:
            index.notes.append(f"`{tid}` runs again: its journaled output carries a masked secret, not its value")
        if all(isinstance(f.get(k), str) for k in RESUME_FIELDS) and "output" in f:
            index.completed[tid] = {**{k: f[k] for k in RESUME_FIELDS}, "output": parsed_field(f["output"]), "ref": ref}
    elif kind in ("checkpoint_written", "task_cache_hit") and isinstance(f.get("iteration_hash"), str):
        if isinstance(f.get("definition_hash"), str) and "output" in f:
            rec = {"definition_hash": f["definition_hash"], "output": parsed_field(f["output"]), "ref": ref}
            index.iterations[(tid, f["iteration_hash"])] = rec
    elif kind == "workflow_paused":
        prompts = parsed_field(f.get("prompts"))
        for p in prompts if isinstance(prompts, list) else []:
            if isinstance(p, dict) and isinstance(p.get("task"), str):
                index.paused.setdefault(p["task"], []).append(p)
    elif kind == "approval_decided" and f.get("decision") in ("allow", "deny"):
        index.approvals_used += 1


def _what_changed(index: ResumeIndex, compiled: CompiledWorkflow, model: str | None) -> str:
    """Which tasks the edit touched (by definition hash): they and what they feed re-run."""
    from runtime.journal.task_hash import definition_hash

    wf = compiled.workflow
    assert wf is not None
    recorded = {t: r.get("definition_hash") for t, r in index.completed.items()}
    edited = [t for t, task in wf.tasks.items() if t in recorded and recorded[t] != definition_hash(task, model)]
    gone = sorted(set(recorded) - set(wf.tasks))
    parts = [f"edited: {', '.join(f'`{t}`' for t in edited)} (they re-run)" if edited else "no completed task edited"]
    if gone:
        parts.append(f"no longer in the workflow: {', '.join(f'`{t}`' for t in gone)}")
    return f"{CHANGED}; " + "; ".join(parts)


def descendants(compiled: CompiledWorkflow, tid: str) -> set[str]:
    graph = compiled.graph
    assert graph is not None
    seen, todo = {tid}, [tid]
    while todo:
        for e in graph.outgoing(todo.pop()):
            if e.consumer not in seen:
                seen.add(e.consumer)
                todo.append(e.consumer)
    return seen


def _lock(path: Path) -> Any:
    import fcntl

    fh = open(path, "rb")  # noqa: SIM115 - held for the run; the kernel drops the lock with the process
    try:
        fcntl.flock(fh.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        fh.close()
        raise ResumeRefused(
            f"--resume {path}: another `nika run --resume` of this trace is running; wait for it to end"
        ) from None
    return fh


def _kind(frame: dict[str, Any]) -> str:
    k = frame.get("kind")
    return k if isinstance(k, str) else ""


def _fields(frame: dict[str, Any]) -> dict[str, Any]:
    from runtime.journal.write import _fields as fields_of

    return fields_of(frame)
