"""The Dask executor's per-task overhead against plain ``dask.delayed`` of the same function on
the same cluster (a benchmark; needs ``pip install 'nika-tools[dask]'``).

    python benchmarks/dask_overhead.py [--tasks 200] [--runs 7]

One ``LocalCluster`` of 2 single-threaded worker processes serves both sides. The subject is a
``nika run --executor dask`` of ``--tasks`` independent ``mock/echo`` model calls, through the
normal dispatch (compile, schedule, journal, the executor's submit and gather); the floor is
``dask.delayed`` of the function the executor ships (``runtime.engine.dask_worker.perform``) on
the very payloads that run sent, computed and gathered by the same client. They alternate,
``--runs`` times each after a warm-up, and the row is the median of the per-round ratios of
wall time per task. Prints one JSON object (``speed_guard.py`` reads it).
"""

from __future__ import annotations

import argparse
import asyncio
import copy
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from floors import echo_workflow


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--tasks", type=int, default=200)
    ap.add_argument("--runs", type=int, default=7)
    a = ap.parse_args()
    import dask

    from checker.engine.pipeline import compile_text
    from runtime.engine import dask_batch, dask_worker
    from runtime.engine.dask_executor import DaskSession
    from runtime.engine.options import Options
    from runtime.engine.run import Run
    from runtime.verbs import VERBS

    sent: list[dict[str, Any]] = []
    send = dask_batch.Submitter.send

    def recording(self: Any, payload: dict[str, Any], workers: Any = None) -> Any:
        sent.append(copy.copy(payload))
        return send(self, payload, workers)

    dask_batch.Submitter.send = recording  # type: ignore[method-assign]
    session = DaskSession.start(n_workers=2, dashboard=False)
    text = echo_workflow(a.tasks)

    def nika_run() -> float:
        with tempfile.TemporaryDirectory() as tmp:
            work = Path(tmp)
            t0 = time.perf_counter()
            compiled = compile_text(text, str(work / "bench.nika.yaml"), str(work))
            opts = Options(trace_dir=work / "traces", executor=session.executor, max_parallel=64)
            result = asyncio.run(Run(compiled, {}, opts, verbs=VERBS, workdir=work).execute())
            wall = time.perf_counter() - t0
        if result.workflow_state != "success":
            raise SystemExit(f"the benchmark run ended {result.workflow_state}")
        return wall

    def delayed(payloads: list[dict[str, Any]]) -> float:
        t0 = time.perf_counter()
        jobs = [dask.delayed(dask_worker.perform, pure=False)(p) for p in payloads]
        futures = session.client.compute(jobs)
        session.client.gather(futures)
        return time.perf_counter() - t0

    try:
        nika_run()  # warm the workers' imports, and record the payloads
        payloads = sent[-a.tasks :]
        if len(payloads) != a.tasks:
            raise SystemExit(f"the run sent {len(sent)} effects to the cluster, not {a.tasks}")
        delayed(payloads)
        ratios, per_nika, per_delayed = [], [], []
        for _ in range(a.runs):
            n = nika_run() / a.tasks
            d = delayed(payloads) / a.tasks
            per_nika.append(n)
            per_delayed.append(d)
            ratios.append(n / d)
    finally:
        session.close()
    print(
        json.dumps(
            {
                "ratio": statistics.median(ratios),
                "nika_ms": statistics.median(per_nika) * 1000,
                "delayed_ms": statistics.median(per_delayed) * 1000,
            }
        )
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
