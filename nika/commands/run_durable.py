"""The durable side of ``nika run``: ``--resume TRACE`` / ``--from TASK`` (ADR-099), ``--answer
TASK=VALUE`` for a paused prompt (the ADR-099 rider, NEP-0013), ``--max-cost-usd X`` (a run cap), and
the person a ``nika:prompt`` asks on a TTY (``rich`` prompts)."""

from __future__ import annotations

import argparse
import math
from collections.abc import Callable
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
        help="run only this task (repeatable), reusing its ancestors' records and running those without one; "
        "the records come from --resume TRACE, else from the workflow's latest run history",
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


class Durable:
    """The durable flags of one run. A plain class, not a dataclass: :mod:`dataclasses` (and the
    :mod:`inspect` it loads) would be most of what a one-task ``nika run`` imports beyond ``nika
    check``, and the command line stays standard library and ``nika`` only (docs/speed.md)."""

    __slots__ = ("answers", "from_task", "item", "max_cost_usd", "resume", "tasks", "with_dependents")

    def __init__(
        self,
        resume: str | None = None,
        from_task: str | None = None,
        answers: list[str] | None = None,
        max_cost_usd: float | None = None,
        tasks: list[str] | None = None,  # `--task ID`: a task run (runtime.durable.selection)
        with_dependents: bool = False,
        item: int | None = None,
    ) -> None:
        self.resume, self.from_task, self.max_cost_usd = resume, from_task, max_cost_usd
        self.answers = answers if answers is not None else []
        self.tasks = tasks if tasks is not None else []
        self.with_dependents, self.item = with_dependents, item

    def _values(self) -> tuple[Any, ...]:
        return tuple(getattr(self, k) for k in self.__slots__)

    def __eq__(self, other: object) -> bool:
        return other.__class__ is self.__class__ and self._values() == other._values()  # type: ignore[attr-defined]

    __hash__ = None  # type: ignore[assignment]  # mutable, as the dataclass it was

    def __repr__(self) -> str:
        return f"Durable({', '.join(f'{k}={getattr(self, k)!r}' for k in self.__slots__)})"

    def replace(self, **changes: Any) -> Durable:
        """A copy with ``changes`` (what :func:`dataclasses.replace` did)."""
        return Durable(**{**{k: getattr(self, k) for k in self.__slots__}, **changes})

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
    if d.resume is None and d.tasks:  # the records come from the workflow's latest run history, when it has one
        if _history_of(compiled, trace_dir) is not None:
            d = d.replace(resume="latest")
        else:  # no run yet: the named tasks and their ancestors all run
            return {"max_cost_usd": d.max_cost_usd, **_selected(d, compiled, interactive)}
    if d.resume is None:
        if d.from_task is not None or answers:
            raise DurableRefused("--from and --answer need --resume TRACE (the run they continue)")
        return {"max_cost_usd": d.max_cost_usd}
    if d.tasks and d.from_task is not None:
        raise DurableRefused("--task and --from do not combine: --task ID --with-dependents is --from ID for one task")
    selection = _selection(d, compiled, interactive) if d.tasks else None  # refused before the journal is opened
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


def _selection(d: Durable, compiled: Any, interactive: bool) -> Any:
    """``--task``'s selection (:mod:`runtime.durable.selection`), or the refusal."""
    from runtime.durable.selection import SelectionRefused, select

    try:
        return select(compiled, d.tasks, with_dependents=d.with_dependents, interactive=interactive, item=d.item)
    except SelectionRefused as exc:
        raise DurableRefused(str(exc)) from None


def _selected(d: Durable, compiled: Any, interactive: bool) -> dict[str, Any]:
    """The ``Options`` fields of a ``--task`` run with no records to reuse (the workflow never ran here)."""
    selection = _selection(d, compiled, interactive)
    return {"select": selection.tasks, "named": selection.named}


def _history_of(compiled: Any, trace_dir: Any) -> Any:
    """The newest journal of this workflow's latest run history in ``trace_dir``, or ``None``."""
    from pathlib import Path

    from runtime.journal.history import latest_history

    where = Path(trace_dir) if trace_dir is not None else Path(".nika/traces")
    chain = latest_history(where, compiled.workflow.id) if where.is_dir() else []
    return chain[-1] if chain else None


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
