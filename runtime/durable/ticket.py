"""Approval tickets (NEP-0013) as plain data and plain functions: minted, checked, spent once.

A ticket is ``{"run", "step", "shown_hash", "issued_at", "ttl_s", "digest"}``: minted for one run
(its nonce) × one step × the hash of what was shown, for a bounded TTL, and sealed by the digest of
the rest. :func:`check` judges a ticket against the runs of a history and the content shown now.

A ticket is *spent once*, whatever process answers it (``nika run --resume --answer``, a server),
through claim files in the ``tickets/`` folder beside the journal that paused on it:

* ``<hex>.claim`` holds the first answer. It is written whole to a private temporary file, then
  ``link()``-ed into place: the link creates the claim or fails because one exists, so of two
  answers racing in two processes exactly one wins (never check-then-write).
* ``<hex>.final`` settles a claimed *allow*, created exclusively by whichever comes first: the run
  about to start the gated action (``started``), or a revocation toward deny (``revoked``: NEP-0013
  §5, a decided ticket may be revoked before the gated action starts, never after). A deny needs
  no final: it is final as claimed.

:func:`claim` is the one way an answer is spent; it returns a typed :class:`Answer` result
(``claimed``, ``revoked``, ``already_claimed``, ``too_late``; and, from :mod:`runtime.durable.answers`,
``hash_mismatch``, ``expired``, ``invalid_choice``, ``not_paused``, ``refused``), each with a
one-line ``message`` and the HTTP status a server answers with.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import re
import secrets
import time
from collections.abc import Collection
from pathlib import Path
from typing import Any

from checker.core.records import field, record

TICKET_TTL_S = 15 * 60  # NEP-0013 §2: the engine-named TTL
CLAIMS = "tickets"  # the folder of claim files, beside the journal that paused
SCOPE = "approval.scope_mismatch"
CONTENT = "approval.content_mismatch"
EXPIRED = "approval.expired"
_DIGEST = re.compile(r"sha256:([0-9a-f]{64})")


def canonical(value: Any) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str)


def sha256(value: Any) -> str:
    return "sha256:" + hashlib.sha256(canonical(value).encode("utf-8")).hexdigest()


def mint(run: str, step: str, shown_hash: str, now: float, ttl_s: float = TICKET_TTL_S) -> dict[str, Any]:
    """A new ticket for ``run`` (its nonce) × ``step`` × ``shown_hash``, issued ``now``."""
    body = {"run": run, "step": step, "shown_hash": shown_hash, "issued_at": round(now, 3), "ttl_s": ttl_s}
    return {**body, "digest": sha256(body)}


def sealed(ticket: Any) -> bool:
    """Whether ``ticket`` is a ticket whose digest is the digest of the rest of it."""
    if not isinstance(ticket, dict) or not isinstance(ticket.get("digest"), str):
        return False
    return ticket["digest"] == sha256({k: v for k, v in ticket.items() if k != "digest"})


def remaining(ticket: Any, now: float) -> float:
    """Seconds left of the ticket's TTL (0 or less: expired; a ticket without a TTL is expired)."""
    issued = ticket.get("issued_at") if isinstance(ticket, dict) else None
    ttl = ticket.get("ttl_s") if isinstance(ticket, dict) else None
    if not isinstance(issued, int | float) or not isinstance(ttl, int | float):
        return 0.0
    return issued + ttl - now


def check(
    ticket: Any, *, nonces: Collection[str], step: str, shown_hash: str | None, now: float
) -> tuple[str, str] | None:
    """``None`` when ``ticket`` may be honoured for ``step`` showing ``shown_hash`` now (``None``: the
    content is not known yet); else ``(finding, why)``: scope (not sealed, another run history's
    nonce, another step), content (another shown hash), or expiry."""
    if not sealed(ticket):
        return SCOPE, "the answer's ticket does not match its own digest"
    if ticket.get("run") not in nonces:
        return SCOPE, "the answer's ticket was not minted for this run (its nonce is not one of this run history's)"
    if ticket.get("step") != step:
        return SCOPE, f"the answer's ticket was minted for step `{ticket.get('step')}`, not `{step}`"
    if shown_hash is not None and ticket.get("shown_hash") != shown_hash:
        return CONTENT, (
            "the prompt shown now differs from the one the answer was given for (what was shown is what is signed)"
        )
    if remaining(ticket, now) <= 0:
        return EXPIRED, "the ticket's TTL has passed"
    return None


# -- claims --------------------------------------------------------------------------------------


def decision_of(answer: Any) -> str:
    """What an answer decides: ``deny`` for a refused confirm (``false``), else ``allow``."""
    return "deny" if answer is False else "allow"


@record(slots=False)
class Claim:
    """An answer that spent its ticket."""

    digest: str
    step: str
    answer: Any
    decision: str  # allow | deny
    by: str  # who answered (``cli``, ``serve``, a run id)
    at: float
    token: str = field(default_factory=lambda: secrets.token_hex(8))  # the claimant's own handle

    def to_json(self) -> dict[str, Any]:
        return {k: getattr(self, k) for k in ("digest", "step", "answer", "decision", "by", "at", "token")}

    @classmethod
    def of(cls, doc: Any) -> Claim | None:
        if not isinstance(doc, dict) or doc.get("decision") not in ("allow", "deny"):
            return None
        try:
            return cls(
                str(doc["digest"]),
                str(doc["step"]),
                doc.get("answer"),
                doc["decision"],
                str(doc["by"]),
                float(doc["at"]),
                str(doc["token"]),
            )
        except (KeyError, TypeError, ValueError):
            return None


