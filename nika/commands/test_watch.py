"""``nika test [PATH…] --watch``: run the cases, then on each save re-run the test files it touches.

A save of a test file re-runs that file's cases; a save of a workflow re-runs the cases of every
test file naming it. Cases run under the mock provider and write no trace, so a re-run is the whole
of each touched test file (nothing to reuse). The set of watched files is discovered again after
each cycle, so a test file naming another workflow is followed; a test file read half-written keeps
the workflow it named before. Stopping (Ctrl-C) exits 2, the code
``nika test`` gives an interrupted run (pytest's).
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any, TextIO

INTERRUPTED = 2


def watched(
    paths: list[str],
    discover: Callable[[list[str]], tuple[list[Path], list[str]]],
    before: dict[str, set[str]] | None = None,
) -> dict[str, set[str]]:
    """``{absolute path: {test files it re-runs}}`` for the test files ``discover`` finds under ``paths``.

    A test file that does not load (a save caught half-written, or a mistake the run reports) keeps
    the workflow it named in ``before``, the previous table: a watch set never loses a workflow
    because its test file was read mid-save."""
    from nika.testing.runner import _workflow_path
    from nika.testing.spec import SpecError, is_test_file, load

    out: dict[str, set[str]] = {}
    files, _ = discover(paths or ["."])
    for f in files:
        if not is_test_file(f):
            continue
        me = os.path.realpath(f)
        out.setdefault(me, set()).add(str(f))
        try:
            test = load(f)
        except SpecError:  # reported by the run; a save of the test file re-runs it
            for target, tests in (before or {}).items():
                if target != me and str(f) in tests:
                    out.setdefault(target, set()).add(str(f))
            continue
        out.setdefault(os.path.realpath(_workflow_path(test)), set()).add(str(f))
    return out


Stamp = tuple[int, int, int] | None


def stamps(files: set[str]) -> dict[str, Stamp]:
    """What each file is now (inode, size, modification time; ``None`` when absent): a save made
    while no watcher ran shows as a changed stamp."""
    out: dict[str, Stamp] = {}
    for f in files:
        try:
            st = os.stat(f)
        except OSError:
            out[f] = None
        else:
            out[f] = (st.st_ino, st.st_size, st.st_mtime_ns)
    return out


def _folders(table: dict[str, set[str]]) -> list[str]:
    return sorted({os.path.dirname(p) for p in table if os.path.isdir(os.path.dirname(p))})


class _Session:
    """The watch table (what re-runs which test files), the stamps last seen, and one re-run."""

    def __init__(self, paths: list[str], command: Any, keyword: str | None, verbose: bool, out: TextIO, err: TextIO):
        self.paths, self.run, self.discover = paths, command.run_tests, command.discover
        self.keyword, self.verbose, self.out, self.err = keyword, verbose, out, err
        self.table = watched(paths, self.discover)
        self.seen = stamps(set(self.table))

    def first(self) -> None:
        self.run(self.paths, keyword=self.keyword, verbose=self.verbose, out=self.out)

    def rerun(self, saved: set[str]) -> None:
        self.seen = {**self.seen, **stamps(saved)}
        tests = sorted({t for s in saved for t in self.table.get(s, ())})
        print(f"\n{', '.join(_shown(s) for s in sorted(saved))} changed", file=self.err, flush=True)
        status = self.run(tests, keyword=self.keyword, verbose=self.verbose, out=self.out) if tests else 5
        self.table = watched(self.paths, self.discover, self.table)
        self.seen = {**stamps(set(self.table)), **self.seen}
        print(f"re-run finished: {', '.join(tests) or 'no test file'} · exit {status}", file=self.err, flush=True)

    def watch(self, watchfiles: Any, folders: list[str], debounce_ms: int, stop: Any) -> bool:
        """One watcher over ``folders`` until it ends (False) or the folders change (True)."""
        from nika.commands.run_watch import READY_MS

        keep = set(self.table)  # read by the filter, updated in place after each re-run
        ready = False
        for changes in watchfiles.watch(
            *folders,
            watch_filter=lambda _c, p: os.path.realpath(p) in keep,
            debounce=debounce_ms,
            step=max(1, min(50, debounce_ms)),
            stop_event=stop,
            recursive=False,
            rust_timeout=READY_MS,
            yield_on_timeout=True,
        ):
            saved = {os.path.realpath(p) for _, p in changes}
            if not ready:  # the OS watches are in place: a save from now on is in the queue
                ready = True
                print(f"watching {len(keep)} files (Ctrl-C stops)", file=self.err, flush=True)
                now = stamps(keep)
                saved |= {f for f in keep if f in self.seen and now[f] != self.seen[f]}  # saved between watchers
            if not saved:
                continue
            self.rerun(saved)
            if _folders(self.table) != folders:  # a test file now names a workflow elsewhere: watch anew
                return True
            keep.clear()
            keep.update(self.table)
        return False


def watch_tests(
    paths: list[str],
    command: Any,
    *,
    keyword: str | None = None,
    verbose: bool = False,
    debounce_ms: int = 200,
    stop: Any = None,
    out: TextIO | None = None,
    err: TextIO | None = None,
) -> int:
    """The session: one full run, then a re-run of the touched test files per save (``command``:
    :mod:`nika.commands.test`, whose ``run_tests`` and ``discover`` it uses: handed in by it, so this
    module never imports the command that imports it).

    One watcher runs as long as the watched folders stay the same: after a re-run, the table is
    discovered again and the watcher's filter reads the new set in place, so a save made during a
    re-run is still in the watcher's queue. Only a new folder starts a new watcher; a save made in
    between is found by its changed stamp once the new watcher is in place."""
    from nika.commands.run_watch import MISSING, load_watchfiles

    out, err = out or sys.stdout, err or sys.stderr
    watchfiles = load_watchfiles()
    if watchfiles is None:
        print(f"nika test: {MISSING}", file=err)
        return 4
    if debounce_ms < 0:
        print(f"nika test: --debounce must be a number of milliseconds ≥ 0, not {debounce_ms}", file=err)
        return 4
    session = _Session(paths, command, keyword, verbose, out, err)
    session.first()
    try:
        while not (stop is not None and stop.is_set()):
            folders = _folders(session.table)
            if not folders:
                print("nika test: no test file to watch", file=err)
                return 5
            if not session.watch(watchfiles, folders, debounce_ms, stop):
                break
    except KeyboardInterrupt:
        pass
    print("watch stopped", file=err, flush=True)
    return INTERRUPTED


def _shown(path: str) -> str:
    rel = os.path.relpath(path)
    return rel if not rel.startswith("..") else str(Path(path))
