"""Finding journals: the runs of a trace folder in start order, a run named by id or prefix, and a
cheap look at a journal for retention (the full fold is :func:`runtime.journal.read.read_run`).

A run is named by its journal file, or by its *run id*, the file's stem
(``20261202T015824Z-c7bcb78ffc7a``), or any unambiguous prefix of the stem or of its short id
(the part after the dash), or ``latest``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from runtime.journal.read import TERMINAL_STATE, RunView, event_of, fold_event


class RunNotFound(Exception):
    """RUN names no journal (or several): the message says which and why."""


TAIL_BYTES = 64 * 1024


def peek_run(path: Path) -> RunView:
    """The facts retention needs (workflow, state, start, size, the paused task) from the first line
    and the last ``TAIL_BYTES`` only: collection at every run start must not read every journal whole.
    The view has no tasks; :func:`read_run` is the full fold."""
    size = path.stat().st_size
    view = RunView(path=path, run_id=path.name.removesuffix(".ndjson"), size=size)
    with path.open("rb") as fh:
        first = fh.readline()
        fh.seek(max(0, size - TAIL_BYTES))
        tail = fh.read().split(b"\n")
    head = _frame(first)
    if head is not None:
        fold_event(view, str(head.get("kind", "")), event_of(head))
    last = True
    for line in reversed(tail):  # newest first: the last frame's time, then the last terminal frame
        frame = _frame(line)
        if frame is None:
            continue
        ev = event_of(frame)
        if last and isinstance(ev.get("at"), int):
            view.ended, last = ev["at"], False
        kind = frame.get("kind")
        if isinstance(kind, str) and kind in TERMINAL_STATE:
            fold_event(view, kind, ev)
            break
    return view


def _frame(line: bytes) -> dict[str, Any] | None:
    from runtime.journal.scan import parse_line

    return parse_line(line)[0]  # the one line reader: never an unbounded recursion


def journals(trace_dir: Path) -> list[Path]:
    """The journals in ``trace_dir``, oldest first: by the first frame's timestamp (names carry the
    second only, and two runs can start within one)."""
    if not trace_dir.is_dir():
        return []
    return sorted((p for p in trace_dir.iterdir() if p.suffix == ".ndjson" and p.is_file()), key=_opened)


def _opened(path: Path) -> tuple[int, str]:
    """When the run started: its first frame's timestamp, else (no readable first frame, or a
    virtual clock's, which says nothing of when it ran) the file's modification time."""
    try:
        with path.open("rb") as fh:
            head = _frame(fh.readline()) or {}
    except OSError:
        head = {}
    ts = head.get("timestamp")
    if not isinstance(ts, int) or event_of(head).get("clock") == "virtual":
        try:
            ts = path.stat().st_mtime_ns
        except OSError:
            ts = 0
    return ts, path.name


def resolve_run(name: str, trace_dir: Path) -> Path:
    """The journal ``name`` designates: a file path, else a run id or unique prefix in ``trace_dir``."""
    as_path = Path(name)
    if as_path.is_file():
        return as_path
    if not name or "/" in name or name.endswith(".ndjson"):
        raise RunNotFound(f"{name}: no such journal")
    if name == "latest":  # the newest top-level run (a child workflow's journal starts after its parent's)
        found = journals(trace_dir)
        top = [p for p in found if not _is_child(p)]
        if not found:
            raise RunNotFound(f"no journal in {trace_dir}")
        return (top or found)[-1]
    hits = [p for p in journals(trace_dir) if _matches(p.name.removesuffix(".ndjson"), name)]
    if not hits:
        raise RunNotFound(f"{name}: no run with that id in {trace_dir} (`nika trace ls` lists them)")
    if len(hits) > 1:
        ids = ", ".join(p.name.removesuffix(".ndjson") for p in hits[:5])
        raise RunNotFound(f"{name}: ambiguous, {len(hits)} runs match ({ids}{'…' if len(hits) > 5 else ''})")
    return hits[0]


def _is_child(path: Path) -> bool:
    try:
        with path.open("rb") as fh:
            head = _frame(fh.readline())
    except OSError:
        return False
    depth = event_of(head).get("depth") if head is not None else None
    return isinstance(depth, int) and depth > 0


def _matches(stem: str, name: str) -> bool:
    short = stem.rpartition("-")[2]
    return stem.startswith(name) or short.startswith(name)
