"""``nika run FILE --resume TRACE``: the trace IS the checkpoint (ADR-099), and the run history its cache.

:func:`open_resume` reads the journal being resumed and refuses, before any effect, what must not
be resumed: an unreadable, empty or forged journal (read by the one reader, ``runtime.journal.scan``:
a journal cut short by a kill or a full disk is truncated or torn, not tampered, and resumes),
another workflow's journal, a journal of a history that already succeeded after it (exit 2, naming
the journal that did), an unknown ``--from`` task, an ``--answer`` for a task that never paused, and
a history another resume holds (an exclusive, non-blocking ``flock`` on the history's first
journal, released by the kernel however the holder ends; a run still writing that journal holds it
too).

Every journal stays one run (spec 17); a resume's journal links to the one it resumed
(``runtime.journal.history``). Before the first effect the index reads the completed records of
*every* journal of the history found in the trace folders (the one resumed, the ones it descends
from, and any later attempt): a resume killed before it re-journaled its cache hits loses nothing,
whichever journal of the history is resumed next. A journal it descends from that is missing is
said (its work runs again); one that was rewritten since it was read (its head at the frames read
differs from the pointer's) is refused, like a forged one.

The :class:`ResumeIndex` it returns answers one question per task: does the history hold a
completed record (``task_completed``, or a ``task_cache_hit`` a previous resume wrote) whose
definition hash and resolved-input hash both match the task now? ``for_each`` iterations are
matched one by one (``checkpoint_written`` frames carry them). ``--from TASK`` forces that task
and its transitive dependents to re-run. A journal written before tasks carried hashes cannot be
matched: that is said, and every task re-runs. What the index cannot see is said before the run:
a task cut off after its effect was admitted (it runs again: at-least-once), and the tasks a
journal's run reported completed after its journal could no longer be written (the infallible
rider's mark, ``runtime.journal.incomplete``: they run again).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from checker.core.records import field, record
from checker.model.workflow import CompiledWorkflow
from runtime.journal.read import parsed_field
from runtime.journal.scan import frame_fields

RESUME_FIELDS = ("definition_hash", "input_hash")
CHANGED = "the workflow file changed since this trace"
_UNPARSED = object()


class ResumeRefused(Exception):
    """The trace cannot be resumed: a one-line reason."""


class ResumeLocked(ResumeRefused):
    """Another resume holds the history (or its run still writes it): the index, unlocked, rides along."""

    def __init__(self, message: str, index: ResumeIndex) -> None:
        super().__init__(message)
        self.index = index


@record(slots=False)
class Hit:
    """A completed record the resumed task matches: its output and where it was read."""

    output: Any
    ref: dict[str, Any]


@record(frozen=False, slots=False)
class ResumeIndex:
    path: Path
    run_nonce: str | None = None
    # (task, definition hash, input hash) -> the newest completed record of the history with them
    completed: dict[tuple[str, str, str], dict[str, Any]] = field(default_factory=dict)
    latest: dict[str, dict[str, Any]] = field(default_factory=dict)  # task -> its newest completed record
    iterations: dict[tuple[str, str, str], dict[str, Any]] = field(default_factory=dict)
    # task -> the prompts it paused on, each with its ticket (one per for_each iteration that asked)
    paused: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    paused_in: dict[str, Path] = field(default_factory=dict)  # ticket digest -> the journal that paused on it
    nonces: set[str] = field(default_factory=set)  # the run nonces of the history: a ticket's scope
    history: str | None = None
    members: list[Path] = field(default_factory=list)  # the journals read, oldest first
    prologue: list[tuple[str, Any]] = field(default_factory=list)  # what the resume's own prologue carries
    approvals_used: int = 0
    depth: int = 0  # the prologue's: > 0 for a child workflow's run (resumed by its caller's resume)
    forced: frozenset[str] = frozenset()
    # `--task ID --item N` (runtime.durable.selection): these iterations run again, the task's others are reused
    forced_items: dict[str, frozenset[int]] = field(default_factory=dict)
    # a watch session's re-run (nika/commands/run_watch.py): a task that runs again forces what depends on it
    cascade: bool = False
    notes: list[str] = field(default_factory=list)
    root: Path | None = None  # the journal whose lock holds the history
    dirs: list[Path] = field(default_factory=list)  # the trace folders the history was read from
    seen: list[Path] = field(default_factory=list)  # every journal of the history there, read or not
    frames: list[dict[str, Any]] = field(default_factory=list, repr=False)  # the resumed journal's own
    _lock: Any = None

    def lookup(self, tid: str, definition: str, inputs: str) -> Hit | None:
        if tid in self.forced or tid in self.forced_items:
            return None
        rec = self.completed.get((tid, definition, inputs))
        return Hit(rec["output"], rec["ref"]) if rec is not None else None

    def lookup_iteration(self, tid: str, definition: str, iteration: str, index: int | None = None) -> Hit | None:
        if tid in self.forced or index in self.forced_items.get(tid, ()):
            return None
        rec = self.iterations.get((tid, iteration, definition))
        return Hit(rec["output"], rec["ref"]) if rec is not None else None

    def paused_prompt(self, tid: str, shown_hash: str) -> dict[str, Any] | None:
        """The prompt ``tid`` paused on for this content (else its newest, to judge a mismatch)."""
        prompts = self.paused.get(tid) or []
        same = [p for p in prompts if p.get("shown_hash") == shown_hash]
        return (same or prompts[::-1] or [None])[0]

    def claims_dir(self, prompt: dict[str, Any]) -> Path:
        """Where the claim files of ``prompt``'s ticket live: beside the journal that paused on it
        (a child's prompt: beside the child's journal)."""
        from runtime.durable.ticket import claims_dir

        child = prompt.get("child")
        if isinstance(child, dict):  # beside the innermost child journal on the way down: its gate's folder
            journals = [j for j in prompt.get("journals") or [child.get("trace")] if isinstance(j, str)]
            if journals:
                return claims_dir(self._child_dir(journals[-1]))
        ticket = prompt.get("ticket")
        digest = ticket.get("digest") if isinstance(ticket, dict) else None
        where = self.paused_in.get(digest) if isinstance(digest, str) else None
        return claims_dir((where or self.path).parent)

    def _child_dir(self, trace: str) -> Path:
        p = Path(trace)
        return p.parent if p.exists() else self.path.parent  # the traces folder moved as one

    def release(self) -> None:
        if self._lock is not None:
            self._lock.close()
            self._lock = None

    def lock(self) -> None:
        """Hold the history (raises :class:`ResumeLocked`), then make sure it is still the history
        that was read: a resume that ran meanwhile (and released the lock before this one took it)
        wrote records this index does not hold, so this resume is refused rather than redo them."""
        if self._lock is not None:
            return
        self._lock = _lock(self.root or self.path, self)
        from runtime.journal.history import Histories, members_in

        hist = Histories(members_in(self.dirs))
        known = {p.resolve() for p in [*self.seen, self.path]}
        new = [m for m in hist.members if hist.history_id(m) == self.history and m.path.resolve() not in known]
        if new:
            self.release()
            names = ", ".join(m.run_id for m in new)
            raise ResumeRefused(
                f"--resume {self.path}: another resume of this run history ran while this one opened it ({names}); "
                "resume again (`--resume latest` names the journal to resume)"
            )


def open_resume(
    trace: str,
    compiled: CompiledWorkflow,
    from_task: str | None = None,
    answers: dict[str, Any] | None = None,
    model: str | None = None,
    *,
    child: bool = False,
    trace_dir: Path | None = None,
    lock: bool = True,
) -> ResumeIndex:
    """Read, verify, match and lock ``trace``'s history for a resume of ``compiled`` (``child``: by
    the task of the run that called it, ``runtime.verbs.invoke``; ``trace_dir``: where the resume
    writes, a folder its history may also live in; ``lock=False``: the caller locks, after its own
    checks, with :meth:`ResumeIndex.lock`); raises :class:`ResumeRefused`."""
    import hashlib

    wf = compiled.workflow
    assert wf is not None and compiled.graph is not None
    index = read_history(trace, trace_dir=trace_dir, child=child, workflow=wf.id)
    frames = index.frames
    pro = frame_fields(frames[0])
    if pro.get("workflow_sha256") != hashlib.sha256(compiled.source.text.encode("utf-8")).hexdigest():
        index.notes.insert(0, _what_changed(index, compiled, model))
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
    hashed = any(all(k in r for k in RESUME_FIELDS) for r in index.latest.values())
    if not hashed and any(_kind(f) == "task_completed" for f in frames):
        index.notes.append("this trace carries no task hashes (older, or another engine): every task re-runs")
    if lock:
        index.lock()
    return index


def read_history(
    trace: str, *, trace_dir: Path | None = None, child: bool = False, workflow: str | None = None
) -> ResumeIndex:
    """The run history of the journal ``trace`` read, nothing matched against a workflow and nothing
    locked: every member's completed records and paused prompts, the history's run nonces, what the
    resume cannot see, the resume's prologue fields. Refuses (:class:`ResumeRefused`) a journal
    that cannot be trusted or resumed, another workflow's (``workflow``: the id it must be of), and
    a journal of a history that succeeded after it (``child``: that successful journal is read instead)."""
    from runtime.journal.history import Histories, Member, members_in, parent_fields

    path = Path(trace)
    s = _read(trace, path)
    frames = s.frames
    index = ResumeIndex(path, frames=frames)
    _prologue(index, trace, frames[0], workflow)
    dirs = [path.parent, *([Path(trace_dir)] if trace_dir is not None else [])]
    index.dirs = dirs
    hist = Histories(members_in(dirs))
    me = hist.find(path)
    if me is None:
        me = Member(path, frame_fields(frames[0]), frames[0].get("timestamp"))
        hist = Histories([*hist.members, me])
    done = [d for d in hist.descendants(me) if _state(d.path) == "success"]
    if done:
        newest = done[-1]
        if child:  # the caller runs again: the child's finished history answers (every task a cache hit)
            return read_history(str(newest.path), trace_dir=trace_dir, child=True, workflow=workflow)
        raise ResumeRefused(
            f"--resume {trace}: this run history already succeeded after this journal: {newest.run_id} "
            f"(attempt {newest.attempt}) resumed it and finished; resuming {path.name} again would redo its work. "
            f"Resume {newest.path} (`nika trace ls` marks it), or run afresh"
        )
    chain = hist.ancestors(me)
    _check_links(trace, [*chain, me])
    others = [m for m in hist.history(me) if m is not me and all(m is not a for a in chain)]
    index.history = hist.history_id(me)
    index.seen = [m.path for m in hist.history(me)]
    index.nonces = {m.nonce for m in [*chain, me, *others] if m.nonce}
    index.notes += _gone(hist, me, chain, path.parent)
    order = sorted([*chain, *others], key=lambda m: (m.started or 0, m.path.name))
    scans = _read_members(trace, index, order, chain, {path: s})
    for m in [*order, me]:
        got = scans.get(m.path)
        if got is None:
            continue
        index.members.append(m.path)
        for n, frame in zip(got.numbers, got.frames, strict=True):
            _fold(index, m.path, n, frame)
    _unseen(index, s, [*order, me])
    index.root = (chain[0] if chain else me).path
    index.prologue = parent_fields(index.history, me, len(frames), s.head)
    return index


def _gone(hist: Any, me: Any, chain: list[Any], folder: Path) -> list[str]:
    """A note when a journal the history links to is not there: what only it completed runs again."""
    if me.parent_name and hist.parent(me) is None:
        return [
            f"the journal this one resumed, {me.parent_name}, is not in {folder}: what only it completed runs again"
        ]
    if chain and chain[0].parent_name and hist.parent(chain[0]) is None:
        return [
            f"an earlier journal of this run history, {chain[0].parent_name}, is gone: "
            "what only it completed runs again"
        ]
    return []


def _read_members(
    trace: str, index: ResumeIndex, order: list[Any], chain: list[Any], scans: dict[Path, Any]
) -> dict[Path, Any]:
    """Every other journal of the history, read by the one reader: a forged ancestor refuses the
    resume; a forged sibling is said and not read."""
    for m in order:
        got = _read_member(m.path)
        if got is None:
            if any(m is a for a in chain):
                raise ResumeRefused(
                    f"--resume {trace}: {m.path.name}, a journal this one descends from, fails verification; "
                    "a tampered history is never resumed"
                )
            index.notes.append(f"{m.path.name}, a journal of this run history, fails verification: it is not read")
            continue
        scans[m.path] = got
    return scans


def _read(trace: str, path: Path) -> Any:
    """The resumed journal, read by the one reader: refused when there is nothing to trust in it."""
    from runtime.journal.scan import scan

    try:
        data = path.read_bytes()
    except OSError as exc:
        raise ResumeRefused(f"--resume {trace}: {(exc.strerror or str(exc)).lower()}") from None
    s = scan(data)
    if s.damage == "forged":
        first = s.problems[0] if s.problems else {"line": "?", "problem": "forged"}
        raise ResumeRefused(
            f"--resume {trace}: the journal fails verification (line {first['line']}: {first['problem']}); "
            "a tampered trace is never resumed"
        )
    if s.damage == "empty":
        raise ResumeRefused(
            f"--resume {trace}: the journal is empty (no frame was written whole: its run was killed, or could not "
            "write, before its first frame); there is nothing to resume: run the workflow afresh"
        )
    if _kind(s.frames[0]) != "workflow_started":
        raise ResumeRefused(f"--resume {trace}: the journal does not open with its prologue")
    return s


def _read_member(path: Path) -> Any:
    """Another journal of the history, read by the one reader (``None``: it cannot be trusted)."""
    from runtime.journal.scan import scan

    try:
        s = scan(path.read_bytes())
    except OSError:
        return None
    return s if s.trusted else None


def _check_links(trace: str, line: list[Any]) -> None:
    """Each journal of the line read its parent as the parent still is: the head after the frames it
    read is the one it recorded (else the parent was rewritten since)."""
    from itertools import pairwise

    from runtime.journal.scan import scan

    for parent, kid in pairwise(line):
        want, frames = kid.parent_head, kid.parent_frames
        if want is None or frames is None:
            continue  # an older journal: no pointer head to check
        try:
            got = scan(parent.path.read_bytes()).head_at(frames)
        except OSError:
            got = None
        if got != want:
            raise ResumeRefused(
                f"--resume {trace}: {parent.path.name} changed since {kid.path.name} resumed it (its head after "
                f"{frames} frames is not the one recorded); a rewritten history is never resumed"
            )


def _state(path: Path) -> str:
    from runtime.journal.find import peek_run

    try:
        return peek_run(path).state
    except OSError:
        return "unfinished"


def _prologue(index: ResumeIndex, trace: str, first: dict[str, Any], wf_id: str | None) -> None:
    pro = frame_fields(first)
    if wf_id is not None and pro.get("workflow") != wf_id:
        raise ResumeRefused(
            f"--resume {trace}: the trace is a run of workflow `{pro.get('workflow')}`, not `{wf_id}`; "
            "resume a trace of this workflow"
        )
    index.run_nonce = pro.get("run_nonce") if isinstance(pro.get("run_nonce"), str) else None
    depth = pro.get("depth")
    index.depth = depth if isinstance(depth, int) and not isinstance(depth, bool) else 0
    carried = pro.get("approvals_carried")
    index.approvals_used = carried if isinstance(carried, int) and not isinstance(carried, bool) else 0


def _fold(index: ResumeIndex, path: Path, n: int, frame: dict[str, Any]) -> None:
    kind = _kind(frame)
    f = frame_fields(frame)
    tid = f.get("task")
    if not isinstance(tid, str):
        return
    ref = {"trace": path.name, "line": n, "frame": (frame.get("id") or {}).get("uuid")}
    if kind == "task_cache_hit" and isinstance(f.get("cached_from"), dict):
        ref = f["cached_from"]  # where the work was done, not where it was carried forward
    mine = path == index.path
    if kind in ("task_completed", "task_cache_hit") and f.get("index") is None:
        if f.get("output_masked") is True:
            said = f"`{tid}` runs again: its journaled output carries a masked secret, not its value"
            if said not in index.notes:
                index.notes.append(said)
        output = _output(f)
        if all(isinstance(f.get(k), str) for k in RESUME_FIELDS) and output is not _UNPARSED:
            rec = {**{k: f[k] for k in RESUME_FIELDS}, "output": output, "ref": ref}
            index.completed[(tid, f["definition_hash"], f["input_hash"])] = rec
            index.latest[tid] = rec
    elif kind in ("checkpoint_written", "task_cache_hit") and isinstance(f.get("iteration_hash"), str):
        output = _output(f)
        if isinstance(f.get("definition_hash"), str) and output is not _UNPARSED:
            rec = {"definition_hash": f["definition_hash"], "output": output, "ref": ref}
            index.iterations[(tid, f["iteration_hash"], f["definition_hash"])] = rec
    elif kind == "workflow_paused":
        prompts = parsed_field(f.get("prompts"))
        fresh: dict[str, list[dict[str, Any]]] = {}
        for p in prompts if isinstance(prompts, list) else []:
            if isinstance(p, dict) and isinstance(p.get("task"), str):
                fresh.setdefault(p["task"], []).append(p)
        for task, ps in fresh.items():  # a later pause on a task supersedes what it asked before
            index.paused[task] = []
            for p in ps:
                _add_prompt(index, path, p)
    elif kind == "approval_decided" and f.get("decision") in ("allow", "deny") and mine:
        index.approvals_used += 1


def _add_prompt(index: ResumeIndex, path: Path, p: dict[str, Any]) -> None:
    """One prompt a journal paused on; the same ticket paused again later is the same prompt."""
    ticket = p.get("ticket")
    digest = ticket.get("digest") if isinstance(ticket, dict) else None
    prompts = index.paused.setdefault(p["task"], [])
    if isinstance(digest, str):
        prompts[:] = [q for q in prompts if (q.get("ticket") or {}).get("digest") != digest]
        index.paused_in.setdefault(digest, path)
    prompts.append(p)


def _output(f: dict[str, Any]) -> Any:
    """A record's output, parsed (``_UNPARSED``: none, or one the reader cannot rehydrate)."""
    if "output" not in f:
        return _UNPARSED
    value = f["output"]
    if isinstance(value, str):
        import json

        try:
            return json.loads(value)
        except RecursionError:
            return _UNPARSED
        except ValueError:
            return value
    return value


