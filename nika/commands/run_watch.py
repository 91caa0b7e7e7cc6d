"""``nika run FILE --watch``: run, then on each save re-run what the save changed.

The session's first run is a whole run. Each later one starts when a watched file is saved (the
workflow, a child workflow it names by a literal path, a file a task reads by a literal path: what
is statically known), once ``--debounce`` milliseconds passed without another change:

1. the workflow is compiled and admitted again, as ``nika run`` does (an edit ``nika check`` refuses
   prints its findings, and the session waits for the next save);
2. the tasks the save changed are the ones whose definition hash differs from the last run's (an
   added task has none), the ones reading a saved file, and the ones calling a saved child;
3. the run resumes the session's last journal (ADR-099: every task matched by its definition and
   resolved-input hashes), with the changed tasks forced to run again, and every task that runs again
   forcing what depends on it. Everything else is reused from the journal, its effects not repeated;
4. a human gate (``nika:prompt``) is never reused when anything downstream of it may run again — a
   changed task below it, or an edit outside ``tasks:`` (inputs, permits, models): it asks again
   (NEP-0013: an approval is not replayed into a different run).

The live view is compact: one line per task or ``for_each`` iteration that ran (cache hits are
counted, not listed), then ``re-run finished: …`` with what ran and what was reused. Ctrl-C stops
the session with exit 3 (a run in progress is cancelled first: its journal ends
``workflow_cancelled``, clean).

Files are watched with ``watchfiles`` (the ``watch`` extra): the folders holding the watched files,
not recursively, with only those files let through.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TextIO

CANCELLED = 3
DEFAULT_DEBOUNCE_MS = 200
READY_MS = 100  # how long the watcher waits for an event before it yields an empty set (and is seen ready)


def load_watchfiles() -> Any:
    """:mod:`watchfiles`, or ``None`` when the ``watch`` extra is not installed."""
    try:
        import watchfiles
    except ImportError:
        return None
    return watchfiles


MISSING = "--watch needs watchfiles: pip install 'nika-tools[watch]'"


# -- what a save touches (static: the compiled model) ------------------------------------------


def watched_paths(compiled: Any, file: str) -> dict[str, set[str]]:
    """``{absolute path: {task ids}}``: the workflow file (no task: it is compiled again), each child
    workflow a task names by a literal path, and each file a task reads by a literal path."""
    from checker.core.paths import resolve_named
    from checker.model.workflow import Invoke
    from checker.parse.values import ScalarValue, TemplateValue
    from checker.rules.authority import needs_of

    wf = compiled.workflow
    out: dict[str, set[str]] = {os.path.realpath(file): set()}
    for tid, task in wf.tasks.items():
        verb = task.verb
        if (
            isinstance(verb, Invoke)
            and isinstance(verb.workflow, ScalarValue)
            and not isinstance(verb.workflow, TemplateValue)
        ):
            target = verb.workflow.value
            if isinstance(target, str) and target and not target.startswith("registry:"):
                out.setdefault(resolve_named(target, os.getcwd(), file), set()).add(tid)
        for need in needs_of(task):
            v = need.value
            literal = isinstance(v, ScalarValue) and not isinstance(v, TemplateValue) and isinstance(v.value, str)
            if need.plane == "fs.read" and need.kind == "path" and literal and "*" not in v.value:
                out.setdefault(os.path.realpath(v.value), set()).add(tid)
    return out


def definition_hashes(compiled: Any, model: str | None) -> dict[str, str]:
    from runtime.journal.task_hash import definition_hash

    return {tid: definition_hash(task, model) for tid, task in compiled.workflow.tasks.items()}


def envelope_digest(compiled: Any) -> str:
    """What the workflow says outside ``tasks:`` (inputs, permits, models, …), as one digest."""
    from runtime.journal.task_hash import digest

    body = compiled.workflow.value.to_python()
    return digest({k: v for k, v in body.items() if k != "tasks"} if isinstance(body, dict) else body)


def gate_tasks(compiled: Any) -> set[str]:
    """The tasks that ask a person (``nika:prompt``, directly or in an agent's tool list)."""
    from runtime.durable.selection import asks_a_person

    return {tid for tid, task in compiled.workflow.tasks.items() if asks_a_person(task)}


def forced_by_save(before: Snapshot, after: Snapshot, saved: set[str]) -> tuple[set[str], set[str]]:
    """``(changed, forced)``: the tasks the save changed, and every task forced to run again (what
    depends on a changed task, and the gates above anything forced or above every task when the
    envelope changed)."""
    from runtime.durable.resume_index import descendants

    changed = {t for t, h in after.hashes.items() if before.hashes.get(t) != h}
    for path in saved:
        changed |= after.paths.get(path, set()) & set(after.hashes)
    forced: set[str] = set()
    for t in changed:
        forced |= descendants(after.admitted.compiled, t)
    envelope = before.envelope != after.envelope
    for g in gate_tasks(after.admitted.compiled):
        below = descendants(after.admitted.compiled, g)
        if envelope or below & forced:
            forced.add(g)
    return changed, forced


@dataclass
class Snapshot:
    """One admitted version of the workflow: its model, hashes, watched paths and envelope."""

    admitted: Any  # nika.commands.run.Admitted: the compiled file and its bound inputs
    hashes: dict[str, str]
    paths: dict[str, set[str]]
    envelope: str


# -- the session ----------------------------------------------------------------------------


@dataclass
class Session:
    """One watch session of one workflow file (the CLI's ``--watch``; a test drives one too).

    ``steps`` is :mod:`nika.commands.run`, whose steps each cycle takes (``admit``, ``refuse``,
    ``_run``, ``EXIT``): handed in by it, so this module never imports the command that imports it."""

    file: str
    steps: Any
    var_pairs: list[str] = field(default_factory=list)
    model: str | None = None
    trace_dir: Path = Path(".nika/traces")
    max_parallel: int | None = None
    debounce_ms: int = DEFAULT_DEBOUNCE_MS
    out: TextIO = sys.stdout
    err: TextIO = sys.stderr
    stop: Any = None  # an object with ``is_set()`` (a threading.Event): ends the session (exit 3)
    interactive: bool = False
    cycles: int = 0
    last: Snapshot | None = None
    trace: str | None = None  # the session's last journal: what the next run resumes
    pending: set[str] = field(default_factory=set)  # files saved since the last admitted re-run

    def run(self, watchfiles: Any) -> int:
        """Run, then watch until Ctrl-C (or ``stop``); the exit status (3 when stopped)."""
        from nika.commands.run_console import write as _write

        status = self.cycle(set())
        if status == CANCELLED:
            return CANCELLED
        try:
            while not self._stopped():
                paths = self.watched()
                folders = sorted({os.path.dirname(p) for p in paths if os.path.isdir(os.path.dirname(p))})
                ready = False
                for changes in watchfiles.watch(
                    *folders,
                    watch_filter=lambda _change, path, keep=paths: os.path.realpath(path) in keep,
                    debounce=self.debounce_ms,
                    step=max(1, min(50, self.debounce_ms)),
                    stop_event=self.stop,
                    recursive=False,
                    rust_timeout=READY_MS,
                    yield_on_timeout=True,  # the first (empty) yield: the OS watches are in place
                ):
                    if not ready:  # said once the watches are in place: a save from now on is seen
                        ready = True
                        shown = ", ".join(self._shown(p) for p in sorted(paths))
                        _write(self.err, f"watching {shown} (Ctrl-C stops)\n")
                    if not changes:
                        continue
                    self.pending |= {os.path.realpath(p) for _, p in changes}
                    if self.cycle(set(self.pending)) == CANCELLED:
                        return CANCELLED
                    if self.watched() != paths:  # a child or a read file came or went: watch anew
                        break
                else:
                    break  # the watcher ended: stopped
        except KeyboardInterrupt:
            pass
        _write(self.err, "watch stopped\n")
        return CANCELLED

    def watched(self) -> set[str]:
        return set(self.last.paths) if self.last is not None else {os.path.realpath(self.file)}

    def _stopped(self) -> bool:
        return self.stop is not None and self.stop.is_set()

    def _shown(self, path: str) -> str:
        rel = os.path.relpath(path)
        return rel if not rel.startswith("..") else path

    def admit(self) -> Snapshot | None:
        """The workflow compiled and admitted as ``nika run`` admits it; ``None`` (said) when refused."""
        steps = self.steps
        try:
            admitted = steps.admit(self.file, self.var_pairs, self.model)
        except steps.Refused as why:
            steps.refuse(steps.Say(self.out, self.err, "text"), why)
            return None
        compiled = admitted.compiled
        return Snapshot(
            admitted,
            definition_hashes(compiled, self.model),
            watched_paths(compiled, self.file),
            envelope_digest(compiled),
        )

    def cycle(self, saved: set[str]) -> int:
        """One run of the session (the first, or after a save); its exit status."""
        from nika.commands.run_console import write as _write

        self.cycles += 1
        first = self.last is None
        if not first:
            names = ", ".join(self._shown(p) for p in sorted(saved)) or "a watched file"
            _write(self.err, f"\n{names} changed\n")
        snap = self.admit()
        if snap is None:
            _write(self.err, "re-run refused: fix the file and save again\n" if not first else "")
            return 2
        self.pending = set()
        resume = None
        if not first and self.trace is not None and self.last is not None:
            changed, forced = forced_by_save(self.last, snap, saved)
            resume = self._resume(snap, forced)
            what = ", ".join(f"`{t}`" for t in sorted(changed)) or "no task"
            _write(self.err, f"changed: {what}; re-running it and what depends on it, reusing the rest\n")
        result = self._execute(snap, resume)
        self.last = snap
        if result.trace is not None:
            self.trace = result.trace
        ran = [t for t, r in result.tasks.items() if r.status != "pending" and not r.cache_hit]
        reused = [t for t, r in result.tasks.items() if r.cache_hit]
        label = "run finished" if first else "re-run finished"
        line = f"{label}: {result.workflow_state} · ran {', '.join(ran) or 'nothing'}"
        line += f" · reused {', '.join(reused)}" if reused else ""
        line += f" · trace {result.trace}" if result.trace else ""
        report = result.report()
        _write(self.out, json.dumps(report["outputs"], indent=2, ensure_ascii=False, default=str) + "\n")
        _write(self.err, line + "\n")
        for note in [result.trace_error]:
            if note:
                _write(self.err, f"nika run: note: {note}\n")
        return self.steps.EXIT[result.workflow_state]

    def _resume(self, snap: Snapshot, forced: set[str]) -> Any:
        """The session's last journal opened for this run (``None``, said, when it cannot be)."""
        from nika.commands.run_console import write as _write
        from runtime.durable.resume_index import ResumeRefused, open_resume

        assert self.trace is not None
        try:
            index = open_resume(self.trace, snap.admitted.compiled, None, {}, self.model)
        except ResumeRefused as exc:
            _write(self.err, f"nika run: note: every task runs again: {exc}\n")
            return None
        index.forced = frozenset(forced)
        index.cascade = True
        index.notes = []  # the session says what changed itself
        return index

    def _execute(self, snap: Snapshot, resume: Any) -> Any:
        import asyncio

        from runtime.engine.options import DEFAULT_MAX_PARALLEL, Options

        options = Options(
            max_parallel=self.max_parallel or DEFAULT_MAX_PARALLEL,
            model=self.model,
            trace_dir=self.trace_dir,
            interactive=self.interactive,
            on_event=compact_view(self.err),
            resume=resume,
        )
        if self.interactive:
            from nika.commands.run_durable import tty_prompter

            options.prompter = tty_prompter(self.err)
        box: list[Any] = []
        try:
            asyncio.run(self.steps._run(snap.admitted, options, Path.cwd(), box))
        finally:
            if resume is not None:
                resume.release()
        return box[0]


def compact_view(err: TextIO) -> Callable[[dict[str, Any]], None]:
    """The watch session's live view: a line per task or iteration that ran; cache hits not listed."""
    from nika.commands.run_console import write as _write
    from nika.output.run_text import event_line

    shown = {"task.completed", "task.failed", "task.skipped", "task.cancelled", "workflow.paused", "task.retrying"}

    def view(event: dict[str, Any]) -> None:
        t = event.get("type")
        iteration = t == "checkpoint.written" and isinstance(event.get("index"), int) and event.get("status")
        if t in shown or iteration:
            line = event_line(event)
            if line is not None:
                _write(err, line + "\n")

    return view


def watch_run(file: str, steps: Any, *, debounce_ms: int | None, stop: Any = None, **session: Any) -> int:
    """``nika run FILE --watch``: the session, or 1 with a line when watchfiles is missing."""
    from nika.commands.run_console import is_tty as _is_tty
    from nika.commands.run_console import write as _write

    watchfiles = load_watchfiles()
    err = session.get("err") or sys.stderr
    if watchfiles is None:
        _write(err, f"nika run: {MISSING}\n")
        return 1
    if debounce_ms is not None and debounce_ms < 0:
        _write(err, f"nika run: --debounce must be a number of milliseconds ≥ 0, not {debounce_ms}\n")
        return 1
    interactive = _is_tty(sys.stdin) and _is_tty(err)
    s = Session(
        file, steps, debounce_ms=DEFAULT_DEBOUNCE_MS if debounce_ms is None else debounce_ms, stop=stop, **session
    )
    s.interactive = interactive and s.err is sys.stderr
    return s.run(watchfiles)


# flags a watch session does not take: it owns the resume (its own last journal) and prints its own view
EXCLUSIVE = (
    ("watch", "--watch"),
    ("dry_run", "--dry-run"),
    ("resume", "--resume"),
    ("from_task", "--from"),
    ("answer", "--answer"),
    ("tasks", "--task"),
    ("events", "--events"),
    ("executor", "--executor"),
)


def watch_command(args: Any, steps: Any) -> int:
    """``nika run FILE --watch [--debounce MS]`` from the parsed command line (``steps``: :mod:`nika.commands.run`)."""
    from nika.commands.run_console import write as _write

    if not args.watch:
        _write(sys.stderr, "nika run: --debounce needs --watch\n")
        return 1
    taken = [flag for attr, flag in EXCLUSIVE[1:] if getattr(args, attr, None)]
    if args.output_format == "json":
        taken.append("--format json")
    if taken:
        _write(sys.stderr, f"nika run: --watch does not combine with {', '.join(taken)}\n")
        return 1
    return watch_run(
        args.file,
        steps,
        debounce_ms=args.debounce,
        var_pairs=list(args.var or []),
        model=args.model,
        trace_dir=Path(args.trace_dir) if args.trace_dir else Path(".nika/traces"),
        max_parallel=args.max_parallel,
    )
