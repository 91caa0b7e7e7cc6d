"""Trace retention (ADR-100): bounded by default, never silently, never a pending gate.

Per workflow, keep the newest ``keep`` finished runs (default 10); collect any journal older than
``max_age`` (30 days); then, while the trace folder is over ``max_size`` (256 MB), collect the
oldest remaining journals. Two kinds are never collected whatever the caps: a run whose last
state is ``paused`` (an unanswered gate is an obligation) and the newest journal of each workflow
(the standing resume candidate), each with every journal of its run history (a resume reads
them all). An unfinished journal (killed, torn, or still being written) is
not a finished run: it does not count against ``keep`` but ages out and yields to the size cap.

The knobs are the ``NIKA_TRACE_KEEP`` / ``NIKA_TRACE_MAX_AGE`` (``30d``, ``12h``, ``90m``) /
``NIKA_TRACE_MAX_SIZE`` (``256MB``, ``1GB``, bytes) variables; ``nika doctor`` can report them.
"""

from __future__ import annotations

import re
import time
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from checker.core.records import field, record

if TYPE_CHECKING:
    from runtime.journal.read import RunView

DEFAULT_KEEP = 10
DEFAULT_MAX_AGE_S = 30 * 86_400
DEFAULT_MAX_SIZE = 256 * 1024 * 1024
_UNITS_S = {"s": 1, "m": 60, "h": 3600, "d": 86_400, "w": 7 * 86_400}
_UNITS_B = {"": 1, "b": 1, "kb": 1024, "mb": 1024**2, "gb": 1024**3}


class PolicyError(ValueError):
    """A retention knob that does not parse (named, with the value)."""


@record(slots=False)
class Policy:
    keep: int = DEFAULT_KEEP
    max_age_s: float = DEFAULT_MAX_AGE_S
    max_size: int = DEFAULT_MAX_SIZE

    @classmethod
    def from_env(cls, env: Mapping[str, str]) -> Policy:
        keep, age, size = env.get("NIKA_TRACE_KEEP"), env.get("NIKA_TRACE_MAX_AGE"), env.get("NIKA_TRACE_MAX_SIZE")
        if keep and not keep.strip().isdigit():
            raise PolicyError(f"NIKA_TRACE_KEEP `{keep}` is not a count of runs")
        try:
            return cls(
                int(keep) if keep else DEFAULT_KEEP,
                parse_duration(age) if age else DEFAULT_MAX_AGE_S,
                parse_size(size) if size else DEFAULT_MAX_SIZE,
            )
        except ValueError as exc:
            raise PolicyError(str(exc)) from None

    def to_json(self) -> dict[str, Any]:
        return {"keep": self.keep, "max_age_s": self.max_age_s, "max_size": self.max_size}


def parse_duration(text: str) -> float:
    m = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*([smhdw])\s*", text.lower())
    if m is None:
        raise ValueError(f"NIKA_TRACE_MAX_AGE `{text}` is not a duration like 30d, 12h or 90m")
    return float(m.group(1)) * _UNITS_S[m.group(2)]


def parse_size(text: str) -> int:
    m = re.fullmatch(r"\s*(\d+)\s*([kmg]?b?)\s*", text.lower())
    if m is None:
        raise ValueError(f"NIKA_TRACE_MAX_SIZE `{text}` is not a size like 256MB, 1GB or a byte count")
    return int(m.group(1)) * _UNITS_B[m.group(2) if m.group(2) in _UNITS_B else m.group(2) + "b"]


@record(frozen=False, slots=False)
class Plan:
    """What one collection removes and keeps, each removal with its reason."""

    removed: list[tuple[RunView, str]] = field(default_factory=list)  # (run, "aged" | "over-keep" | "over-budget")
    kept: list[RunView] = field(default_factory=list)

    def kept_size(self) -> int:
        return sum(r.size for r in self.kept)

    def line(self) -> str:
        """ADR-100's one stderr line: ``trace gc · removed 3 (2 aged · 1 over-budget) · kept 12 · 41MB``."""
        reasons: dict[str, int] = {}
        for _, why in self.removed:
            reasons[why] = reasons.get(why, 0) + 1
        why = " · ".join(f"{n} {r}" for r, n in sorted(reasons.items()))
        kept = f"kept {len(self.kept)} · {human_size(self.kept_size())}"
        return f"trace gc · removed {len(self.removed)} ({why}) · {kept}"

    def to_json(self) -> dict[str, Any]:
        return {
            "removed": [{"run": r.run_id, "path": str(r.path), "reason": why} for r, why in self.removed],
            "kept": [r.run_id for r in self.kept],
            "kept_size": self.kept_size(),
        }


