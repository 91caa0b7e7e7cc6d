"""The registry-phase differential of tests/test_registry_phase.py, for as long as you like.

    PYTHONPATH=. python3 scripts/fuzz_phase.py --count 100000 --seed 1 [--out DIR]

Prints the tally (checked, accepted, run, skipped) and every failure: a run of an accepted
workflow that raised a check-phase code or an internal error. Failing mutants are saved to DIR.
"""

from __future__ import annotations

import argparse
import importlib.util
import sys
import time
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--count", type=int, default=10_000)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--chunk", type=int, default=2_000)
    ap.add_argument("--out", type=Path, default=None)
    args = ap.parse_args()
    spec = importlib.util.spec_from_file_location("nika_phase", ROOT / "tests" / "test_registry_phase.py")
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = mod  # its dataclasses look their module up while being built
    spec.loader.exec_module(mod)
    total: Counter[str] = Counter()
    codes: Counter[str] = Counter()
    t0 = time.monotonic()
    done = 0
    chunk_seed = args.seed
    while done < args.count:
        n = min(args.chunk, args.count - done)
        t = mod.differential(n, chunk_seed)
        for k in ("checked", "accepted", "ran", "skipped_unsafe", "skipped_inputs"):
            total[k] += getattr(t, k)
        for i, (code, message, data) in enumerate(t.failures):
            codes[code] += 1
            print(f"FAIL {code}: {message[:200]}", flush=True)
            if args.out is not None:
                args.out.mkdir(parents=True, exist_ok=True)
                (args.out / f"phase-{chunk_seed}-{i}.nika.yaml").write_bytes(data)
        done += n
        chunk_seed += 1
        took = time.monotonic() - t0
        print(f"{done} mutants · {dict(total)} · failures {sum(codes.values())} · {took:.0f}s", flush=True)
    print(f"done: {dict(total)} · failures by code {dict(codes)}")
    return 1 if codes else 0


if __name__ == "__main__":
    sys.exit(main())
