"""Checking many files on every core: a process pool past a file-count threshold.

Each worker checks whole files (read, compile, admission) and sends back the finished report
without its compiled model (pickling a model costs more than building it); results are merged
in input order, so the output is byte-identical to a serial run. The pool is used only when the
model is not needed afterwards (``--output-format json`` and ``--certificate`` render from it),
when there are at least :data:`MIN_FILES` files and more than one core, and where ``fork`` is
the start method (workers inherit the loaded checker instead of importing it again), and only
on cores that are idle (see :func:`jobs`). Set ``NIKA_JOBS=1`` to force a serial run
(``NIKA_JOBS=N`` asks for N workers whatever the load).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence

from checker.core.records import replace
from checker.project.report import FileReport

MIN_FILES = 48  # below this a serial run finishes before a pool pays for itself (benchmarks/check_speed.py)

Finish = Callable[[FileReport], FileReport]
_finish: Finish | None = None  # the worker's copy of the caller's finishing step (inherited by fork)


def check_one(path: str, err: str | None, finish: Finish) -> FileReport:
    """One file, read, compiled and finished (suppressions, configuration, admission)."""
    from checker.project.files import compile_path

    if err is not None:
        return finish(FileReport(path, None, (), err))
    compiled, why = compile_path(path)
    if compiled is None:
        return finish(FileReport(path, None, (), why))
    return finish(FileReport(path, compiled.source, compiled.diagnostics, compiled=compiled))


def _bare(report: FileReport) -> FileReport:
    """The report without its compiled model (freed as soon as the file is done)."""
    return replace(report, compiled=None)


def _worker(item: tuple[str, str | None]) -> FileReport:
    assert _finish is not None
    return _bare(check_one(item[0], item[1], _finish))


def jobs(count: int) -> int:
    """How many worker processes a batch of ``count`` files gets (1: check serially).

    ``NIKA_JOBS=N`` asks for N (at most one per core). Otherwise the pool takes the cores that
    are idle (the 1-minute load average subtracted): on a machine whose cores are busy anyway a
    pool only adds forking and pickling (measured on a shared 2-core machine at a load of 4–6:
    256 files took 23 % longer in wall time and 13 % more CPU than serially).
    """
    if count < MIN_FILES:
        return 1  # decided before importing multiprocessing (a one-file check never pays for it)
    wanted = os.environ.get("NIKA_JOBS", "")
    cores = _cores()
    cap = int(wanted) if wanted.isdigit() and int(wanted) > 0 else cores - _busy()
    if min(cap, cores) < 2:
        return 1  # no idle core: decided before importing multiprocessing too
    import multiprocessing

    if "fork" not in multiprocessing.get_all_start_methods():
        return 1
    return min(cap, cores, count // (MIN_FILES // 2))


def _cores() -> int:
    if hasattr(os, "sched_getaffinity"):
        return len(os.sched_getaffinity(0))
    return os.cpu_count() or 1


def _busy() -> int:
    """Cores kept busy by other work: the 1-minute load average, rounded (0 where unknown)."""
    try:
        return round(os.getloadavg()[0])
    except (AttributeError, OSError):
        return 0


def check_targets(
    targets: Sequence[tuple[str, str | None]],
    *,
    keep_model: bool,
    finish: Finish,
) -> list[FileReport]:
    """The finished reports of ``targets`` (``(path, error)`` pairs from ``expand``), in order.

    Once the first file is checked, what loads lazily has loaded (:func:`nika.heap.loaded`). Without
    ``keep_model`` no report keeps its compiled model (a batch would hold every model to the end)."""
    workers = 1 if keep_model or any(p == "-" for p, _ in targets) else jobs(len(targets))
    if not targets:
        return []
    first = check_one(*targets[0], finish)  # warms what loads lazily, once, before any worker forks
    from nika import heap

    heap.loaded()
    if workers == 1:
        if keep_model:
            return [first, *(check_one(p, e, finish) for p, e in targets[1:])]
        return [_bare(first), *(_bare(check_one(p, e, finish)) for p, e in targets[1:])]
    import multiprocessing

    global _finish
    _finish = finish
    try:
        with multiprocessing.get_context("fork").Pool(workers) as pool:
            rest = list(targets[1:])
            chunk = max(1, len(rest) // (workers * 8))
            return [_bare(first), *pool.map(_worker, rest, chunksize=chunk)]
    finally:
        _finish = None
