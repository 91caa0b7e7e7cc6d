"""What installing nika-tools costs: fresh virtual environments, `pip install .` and `.[EXTRAS]`.

Run from the project root (pip's wheel cache warm: run it once first, or pass --warm):

    python benchmarks/install_size.py [--rounds 3] [--extras all] [--warm] [--hook]

For each target (the base install, then each `--extras` value) and each round: a new virtualenv
(its creation is timed separately), `pip install -q TARGET` timed in wall-clock and CPU seconds (pip
and everything it starts), and the size of the environment's site-packages. Prints the median of
the rounds per target. The budgets of issue 35 (the base install ≤ 25 s and ≤ 120 MB) are on a
2-core machine; on a shared one quote the CPU seconds too (pip works on one core, so its CPU time is
about what it takes on an idle machine). ``--hook`` also times the `nika-check` pre-commit hook
building its own environment (pre-commit, from the running Python, `try-repo` this checkout in a
fresh git repository with a fresh PRE_COMMIT_HOME, and the hook's first check of one file; budget
≤ 30 s). Exit 1 when a median is over its budget (on CPU seconds when those are smaller).
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
BASE_SECONDS, BASE_MB, HOOK_SECONDS = 25.0, 120.0, 30.0
GOOD = 'nika: v1\nworkflow: {id: ok}\ntasks:\n  a:\n    infer: { model: mock/echo, prompt: "hi" }\n'


def _children_cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def _timed(argv: list[str], cwd: Path = ROOT, env: dict[str, str] | None = None) -> tuple[float, float]:
    cpu0, t0 = _children_cpu(), time.perf_counter()
    done = subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, cwd=cwd, env=env)
    if done.returncode:
        sys.exit(f"{' '.join(argv)} failed ({done.returncode}):\n{done.stderr}")
    return time.perf_counter() - t0, _children_cpu() - cpu0


def _size_mb(venv: Path) -> float:
    (site,) = venv.glob("lib/python*/site-packages")
    total = 0
    for dirpath, _dirs, files in os.walk(site):
        for f in files:
            p = Path(dirpath, f)
            if not p.is_symlink():
                total += p.stat().st_size
    return total / 1e6


def one(target: str) -> tuple[float, float, float, float]:
    """(venv seconds, install wall seconds, install CPU seconds, site-packages MB)."""
    tmp = Path(tempfile.mkdtemp(prefix="nika-install-"))
    try:
        venv = tmp / "venv"
        made, _ = _timed([sys.executable, "-m", "venv", str(venv)])
        wall, cpu = _timed([str(venv / "bin" / "pip"), "install", "-q", "--disable-pip-version-check", target])
        return made, wall, cpu, _size_mb(venv)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def hook() -> tuple[float, float]:
    """(wall seconds, CPU seconds) of `pre-commit try-repo . nika-check` building its environment."""
    tmp = Path(tempfile.mkdtemp(prefix="nika-hook-"))
    try:
        work = tmp / "repo"
        work.mkdir()
        env = {**os.environ, "PRE_COMMIT_HOME": str(tmp / "home"), "GIT_CONFIG_GLOBAL": os.devnull}
        env.update(GIT_AUTHOR_NAME="b", GIT_AUTHOR_EMAIL="b@example.invalid", PRE_COMMIT_COLOR="never")
        env.update(GIT_COMMITTER_NAME="b", GIT_COMMITTER_EMAIL="b@example.invalid", GIT_CONFIG_NOSYSTEM="1")
        env.pop("PYTHONPATH", None)
        subprocess.run(["git", "init", "-q", "-b", "main"], cwd=work, env=env, check=True)
        (work / "ok.nika.yaml").write_text(GOOD)
        subprocess.run(["git", "add", "."], cwd=work, env=env, check=True)
        argv = [sys.executable, "-m", "pre_commit", "try-repo", str(ROOT), "nika-check", "--files", "ok.nika.yaml"]
        return _timed(argv, work, env)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--extras", action="append", default=None, help="an extra to measure too (repeatable)")
    p.add_argument("--warm", action="store_true", help="install each target once, unmeasured, first")
    p.add_argument("--hook", action="store_true", help="time the nika-check pre-commit hook's environment too")
    p.add_argument("--no-extras", action="store_true", help="the base install only")
    a = p.parse_args()
    extras = [] if a.no_extras else a.extras if a.extras is not None else ["all"]
    targets = ["."] + [f".[{e}]" for e in extras]
    over = False
    print(f"{'target':<10} {'venv s':>7} {'wall s':>7} {'cpu s':>7} {'MB':>7}   (median of {a.rounds})")
    for target in targets:
        if a.warm:
            one(target)
        rows = [one(target) for _ in range(a.rounds)]
        made, wall, cpu, mb = (statistics.median(col) for col in zip(*rows, strict=True))
        print(
            f"{target:<10} {made:7.1f} {wall:7.1f} {cpu:7.1f} {mb:7.0f}   rounds: "
            + ", ".join(f"{r[1]:.1f}s/{r[2]:.1f}cpu" for r in rows)
        )
        if target == "." and (min(wall, cpu) > BASE_SECONDS or mb > BASE_MB):
            over = True
    if a.hook:
        rows2 = [hook() for _ in range(a.rounds)]
        wall, cpu = (statistics.median(col) for col in zip(*rows2, strict=True))
        each = ", ".join(f"{w:.1f}s/{c:.1f}cpu" for w, c in rows2)
        print(f"{'hook':<10} {'':>7} {wall:7.1f} {cpu:7.1f} {'':>7}   rounds: {each}")
        over = over or min(wall, cpu) > HOOK_SECONDS
    print(f"load average now: {os.getloadavg()[0]:.1f}")
    return 1 if over else 0


if __name__ == "__main__":
    sys.exit(main())
