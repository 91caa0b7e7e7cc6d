"""Benchmark `nika check`: cold start on one small workflow, and throughput over many files.

Run from the project root:

    python benchmarks/check_speed.py            # uses ../shared/nika-spec when present
    python benchmarks/check_speed.py --runs 31 --corpus some/dir

Reports medians (the machine is shared and noisy: quote medians and ratios, not single runs).
Cold start is a whole `nika check examples/<one file>` process, timed alternately with its floor
(a process loading the same file with ruamel's C safe loader: :mod:`floors`), in wall and CPU
time; the batch row is one ``nika check`` of 256 files (copies of the examples) against a floor
process loading the same files, in CPU and wall time, with both processes' peak RSS (the pool of
:mod:`nika.commands.check_pool` takes the idle cores only: on a busy machine the batch runs serially; set
``NIKA_JOBS`` to choose); throughput compiles every *.yaml file of the corpus in one process and
reports files/s and MB/s. ``benchmarks/speed_guard.py`` compares every issue-26 row against a base
commit.
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


def _nika() -> list[str]:
    exe = Path(sys.executable).with_name("nika")
    return [str(exe)] if exe.exists() else [sys.executable, "-m", "nika"]


def cold_start(runs: int, target: Path) -> tuple[list[float], list[float], list[float]]:
    """Wall times of ``nika check target``, and CPU times of it and of its floor, run alternately."""
    from floors import cpu_of, floor_argv

    check = [*_nika(), "check", "--output-format", "concise", str(target)]
    times, cpu, floor = [], [], []
    for _ in range(runs + 1):
        t0 = time.perf_counter()
        subprocess.run(check, capture_output=True, check=False)
        times.append(time.perf_counter() - t0)
        cpu.append(cpu_of(check)[0])
        floor.append(cpu_of(floor_argv([str(target)]))[0])
    return times[1:], cpu[1:], floor[1:]  # the first round warms the page cache


def timed(argv: list[str]) -> tuple[float, float, int]:
    """(wall seconds, CPU seconds, peak RSS kB) of one run of ``argv``."""
    from floors import cpu_of

    t0 = time.perf_counter()
    cpu, rss = cpu_of(argv)
    return time.perf_counter() - t0, cpu, rss


def batch_row(runs: int, n: int) -> dict[str, list[tuple[float, float, int]]]:
    """``nika check`` of ``n`` files in one call and its floor, run alternately: samples of each."""
    import tempfile

    from floors import batch, floor_argv

    with tempfile.TemporaryDirectory(prefix="nika-batch-") as tmp:
        files = batch(Path(tmp) / "batch", sorted((ROOT / "examples").glob("*.nika.yaml")), n)
        check = [*_nika(), "check", "--output-format", "concise", str(Path(tmp) / "batch")]
        got: dict[str, list[tuple[float, float, int]]] = {"check": [], "floor": []}
        for i in range(runs + 1):
            a, b = timed(check), timed(floor_argv(files))
            if i:  # the first round warms the page cache
                got["check"].append(a)
                got["floor"].append(b)
    return got


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
    ap.add_argument("--batch", type=int, default=256, help="files in the batch row (0: skip it)")
    ap.add_argument("--batch-runs", type=int, default=7)
    a = ap.parse_args()
    t, cpu, floor = cold_start(a.runs, a.target)
    c, f = statistics.median(cpu), statistics.median(floor)
    print(
        f"cold start  nika check {a.target.name}: median {statistics.median(t) * 1000:.1f} ms "
        f"(min {min(t) * 1000:.1f}, max {max(t) * 1000:.1f}, {len(t)} runs); CPU {c * 1000:.1f} ms "
        f"against the floor's {f * 1000:.1f} ms = {c / f:.2f}x"
    )
    if a.batch:
        got = batch_row(a.batch_runs, a.batch)
        med = {k: [statistics.median(s[j] for s in v) for j in range(2)] for k, v in got.items()}
        rss = {k: max(s[2] for s in v) for k, v in got.items()}
        (cw, cc), (fw, fc) = med["check"], med["floor"]
        print(
            f"batch       nika check of {a.batch} files in one call ({a.batch_runs} runs, medians): CPU "
            f"{cc * 1000:.0f} ms against the floor's {fc * 1000:.0f} ms = {cc / fc:.2f}x; wall {cw * 1000:.0f} ms "
            f"against {fw * 1000:.0f} ms = {cw / fw:.2f}x; peak RSS {rss['check']} kB against the floor's "
            f"{rss['floor']} kB = {rss['check'] / max(rss['floor'], 1):.2f}x"
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
