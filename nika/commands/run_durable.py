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
        help="re-run, skipping every task the trace's run history holds a matching completed record of "
        "(ADR-099); `latest`: the journal `nika trace ls` marks for this workflow",
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


def options_for(
    d: Durable, compiled: Any, model: str | None = None, trace_dir: Any = None, *, interactive: bool = False
) -> dict[str, Any]:
    """The ``Options`` fields the flags give; raises :class:`DurableRefused` (exit 2, before any
    effect). ``--resume latest`` is the journal ``nika trace ls`` marks for this workflow. Every
    ``--answer`` is judged (its type against the prompt's mode and choices, its ticket) and *spent*
    here, before the run, once the history is locked: a ticket another answer spent, in any
    process, is refused; an expired one re-prompts (the run pauses again with a new ticket)."""
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
    from pathlib import Path

    from runtime.durable.resume_index import ResumeLocked, ResumeRefused, open_resume  # only for a resume

    where = Path(trace_dir) if trace_dir is not None else Path(".nika/traces")
    trace = _latest(compiled, where) if d.resume == "latest" else d.resume
    try:
        index = open_resume(trace, compiled, d.from_task, answers, model, trace_dir=where, lock=False)
    except ResumeRefused as exc:
        raise DurableRefused(str(exc)) from None
    for tid, value in answers.items():  # typed and validated before anything runs
        from runtime.durable.answers import problem, valid_values

        for prompt in index.paused.get(tid) or []:
            if (why := problem(prompt, value)) is not None:
                raise DurableRefused(
                    f"--answer {tid}={_shown(value)}: `{tid}` is a {prompt.get('mode')} prompt, which takes "
                    f"{valid_values(prompt)} ({why})"
                )
    try:
        index.lock()
    except ResumeLocked as exc:
        raise DurableRefused(_revoke_while_held(index, answers, str(exc))) from None
    try:
        claims = _spend(index, answers)
    except DurableRefused:
        index.release()
        raise
    extra: dict[str, Any] = {"resume": index, "answers": answers, "claims": claims, "max_cost_usd": d.max_cost_usd}
    if selection is not None:
        index.forced = index.forced | selection.forced
        index.forced_items = selection.items
        extra |= {"select": selection.tasks, "named": selection.named}
    return extra


def _latest(compiled: Any, trace_dir: Any) -> str:
    """``--resume latest``: this workflow's resume candidate (``nika trace ls`` marks it)."""
    from runtime.journal.history import candidates
    from runtime.journal.retention import read_all

    views = read_all(trace_dir)
    picked = candidates(views)
    mine = [v.path for v in views if v.run_id in picked and v.workflow == compiled.workflow.id]
    found = mine[-1] if mine else None
    if found is None:
        raise DurableRefused(f"--resume latest: no journal of workflow `{compiled.workflow.id}` in {trace_dir}")
    return str(found)


def _spend(index: Any, answers: dict[str, Any]) -> dict[str, Any]:
    """Claim every answer's tickets (``runtime.durable.answers``): the claims, by ticket digest."""
    import os

    from runtime.durable.answers import answer

    claims: dict[str, Any] = {}
    for tid, value in answers.items():
        for got in answer(index, tid, value, by=f"nika run --answer (pid {os.getpid()})"):
            if got.ok and got.claim is not None:
                claims[got.claim.digest] = got.claim
                if got.status == "revoked":
                    index.notes.append(got.message)
            elif got.status == "expired":
                index.notes.append(f"--answer {tid}: {got.message}")
            elif got.status == "already_claimed" and got.claim is not None:
                raise DurableRefused(
                    f"--answer {tid}={_shown(value)}: {got.message}; resume without --answer {tid} to go on "
                    "under the answer that spent it"
                )
            else:
                raise DurableRefused(f"--answer {tid}={_shown(value)}: {got.message}")
    return claims


def _revoke_while_held(index: Any, answers: dict[str, Any], held: str) -> str:
    """Another run holds the history: a deny that revokes a claimed allow still lands (NEP-0013 §5:
    that run's gated task then does not start); anything else waits."""
    import os

    from runtime.durable.answers import answer
    from runtime.durable.ticket import decision_of, read_claim

    said = []
    for tid, value in answers.items():
        allows = [
            p
            for p in index.paused.get(tid) or []
            if isinstance(p.get("ticket"), dict)
            and (c := read_claim(index.claims_dir(p), str(p["ticket"].get("digest")))) is not None
            and c.decision == "allow"
        ]
        if decision_of(value) != "deny" or not allows:
            continue
        for got in answer(index, tid, value, by=f"nika run --answer (pid {os.getpid()})"):
            said.append(got.message)
    return "; ".join([*said, held]) if said else held


def _shown(value: Any) -> str:
    import json

    return json.dumps(value, ensure_ascii=False, default=str)


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
