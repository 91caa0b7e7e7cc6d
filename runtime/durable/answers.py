"""Answers to the prompts a run history paused on: judged and spent before a resume runs anything.

:func:`answer` is the one way an answer is given, by ``nika run --resume --answer`` and by a server
alike: plain data in (the history's index, the task, the value, optionally the shown hash the
person saw), a typed :class:`~runtime.durable.ticket.Answer` per ticket out, nothing printed, no
exception for a refusal. For each prompt the history paused on at that task it checks

1. the value against the prompt's mode and choices (``invalid_choice``: a confirm takes ``true`` or
   ``false``, a choice one of its choices, an input a string) — the builtin's own rule;
2. the ticket: sealed and minted for a run of this history and this step (``refused``), for the
   content the person saw when the caller says what that was (``hash_mismatch``), inside its TTL
   (``expired``: the run pauses again with a new ticket, NEP-0013 §2);
3. and spends it (:func:`runtime.durable.ticket.claim`): ``claimed``; ``revoked`` (a deny that
   revokes a claimed allow before its gated action started); ``already_claimed`` (another answer
   spent it, in any process: a ticket is spent once; a deny is final); ``too_late`` (a revocation
   after the gated action started, NEP-0013 §5).

A prompt of a child workflow (``TASK/CHILD_TASK``) is judged on what its caller's journal carries
(its ticket, copied from the child's pause); the child's own gate checks the rest at run time.
:func:`answer_journal` does the same from a journal path alone (a server has no compiled workflow).
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from runtime.durable import ticket as tickets
from runtime.durable.ticket import Answer

if TYPE_CHECKING:
    from runtime.durable.resume_index import ResumeIndex


def problem(prompt: dict[str, Any], value: Any) -> str | None:
    """Why ``value`` cannot answer ``prompt`` (its mode and choices), or ``None``."""
    from runtime.builtins.core import answer_problem

    return answer_problem(prompt.get("mode"), value, prompt.get("choices"))


def valid_values(prompt: dict[str, Any]) -> str:
    """The answers ``prompt`` takes, as an ``--answer`` writes them (the pause line shows this)."""
    mode = prompt.get("mode")
    if mode == "confirm":
        return "true or false"
    if mode == "choice":
        choices = prompt.get("choices")
        if isinstance(choices, list) and choices:
            return "one of " + ", ".join(json.dumps(c, ensure_ascii=False) for c in choices)
    return "a JSON string" if mode == "input" else "a value"


def answer(
    index: ResumeIndex,
    task: str,
    value: Any,
    *,
    shown_hash: str | None = None,
    by: str = "nika run --answer",
    now: float | None = None,
) -> list[Answer]:
    """Judge and spend ``value`` for every ticket ``task`` paused on (one per ``for_each``
    iteration that asked), in the history ``index`` read."""
    now = time.time() if now is None else now
    prompts = index.paused.get(task) or []
    if not prompts:
        where = ", ".join(sorted(index.paused)) or "none"
        return [Answer("not_paused", f"the run history holds no paused prompt for `{task}` (paused: {where})")]
    return [_one(index, task, p, value, shown_hash, by, now) for p in prompts]


def _one(
    index: ResumeIndex, task: str, prompt: dict[str, Any], value: Any, shown_hash: str | None, by: str, now: float
) -> Answer:
    ticket = prompt.get("ticket")
    why = problem(prompt, value)
    if why is not None:
        return Answer(
            "invalid_choice",
            f"`{task}` is a {prompt.get('mode')} prompt, which takes {valid_values(prompt)}: {why}",
            ticket=ticket if isinstance(ticket, dict) else None,
        )
    child = isinstance(prompt.get("child"), dict) and isinstance(ticket, dict)
    # a child's prompt: its ticket's run and step are the child's (its own gate checks them at run time)
    step = str(ticket.get("step")) if child else task
    nonces = {ticket.get("run")} if child else index.nonces
    found = tickets.check(ticket, nonces=nonces, step=step, shown_hash=shown_hash, now=now)
    if found is not None:
        finding, said = found
        if finding == tickets.CONTENT:
            return Answer("hash_mismatch", f"`{task}`: {said}", ticket=ticket)
        if finding == tickets.EXPIRED:
            return Answer(
                "expired",
                f"`{task}`: its ticket expired (NEP-0013 §2: {tickets.TICKET_TTL_S // 60} minutes); the run pauses "
                "again with a new one",
                ticket=ticket,
            )
        return Answer("refused", f"`{task}`: {said}", ticket=ticket if isinstance(ticket, dict) else None)
    assert isinstance(ticket, dict)
    return tickets.claim(index.claims_dir(prompt), ticket, value, by=by, now=now)


def answer_journal(
    journal: str | Path,
    task: str,
    value: Any,
    *,
    shown_hash: str | None = None,
    trace_dir: Path | None = None,
    by: str = "server",
    now: float | None = None,
) -> Answer:
    """:func:`answer` from a journal path alone: the one result a server answers with (the first
    refusal when a ``for_each`` asked several times, else the first claim)."""
    from runtime.durable.resume_index import ResumeRefused, read_history

    try:
        index = read_history(str(journal), trace_dir=trace_dir)
    except ResumeRefused as exc:
        return Answer("not_paused", str(exc))
    got = answer(index, task, value, shown_hash=shown_hash, by=by, now=now)
    return next((a for a in got if not a.ok), got[0])
