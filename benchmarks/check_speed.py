"""Benchmark `nika check`: cold start on one small workflow, and throughput over many files.

Run from the project root:

    python benchmarks/check_speed.py            # uses ../shared/nika-spec when present
    python benchmarks/check_speed.py --runs 31 --corpus some/dir

Reports medians (the machine is shared and noisy: quote medians and ratios, not single runs).
Cold start is a whole `nika check examples/<one file>` process, timed alternately with its floor
(a process loading the same file with ruamel's C safe loader: :mod:`floors`), in wall and CPU
time; throughput compiles every *.yaml file of the corpus in one process and reports files/s and
MB/s. ``benchmarks/speed_guard.py`` compares every issue-26 row against a base commit.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(Path(__file__).resolve().parent))  # floors.py


def cold_start(runs: int, target: Path) -> tuple[list[float], list[float], list[float]]:
    """Wall times of ``nika check target``, and CPU times of it and of its floor, run alternately."""
    from floors import cpu_of, floor_argv

    exe = Path(sys.executable).with_name("nika")
    argv = [str(exe)] if exe.exists() else [sys.executable, "-m", "nika"]
    check = [*argv, "check", "--output-format", "concise", str(target)]
    times, cpu, floor = [], [], []
    for _ in range(runs + 1):
        t0 = time.perf_counter()
        subprocess.run(check, capture_output=True, check=False)
        times.append(time.perf_counter() - t0)
        cpu.append(cpu_of(check)[0])
        floor.append(cpu_of(floor_argv([str(target)]))[0])
    return times[1:], cpu[1:], floor[1:]  # the first round warms the page cache


def throughput(corpus: Path, rounds: int) -> tuple[int, int, list[float]]:
    from checker.project.files import compile_path

    files = sorted(str(p) for p in corpus.rglob("*.yaml") if p.stat().st_size < 1_048_576)
    size = sum(Path(f).stat().st_size for f in files)
    times = []
    for _ in range(rounds):
        t0 = time.perf_counter()
        for f in files:
            compile_path(f)
        times.append(time.perf_counter() - t0)
    return len(files), size, times


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=21)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--target", type=Path, default=ROOT / "examples" / "summarize-article.nika.yaml")
    ap.add_argument("--corpus", type=Path, default=ROOT.parent / "shared" / "nika-spec")
    a = ap.parse_args()
    t, cpu, floor = cold_start(a.runs, a.target)
    c, f = statistics.median(cpu), statistics.median(floor)
    print(
        f"cold start  nika check {a.target.name}: median {statistics.median(t) * 1000:.1f} ms "
        f"(min {min(t) * 1000:.1f}, max {max(t) * 1000:.1f}, {len(t)} runs); CPU {c * 1000:.1f} ms "
        f"against the floor's {f * 1000:.1f} ms = {c / f:.2f}x"
    )
    corpus = a.corpus if a.corpus.is_dir() else ROOT / "examples"
    n, size, tt = throughput(corpus, a.rounds)
    med = statistics.median(tt)
    print(
        f"throughput  {n} files, {size / 1e6:.2f} MB from {corpus}: median {med * 1000:.0f} ms per pass = "
        f"{n / med:.0f} files/s, {size / 1e6 / med:.2f} MB/s ({a.rounds} passes, in-process, warm)"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
