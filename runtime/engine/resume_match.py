"""Where a run meets ``--resume`` (ADR-099): every task is hashed before it starts; under a resume a
task whose hashes match a completed record is rehydrated instead of run, and says so loudly
(``task_cache_hit``, in the console and in the new trace, which carries the record forward so the
new trace can itself be resumed). ``for_each`` iterations are checkpointed and matched one by one.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any, Protocol

from checker.core.vocab import Status
from checker.model.workflow import Task
from runtime.engine.events import note
from runtime.engine.records import Outcome, TaskRecord, compact
from runtime.errors import TaskError
from runtime.journal.task_hash import definition_hash, input_hash, iteration_hash
from runtime.journal.write import Fields

if TYPE_CHECKING:
    from checker.model.workflow import CompiledWorkflow
    from runtime.durable.resume_index import Hit
    from runtime.engine.options import Options
    from runtime.guard.redact import Redactor


class ResumingRun(Protocol):
    """What the resume hooks read of the run (:class:`runtime.engine.run.Run`)."""

    options: Options
    compiled: CompiledWorkflow
    base: dict[str, Any]
    task_views: dict[str, dict[str, Any]]
    records: dict[str, TaskRecord]
    redactor: Redactor

    def emit(self, kind: str, fields: Fields) -> None: ...


def hash_task(run: ResumingRun, task: Task, rec: TaskRecord) -> None:
    """The task's definition and resolved-input hashes, now that its producers have settled."""
    rec.definition_hash = definition_hash(task, run.options.model)
    rec.input_hash = input_hash(run.compiled, task.id, run.base, run.task_views)


def resumable(run: ResumingRun, rec: TaskRecord, out: str | None = None) -> bool:
    """Whether the journaled output is the output: one the redactor masked (it carries a secret) is
    not, so it is journaled without hashes and a resume runs the task again rather than rehydrate a mask.
    ``out`` is ``compact(rec.output)`` when the caller has it already."""
    if rec.status != Status.SUCCESS:
        return True
    if out is None:
        out = compact(rec.output)
    return run.redactor(out) == out


async def cache_hit(
    run: ResumingRun, task: Task, rec: TaskRecord, bind: Callable[[Task, Any], Awaitable[dict[str, Any]]]
) -> tuple[Outcome, Fields] | None:
    """The rehydrated outcome and the ``task_cache_hit`` fields, when the resumed trace matches
    (``bind`` computes the ``output:`` bindings: the dispatch's own)."""
    index = run.options.resume
    if index is None or rec.definition_hash is None or rec.input_hash is None:
        return None
    hit = index.lookup(task.id, rec.definition_hash, rec.input_hash)
    if hit is None:
        return None
    try:
        bindings = await bind(task, hit.output)
    except TaskError:  # the recorded output no longer binds: run it live rather than guess
        return None
    rec.cache_hit = True
    return Outcome(Status.SUCCESS, hit.output, bindings), [("cached_from", hit.ref)]


def iteration_key(run: ResumingRun, task: Task, index: int, item: Any) -> str | None:
    rec = run.records.get(task.id)
    if rec is None or rec.input_hash is None:
        return None
    return iteration_hash(rec.input_hash, index, item)


def cached_iteration(run: ResumingRun, task: Task, key: str | None, index: int | None = None) -> Hit | None:
    resume = run.options.resume
    rec = run.records.get(task.id)
    if resume is None or key is None or rec is None or rec.definition_hash is None:
        return None
    return resume.lookup_iteration(task.id, rec.definition_hash, key, index)


def journal_iteration(
    run: ResumingRun,
    task: Task,
    index: int,
    item: Any,
    items: int,
    out: Outcome,
    duration_ms: float,
    key: str | None = None,
    hit: Hit | None = None,
) -> None:
    """One settled iteration of a ``for_each`` (every one: success, failure, skipped, cancelled): a
    ``checkpoint_written`` frame, or ``task_cache_hit`` when it was rehydrated, carrying ``index``,
    ``items`` (the fan-out's size), an ``item`` preview, ``status``, ``duration_ms``, the error's code
    and message, and for a success a resume can skip (hashed, and not masked) its ``iteration_hash``,
    ``definition_hash`` and ``output``. :mod:`runtime.journal.iterations` reads them back."""
    from runtime.journal.iterations import preview

    rec = run.records.get(task.id)
    fields: Fields = [("task", task.id), ("index", index), ("items", items), ("item", preview(item))]
    fields += [("status", str(out.status)), ("duration_ms", duration_ms)]
    if out.error is not None:
        fields += [("error_code", out.error.code), ("message", out.error.message)]
    if out.status == Status.SUCCESS and key is not None and rec is not None:
        output = compact(out.output)
        if run.redactor(output) == output:  # a masked output is never rehydrated
            fields += [("iteration_hash", key), ("definition_hash", rec.definition_hash), ("output", output)]
    if hit is not None:
        run.emit("task_cache_hit", [*fields, ("note", note(task, run.options.model)), ("cached_from", hit.ref)])
    else:
        run.emit("checkpoint_written", fields)
