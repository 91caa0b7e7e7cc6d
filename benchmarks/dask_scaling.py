"""Benchmark the Dask executor (a benchmark, not a test; needs `pip install 'nika-tools[dask]'`).

Run from the project root:

    python benchmarks/dask_scaling.py [--mock-tasks 1000] [--sleep-tasks 200] [--sleep 0.5] [--workers 1,2,4]

1. Per-task overhead: a run of N independent `mock/echo` model calls on the local executor and
   on a LocalCluster of 2 single-threaded worker processes, alternated three times; the difference
   of the median wall times over N, and of the driver's CPU times. Goal: at most 5 ms per task.
2. Scaling: the wall time of M independent `exec: sleep S` tasks on LocalClusters of 1, 2 and 4
   single-threaded worker processes (the ideal is M * S / workers). Goal: near-linear.

Clusters are started before the clock starts; the journal goes to a temporary directory.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from checker.engine.pipeline import compile_text  # noqa: E402
from runtime.engine.dask_executor import DaskSession  # noqa: E402
from runtime.engine.options import Options  # noqa: E402
from runtime.engine.run import Run  # noqa: E402
from runtime.verbs import VERBS  # noqa: E402


def echo_workflow(n: int) -> str:
    lines = ["nika: v1", "workflow: { id: echo }", "model: mock/echo", "tasks:"]
    for i in range(n):
        lines += [f"  t{i}:", f'    infer: {{ prompt: "task {i}" }}']
    return "\n".join(lines) + "\n"


def sleep_workflow(n: int, seconds: float) -> str:
    lines = ["nika: v1", "workflow: { id: sleeps }", 'permits: { exec: ["sleep"] }', "tasks:"]
    for i in range(n):
        lines += [f"  t{i}:", f'    exec: {{ command: ["sleep", "{seconds}"] }}']
    return "\n".join(lines) + "\n"


def timed_run(text: str, executor: Any, max_parallel: int) -> float:
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        compiled = compile_text(text, str(work / "bench.nika.yaml"), str(work))
        opts = Options(trace_dir=work / "traces", executor=executor, max_parallel=max_parallel)
        t0 = time.perf_counter()
        result = asyncio.run(Run(compiled, {}, opts, verbs=VERBS, workdir=work).execute())
        wall = time.perf_counter() - t0
    if result.workflow_state != "success":
        raise SystemExit(f"the benchmark run ended {result.workflow_state}")
    return wall


def cpu_s() -> float:
    """CPU time of this process (the driver: the run's loop, the client and the local scheduler)."""
    import resource

    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


def overhead(n: int, reps: int = 3) -> None:
    import statistics

    text = echo_workflow(n)
    session = DaskSession.start(n_workers=2, dashboard=False)
    walls: dict[str, list[float]] = {"local": [], "dask": []}
    cpus: dict[str, list[float]] = {"local": [], "dask": []}
    try:
        timed_run(echo_workflow(20), session.executor, 64)  # warm the workers' imports
        for _ in range(reps):  # side by side, alternating: this machine's load drifts
            for name, executor in (("local", "local"), ("dask", session.executor)):
                c0 = cpu_s()
                walls[name].append(timed_run(text, executor, 64))
                cpus[name].append(cpu_s() - c0)
    finally:
        session.close()
    local, dask = statistics.median(walls["local"]), statistics.median(walls["dask"])
    per_task = (dask - local) / n * 1000
    per_cpu = (statistics.median(cpus["dask"]) - statistics.median(cpus["local"])) / n * 1000
    print(
        f"overhead: {n} mock tasks, median of {reps}  local {local:.2f}s  dask(2 workers) {dask:.2f}s  ->  "
        f"{per_task:.2f} ms/task wall, {per_cpu:.2f} ms/task driver CPU"
    )


def scaling(n: int, seconds: float, workers: list[int]) -> None:
    text = sleep_workflow(n, seconds)
    for w in workers:
        session = DaskSession.start(n_workers=w, dashboard=False)
        try:
            timed_run(sleep_workflow(w, 0.01), session.executor, 64)  # warm
            wall = timed_run(text, session.executor, max(64, w))
        finally:
            session.close()
        ideal = n * seconds / w
        eff = ideal / wall
        print(f"scaling: {n} x sleep {seconds}s on {w} worker(s)  {wall:.2f}s  (ideal {ideal:.2f}s, {eff:.0%})")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--mock-tasks", type=int, default=1000)
    ap.add_argument("--sleep-tasks", type=int, default=200)
    ap.add_argument("--sleep", type=float, default=0.5)
    ap.add_argument("--workers", default="1,2,4")
    args = ap.parse_args()
    overhead(args.mock_tasks)
    scaling(args.sleep_tasks, args.sleep, [int(w) for w in args.workers.split(",")])


if __name__ == "__main__":
    main()
