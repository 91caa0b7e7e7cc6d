"""The durable human gate (ADR-099 rider) and its approval tickets (NEP-0013).

``nika:prompt`` asks through :meth:`Gate.resolve`:

* an ``--answer TASK=VALUE`` for a prompt the resumed trace paused on binds, once its ticket is
  checked: minted for that trace's run nonce and this step (else ``approval.scope_mismatch``), for
  the very content shown now (else ``approval.content_mismatch``), still inside its TTL (an expired
  ticket is never inherited: the prompt pauses again with a new one);
* on a TTY the person is asked (the ``prompter``);
* else a ``default:`` answers, as before;
* else the run pauses: the task raises :class:`GatePause`, the run journals ``workflow_paused``
  with the prompt payload and its ticket, and exits 4 (``paused``). Resumed without an answer it
  pauses again on the same ticket (idempotent).

The ticket binds the sha256 of the canonical rendering of what is shown (the message, the mode
and choices, the gated action and the effect classes of what the gate unleashes). At most
:data:`APPROVALS_PER_RUN` tickets are minted or honoured per run (a resume carries the count
forward; a child workflow's approvals count against its callers' runs too); the next is a HALT
(``NIKA-SEC-010``, ``approval.rate_limited``). An identical prompt in
the same run rides the decided ticket (``dedup``: the person is not asked again). Every decision is
an ``approval_decided`` frame in the hash-chained journal.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import os
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Protocol

from runtime.errors import TaskError
from runtime.journal.write import APPROVAL_FIELDS, Fields

if TYPE_CHECKING:
    from checker.model.workflow import CompiledWorkflow, Workflow
    from runtime.durable.resume_index import ResumeIndex

APPROVALS_PER_RUN = 5  # NEP-0013 §3: N per run; the N+1th is a HALT, never a queue
TICKET_TTL_S = 15 * 60  # NEP-0013 §2: the engine-named TTL
SEC_010 = "NIKA-SEC-010"


class GatedRun(Protocol):
    """What a gate reads of its run (:class:`runtime.engine.run.Run`)."""

    run_nonce: str
    wf: Workflow
    compiled: CompiledWorkflow

    def emit(self, kind: str, fields: Fields) -> None: ...


class GateOptions(Protocol):
    """What a gate reads of the run's options (:class:`runtime.engine.options.Options`)."""

    answers: dict[str, Any]
    resume: ResumeIndex | None
    prompter: Callable[[dict[str, Any]], Any] | None
    interactive: bool
    parent_gate: Any


class GatePause(Exception):
    """A control signal, not an error: the task waits for an answer."""

    def __init__(self, payload: dict[str, Any]) -> None:
        super().__init__(payload.get("task"))
        self.payload = payload


def now() -> float:
    """The wall clock tickets are issued and expire by (a test moves it)."""
    return time.time()


def canonical(value: Any) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str)


def sha256(value: Any) -> str:
    return "sha256:" + hashlib.sha256(canonical(value).encode("utf-8")).hexdigest()


