#!/usr/bin/env python3
"""A longer fuzz campaign for ``nika check``, with the mutator and judge of tests/checker/test_fuzz.py.

    python3 scripts/fuzz_check.py --count 100000 --jobs 2 --out /tmp/nika-fuzz

Runs ``count`` mutants of the examples, the golden cases and (when present) the upstream
templates, prints one line per class of failure (the first broken promise with digits and
quoted text masked) with how often it happened, and saves the smallest input of each class
under ``--out`` for a regression test. Exits 1 when anything broke.
"""

from __future__ import annotations

import argparse
import importlib.util
import multiprocessing
import re
import sys
import time
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def _load_fuzz():  # type: ignore[no-untyped-def]
    spec = importlib.util.spec_from_file_location("nika_fuzz", ROOT / "tests" / "checker" / "test_fuzz.py")
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


FUZZ = _load_fuzz()


# Seconds one mutant may take through compile + every format (generous: shared CI cores). A measure
# of the campaign, never of the test suite, which shares the mutator and the judge.
PER_FILE_BUDGET = 5.0


def _klass(problem: str) -> str:
    return re.sub(r"`[^`]*`|'[^']*'|\d+", "_", problem)[:160]


def _findings(data: bytes) -> list[tuple[object, ...]]:
    from checker.engine.pipeline import compile_bytes

    compiled = compile_bytes(data, "fuzz.nika.yaml")
    return [(d.code, d.rule, d.span.start, d.span.end, d.message, d.help) for d in compiled.diagnostics]


def _work(args: tuple[int, int, int, int]) -> tuple[list[tuple[str, bytes, str]], str]:
    """The failures of one batch, and a digest of every finding of the batch (compared across
    processes started with different hash seeds: a result that depends on set order shows)."""
    import hashlib

    seed, count, depth, every = args
    seeds = FUZZ.own_seeds() + FUZZ.template_seeds()
    out = []
    digest = hashlib.sha256()
    for i, data in enumerate(FUZZ.mutants(seeds, count, seed, depth)):
        t0 = time.perf_counter()
        problems = FUZZ.check_one(data)
        took = time.perf_counter() - t0
        if took > PER_FILE_BUDGET:
            problems.append(f"took {took:.1f}s")
        if every and i % every == 0:
            first, second = _findings(data), _findings(data)
            if first != second:
                problems.append(f"non-deterministic: two checks of one input differ ({len(first)} vs {len(second)})")
            digest.update(repr(first).encode())
        if problems:
            out.append((_klass(problems[0]), data, problems[0]))
    return out, digest.hexdigest()


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--count", type=int, default=50_000)
    p.add_argument("--jobs", type=int, default=2)
    p.add_argument("--seed", type=int, default=1000, help="first seed; each batch of 1000 mutants gets the next")
    p.add_argument("--depth", type=int, default=3, help="at most this many damages per mutant")
    p.add_argument("--out", type=Path, default=Path("/tmp/nika-fuzz"))
    p.add_argument(
        "--determinism",
        type=int,
        default=0,
        metavar="N",
        help="check every Nth input twice more and write one digest per batch to OUT/digests.txt (run "
        "again under another PYTHONHASHSEED and compare the files)",
    )
    a = p.parse_args()
    batches = [
        (a.seed + i, min(1000, a.count - i * 1000), a.depth, a.determinism) for i in range((a.count + 999) // 1000)
    ]
    digests: dict[int, str] = {}
    classes: Counter[str] = Counter()
    smallest: dict[str, tuple[bytes, str]] = {}
    t0 = time.perf_counter()
    with multiprocessing.Pool(a.jobs) as pool:
        for done, (found, digest) in enumerate(pool.imap(_work, batches), start=1):
            digests[a.seed + done - 1] = digest
            for klass, data, problem in found:
                classes[klass] += 1
                if klass not in smallest or len(data) < len(smallest[klass][0]):
                    smallest[klass] = (data, problem)
            if done % 10 == 0:
                print(
                    f"{done * 1000} mutants, {sum(classes.values())} failures, {time.perf_counter() - t0:.0f}s",
                    flush=True,
                )
    print(f"{a.count} mutants in {time.perf_counter() - t0:.0f}s: {sum(classes.values())} failures")
    a.out.mkdir(parents=True, exist_ok=True)
    if a.determinism:
        (a.out / "digests.txt").write_text("".join(f"{k} {v}\n" for k, v in sorted(digests.items())))
    for i, (klass, n) in enumerate(classes.most_common()):
        data, problem = smallest[klass]
        (a.out / f"class-{i:02d}.nika.yaml").write_bytes(data)
        print(f"{n:6d}  {problem[:200]}  -> class-{i:02d}.nika.yaml")
    return 1 if classes else 0


if __name__ == "__main__":
    sys.exit(main())
