"""The run journal (spec 17, NEP-0007): one NDJSON file per run, every line chained to the last.

A frame is ``{"chain", "correlation", "fields", "id", "kind", "run", "timestamp"}`` written as
compact JSON with sorted keys. ``chain`` is the sha256 of the previous line's exact bytes (the
first line's is the sha256 of the genesis tag). The file opens lazily, at the first frame; a
journal I/O failure never changes the run's outcome (it is reported afterwards).

Durability (a flight recorder must not under-report): every frame is handed to the operating
system as it is appended (no user-space buffer), so a crashed or SIGKILLed engine never loses a
frame it wrote. Frames that announce an effect — a ``permit_checked`` *allow* (every effect is
judged, and so witnessed, just before it happens) and the ``workflow_started`` prologue — are also
``fsync``-ed before ``append`` returns, as is the journal at ``close``: after a power loss the
record that an effect was about to happen survives whenever the effect could have. Other frames
(progress, results) are fsync-ed with the next barrier.

:func:`verify` judges a journal read by the one reader (:mod:`runtime.journal.scan`, whose damage
class it reports): ``forged`` when the chain breaks (any edit, insertion, deletion or reorder),
``finding`` when it walks but a requirement is unmet (cut short: truncated, torn mid-write, empty or
marked incomplete by its run; no prologue manifest; effects without any ``permit_checked``
witness), ``clean`` otherwise.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from checker.core.records import field, record
from runtime.determinism import SYSTEM_CLOCK, Clock
from runtime.determinism import uuid7 as _uuid7
from runtime.journal.scan import GENESIS_TAG, KNOWN_GENESIS, WORKFLOW_TERMINAL, frame_fields  # noqa: F401 - the vocabulary, here too

Fields = list[tuple[str, Any]]  # one frame's fields in order: what every emitter hands the journal
TRACE_FORMAT = 2

KINDS = frozenset(
    [
        "workflow_started",
        "workflow_completed",
        "workflow_failed",
        "workflow_cancelled",
        "workflow_paused",
        "task_scheduled",
        "task_started",
        "task_completed",
        "task_failed",
        "task_skipped",
        "task_retrying",
        "task_recovered",
        "task_cancelled",
        "task_cache_hit",
        "verb_invoked",
        "tool_invoked",
        "checkpoint_written",
        "cost_incurred",
        "infer_chunk",
        "permit_checked",
        "declassify",
        "run_sealed",
        "agent_tools_selected",
        "agent_nudge",
        "agent_stalled",
        "agent_compose_checked",
        "agent_budget_checkpoint",
        "approval_decided",  # NEP-0013 §4 (additive: the kind-vs-field choice is deferred there)
    ]
)
PROLOGUE_FIELDS = ("workflow", "permits", "permits_json", "trace_format")
EFFECT_VERBS = ("exec", "agent")
# What an ``approval_decided`` frame says of a decision, after its ``task`` (the gate writes them;
# a caller that journals its child's decisions again, ``runtime.verbs.invoke``, copies exactly these).
APPROVAL_FIELDS = ("ticket", "shown_hash", "decision", "answered_by", "ttl_remaining_s", "scope")


def uuid7() -> str:
    """A time-ordered UUIDv7 (RFC 9562) on the wall clock, from the system's entropy."""
    return _uuid7()


# One encoder for every frame (``json.dumps`` with options builds a new one per call).
_ENCODER = json.JSONEncoder(sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str)


def encode(frame: dict[str, Any]) -> bytes:
    return _ENCODER.encode(frame).encode("utf-8")


_quote = json.encoder.encode_basestring  # what ``_ENCODER`` writes for a ``str`` (``ensure_ascii=False``)


def _float_json(v: float) -> str:
    """What ``_ENCODER`` writes for a ``float`` (``allow_nan``: the non-finite ones by their JSON names)."""
    if v != v:
        return "NaN"
    if v in (_INF, -_INF):
        return "Infinity" if v > 0 else "-Infinity"
    return float.__repr__(v)


_INF = float("inf")
_SCALAR = {
    str: _quote,
    int: int.__repr__,
    float: _float_json,
    bool: lambda v: "true" if v else "false",
    type(None): lambda v: "null",
}


