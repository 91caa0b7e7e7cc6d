"""The determinism claim (01 §determinism, NEP-0010): ``run: { entropy: none }`` says the run
consumes no randomness, so a structural randomness source the body consumes contradicts it —
NIKA-PARSE-028 at the source: a retry that jitters its backoff (``jitter:`` defaults to true;
live when the retry can retry at all with a non-zero backoff) and a call of ``nika:uuid``. A
seeded run (``entropy: { seeded: N }``) may use both: the seed makes them reproducible.
"""

from __future__ import annotations

from collections.abc import Iterator

from checker.core.codes import report
from checker.core.diagnostics import Diagnostic
from checker.model.workflow import Invoke, Task
from checker.parse.values import MapValue
from checker.rules.support.context import RuleContext, task_verbs

UUID = "nika:uuid"


def _jitters(task: Task) -> bool:
    r = task.retry
    return r is not None and r.jitter and r.max_attempts > 1 and r.backoff_ms > 0


def check_entropy_claim(ctx: RuleContext) -> Iterator[Diagnostic]:
    run = ctx.workflow.run
    if run is None or run.entropy != "none":
        return
    for task in ctx.workflow.tasks.values():
        if _jitters(task):
            block = task.value.get("retry")
            jitter = block.entry("jitter") if isinstance(block, MapValue) else None
            yield report(
                "NIKA-PARSE-028",
                jitter.key.span if jitter is not None else task.retry.span,  # type: ignore[union-attr]
                f"`entropy: none` claims no randomness, but the retry of `{task.id}` jitters its backoff"
                + ("" if jitter is not None else " (`jitter:` defaults to true)"),
                "Set `jitter: false` on this retry, or declare `entropy: { seeded: N }` to make it reproducible.",
                task=task.id,
            )
        for verb in task_verbs(task):
            if isinstance(verb, Invoke) and verb.tool == UUID:
                yield report(
                    "NIKA-PARSE-028",
                    verb.tool_value.span if verb.tool_value is not None else verb.span,
                    f"`entropy: none` claims no randomness, but `{task.id}` draws a random id with `{UUID}`",
                    "Declare `entropy: { seeded: N }` (the ids then follow the seed), or pass the id in as an input.",
                    task=task.id,
                )