class Gate:
    def __init__(
        self,
        *,
        nonce: str,
        workflow: str,
        emit: Callable[[str, Fields], None],
        effects_after: Callable[[str], list[str]],
        answers: dict[str, Any] | None = None,
        resume: ResumeIndex | None = None,
        prompter: Callable[[dict[str, Any]], Any] | None = None,
        clock: Callable[[], float] | None = None,
        parent: Gate | None = None,
    ) -> None:
        self.nonce, self.workflow, self.emit, self.effects_after = nonce, workflow, emit, effects_after
        self.answers = dict(answers or {})
        self.resume, self.prompter = resume, prompter
        self.clock = clock or now
        self.used = resume.approvals_used if resume is not None else 0
        self.decided: dict[str, tuple[Any, str]] = {}  # shown hash -> (answer, ticket digest)
        self.paused: list[dict[str, Any]] = []
        self.parked: set[str] = set()
        self.parent = parent  # a child workflow's caller's gate: each approval counts against every caller too

    @classmethod
    def for_run(cls, run: GatedRun, o: GateOptions) -> Gate:
        from runtime.durable.downstream_effects import effects_after

        return cls(
            nonce=run.run_nonce,
            workflow=run.wf.id,
            emit=run.emit,
            effects_after=lambda tid: effects_after(run.compiled, tid),
            answers=o.answers,
            resume=o.resume,
            prompter=o.prompter if o.interactive else None,
            parent=o.parent_gate,
        )

    # -- the journal -------------------------------------------------------------------------

    def prologue_fields(self) -> Fields:
        if self.resume is None:
            return []
        return [("resumed_from", self.resume.path.name), ("approvals_carried", self.used)]

    def paused_fields(self, workflow: str) -> Fields:
        first = self.paused[0]
        return [
            ("workflow", workflow),
            ("state", "paused"),
            ("task", first["task"]),
            ("mode", first["mode"]),
            ("message", first["message"]),
            ("choices", canonical(first.get("choices"))),
            ("prompts", canonical(self.paused)),
        ]

    # -- a child workflow's pause (``invoke: { workflow: … }``) --------------------------------

    def child_resume(self, tid: str, iteration: tuple[Any, Any] | None) -> tuple[str | None, dict[str, Any]]:
        """For the child ``tid`` is about to run: the journal the resumed trace says it paused in (at
        this ``for_each`` iteration, ``(index, item)``), and the ``--answer`` values addressed to the
        prompts it paused on (``tid/PATH``), the prefix taken off: the child's own gate judges them."""
        prefix, where = f"{tid}/", _where(iteration)
        trace, paths = None, set()
        for path, prompts in (self.resume.paused if self.resume is not None else {}).items():
            for p in prompts if path.startswith(prefix) else []:
                c = p.get("child")
                if isinstance(c, dict) and c.get("task") == tid and c.get("where") == where:
                    trace = c.get("trace") if isinstance(c.get("trace"), str) else None
                    paths.add(path)
        if trace is not None and self.resume is not None and not os.path.exists(trace):
            trace = str(self.resume.path.parent / os.path.basename(trace))  # the traces folder moved as one
        answers = {k[len(prefix) :]: v for k, v in self.answers.items() if k in paths}
        return trace, answers

    def child_pause(
        self, tid: str, workflow: str, trace: str, prompts: list[dict[str, Any]], iteration: tuple[Any, Any] | None
    ) -> GatePause:
        """The child ``tid`` ran paused: each prompt it waits on is this run's too, at the path
        ``tid/<its path in the child>``, naming the child's journal (resumed from when answered)."""
        entries, where = [], _where(iteration)
        for p in prompts:
            journals = [trace, *(p.get("journals") or [])]
            child = {"task": tid, "workflow": workflow, "trace": trace, "step": p.get("task"), "where": where}
            entries.append({**p, "task": f"{tid}/{p.get('task')}", "child": child, "journals": journals})
        self.paused.extend(entries)
        return GatePause(entries[0])

    # -- one prompt --------------------------------------------------------------------------

    async def resolve(self, tid: str, request: dict[str, Any], check: Callable[[Any], None]) -> tuple[bool, Any]:
        """``(True, answer)`` when a person (now, or by ``--answer``) answered; ``(False, None)`` when the
        builtin should fall back to its ``default:``. Raises :class:`GatePause` or a SEC-010 halt."""
        shown = self.shown(tid, request)
        h = sha256(shown)
        if h in self.decided:
            answer, digest = self.decided[h]
            self._decided(tid, digest, h, "dedup", answer, "dedup")
            return True, answer
        if tid in self.answers:
            ticket = self._trace_ticket(tid, h)
            if ticket is not None:
                answer = self.answers[tid]
                check(answer)
                self._count(tid)
                self._decide(tid, ticket, h, answer, "answer")
                return True, answer
        elif self.prompter is not None:
            ticket = self._mint(tid, h)
            answer = await asyncio.to_thread(self.prompter, {**request, "task": tid})
            check(answer)
            self._decide(tid, ticket, h, answer, "human")
            return True, answer
        if request.get("default") is not None and tid not in self.answers:
            return False, None
        raise GatePause(self._pause(tid, request, h))

    def shown(self, tid: str, request: dict[str, Any]) -> dict[str, Any]:
        """The canonical rendering the ticket binds (NEP-0013 §1): what the person reads, the action, its effects."""
        return {
            "message": request.get("message"),
            "mode": request.get("mode"),
            "choices": request.get("choices"),
            "action": {"tool": "nika:prompt", "workflow": self.workflow},
            "effects": self.effects_after(tid),
        }

    def _pause(self, tid: str, request: dict[str, Any], h: str) -> dict[str, Any]:
        old = self.resume.paused_prompt(tid, h) if self.resume is not None else None
        ticket = old.get("ticket") if isinstance(old, dict) else None
        if isinstance(ticket, dict) and ticket.get("shown_hash") == h and self._remaining(ticket) > 0:
            # the same question, still inside its TTL: re-scoped to this run, never re-counted nor extended
            body = {"run": self.nonce, "step": tid, "shown_hash": h, "issued_at": ticket["issued_at"]}
            body["ttl_s"] = ticket.get("ttl_s")
            ticket = {**body, "digest": _digest(body)}
        else:
            ticket = self._mint(tid, h)
        payload = {k: request.get(k) for k in ("mode", "message", "choices")}
        payload.update(task=tid, shown_hash=h, ticket=ticket)
        self.paused.append(payload)
        return payload

    def _trace_ticket(self, tid: str, h: str) -> dict[str, Any] | None:
        """The resumed trace's ticket for ``tid`` checked for scope and content; ``None`` when expired."""
        payload = self.resume.paused_prompt(tid, h) if self.resume is not None else None
        ticket = payload.get("ticket") if isinstance(payload, dict) else None
        if not isinstance(ticket, dict) or ticket.get("run") != self.resume.run_nonce or ticket.get("step") != tid:
            raise self._halt(tid, "approval.scope_mismatch", "the answer's ticket was not minted for this run and step")
        if ticket.get("digest") != _digest({k: v for k, v in ticket.items() if k != "digest"}):
            raise self._halt(tid, "approval.scope_mismatch", "the answer's ticket does not match its own digest")
        if ticket.get("shown_hash") != h:
            raise self._halt(
                tid,
                "approval.content_mismatch",
                "the prompt shown now differs from the one the answer was given for (what was shown is what is signed)",
            )
        if self._remaining(ticket) <= 0:
            return None  # an expired ticket is never inherited: the prompt pauses again with a new one
        return ticket

    def _mint(self, tid: str, h: str) -> dict[str, Any]:
        self._count(tid)
        body = {"run": self.nonce, "step": tid, "shown_hash": h, "issued_at": round(self.clock(), 3)}
        body["ttl_s"] = TICKET_TTL_S
        return {**body, "digest": _digest(body)}

    def _count(self, tid: str) -> None:
        chain = [self]
        while chain[-1].parent is not None:  # a child's approval is its callers' too: children do not multiply N
            chain.append(chain[-1].parent)
        if any(g.used >= APPROVALS_PER_RUN for g in chain):
            whose = "this run" if self.used >= APPROVALS_PER_RUN else "the run that called this workflow"
            raise self._halt(
                tid,
                "approval.rate_limited",
                f"{whose} already used its {APPROVALS_PER_RUN} approvals; declare one batched gate instead",
            )
        for g in chain:
            g.used += 1

    def _remaining(self, ticket: dict[str, Any]) -> float:
        issued, ttl = ticket.get("issued_at"), ticket.get("ttl_s")
        if not isinstance(issued, int | float) or not isinstance(ttl, int | float):
            return 0.0
        return issued + ttl - self.clock()

    def _decide(self, tid: str, ticket: dict[str, Any], h: str, answer: Any, by: str) -> None:
        self.decided[h] = (answer, ticket["digest"])
        self._decided(tid, ticket["digest"], h, "deny" if answer is False else "allow", answer, by, ticket)

    def _decided(
        self, tid: str, digest: str, h: str, decision: str, answer: Any, by: str, ticket: dict | None = None
    ) -> None:
        ttl = round(max(0.0, self._remaining(ticket)), 3) if ticket is not None else None
        scope = {"run": ticket["run"] if ticket else self.nonce, "step": tid, "shown_hash": h}
        values = (digest, h, decision, by, ttl, canonical(scope))
        self.emit("approval_decided", [("task", tid), *zip(APPROVAL_FIELDS, values, strict=True)])

    def _halt(self, tid: str, finding: str, why: str) -> TaskError:
        message = f"approval ticket for `{tid}` refused ({finding}): {why}"
        return TaskError(SEC_010, message, details={"finding": finding})


def _where(iteration: tuple[Any, Any] | None) -> dict[str, Any]:
    """Which call of a child a pause belongs to: ``{}``, or a ``for_each`` iteration's index and item hash."""
    return {} if iteration is None else {"index": iteration[0], "item": sha256(iteration[1])}


def _digest(body: dict[str, Any]) -> str:
    return sha256(body)
