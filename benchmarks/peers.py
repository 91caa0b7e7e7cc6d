"""`nika run` beside the tools a user might pick instead, on the same 1,000 trivial tasks.

    python benchmarks/peers.py [--tasks 1000] [--runs 7]

Each side is a whole process, timed in wall time, and the sides take turns (at least 7 rounds
after a warm-up): ``nika run`` of ``--tasks`` independent ``mock/echo`` model calls (journal
included); Dask's threaded scheduler computing as many ``dask.delayed`` calls of a function that
echoes its prompt; Prefect running a flow that submits as many such tasks (against the local
server or ephemeral API Prefect starts by itself). Neither peer is a dependency of this project:
a missing one is skipped with the command that installs it (``pip install dask`` or
``pip install prefect``). Prints each side's median and its ratio to ``nika run``.
"""

from __future__ import annotations

import argparse
import importlib.util
import statistics
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from floors import echo_workflow, wall_of

DASK = """
import sys, dask
def echo(prompt):
    return prompt
jobs = [dask.delayed(echo, pure=False)(f"task {i}") for i in range(int(sys.argv[1]))]
dask.compute(*jobs, scheduler="threads")
"""

PREFECT = """
import sys
from prefect import flow, task
@task
def echo(prompt):
    return prompt
@flow
def echoes(n):
    futures = [echo.submit(f"task {i}") for i in range(n)]
    return [f.result() for f in futures]
echoes(int(sys.argv[1]))
"""


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--tasks", type=int, default=1000)
    ap.add_argument("--runs", type=int, default=7)
    a = ap.parse_args()
    if a.runs < 7:
        ap.error("--runs: at least 7 rounds")
    with tempfile.TemporaryDirectory(prefix="nika-peers-") as tmp:
        work = Path(tmp)
        (work / "echo.nika.yaml").write_text(echo_workflow(a.tasks))
        sides = {"nika run": [sys.executable, "-m", "nika", "run", "echo.nika.yaml"]}
        for name, module, script, hint in (
            ("dask threaded", "dask", DASK, "pip install dask"),
            ("prefect", "prefect", PREFECT, "pip install prefect"),
        ):
            if importlib.util.find_spec(module) is None:
                print(f"{name}: skipped ({module} is not installed: {hint})")
                continue
            sides[name] = [sys.executable, "-c", script, str(a.tasks)]
        got: dict[str, list[float]] = {k: [] for k in sides}
        for r in range(a.runs + 1):
            names = list(sides) if r % 2 == 0 else list(sides)[::-1]
            for name in names:
                wall = wall_of(sides[name], cwd=str(work))
                if r:
                    got[name].append(wall)
    base = statistics.median(got["nika run"])
    for name, walls in got.items():
        m = statistics.median(walls)
        print(f"{name:<14} {m * 1000:8.0f} ms  {m / base:5.2f}x nika run  ({len(walls)} rounds, wall time)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
