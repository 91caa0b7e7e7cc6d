"""Run histories (issue 38): one journal per attempt, each resume's journal linked to the one it resumed.

Every journal stays one run (spec 17: one chained journal per run, with its terminal frame). A run's
prologue says where it stands in its *history*, the attempts of one workflow execution:

* a fresh run: ``history`` (its own run nonce) and ``attempt: 1``;
* a resume: ``history`` carried on, ``attempt`` one more, and a parent pointer to the journal it
  resumed: ``resumed_from`` (its file name), ``resumed_from_nonce`` (its run nonce),
  ``resumed_from_frames`` and ``resumed_from_head`` (how many whole frames the resume read there,
  and the chain head after them: the parent's bytes as read are bound, so a rewritten parent is
  seen).

The members of a history are the journals of the trace folders read whose prologue names it (a
journal written before histories: followed through ``resumed_from`` by name). Everything here reads
prologues only (the first line of each journal); what a member holds is read by its consumers
(``runtime.durable.resume_index`` folds the completed records of every member before a resume's
first effect; ``nika trace ls`` shows the members of a history together).
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Any

from checker.core.records import field, record
from runtime.journal.scan import frame_fields

PARENT_FIELDS = ("resumed_from", "resumed_from_nonce", "resumed_from_frames", "resumed_from_head")


@record(frozen=False, slots=False)
class Member:
    """One journal of a history, as its prologue places it."""

    path: Path
    prologue: dict[str, Any] = field(default_factory=dict)
    started: int | None = None  # the prologue's timestamp (unix ns)

    @property
    def run_id(self) -> str:
        return self.path.name.removesuffix(".ndjson")

    @property
    def nonce(self) -> str | None:
        return _str(self.prologue.get("run_nonce"))

    @property
    def workflow(self) -> str | None:
        return _str(self.prologue.get("workflow"))

    @property
    def parent_name(self) -> str | None:
        return _str(self.prologue.get("resumed_from"))

    @property
    def parent_nonce(self) -> str | None:
        return _str(self.prologue.get("resumed_from_nonce"))

    @property
    def parent_frames(self) -> int | None:
        v = self.prologue.get("resumed_from_frames")
        return v if isinstance(v, int) and not isinstance(v, bool) else None

    @property
    def parent_head(self) -> str | None:
        return _str(self.prologue.get("resumed_from_head"))

    @property
    def attempt(self) -> int:
        v = self.prologue.get("attempt")
        return v if isinstance(v, int) and not isinstance(v, bool) and v > 0 else 1

    @property
    def depth(self) -> int:
        v = self.prologue.get("depth")
        return v if isinstance(v, int) and not isinstance(v, bool) else 0


def prologue_of(path: Path) -> tuple[dict[str, Any], int | None] | None:
    """The prologue's fields and timestamp, from the first line (``None``: no prologue there)."""
    from runtime.journal.scan import parse_line

    try:
        with path.open("rb") as fh:
            first = fh.readline(1 << 20)
    except OSError:
        return None
    frame, _deep = parse_line(first.rstrip(b"\n"))
    if frame is None or frame.get("kind") != "workflow_started":
        return None
    ts = frame.get("timestamp")
    return frame_fields(frame), ts if isinstance(ts, int) and not isinstance(ts, bool) else None


def member(path: Path) -> Member | None:
    got = prologue_of(path)
    return Member(path, got[0], got[1]) if got is not None else None


def members_in(dirs: Iterable[Path]) -> list[Member]:
    """Every journal with a prologue in ``dirs`` (each once), oldest first."""
    seen: set[Path] = set()
    out: list[Member] = []
    for d in dirs:
        if not d.is_dir():
            continue
        for p in d.iterdir():
            if p.suffix != ".ndjson" or not p.is_file():
                continue
            real = p.resolve()
            if real in seen:
                continue
            seen.add(real)
            m = member(p)
            if m is not None:
                out.append(m)
    out.sort(key=lambda m: (m.started or 0, m.path.name))
    return out


