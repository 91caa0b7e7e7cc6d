"""``for_each:`` — one scope per item (03 §for_each).

The collection is evaluated once (a failure there is a boundary failure). Each iteration gets
its own scope (``item``, ``index``), its late ``with:`` bindings (those that read the locals)
and, when ``when:`` reads the locals, its own ``when:``; then the verb stage runs under the
task's ``max_parallel``. Outputs and ``output:`` bindings are gathered by index. Under
``fail_fast`` the first failure stops the others; the task's error is the lowest-indexed
failure, with every failed iteration listed in its details.
"""

from __future__ import annotations

import asyncio
from typing import Any, Protocol

from checker.core.vocab import Status
from checker.model.workflow import Task
from runtime.determinism import elapsed_ms
from runtime.engine.records import Outcome
from runtime.engine.resume_match import ResumingRun
from runtime.engine.stage import StagedRun, verb_stage
from runtime.errors import TaskError
from runtime.values import condition, materialise, reads_locals, reads_with


class FanningRun(StagedRun, ResumingRun, Protocol):
    """What a ``for_each`` task reads of the run (:class:`runtime.engine.run.Run`): the verb
    stage's needs and the resume hooks' (iterations are checkpointed and matched one by one)."""


async def for_each(run: FanningRun, task: Task, scope: dict[str, Any], with_now: dict[str, Any]) -> Outcome:
    items = _collection(task, scope)
    if isinstance(items, Outcome):
        return items
    fan = FanOut(run, task, scope, with_now, items)
    await fan.drive()
    return fan.outcome()


def _collection(task: Task, scope: dict[str, Any]) -> list[Any] | Outcome:
    """The items, or the outcome that ends the task before any iteration."""
    try:
        items = materialise(task.for_each, scope, "`for_each:`")
    except TaskError as err:
        return Outcome(Status.FAILURE, error=err)
    if not isinstance(items, list):
        kind = "null" if items is None else type(items).__name__
        err = TaskError("NIKA-VAR-006", f"`for_each:` needs an array, got {kind}", details={"for_each_kind": kind})
        return Outcome(Status.FAILURE, error=err)
    if not items:
        return Outcome(Status.SKIPPED)
    if task.when is not None and not when_each(task):
        try:
            if not condition(task.when, scope):
                return Outcome(Status.SKIPPED)
        except TaskError as err:
            return Outcome(Status.FAILURE, error=err)
    return items


def when_each(task: Task) -> bool:
    """The task's ``when:`` is judged per iteration: it reads ``item``/``index``, or a ``with:``
    binding that does (a late binding)."""
    late = {b.name for b in task.with_ if reads_locals(b.value)}
    return task.when is not None and (reads_locals(task.when) or reads_with(task.when, late))


