"""Benchmark `nika run`: parallel exec fan-out and scheduler overhead (a benchmark, not a test).

Run from the project root:

    python benchmarks/run_speed.py [--rounds 5] [--tasks 1000] [--fanout 50]

Reports medians over the rounds (the machine is shared and noisy: quote medians and ratios).

1. Fan-out: wall time of a run of N independent `exec: sleep 0.2` tasks against a run of one
   such task. Goal: at most 0.2 s more (the tasks overlap; only spawning is serial).
2. Overhead: a run of 1,000 independent `mock/echo` tasks (scheduling, the dispatch pipeline, the
   hash-chained journal written to a temporary directory) against `nika check` of the same file
   (compile and every rule). Goal: the run adds at most 2x the check's time.

Both are measured in one process (compile and run through the same functions `nika run` uses),
so interpreter start-up, the same for both sides, is left out. The overhead row gives wall and CPU
time (user + system of this process: steadier on a shared machine). The issue-26 rows, whole
`nika run` / `nika check` processes side by side (imports and exit included), are in
`benchmarks/speed_guard.py`.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from checker.engine.pipeline import compile_text  # noqa: E402
from runtime.engine.options import Options  # noqa: E402
from runtime.engine.run import Run  # noqa: E402
from runtime.verbs import VERBS  # noqa: E402


def fanout_workflow(n: int) -> str:
    lines = ["nika: v1", "workflow: { id: fanout }", 'permits: { exec: ["sleep"] }', "tasks:"]
    for i in range(n):
        lines += [f"  t{i}:", '    exec: { command: ["sleep", "0.2"] }']
    return "\n".join(lines) + "\n"


def echo_workflow(n: int) -> str:
    lines = ["nika: v1", "workflow: { id: echo }", "model: mock/echo", "tasks:"]
    for i in range(n):
        lines += [f"  t{i}:", f'    infer: {{ prompt: "task {i}" }}']
    return "\n".join(lines) + "\n"


def timed_run(text: str, workdir: Path, clock: Callable[[], float] = time.perf_counter) -> tuple[float, float]:
    """(compile seconds, run seconds) for one workflow text, by ``clock``."""
    t0 = clock()
    compiled = compile_text(text, str(workdir / "bench.nika.yaml"), str(workdir))
    t1 = clock()
    assert compiled.clean, [d.message for d in compiled.diagnostics if d.is_error][:3]
    result = asyncio.run(
        Run(compiled, {}, Options(trace_dir=workdir / "traces"), verbs=VERBS, workdir=workdir).execute()
    )
    t2 = clock()
    assert result.workflow_state == "success", result.workflow_state
    return t1 - t0, t2 - t1


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--tasks", type=int, default=1000)
    ap.add_argument("--fanout", type=int, default=50)
    a = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        one, many = [], []
        for _ in range(a.rounds):
            one.append(sum(timed_run(fanout_workflow(1), work)))
            many.append(sum(timed_run(fanout_workflow(a.fanout), work)))
        m1, mn = statistics.median(one), statistics.median(many)
        print(f"fan-out: 1 x sleep 0.2 = {m1:.3f} s; {a.fanout} x sleep 0.2 = {mn:.3f} s; extra {mn - m1:.3f} s")
        print(f"  goal: extra <= 0.200 s -> {'met' if mn - m1 <= 0.2 else 'NOT met'}")

        text = echo_workflow(a.tasks)
        for name, clock in (("wall", time.perf_counter), ("cpu", time.process_time)):
            checks, runs = [], []
            for _ in range(a.rounds):
                c, r = timed_run(text, work, clock)
                checks.append(c)
                runs.append(r)
            mc, mr = statistics.median(checks), statistics.median(runs)
            print(
                f"overhead ({name}): check of {a.tasks} mock/echo tasks = {mc:.3f} s; run = {mr:.3f} s "
                f"({mr / mc:.2f}x the check)"
            )
            print(f"  goal: run <= 2x check -> {'met' if mr <= 2 * mc else 'NOT met'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
