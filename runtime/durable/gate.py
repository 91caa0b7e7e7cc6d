"""The durable human gate (ADR-099 rider) and its approval tickets (NEP-0013).

``nika:prompt`` asks through :meth:`Gate.resolve`:

* an ``--answer TASK=VALUE`` for a prompt the resumed history paused on binds, once its ticket is
  checked (:func:`runtime.durable.ticket.check`): minted for a run of this history and this step
  (else ``approval.scope_mismatch``), for the very content shown now (else
  ``approval.content_mismatch``: a HALT; a resume without an answer then asks about what is shown
  now, with a new ticket), still inside its TTL (an expired ticket is never inherited: the prompt
  pauses again with a new one), and once the answer has *spent* it (:func:`runtime.durable.ticket.claim`:
  a claim file created atomically; a ticket another answer spent is ``approval.already_claimed``,
  refused before any effect by ``nika run``, which claims every ``--answer`` up front);
* without an answer, a ticket an earlier attempt of the history spent still decides (the run
  continues under that answer: a killed resume does not ask again);
* on a TTY the person is asked (the ``prompter``);
* else a ``default:`` answers, as before;
* else the run pauses: the task raises :class:`GatePause`, the run journals ``workflow_paused``
  with the prompt payload and its ticket, and exits 4 (``paused``). Resumed without an answer it
  pauses again on the same ticket, carried verbatim (idempotent; its TTL is never extended).

The ticket binds the sha256 of the canonical rendering of what is shown (the message, the mode and
choices, the gated action's identity: the compiled definitions of the tasks it gates and of every
task they read from, as written, and the effect classes of what the gate unleashes). A claimed allow
is settled before the first gated task starts (:meth:`Gate.before_action`): a revocation toward deny
that came first stops it (``approval.revoked``); once it started, a revocation is refused (NEP-0013
§5). At most :data:`APPROVALS_PER_RUN` tickets are minted or honoured per run (a resume carries the
count forward; a child workflow's approvals count against its callers' runs too); the next is a HALT
(``NIKA-SEC-010``, ``approval.rate_limited``). An identical prompt in the same run rides the decided
ticket (``dedup``: the person is not asked again). Every decision is an ``approval_decided`` frame
in the hash-chained journal.
"""

from __future__ import annotations

import asyncio
import os
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from runtime.durable import ticket as tickets
from runtime.durable.ticket import TICKET_TTL_S, canonical, sha256
from runtime.errors import TaskError
from runtime.journal.write import APPROVAL_FIELDS, Fields

if TYPE_CHECKING:
    from checker.model.workflow import CompiledWorkflow, Workflow
    from runtime.durable.resume_index import ResumeIndex
    from runtime.durable.ticket import Claim

__all__ = ["APPROVALS_PER_RUN", "SEC_010", "TICKET_TTL_S", "Gate", "GatePause", "canonical", "now", "sha256"]
APPROVALS_PER_RUN = 5  # NEP-0013 §3: N per run; the N+1th is a HALT, never a queue
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
    model: str | None
    claims: dict[str, Claim]


class GatePause(Exception):
    """A control signal, not an error: the task waits for an answer."""

    def __init__(self, payload: dict[str, Any]) -> None:
        super().__init__(payload.get("task"))
        self.payload = payload