def _unseen(index: ResumeIndex, s: Any, members: list[Any]) -> None:
    """Say what this resume cannot see and will run again: tasks cut off after their effect was
    admitted (at-least-once), and tasks a run reported completed after its journal failed."""
    from runtime.journal.incomplete import describe, names, read_mark

    done = set(index.latest) | {t for t, _, _ in index.iterations}
    started: dict[str, bool] = {}
    for frame in s.frames if s.terminal is None else []:  # a journal that ended: nothing was cut off
        kind, f = _kind(frame), frame_fields(frame)
        tid = f.get("task")
        if not isinstance(tid, str):
            continue
        if kind == "task_started":
            started.setdefault(tid, False)
        elif kind == "permit_checked" and f.get("decision") == "allow" and tid in started:
            started[tid] = True
        elif kind in ("task_completed", "task_failed", "task_skipped", "task_cancelled", "task_cache_hit"):
            started.pop(tid, None)
    cut = sorted(t for t, admitted in started.items() if admitted and t not in done)
    if cut:
        shown = ", ".join(f"`{t}`" for t in cut)
        index.notes.append(
            f"{index.path.name} ends with {shown} cut off after its effect was admitted: it runs again, so that "
            "effect may happen twice (at-least-once for a task in flight)"
        )
    for m in members:
        mark = read_mark(m.path)
        if mark is None:
            continue
        unseen = sorted(t for t in names(mark, "completed") if t not in done)
        said = describe(mark)
        if unseen:
            shown = ", ".join(f"`{t}`" for t in unseen)
            them = "them" if len(unseen) > 1 else "it"
            index.notes.append(f"{m.path.name}: {said}. This resume cannot see {shown} and runs {them} again")
        else:
            index.notes.append(f"{m.path.name}: {said}")


def _what_changed(index: ResumeIndex, compiled: CompiledWorkflow, model: str | None) -> str:
    """Which tasks the edit touched (by definition hash): they and what they feed re-run."""
    from runtime.journal.task_hash import definition_hash

    wf = compiled.workflow
    assert wf is not None
    recorded = {t: r.get("definition_hash") for t, r in index.latest.items()}
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


def _lock(path: Path, index: ResumeIndex) -> Any:
    import fcntl

    fh = open(path, "rb")  # noqa: SIM115 - held for the run; the kernel drops the lock with the process
    try:
        fcntl.flock(fh.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        fh.close()
        raise ResumeLocked(
            f"--resume {index.path}: another `nika run --resume` of this trace is running, or the run writing "
            f"{path.name} still is (one resume of a run history at a time); wait for it to end",
            index,
        ) from None
    return fh


def _kind(frame: dict[str, Any]) -> str:
    k = frame.get("kind")
    return k if isinstance(k, str) else ""
