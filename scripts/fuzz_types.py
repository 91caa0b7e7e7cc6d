#!/usr/bin/env python3
"""The soundness property of tests/checker/test_typed_soundness.py, for as long as you like.

    PYTHONPATH=. python3 scripts/fuzz_types.py --count 100000 --seed 1

Random input types, random expressions, random fitting values: prints how many expressions the
check refused and every refusal some fitting value gets through at run (a false refusal). Exits 1
when there is one.
"""

from __future__ import annotations

import argparse
import random
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.checker.typed_soundness import one_case  # noqa: E402


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--count", type=int, default=10_000)
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args()
    rng = random.Random(args.seed)
    refused = bad = 0
    t0 = time.monotonic()
    for i in range(1, args.count + 1):
        case = one_case(rng)
        if case is not None:
            refused += 1
            text, why = case
            if why is not None:
                bad += 1
                print(f"FALSE REFUSAL: {why}\n{text}", flush=True)
        if i % 10_000 == 0:
            print(f"{i} cases, {refused} refused, {bad} false, {time.monotonic() - t0:.0f}s", flush=True)
    print(f"{args.count} cases in {time.monotonic() - t0:.0f}s: {refused} refused, {bad} false refusals")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
