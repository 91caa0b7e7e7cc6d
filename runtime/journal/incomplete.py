"""The infallible rider's mark (spec 17): a journal its run could not write whole says so.

When the journal cannot be written (a full or read-only disk, a file size limit), the run goes on
and its verdict and outputs stand (spec 17: journal I/O failure never changes them); the frames
from the failing one on are lost. The run then reports it after the run, as a note naming the
frame the journal is incomplete from, and leaves a small *mark* beside the journal,
``<run id>.incomplete.json``: that frame, how many frames the run emitted, the error, and what the
lost frames said (the tasks that completed, the effects witnessed, how the run ended). The mark is
the run's own account, not chained: ``nika trace ls``/``show``/``verify`` say the journal is
incomplete from frame N, and ``--resume`` names the completed tasks it cannot see and will run
again (their effects happened once already). When even the mark cannot be written (the disk is
full for every file), the note says that too.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

SUFFIX = ".incomplete.json"
# Kinds of the lost frames the mark keeps a word of (by task): what a resume will not see.
NOTABLE = frozenset({"task_started", "task_completed", "task_cache_hit", "permit_checked", "approval_decided"})
MAX_NAMED = 2000  # the mark stays small whatever the run


def mark_path(journal: Path) -> Path:
    return journal.with_name(journal.name.removesuffix(".ndjson") + SUFFIX)


def write_mark(journal: Path, mark: dict[str, Any]) -> bool:
    """Leave ``mark`` beside ``journal`` (whether it could be written)."""
    data = json.dumps(mark, sort_keys=True, ensure_ascii=False, default=str).encode("utf-8")
    try:
        fd = os.open(mark_path(journal), os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    except OSError:
        return False
    try:
        view = memoryview(data)
        while view:
            n = os.write(fd, view)
            if not n:
                return False
            view = view[n:]
        os.fsync(fd)
    except OSError:
        return False
    finally:
        os.close(fd)
    return True


def read_mark(journal: Path) -> dict[str, Any] | None:
    """The mark the run of ``journal`` left, if any (one that does not parse is none)."""
    try:
        doc = json.loads(mark_path(journal).read_bytes())
    except (OSError, ValueError, RecursionError):
        return None
    return doc if isinstance(doc, dict) and isinstance(doc.get("from_frame"), int) else None


def remove_mark(journal: Path) -> None:
    mark_path(journal).unlink(missing_ok=True)


def names(mark: dict[str, Any], key: str) -> list[str]:
    got = mark.get(key)
    return [t for t in got if isinstance(t, str)] if isinstance(got, list) else []


def describe(mark: dict[str, Any]) -> str:
    """One sentence: from which frame, why, and what the lost frames held by the run's account."""
    n, total = mark.get("from_frame"), mark.get("frames")
    why = mark.get("error") or "an I/O error"
    done = names(mark, "completed")
    said = f"the journal is incomplete from frame {n}" + (f" of {total}" if isinstance(total, int) else "")
    said += f": the run could not write it ({why})"
    if done:
        shown = ", ".join(f"`{t}`" for t in done[:8]) + (f" and {len(done) - 8} more" if len(done) > 8 else "")
        said += f"; by the run's own account {len(done)} task(s) completed unseen after that: {shown}"
    end = mark.get("end")
    if isinstance(end, str):
        said += f"; the run ended {end.removeprefix('workflow_')}"
    return said