class Histories:
    """The members of some trace folders, grouped into histories, with their parent pointers."""

    def __init__(self, members: list[Member]) -> None:
        self.members = members
        self._by_name = {m.path.name: m for m in members}
        self._by_nonce = {m.nonce: m for m in members if m.nonce}

    def parent(self, m: Member) -> Member | None:
        """The journal ``m`` resumed (``None`` for a fresh run, or a parent no longer there)."""
        if m.parent_nonce and m.parent_nonce in self._by_nonce:
            return self._by_nonce[m.parent_nonce]
        if m.parent_name and m.parent_name in self._by_name:
            found = self._by_name[m.parent_name]
            return found if found is not m else None
        return None

    def ancestors(self, m: Member) -> list[Member]:
        """The journals ``m`` descends from, oldest first (a loop of pointers is cut)."""
        out: list[Member] = []
        seen = {id(m)}
        p = self.parent(m)
        while p is not None and id(p) not in seen:
            seen.add(id(p))
            out.append(p)
            p = self.parent(p)
        out.reverse()
        return out

    def history_id(self, m: Member) -> str:
        """The history ``m`` belongs to: its prologue's, else (an older journal) its root's nonce or id."""
        h = _str(m.prologue.get("history"))
        if h:
            return h
        root = (self.ancestors(m) or [m])[0]
        return _str(root.prologue.get("history")) or root.nonce or root.run_id

    def history(self, m: Member) -> list[Member]:
        """Every member of ``m``'s history, oldest first."""
        h = self.history_id(m)
        return [x for x in self.members if self.history_id(x) == h]

    def descendants(self, m: Member) -> list[Member]:
        """The members that resumed ``m``, or resumed one that did, oldest first."""
        return [x for x in self.history(m) if x is not m and any(a is m for a in self.ancestors(x))]

    def groups(self) -> dict[str, list[Member]]:
        out: dict[str, list[Member]] = {}
        for m in self.members:
            out.setdefault(self.history_id(m), []).append(m)
        return out

    def find(self, path: Path) -> Member | None:
        real = path.resolve()
        return next((m for m in self.members if m.path.resolve() == real), None)


def parent_fields(hist: str, m: Member, frames: int, head: str | None) -> list[tuple[str, Any]]:
    """What a resume of ``m`` (of history ``hist``) writes in its own prologue: the history, its
    attempt, and the pointer to ``m`` with the whole frames read there and their head."""
    return [
        ("history", hist),
        ("attempt", m.attempt + 1),
        ("resumed_from", m.path.name),
        ("resumed_from_nonce", m.nonce),
        ("resumed_from_frames", frames),
        ("resumed_from_head", head),
    ]


def _str(v: Any) -> str | None:
    return v if isinstance(v, str) and v else None


# -- the journal to resume ----------------------------------------------------------------------


def candidates(views: list[Any]) -> set[str]:
    """The run ids ``nika trace ls`` marks as the journal to resume (``views``: folded runs,
    ``runtime.journal.read.RunView``): per workflow, in its newest run history, the journal holding
    the most completed work, its own and what it descends from (the newest of equals). A child
    workflow's pause is never one: its caller's journal is the one to resume; nor is a forged
    journal (``--resume`` refuses it), and a forged ancestor's work does not count (it is not read)."""
    ms = [Member(v.path, v.prologue, v.started) for v in views]
    hist = Histories(ms)
    view_of = {id(m): v for m, v in zip(ms, views, strict=True)}
    newest: dict[str, tuple[int, str]] = {}  # workflow -> (start, history) of its newest member
    for m in ms:
        v = view_of[id(m)]
        if _untrusted(v):  # empty, forged, or no prologue: nothing there to resume
            continue
        key = v.workflow or v.run_id
        mark = (m.started or 0, hist.history_id(m))
        if key not in newest or mark[0] >= newest[key][0]:
            newest[key] = mark
    out: set[str] = set()
    for key, (_, h) in newest.items():
        pick: tuple[int, int, Member] | None = None
        for m in ms:
            v = view_of[id(m)]
            if (v.workflow or v.run_id) != key or hist.history_id(m) != h or _child_pause(v) or _untrusted(v):
                continue
            done = set()
            for a in [*hist.ancestors(m), m]:
                if not _untrusted(view_of[id(a)]):
                    done |= {t for t, tv in view_of[id(a)].tasks.items() if tv.status == "success"}
            score = (len(done), m.started or 0)
            if pick is None or score >= pick[:2]:
                pick = (*score, m)
        if pick is not None:
            out.add(view_of[id(pick[2])].run_id)
    return out


def _untrusted(v: Any) -> bool:
    """Nothing there to resume: no prologue (empty), or forged (the one reader's class)."""
    return not v.prologue or getattr(v, "damage", None) == "forged"


def _child_pause(v: Any) -> bool:
    depth = v.prologue.get("depth")
    return v.state == "paused" and isinstance(depth, int) and depth > 0


def latest_history(trace_dir: Path, workflow: str) -> list[Member]:
    """The attempts of ``workflow``'s newest run history in ``trace_dir``, oldest first (empty when
    it has none): "the latest run history of this workflow", as one chain of journals."""
    hist = Histories(members_in([trace_dir]))
    mine = [m for m in hist.members if m.workflow == workflow and m.depth == 0]
    if not mine:
        return []
    newest = max(mine, key=lambda m: (m.started or 0, m.path.name))
    return hist.history(newest)
