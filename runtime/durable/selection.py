"""``nika run FILE --task ID [--task ID…] [--with-dependents]``: which tasks a task run may touch.

A task run runs the named tasks, and takes their inputs from the completed records of their
ancestors in the journal it resumes (ADR-099 matching: definition and resolved-input hashes); an
ancestor without a matching record runs. The selection is closed upward: every task a selected task
waits for is selected too, so nothing selected ever reads a task the run did not schedule. What is
outside it is not scheduled at all, and the run's outputs are the named tasks' outputs.

A gate is never reused from a record (NEP-0013: an answer is not replayed into another run): every
``nika:prompt`` in the selection asks again, and a task run that would need a person where nobody
can answer (not a terminal) is refused before any effect.

``--task ID --item N`` re-runs iteration N of a ``for_each`` task, reusing its other iterations'
records (each matched by its own iteration hash, ADR-099 §1): the task settles again with all of
them, so what reads it sees the whole list.
"""

from __future__ import annotations

from dataclasses import dataclass

from checker.model.workflow import Agent, CompiledWorkflow, Task
from checker.rules.workflow_policy import GATE_TOOL, is_gate, is_human_gate


class SelectionRefused(Exception):
    """The task run cannot be honoured: a one-line reason."""


@dataclass(frozen=True)
class Selection:
    named: tuple[str, ...]
    tasks: frozenset[str]  # everything the run may run or reuse
    forced: frozenset[str]  # what runs whatever the journal holds: the named (and dependents), the gates
    items: dict[str, frozenset[int]]  # `--item N`: of the named for_each, only these iterations run again


def asks_a_person(task: Task) -> bool:
    """A ``nika:prompt`` task, or an agent that may call ``nika:prompt``."""
    verb = task.verb
    return is_gate(task) or (isinstance(verb, Agent) and any(t.value == GATE_TOOL for t in verb.tools))


def select(
    compiled: CompiledWorkflow,
    named: list[str],
    *,
    with_dependents: bool = False,
    interactive: bool = False,
    item: int | None = None,
) -> Selection:
    wf, graph = compiled.workflow, compiled.graph
    assert wf is not None and graph is not None
    unknown = [t for t in named if t not in wf.tasks]
    if unknown:
        raise SelectionRefused(
            f"--task `{unknown[0]}`: the workflow has no such task (its tasks: {', '.join(sorted(wf.tasks))})"
        )
    items: dict[str, frozenset[int]] = {}
    if item is not None:
        if len(set(named)) != 1 or with_dependents or wf.tasks[named[0]].for_each is None:
            raise SelectionRefused("--item N needs one --task naming a `for_each:` task (and no --with-dependents)")
        if item < 0:
            raise SelectionRefused(f"--item must be an iteration index ≥ 0, not {item}")
        items[named[0]] = frozenset({item})
    runs = set(named)
    if with_dependents:
        for t in named:
            runs |= graph.downstream(t)
    tasks = set(runs)
    for t in runs:
        tasks |= {a for a in graph.upstream(t) if a in wf.tasks}
    gates = {t for t in tasks if asks_a_person(wf.tasks[t])}
    unanswerable = sorted(t for t in gates if is_human_gate(wf.tasks[t]))  # a default answers the others
    if unanswerable and not interactive:
        raise SelectionRefused(
            f"--task: `{unanswerable[0]}` asks a person, and a task run asks every gate again (an answer is never "
            "reused from a record); nobody can answer here (not a terminal): run it from a terminal"
        )
    order = tuple(dict.fromkeys(named))
    forced = (runs - set(items)) | gates
    return Selection(order, frozenset(tasks), frozenset(forced), items)