def human_size(n: int) -> str:
    for unit, size in (("GB", 1024**3), ("MB", 1024**2), ("kB", 1024)):
        if n >= size:
            return f"{n / size:.0f}{unit}" if n >= 10 * size else f"{n / size:.1f}{unit}"
    return f"{n}B"


def plan_gc(runs: list[RunView], policy: Policy, now: float | None = None) -> Plan:
    """Decide a collection over ``runs`` (any order); pure: nothing is deleted here."""
    from runtime.journal.read import UNFINISHED

    now = time.time() if now is None else now
    ordered = sorted(runs, key=_started)  # oldest first
    exempt = {id(r) for r in ordered if r.state == "paused"}
    newest: dict[str, RunView] = {}
    for r in ordered:
        newest[r.workflow or r.run_id] = r
    exempt |= {id(r) for r in newest.values()}
    exempt |= _histories_of(ordered, exempt)  # a resume reads every attempt of its history: kept whole
    removed: dict[int, str] = {}
    by_wf: dict[str, list[RunView]] = {}
    for r in ordered:
        if now - _started(r) > policy.max_age_s and id(r) not in exempt:
            removed[id(r)] = "aged"
        elif r.state != UNFINISHED:
            by_wf.setdefault(r.workflow or r.run_id, []).append(r)
    for finished in by_wf.values():
        over = len(finished) - policy.keep
        for r in finished:
            if over <= 0:
                break
            if id(r) not in exempt and id(r) not in removed:
                removed[id(r)] = "over-keep"
                over -= 1
    total = sum(r.size for r in ordered if id(r) not in removed)
    for r in ordered:
        if total <= policy.max_size:
            break
        if id(r) not in exempt and id(r) not in removed:
            removed[id(r)] = "over-budget"
            total -= r.size
    plan = Plan()
    for r in ordered:
        if id(r) in removed:
            plan.removed.append((r, removed[id(r)]))
        else:
            plan.kept.append(r)
    return plan


def _histories_of(runs: list[RunView], exempt: set[int]) -> set[int]:
    """Every journal of a run history one of the ``exempt`` journals belongs to (issue 38)."""
    from runtime.journal.history import Histories, Member

    ms = [Member(r.path, r.prologue, r.started) for r in runs]
    hist = Histories(ms)
    keep = {hist.history_id(m) for m, r in zip(ms, runs, strict=True) if id(r) in exempt}
    return {id(r) for m, r in zip(ms, runs, strict=True) if hist.history_id(m) in keep}


def _started(r: RunView) -> float:
    """When the run started (seconds): its first frame, else (or under a virtual clock, whose
    timestamps say nothing of when it ran) the file's modification time."""
    if r.started is not None and not r.virtual_clock:
        return r.started / 1e9
    try:
        return r.path.stat().st_mtime
    except OSError:
        return 0.0


def read_all(trace_dir: Path, *, whole: bool = True) -> list[RunView]:
    """Every readable journal of ``trace_dir``, oldest first (an unreadable one is left alone);
    ``whole=False`` reads only what retention needs (:func:`runtime.journal.read.peek_run`)."""
    from runtime.journal.find import journals, peek_run
    from runtime.journal.read import read_run

    out = []
    for p in journals(trace_dir):
        try:
            out.append(read_run(p) if whole else peek_run(p))
        except OSError:
            continue
    return out


def collect_at_start(trace_dir: Path, env: Mapping[str, str]) -> str | None:
    """ADR-100 D2: the collection ``nika run`` makes before it starts, fail-open. The one line to
    print: the report when something was removed, a note when collection could not run, else None."""
    try:
        policy = Policy.from_env(env)
        if not trace_dir.is_dir():  # the first run here: nothing to collect (and no journal reader to load)
            return None
        plan = collect(trace_dir, policy)
    except (PolicyError, OSError) as exc:
        return f"nika run: note: trace gc skipped: {exc}"
    return plan.line() if plan.removed else None


def collect(trace_dir: Path, policy: Policy, *, dry_run: bool = False, now: float | None = None) -> Plan:
    """Plan a collection of ``trace_dir`` and carry it out (unless ``dry_run``)."""
    plan = plan_gc(read_all(trace_dir, whole=False), policy, now)
    if not dry_run:
        from runtime.journal.incomplete import remove_mark

        for r, _ in plan.removed:
            r.path.unlink(missing_ok=True)
            remove_mark(r.path)
    return plan