def _value_json(v: Any) -> str:
    """``_ENCODER.encode(v)``, without the encoder for the scalars most fields hold."""
    enc = _SCALAR.get(v.__class__)
    return enc(v) if enc is not None else _ENCODER.encode(v)


def _field_head(k: Any) -> str:
    """``{"key":<k>,"value":`` — the same few keys open every frame's fields, so kept once each."""
    head = _FIELD_HEADS.get(k) if k.__class__ is str else None
    if head is None:
        head = f'{{"key":{_value_json(k)},"value":'
        if k.__class__ is str and len(_FIELD_HEADS) < 1024:  # bounded: a builtin's events name their own keys
            _FIELD_HEADS[k] = head
    return head


_FIELD_HEADS: dict[str, str] = {}


def encode_frame(chain: str, fields: list[tuple[str, Any]], uuid: str, kind: str, run: str | None, ts: int) -> bytes:
    """:func:`encode` of the frame these make, byte for byte (the keys in sorted order, compact),
    written out directly: one frame per event, thousands per run."""
    quote, parts = _quote, []
    for k, v in fields:
        value = quote(v) if v.__class__ is str else _value_json(v)  # most fields hold a string
        parts.append(f"{_field_head(k)}{value}}}")
    return (
        f'{{"chain":{quote(chain)},"correlation":null,"fields":[{",".join(parts)}],"id":{{"uuid":{quote(uuid)}}},'
        f'"kind":{_value_json(kind)},"run":{_value_json(run)},"timestamp":{_value_json(ts)}}}'
    ).encode()


