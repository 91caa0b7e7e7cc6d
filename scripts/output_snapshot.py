"""Snapshot what `nika check` prints for the examples and the conformance fixtures (text, JSON,
SARIF), to compare a change that must not alter any verdict or message:

    python scripts/output_snapshot.py /tmp/before      # on the base tree
    python scripts/output_snapshot.py /tmp/after       # on the changed tree
    diff -r /tmp/before /tmp/after && echo identical

One `nika check` process per file and format, started in the file's folder with the file's
name as its argument (as the conformance scorer does), so relative child paths resolve as
they do there. Each output file holds the exit status on its first line, then stdout.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SPEC = ROOT.parent / "shared" / "nika-spec"
FORMATS = ("text", "json", "sarif")


def targets() -> list[tuple[str, Path]]:
    out = [(f"examples/{p.name}", p) for p in sorted((ROOT / "examples").glob("*.yaml"))]
    if SPEC.is_dir():
        for sub in ("conformance", "templates"):
            out += [(str(p.relative_to(SPEC)), p) for p in sorted((SPEC / sub).rglob("*.yaml"))]
    else:
        print(f"note: {SPEC} is absent; only the examples are snapshotted", file=sys.stderr)
    return out


def nika() -> list[str]:
    exe = Path(sys.executable).with_name("nika")
    return [str(exe)] if exe.exists() else [sys.executable, "-m", "nika"]


def one(job: tuple[str, Path, str, Path]) -> None:
    name, path, fmt, out = job
    p = subprocess.run(
        [*nika(), "check", "--output-format", fmt, path.name],
        cwd=path.parent,
        capture_output=True,
        text=True,
        check=False,
    )
    dst = out / fmt / (name.replace("/", "__") + ".out")
    dst.write_text(f"exit {p.returncode}\n{p.stdout}")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("out", type=Path)
    ap.add_argument("--jobs", type=int, default=2)
    a = ap.parse_args()
    for fmt in FORMATS:
        (a.out / fmt).mkdir(parents=True, exist_ok=True)
    jobs = [(n, p, f, a.out) for n, p in targets() for f in FORMATS]
    with ThreadPoolExecutor(a.jobs) as pool:
        list(pool.map(one, jobs))
    print(f"{len(jobs)} outputs in {a.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
