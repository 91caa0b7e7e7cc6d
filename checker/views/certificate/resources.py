"""Worst-case counts of task runs, model calls and process/tool calls."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, NamedTuple

from checker.model.workflow import Agent, Infer, Workflow
from checker.views.certificate.static_values import attempts_of, item_count, parts_of


class Resources(NamedTuple):
    """Worst-case counts (``None`` when only the run knows): task runs (attempts × items, plus
    each cleanup step), model calls (an agent counts its turn budget) and process/tool calls
    (unknown as soon as an agent holds tools: one turn may call several)."""

    task_runs: int | None
    model_calls: int | None
    effect_calls: int | None

    def to_json(self) -> dict[str, Any]:
        return {"task_runs": self.task_runs, "model_calls": self.model_calls, "effect_calls": self.effect_calls}


def resources_of(wf: Workflow, consts: Mapping[str, Any]) -> Resources:
    task_runs: int | None = 0
    model_calls: int | None = 0
    effect_calls: int | None = 0

    def add(total: int | None, n: int | None) -> int | None:
        return None if total is None or n is None else total + n

    for task in wf.tasks.values():
        items = item_count(consts, task)
        for _part, verb, once in parts_of(task):
            runs = 1 if once else (None if items is None else attempts_of(task) * items)
            task_runs = add(task_runs, runs)
            if isinstance(verb, Infer):
                model_calls = add(model_calls, runs)
            elif isinstance(verb, Agent):
                turns = verb.turn_budget
                model_calls = add(model_calls, None if runs is None or turns is None else runs * turns)
                if verb.tools:
                    effect_calls = None
            else:
                effect_calls = add(effect_calls, runs)
    return Resources(task_runs, model_calls, effect_calls)