@record(frozen=False, slots=False)
class Journal:
    """An append-only, hash-chained journal, opened at its first frame. ``clock`` stamps each frame
    (``timestamp`` and the time part of its UUIDv7 id) and ``ids`` gives the id's random bits (the
    run's ``frame`` stream, :mod:`runtime.determinism`; ``None``: the system's entropy). The file is
    named ``<first frame's time>-<the last 12 hex digits of name_id>.ndjson`` (the run nonce)."""

    directory: Path | None
    run_id: str | None = None
    redact: Callable[[Any], Any] | None = None
    path: Path | None = None
    head: str = field(default_factory=lambda: hashlib.sha256(GENESIS_TAG).hexdigest())
    error: str | None = None
    clock: Clock = SYSTEM_CLOCK
    ids: Any = None
    name_id: str | None = None
    frames: int = 0  # the frames emitted, written or not
    failed_at: int | None = None  # the first frame that could not be written (the rider: the run goes on)
    lost: bool = False  # the journal was removed while the run wrote it (its folder deleted)
    unwritten: dict[str, list[str]] = field(default_factory=dict)  # what the frames not written said, by task
    _fh: Any = None

    def append(self, kind: str, fields: list[tuple[str, Any]]) -> dict[str, Any]:
        """Write one frame and return it (even when the journal cannot be written)."""
        chain = self.head
        recorded, uuid, ts = self.record(kind, fields)
        return {
            "chain": chain,
            "correlation": None,
            "fields": [{"key": k, "value": v} for k, v in recorded],
            "id": {"uuid": uuid},
            "kind": kind,
            "run": self.run_id,
            "timestamp": ts,
        }

    def record(self, kind: str, fields: list[tuple[str, Any]]) -> tuple[list[tuple[str, Any]], str, int]:
        """Write one frame (even when the journal cannot be written, the chain moves on): its
        fields as recorded (bounded, redacted), its id and its timestamp."""
        fields = [(k, v if v.__class__ in _FLAT else _recordable(v)) for k, v in fields]
        redact = self.redact
        if redact is not None and not getattr(redact, "idle", False):
            fields = [(k, v if _engine_identifier(k) else redact(v)) for k, v in fields]
        ts = self.clock.now_ns()
        uuid = _uuid7(ts, self.ids)
        line = encode_frame(self.head, fields, uuid, kind, self.run_id, ts)
        self.head = hashlib.sha256(line).hexdigest()
        self.frames += 1
        if self.directory is not None and self.error is None:
            try:
                if self._fh is None:
                    self.directory.mkdir(parents=True, exist_ok=True)
                    stamp = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime(ts // 1_000_000_000))
                    name = (self.name_id or self.run_id or uuid7()).replace("-", "")[-12:]
                    self.path = self.directory / f"{stamp}-{name}.ndjson"
                    self._fh = open(self.path, "ab", buffering=0)  # noqa: SIM115 - kept open for the run
                    _hold(self._fh)
                _write_all(self._fh, line + b"\n")
                if _is_barrier(kind, fields):
                    os.fsync(self._fh.fileno())
            except OSError as exc:
                self.error = exc.strerror or str(exc)
                self.failed_at = self.frames
        if self.failed_at is not None:
            self._unwritten(kind, fields)
        return fields, uuid, ts

    def _unwritten(self, kind: str, fields: list[tuple[str, Any]]) -> None:
        """Keep a word of a frame the journal lost, for the mark (``runtime.journal.incomplete``)."""
        from runtime.journal.incomplete import MAX_NAMED, NOTABLE

        if kind.startswith("workflow_"):
            self.unwritten["end"] = [kind]
            return
        if kind not in NOTABLE:
            return
        task = next((v for k, v in fields if k == "task"), None)
        if not isinstance(task, str):
            return
        if kind == "permit_checked":
            if ("decision", "allow") not in fields:
                return
            key = "effects"
        else:
            key = {"task_started": "started", "approval_decided": "approvals"}.get(kind, "completed")
        names = self.unwritten.setdefault(key, [])
        if len(names) < MAX_NAMED and task not in names:
            names.append(task)

    def close(self) -> None:
        """Flush the journal to disk and close it; then say what the run must be told: the journal
        is incomplete from frame N (and leave its mark), or it was removed while being written."""
        if self._fh is not None:
            with contextlib.suppress(OSError):
                os.fsync(self._fh.fileno())
            with contextlib.suppress(OSError):
                self.lost = os.fstat(self._fh.fileno()).st_nlink == 0
            self._fh.close()
            self._fh = None
        if self.lost:
            where = self.path.parent if self.path is not None else self.directory
            self.error = (
                f"the journal {self.path} was removed while the run wrote it (was `{where}` deleted?): "
                "this run left no trace, and a resume cannot continue it"
            )
        elif self.failed_at is not None:
            self.error = self._incomplete_note()

    def _incomplete_note(self) -> str:
        from runtime.journal.incomplete import describe, mark_path, write_mark

        mark: dict[str, Any] = {"from_frame": self.failed_at, "frames": self.frames, "error": self.error}
        for key, names in self.unwritten.items():
            mark[key] = names[0] if key == "end" else names
        if self.path is None:
            return (
                f"the journal could not be written ({self.error}): this run left no trace of its "
                f"{self.frames} frames, and a resume cannot continue it"
            )
        mark["journal"] = self.path.name
        said = describe(mark)
        if write_mark(self.path, mark):
            return f"{said}; marked in {mark_path(self.path)} (`nika trace ls` shows it; a resume names what it redoes)"
        return f"{said}; the mark beside it could not be written either: `nika trace ls` cannot tell it from a kill"


def _engine_identifier(key: str) -> bool:
    """A field the redactor leaves alone: a task id (a name written in the workflow file) or a
    digest the engine computed (``*_hash``: runtime.journal.task_hash keeps every secret value out
    of them). Neither is derived from a resolved secret, and masking one would break what reads it
    (the resume index, the trace readers)."""
    return key == "task" or key.endswith("_hash")


_FLAT = frozenset({str, int, float, bool, type(None)})  # nothing nests inside: :func:`_recordable` is not asked


def _recordable(value: Any) -> Any:
    """``value``, or a note in its place when it nests past ``MAX_VALUE_DEPTH`` (the journal, its
    redaction and every reader of it then stay inside the stack; the frame itself is never lost)."""
    from runtime.guard.limits import MAX_VALUE_DEPTH
    from runtime.values import deeper_than

    if isinstance(value, dict | list | tuple) and deeper_than(value, MAX_VALUE_DEPTH):
        return f"<a value nested deeper than {MAX_VALUE_DEPTH} levels: not recorded>"
    return value


def _hold(fh: Any) -> None:
    """A run holds its own journal (an exclusive ``flock``, dropped by the kernel however the run
    ends): a resume refuses a journal a live run is still writing (``runtime.durable.resume_index``)."""
    try:
        import fcntl

        fcntl.flock(fh.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
    except (ImportError, OSError):  # pragma: no cover - no flock here: a resume's own lock still holds
        pass


def _write_all(fh: Any, data: bytes) -> None:
    """An unbuffered write may be partial: write until every byte is with the OS."""
    view = memoryview(data)
    while view:
        n = fh.write(view)
        if not n:
            raise OSError("the trace file accepted no bytes")
        view = view[n:]


def _is_barrier(kind: str, fields: list[tuple[str, Any]]) -> bool:
    """A frame after which the effect it announces may happen (see the module's durability policy)."""
    if kind == "workflow_started":
        return True
    return kind == "permit_checked" and ("decision", "allow") in fields


# -- verification --------------------------------------------------------------------------


def verify(data: bytes, mark: dict[str, Any] | None = None) -> dict[str, Any]:
    """Judge a journal's bytes: ``{"verdict", "damage", "frames", "head", "problems": [...]}``.
    The damage class is the one reader's (:mod:`runtime.journal.scan`); ``mark``: the journal's
    incomplete mark (:mod:`runtime.journal.incomplete`), when its run left one."""
    from runtime.journal.scan import scan

    s = scan(data)
    problems = list(s.problems)
    damage = "incomplete" if mark is not None and s.damage not in ("forged",) else s.damage
    if mark is not None and damage == "incomplete":
        from runtime.journal.incomplete import describe

        problems.append({"line": mark.get("from_frame"), "problem": describe(mark)})
    if s.damage == "forged":
        return {"verdict": "forged", "damage": "forged", "frames": len(s.frames), "head": s.head, "problems": problems}
    frames = s.frames
    if frames:
        first = frames[0]
        if first.get("kind") != "workflow_started":
            problems.append({"line": 1, "problem": "the first frame is not `workflow_started`"})
        else:
            pro = frame_fields(first)
            missing = [k for k in PROLOGUE_FIELDS if k not in pro]
            if missing:
                problems.append({"line": 1, "problem": f"the prologue lacks {', '.join(missing)}"})
            elif pro.get("trace_format") != TRACE_FORMAT:
                problems.append(
                    {"line": 1, "problem": f"trace_format {pro.get('trace_format')!r} is not {TRACE_FORMAT}"}
                )
        if s.terminal is None:
            problems.append({"line": s.numbers[-1], "problem": "no terminal workflow frame: the run did not finish"})
    effectful = [f for f in frames if f.get("kind") == "task_started" and _is_effect(frame_fields(f).get("note"))]
    witnessed = any(f.get("kind") == "permit_checked" for f in frames)
    if effectful and not witnessed:
        problems.append(
            {
                "line": None,
                "problem": f"{len(effectful)} effectful task(s) ran but the journal holds no `permit_checked` "
                "frame (the NEP-0007 witness is absent)",
            }
        )
    verdict = "finding" if any(p["problem"] for p in problems if "genesis" not in p["problem"]) else "clean"
    return {"verdict": verdict, "damage": damage, "frames": len(frames), "head": s.head, "problems": problems}


def source_digests(text: str) -> list[tuple[str, Any]]:
    """The prologue's source identity (17 §prologue): the digest of the source as read and of its
    LF-normalised form. ``semantic_hash`` (15 §semantic hash) needs the Semantic IR, which this
    build does not lower to: the field is kept, ``null``, with a note saying so — never a digest
    of something else under that name."""
    raw = text.encode("utf-8")
    lf = text.replace("\r\n", "\n").replace("\r", "\n").encode("utf-8")
    return [
        ("workflow_sha256", hashlib.sha256(raw).hexdigest()),
        ("workflow_sha256_lf", hashlib.sha256(lf).hexdigest()),
        ("semantic_hash", None),
        ("semantic_hash_note", "not available in this build: no Semantic IR lowering (spec 15)"),
    ]


def _is_effect(note: Any) -> bool:
    if not isinstance(note, str):
        return False
    verb = note.split("·", 1)[0].strip()
    if verb in EFFECT_VERBS:
        return True
    if verb == "invoke":
        tool = note.split("·", 1)[1].strip() if "·" in note else ""
        if tool.startswith("mcp:") or tool.startswith("workflow"):
            return True
        from checker.contracts import tables as contracts

        c = contracts.contract(tool)
        return bool(c and c.effects)
    return False