def now() -> float:
    """The wall clock tickets are issued and expire by (a test moves it)."""
    return time.time()


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
        gated: Callable[[str], dict[str, str]] | None = None,
        downstream: Callable[[str], set[str]] | None = None,
        claims: dict[str, Claim] | None = None,
        identity: Callable[[str], dict[str, str]] | None = None,
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
        self.gated = gated or (lambda tid: {})  # the gated tasks (with an effect): their compiled definitions
        self.identity = identity or self.gated  # the gated action's identity the ticket binds (NEP-0013 §1)
        self.downstream = downstream or (lambda tid: set())
        self.claims = claims if claims is not None else {}  # ticket digest -> the claim this process made
        # (gate task, claims folder, digest) of each allow a claim spent: its gated tasks settle it first
        self.spent: list[tuple[str, Path, str]] = []
        self._below: dict[str, set[str]] = {}
        self._ids: dict[str, dict[str, str]] = {}
        if resume is not None:
            self._spent_before(resume)

    @classmethod
    def for_run(cls, run: GatedRun, o: GateOptions) -> Gate:
        from runtime.durable.downstream_effects import action_identity, effects_after, gated_actions

        return cls(
            nonce=run.run_nonce,
            workflow=run.wf.id,
            emit=run.emit,
            effects_after=lambda tid: effects_after(run.compiled, tid),
            answers=o.answers,
            resume=o.resume,
            prompter=o.prompter if o.interactive else None,
            parent=o.parent_gate,
            gated=lambda tid: gated_actions(run.compiled, tid, o.model),
            downstream=lambda tid: _descendants(run.compiled, tid) - {tid},
            claims=o.claims,
            identity=lambda tid: action_identity(run.compiled, tid, o.model),
        )

    # -- the journal -------------------------------------------------------------------------

    def prologue_fields(self) -> Fields:
        """Where the run stands in its history (``runtime.journal.history``): a fresh run starts one;
        a resume carries it on, linked to the journal it resumed, with the approvals already used."""
        if self.resume is None:
            return [("history", self.nonce), ("attempt", 1)]
        return [*self.resume.prologue, ("approvals_carried", self.used)]

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
            found = self._trace_ticket(tid, h)
            if found is not None:
                prompt, ticket = found
                answer = self.answers[tid]
                check(answer)
                claim = self._spend(tid, prompt, ticket, answer)
                self._count(tid)
                self._decide(tid, ticket, h, claim.answer, "answer")
                self._settle_later(tid, prompt, ticket, claim.answer)
                return True, claim.answer
        elif (held := self._held(tid, h)) is not None:  # an earlier attempt's answer spent the ticket: it stands
            prompt, ticket, answer = held
            check(answer)
            self._count(tid)
            self._decide(tid, ticket, h, answer, "claim")
            self._settle_later(tid, prompt, ticket, answer)
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
        """The canonical rendering the ticket binds (NEP-0013 §1): what the person reads, the gated
        action's identity (the compiled definitions of the tasks it gates) and their effect classes."""
        return {
            "message": request.get("message"),
            "mode": request.get("mode"),
            "choices": request.get("choices"),
            "action": {"tool": "nika:prompt", "workflow": self.workflow, "gated": self._identity_of(tid)},
            "effects": self.effects_after(tid),
        }

    def _identity_of(self, tid: str) -> dict[str, str]:
        if tid not in self._ids:  # one compiled workflow per run: computed once per gate task
            self._ids[tid] = self.identity(tid)
        return self._ids[tid]

    def before_action(self, tid: str) -> TaskError | None:
        """Before task ``tid`` starts: each claimed allow it is gated by is settled ``started`` for
        good, unless a revocation settled it first (then ``tid`` must not start: NEP-0013 §5)."""
        for gate_tid, folder, digest in self.spent:
            if tid == gate_tid or tid not in self._gated_by(gate_tid):
                continue
            if tickets.commit(folder, digest, by=self.nonce, now=self.clock()) == "revoked":
                return self._halt(
                    tid,
                    "approval.revoked",
                    f"the allow `{gate_tid}` gave was revoked before this gated task started; it does not run",
                )
        return None

    def _gated_by(self, gate_tid: str) -> set[str]:
        """The gated actions: the tasks downstream of the gate that have an effect."""
        if gate_tid not in self._below:
            self._below[gate_tid] = set(self.gated(gate_tid))
        return self._below[gate_tid]

    def _pause(self, tid: str, request: dict[str, Any], h: str) -> dict[str, Any]:
        old = self.resume.paused_prompt(tid, h) if self.resume is not None else None
        ticket = old.get("ticket") if isinstance(old, dict) else None
        if not (
            isinstance(ticket, dict)
            and ticket.get("shown_hash") == h
            and tickets.check(ticket, nonces=self._nonces(), step=tid, shown_hash=h, now=self.clock()) is None
        ):  # the same question, still inside its TTL, rides its ticket verbatim: never re-counted nor extended
            ticket = self._mint(tid, h)
        payload = {k: request.get(k) for k in ("mode", "message", "choices")}
        payload.update(task=tid, shown_hash=h, ticket=ticket)
        self.paused.append(payload)
        return payload

    def _nonces(self) -> set[str]:
        return self.resume.nonces if self.resume is not None else {self.nonce}

    def _trace_ticket(self, tid: str, h: str) -> tuple[dict[str, Any], dict[str, Any]] | None:
        """The resumed history's prompt and ticket for ``tid``, checked for scope and content; ``None``
        when expired (an expired ticket is never inherited: the prompt pauses again with a new one)."""
        prompt = self.resume.paused_prompt(tid, h) if self.resume is not None else None
        ticket = prompt.get("ticket") if isinstance(prompt, dict) else None
        found = tickets.check(ticket, nonces=self._nonces(), step=tid, shown_hash=h, now=self.clock())
        if found is None:
            assert prompt is not None and isinstance(ticket, dict)
            return prompt, ticket
        finding, why = found
        if finding == tickets.EXPIRED:
            return None
        if finding == tickets.CONTENT:
            why += "; resume without --answer to be asked about what is shown now (a new ticket)"
        raise self._halt(tid, finding, why)

    def _spend(self, tid: str, prompt: dict[str, Any], ticket: dict[str, Any], answer: Any) -> Claim:
        """The claim that spends ``ticket`` on ``answer``: the one this process made up front (``nika
        run`` claims every ``--answer`` before the run), else one made now; a ticket another answer
        spent halts (``approval.already_claimed``)."""
        mine = self.claims.get(ticket["digest"])
        if mine is not None:
            if canonical(mine.answer) != canonical(answer):
                raise self._halt(tid, "approval.already_claimed", "the answer is not the one its claim was made for")
            return mine
        assert self.resume is not None
        got = tickets.claim(self.resume.claims_dir(prompt), ticket, answer, by=self.nonce, now=self.clock())
        if not got.ok or got.claim is None:
            raise self._halt(tid, "approval.already_claimed", got.message)
        self.claims[ticket["digest"]] = got.claim
        return got.claim

    def _held(self, tid: str, h: str) -> tuple[dict[str, Any], dict[str, Any], Any] | None:
        """The answer an earlier attempt's claim spent this prompt's ticket on (a revoked allow is a
        deny), when the history paused on this very prompt; ``None`` when none was claimed."""
        prompt = self.resume.paused_prompt(tid, h) if self.resume is not None else None
        ticket = prompt.get("ticket") if isinstance(prompt, dict) else None
        if not isinstance(ticket, dict) or ticket.get("shown_hash") != h:
            return None
        # expiry does not matter here: the answer was given (and claimed) inside the TTL
        issued = ticket.get("issued_at")
        at = float(issued) if isinstance(issued, int | float) else self.clock()
        if tickets.check(ticket, nonces=self._nonces(), step=tid, shown_hash=h, now=at) is not None:
            return None
        assert self.resume is not None and prompt is not None
        folder = self.resume.claims_dir(prompt)
        claim = tickets.read_claim(folder, ticket["digest"])
        if claim is None:
            return None
        revoked = claim.decision == "allow" and tickets.fate(folder, ticket["digest"]) == "revoked"
        return prompt, ticket, (False if revoked else claim.answer)

    def _settle_later(self, tid: str, prompt: dict[str, Any], ticket: dict[str, Any], answer: Any) -> None:
        """A claimed allow: the tasks it gates settle it before they start (:meth:`before_action`)."""
        if tickets.decision_of(answer) == "allow" and self.resume is not None:
            entry = (tid, self.resume.claims_dir(prompt), ticket["digest"])
            if entry not in self.spent:
                self.spent.append(entry)

    def _spent_before(self, resume: ResumeIndex) -> None:
        """The allows earlier attempts claimed on this history's prompts: a gate task that completed
        before the run was killed is a cache hit now, and its gated tasks still settle its claim."""
        for tid, prompts in resume.paused.items():
            for p in prompts:
                ticket = p.get("ticket")
                if "child" in p or not isinstance(ticket, dict) or not isinstance(ticket.get("digest"), str):
                    continue  # a child's prompt gates the child's tasks: its own gate settles it
                folder = resume.claims_dir(p)
                try:
                    claim = tickets.read_claim(folder, ticket["digest"])
                except ValueError:
                    continue
                if claim is not None and claim.decision == "allow":
                    self.spent.append((tid, folder, ticket["digest"]))

    def _mint(self, tid: str, h: str) -> dict[str, Any]:
        self._count(tid)
        return tickets.mint(self.nonce, tid, h, self.clock(), TICKET_TTL_S)

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

    def _decide(self, tid: str, ticket: dict[str, Any], h: str, answer: Any, by: str) -> None:
        self.decided[h] = (answer, ticket["digest"])
        self._decided(tid, ticket["digest"], h, tickets.decision_of(answer), answer, by, ticket)

    def _decided(
        self, tid: str, digest: str, h: str, decision: str, answer: Any, by: str, ticket: dict | None = None
    ) -> None:
        ttl = round(max(0.0, tickets.remaining(ticket, self.clock())), 3) if ticket is not None else None
        scope = {"run": ticket["run"] if ticket else self.nonce, "step": tid, "shown_hash": h}
        values = (digest, h, decision, by, ttl, canonical(scope))
        self.emit("approval_decided", [("task", tid), *zip(APPROVAL_FIELDS, values, strict=True)])

    def _halt(self, tid: str, finding: str, why: str) -> TaskError:
        message = f"approval ticket for `{tid}` refused ({finding}): {why}"
        return TaskError(SEC_010, message, details={"finding": finding})


def _where(iteration: tuple[Any, Any] | None) -> dict[str, Any]:
    """Which call of a child a pause belongs to: ``{}``, or a ``for_each`` iteration's index and item hash."""
    return {} if iteration is None else {"index": iteration[0], "item": sha256(iteration[1])}


def _descendants(compiled: Any, tid: str) -> set[str]:
    """``tid`` and what depends on it (the resume index's reader is loaded by the first gate that asks,
    not by every run: a one-task run never does)."""
    from runtime.durable.resume_index import descendants

    return descendants(compiled, tid)