@record(slots=False)
class Answer:
    """What became of an answer: ``status`` (below), a one-line ``message``, the HTTP status."""

    status: str
    message: str
    claim: Claim | None = None  # the answer's own claim (claimed, revoked) or the one that stands
    ticket: dict[str, Any] | None = None

    HTTP = {  # noqa: RUF012 - a table, read only
        "claimed": 200,
        "revoked": 200,
        "already_claimed": 409,
        "too_late": 409,
        "hash_mismatch": 412,
        "expired": 410,
        "invalid_choice": 422,
        "not_paused": 404,
        "refused": 403,
    }

    @property
    def ok(self) -> bool:
        return self.status in ("claimed", "revoked")

    @property
    def http(self) -> int:
        return self.HTTP[self.status]


def claims_dir(journal_dir: Path) -> Path:
    return journal_dir / CLAIMS


def _paths(directory: Path, digest: str) -> tuple[Path, Path]:
    m = _DIGEST.fullmatch(digest)
    if m is None:  # only a sealed ticket is ever claimed: its digest is always of this form
        raise ValueError(f"not a ticket digest: {digest!r}")
    return directory / f"{m.group(1)}.claim", directory / f"{m.group(1)}.final"


def read_claim(directory: Path, digest: str) -> Claim | None:
    """The claim that spent ``digest``'s ticket, if any (``None`` also for one being written)."""
    return Claim.of(_read(_paths(directory, digest)[0]))


def fate(directory: Path, digest: str) -> str | None:
    """How a claimed allow was settled: ``started`` (the gated action began), ``revoked``, or ``None``."""
    path = _paths(directory, digest)[1]
    if not path.exists():
        return None
    doc = _read(path)
    got = doc.get("fate") if isinstance(doc, dict) else None
    return got if got in ("started", "revoked") else "revoked"  # unreadable: never run on it


def claim(directory: Path, ticket: dict[str, Any], answer: Any, *, by: str, now: float | None = None) -> Answer:
    """Spend ``ticket`` on ``answer``: exactly one answer per ticket wins, in any process; a later
    deny revokes a claimed allow while its gated action has not started. ``directory``: the claims
    folder (:func:`claims_dir`)."""
    now = time.time() if now is None else now
    step = str(ticket.get("step"))
    new = Claim(ticket["digest"], step, answer, decision_of(answer), by, round(now, 3))
    claim_path, final_path = _paths(directory, new.digest)
    if _create(claim_path, new.to_json()):
        return Answer(
            "claimed", f"`{step}`: answer {canonical(answer)} claims its ticket ({new.decision})", new, ticket
        )
    old = read_claim(directory, new.digest)
    if old is None:
        return Answer(
            "already_claimed", f"`{step}`: its ticket is being claimed by another answer right now", None, ticket
        )
    said = f"{canonical(old.answer)} ({old.decision}, by {old.by})"
    if old.decision == "allow" and new.decision == "deny":
        if _create(final_path, {"fate": "revoked", "by": by, "at": round(now, 3), "digest": new.digest}):
            return Answer(
                "revoked",
                f"`{step}`: the allow {said} is revoked before its gated action started (NEP-0013 §5)",
                new,
                ticket,
            )
        if fate(directory, new.digest) == "started":
            return Answer(
                "too_late",
                f"`{step}`: its ticket was answered {said} and the gated action has started; "
                "a decision is revoked only before (NEP-0013 §5)",
                old,
                ticket,
            )
        return Answer("already_claimed", f"`{step}`: its allow {said} was revoked already", old, ticket)
    final = " (a deny is final)" if old.decision == "deny" else ""
    if old.decision == "allow" and fate(directory, new.digest) == "revoked":
        final = ", then revoked already (a revocation is final)"
    return Answer(
        "already_claimed",
        f"`{step}`: its ticket was already answered {said}{final}; a ticket is spent once",
        old,
        ticket,
    )


def commit(directory: Path, digest: str, *, by: str, now: float | None = None) -> str:
    """Before a gated action starts under a claimed allow: ``started`` (it may start; settled so for
    good), or ``revoked`` (a revocation came first: it must not)."""
    now = time.time() if now is None else now
    if _create(_paths(directory, digest)[1], {"fate": "started", "by": by, "at": round(now, 3), "digest": digest}):
        return "started"
    return fate(directory, digest) or "revoked"


def _read(path: Path) -> Any:
    try:
        return json.loads(path.read_bytes())
    except (OSError, ValueError):
        return None


def _create(path: Path, doc: dict[str, Any]) -> bool:
    """Create ``path`` holding ``doc`` whole, atomically: ``False`` when it exists already."""
    path.parent.mkdir(parents=True, exist_ok=True)
    data = json.dumps(doc, sort_keys=True, ensure_ascii=False, default=str).encode("utf-8")
    tmp = path.parent / f".{path.name}.{os.getpid()}.{secrets.token_hex(6)}"
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    try:
        os.write(fd, data)  # a few hundred bytes: written whole
        os.fsync(fd)
    finally:
        os.close(fd)
    try:
        os.link(tmp, path)
        created = True
    except FileExistsError:
        created = False
    except OSError:  # a file system without hard links: an exclusive create (a reader may see it half-written)
        created = _create_exclusive(path, data)
    finally:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
    if created:
        _sync_dir(path.parent)
    return created


def _create_exclusive(path: Path, data: bytes) -> bool:
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:
        return False
    try:
        os.write(fd, data)
        os.fsync(fd)
    finally:
        os.close(fd)
    return True


def _sync_dir(directory: Path) -> None:
    with contextlib.suppress(OSError):
        fd = os.open(directory, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)
