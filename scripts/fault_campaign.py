#!/usr/bin/env python3
"""The fault-injection campaign (issue 38): many seeded kill-then-resume trials of the 30-task
workflow of ``scripts/fault_kit.py``, and the figures: interruptions, lost effects, duplicates per
interruption, refused concurrent resumes, the rider's redone tasks, and every problem found.

    python scripts/fault_campaign.py --kills 200            # until 200 interruptions, tasks one at a time
    python scripts/fault_campaign.py --kills 60 --parallel 4 --seed 1000
    python scripts/fault_campaign.py --rider 10             # plus 10 trials whose journal's disk fills up

Exit 0 when every trial passed. The default suite runs a few of these (tests/runtime/durable/test_faults.py).
"""

from __future__ import annotations

import argparse
import json
import resource
import shutil
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import fault_kit as kit


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--kills", type=int, default=200, help="run trials until this many interruptions (default 200)")
    ap.add_argument("--seed", type=int, default=0, help="the first trial's seed (the next ones follow)")
    ap.add_argument("--parallel", type=int, default=1, help="the engine's --max-parallel (default 1)")
    ap.add_argument("--rider", type=int, default=0, help="also run this many journal-refused trials")
    ap.add_argument("--keep", action="store_true", help="keep the trial folders")
    ap.add_argument("--json", action="store_true", help="print the figures as JSON")
    args = ap.parse_args()
    root = Path(tempfile.mkdtemp(prefix="nika-faults-"))
    t0, r0 = time.monotonic(), resource.getrusage(resource.RUSAGE_CHILDREN)
    base = kit.baseline(root / "baseline")
    trials: list[kit.Trial] = []
    seed = args.seed
    while sum(t.interruptions for t in trials) < args.kills:
        trials.append(kit.run_trial(seed, root / f"seed-{seed}", base, parallel=args.parallel))
        _progress(trials[-1])
        seed += 1
    riders = [kit.run_trial(s, root / f"rider-{s}", base, kit.rider_plan(s)) for s in range(args.rider)]
    for t in riders:
        _progress(t)
    r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    every = trials + riders
    per = [n for t in trials for n in t.dup_per_interruption]
    figures = {
        "trials": len(trials),
        "interruptions": sum(t.interruptions for t in trials),
        "parallel": args.parallel,
        "lost": sum(t.lost for t in every),
        "duplicates": sum(t.duplicates for t in trials),
        "max_duplicates_per_interruption": max(per, default=0),
        "interruptions_with_a_duplicate": sum(1 for n in per if n),
        "concurrent_resumes_refused": sum(a.refused for t in trials for a in t.attempts),
        "rider_trials": len(riders),
        "rider_redone_named": sum(t.rider_redone for t in riders),
        "trials_with_problems": sum(1 for t in every if t.problems),
        "cpu_s": round(r1.ru_utime - r0.ru_utime + r1.ru_stime - r0.ru_stime, 1),
        "wall_s": round(time.monotonic() - t0, 1),
        "problems": {f"seed {t.seed}": t.problems for t in every if t.problems},
    }
    if args.json:
        print(json.dumps(figures, indent=2))
    else:
        for k, v in figures.items():
            if k != "problems":
                print(f"{k:>34}: {v}")
        for where, problems in figures["problems"].items():
            for p in problems:
                print(f"  {where}: {p}")
    if not args.keep:
        shutil.rmtree(root, ignore_errors=True)
    else:
        print(f"trial folders kept in {root}")
    return 1 if figures["trials_with_problems"] else 0


def _progress(t: kit.Trial) -> None:
    mark = "ok" if not t.problems else f"{len(t.problems)} problem(s)"
    labels = " → ".join(a.fault.label() for a in t.attempts)
    print(f"seed {t.seed}: {labels} · exits {[a.code for a in t.attempts]} · {mark}", file=sys.stderr, flush=True)


if __name__ == "__main__":
    sys.exit(main())
