"""The durable side of ``nika run``: ``--resume TRACE`` / ``--from TASK`` (ADR-099), ``--answer
TASK=VALUE`` for a paused prompt (the ADR-099 rider, NEP-0013), ``--max-cost-usd X`` (a run cap), and
the person a ``nika:prompt`` asks on a TTY (``rich`` prompts)."""

from __future__ import annotations

import argparse
import math
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

PAUSED_EXIT = 4


def add_arguments(r: argparse.ArgumentParser) -> None:
    r.add_argument(
        "--resume",
        metavar="TRACE",
        help="re-run, skipping every task the trace holds a matching completed record of (ADR-099)",
    )
    r.add_argument(
        "--task",
        action="append",
        default=[],
        dest="tasks",
        metavar="ID",
        help="with --resume: run only this task (repeatable), reusing its ancestors' records and running those "
        "without one",
    )
    r.add_argument("--with-dependents", action="store_true", help="with --task: also run what depends on it")
    r.add_argument(
        "--item", type=int, metavar="N", help="with --task naming a for_each task: re-run only its iteration N"
    )
    r.add_argument("--from", dest="from_task", metavar="TASK", help="with --resume: re-run TASK and its dependents")
    r.add_argument(
        "--answer",
        action="append",
        default=[],
        metavar="TASK=VALUE",
        help="with --resume: answer the prompt the run paused on (JSON when it parses)",
    )
    r.add_argument(
        "--max-cost-usd",
        type=float,
        metavar="X",
        help="refuse any model call that could take the run's spend over X (priced by NIKA_PRICES)",
    )


@dataclass
class Durable:
    resume: str | None = None
    from_task: str | None = None
    answers: list[str] = field(default_factory=list)
    max_cost_usd: float | None = None
    tasks: list[str] = field(default_factory=list)  # `--task ID`: a task run (runtime.durable.selection)
    with_dependents: bool = False
    item: int | None = None

    @classmethod
    def of(cls, args: argparse.Namespace) -> Durable:
        return cls(
            args.resume,
            args.from_task,
            list(args.answer or []),
            args.max_cost_usd,
            list(getattr(args, "tasks", None) or []),
            bool(getattr(args, "with_dependents", False)),
            getattr(args, "item", None),
        )


class DurableRefused(Exception):
    """A one-line reason the durable flags cannot be honoured (refused before any effect)."""


def options_for(d: Durable, compiled: Any, model: str | None = None, *, interactive: bool = False) -> dict[str, Any]:
    """The ``Options`` fields the flags give; raises :class:`DurableRefused`."""
    if d.max_cost_usd is not None and (not math.isfinite(d.max_cost_usd) or d.max_cost_usd < 0):
        raise DurableRefused(f"--max-cost-usd must be a non-negative number, not {d.max_cost_usd}")
    answers = parse_answers(d.answers)
    if (d.with_dependents or d.item is not None) and not d.tasks:
        raise DurableRefused(f"{'--with-dependents' if d.with_dependents else '--item'} needs --task ID")
    if d.resume is None:
        if d.tasks:  # the default record source is the workflow's run history: one chain of runs, not built yet
            raise DurableRefused(
                "--task needs --resume TRACE (the journal whose records it reuses); taking them from the latest "
                "run history of the workflow by default is not built yet"
            )
        if d.from_task is not None or answers:
            raise DurableRefused("--from and --answer need --resume TRACE (the run they continue)")
        return {"max_cost_usd": d.max_cost_usd}
    if d.tasks and d.from_task is not None:
        raise DurableRefused("--task and --from do not combine: --task ID --with-dependents is --from ID for one task")
    selection = None
    if d.tasks:  # refused before the journal is opened (and locked)
        from runtime.durable.selection import SelectionRefused, select

        try:
            selection = select(
                compiled, d.tasks, with_dependents=d.with_dependents, interactive=interactive, item=d.item
            )
        except SelectionRefused as exc:
            raise DurableRefused(str(exc)) from None
    from runtime.durable.resume_index import ResumeRefused, open_resume  # the journal reader, only for a resume

    try:
        index = open_resume(d.resume, compiled, d.from_task, answers, model)
    except ResumeRefused as exc:
        raise DurableRefused(str(exc)) from None
    extra: dict[str, Any] = {"resume": index, "answers": answers, "max_cost_usd": d.max_cost_usd}
    if selection is not None:
        index.forced = index.forced | selection.forced
        index.forced_items = selection.items
        extra |= {"select": selection.tasks, "named": selection.named}
    return extra


def parse_answers(pairs: list[str]) -> dict[str, Any]:
    from runtime.engine.inputs import assignment  # parsed as `--var` is

    out: dict[str, Any] = {}
    for pair in pairs:
        got = assignment(pair)
        if got is None:
            raise DurableRefused(f"--answer `{pair}`: expected TASK=VALUE")
        out[got[0]] = got[1]
    return out


def tty_prompter(stream: Any) -> Callable[[dict[str, Any]], Any]:
    """Ask a person on the terminal (confirm / input / choice), with ``rich`` prompts."""

    def ask(request: dict[str, Any]) -> Any:
        from rich.console import Console
        from rich.prompt import Confirm, Prompt

        console = Console(file=stream)
        message = f"[bold]{request.get('task')}[/bold] · {request.get('message') or 'answer'}"
        default = request.get("default")
        mode = request.get("mode")
        if mode == "confirm":
            return Confirm.ask(message, console=console, default=bool(default) if default is not None else False)
        if mode == "choice":
            choices = list(request.get("choices") or [])
            by_text = {str(c): c for c in choices}
            d = str(default) if default is not None else None
            picked = Prompt.ask(message, console=console, choices=list(by_text), default=d)
            return by_text[picked]
        return Prompt.ask(message, console=console, default=default)

    return ask