class FanOut:
    """The iterations of one ``for_each`` task and what they gathered."""

    def __init__(self, run: FanningRun, task: Task, scope: dict[str, Any], with_now: dict[str, Any], items: list[Any]):
        self.run, self.task, self.scope, self.with_now, self.items = run, task, scope, with_now, items
        n = len(items)
        self.outputs: list[Any] = [None] * n
        self.bindings: dict[str, list[Any]] = {b.name: [None] * n for b in task.output}
        self.failures: list[tuple[int, TaskError]] = []
        self.late = [b for b in task.with_ if reads_locals(b.value)]
        self.when_each = when_each(task)
        width = 1 if run.serial else task.max_parallel  # a deterministic run: one iteration at a time, in order
        self.limit = asyncio.Semaphore(width) if width else None
        self.stop = asyncio.Event()
        self.pause: BaseException | None = None

    def _fail(self, i: int, err: TaskError) -> None:
        self.failures.append((i, err))
        if self.task.fail_fast:
            self.stop.set()

    def _iteration_scope(self, i: int, item: Any) -> dict[str, Any] | None:
        """The scope of iteration ``i`` (``None`` when its ``when:`` is false); raises a boundary error."""
        s = {**self.scope, "item": item, "index": i}
        w = dict(self.with_now)
        for b in self.late:
            w[b.name] = materialise(b.value, {**s, "with": w}, f"`with.{b.name}`")
        s["with"] = w
        if self.when_each and self.task.when is not None and not condition(self.task.when, s):
            return None
        return s

    async def one(self, i: int, item: Any) -> None:
        if self.limit is not None:
            await self.limit.acquire()
        try:
            if self.stop.is_set():
                return
            t0 = self.run.clock.monotonic()
            try:
                s = self._iteration_scope(i, item)
            except TaskError as err:
                self._fail(i, err)
                self._journal(i, item, Outcome(Status.FAILURE, error=err), t0)
                return
            if s is None:  # its `when:` is false
                self._journal(i, item, Outcome(Status.SKIPPED), t0)
                return
            try:
                out = await self._iteration(i, item, s, t0)
            except asyncio.CancelledError:  # `fail_fast` stopped it, or the run was cancelled
                self._journal(i, item, Outcome(Status.CANCELLED), t0)
                raise
            if out.status == Status.SUCCESS:
                self.outputs[i] = out.output
                n = len(self.items)
                for k, v in out.bindings.items():
                    self.bindings.setdefault(k, [None] * n)[i] = v
            elif out.status == Status.FAILURE and out.error is not None:
                self._fail(i, out.error)
        finally:
            if self.limit is not None:
                self.limit.release()

    async def _iteration(self, i: int, item: Any, s: dict[str, Any], t0: float) -> Outcome:
        """One iteration: rehydrated when a resumed trace holds it (ADR-099 §1), else run live."""
        from runtime.durable.gate import GatePause
        from runtime.engine.resume_match import cached_iteration, iteration_key
        from runtime.engine.stage import bind

        key = iteration_key(self.run, self.task, i, item)
        hit = cached_iteration(self.run, self.task, key, i)
        if hit is not None:
            out = Outcome(Status.SUCCESS, hit.output, await bind(self.task, hit.output), started=True)
        else:
            try:
                out = await verb_stage(self.run, self.task, s, iteration=i)
            except GatePause as pause:  # re-raised by outcome(): the whole task waits for the answer
                self.pause = pause
                return Outcome(Status.SKIPPED)
        self._journal(i, item, out, t0, key, hit)
        return out

    def _journal(self, i: int, item: Any, out: Outcome, t0: float, key: str | None = None, hit: Any = None) -> None:
        """The iteration's frame (:func:`runtime.engine.resume_match.journal_iteration`)."""
        from runtime.engine.resume_match import journal_iteration

        took = elapsed_ms(self.run.clock, t0)
        journal_iteration(self.run, self.task, i, item, len(self.items), out, took, key, hit)

    async def drive(self) -> None:
        """Run every iteration; under ``fail_fast`` cancel the rest once one failed."""
        jobs = [asyncio.ensure_future(self.one(i, item)) for i, item in enumerate(self.items)]
        stopper = asyncio.ensure_future(self.stop.wait())
        try:
            pending: set[asyncio.Future[Any]] = set(jobs)
            while pending:
                _done, pending = await asyncio.wait(pending | {stopper}, return_when=asyncio.FIRST_COMPLETED)
                pending.discard(stopper)
                if self.stop.is_set():
                    for j in pending:
                        j.cancel()
                    await asyncio.gather(*pending, return_exceptions=True)
                    break
        except asyncio.CancelledError:
            for j in jobs:
                j.cancel()
            await asyncio.gather(*jobs, return_exceptions=True)
            raise
        finally:
            stopper.cancel()

    def outcome(self) -> Outcome:
        if self.pause is not None:
            raise self.pause
        if not self.failures:
            return Outcome(Status.SUCCESS, self.outputs, self.bindings, started=True)
        self.failures.sort(key=lambda f: f[0])
        first_i, first = self.failures[0]
        details = dict(first.details)
        details["iterations"] = [{"index": i, "code": e.code, "message": e.message} for i, e in self.failures]
        details["failed_index"] = first_i
        err = TaskError(first.code, f"iteration {first_i}: {first.message}", first.transient, details)
        return Outcome(Status.FAILURE, error=err, started=True)
