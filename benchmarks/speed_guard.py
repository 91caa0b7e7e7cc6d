"""Speed regression guard: the issue-26 rows, this tree against a base commit, side by side.

    python benchmarks/speed_guard.py                 # against HEAD~1
    python benchmarks/speed_guard.py --base main --runs 9

The base commit is exported (``git archive``) to a temporary folder; both trees get their
``.pyc`` files compiled first (an installed package has them). Every row runs the base's and this
tree's command alternately, ``--runs`` times each (after one warm-up), from a temporary working
folder (never the tree's root: ``python -m nika`` puts the working folder first on ``sys.path``),
and reports median CPU time (user + system): steadier than wall time on a shared machine.

Rows: cold ``nika check`` of one file and of 256 files in one call, each against its floor (a
process loading the same files with ruamel's C safe loader); ``nika run`` of a one-task workflow
and of 1,000 ``mock/echo`` tasks, each against ``nika check`` of the same file; the language
server's per-edit analysis of a 500-task document (the document store's change, analysis and
diagnostics, in process) against a libyaml event scan of the same text; peak RSS of the 256-file
check and of its floor.

Exits 1, loudly, when any row of this tree is more than 15 % slower than the base's. A benchmark
to run by hand before merging a change that could cost speed, not a timed test.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from floors import batch, cpu_of, echo_workflow, floor_argv

ROOT = Path(__file__).resolve().parents[1]
LIMIT = 1.15

# The language server's per-edit work, in a child process of the tree under test: prints the
# median CPU ms of the analysis after an edit in the first task and of a libyaml event scan.
LSP_PROBE = r"""
import statistics, sys, time
from _ruamel_yaml import CParser
from lsprotocol import types as lsp
from nika_lsp.documents import Documents
from nika_lsp.features import diagnostics
lines = ["nika: v1", "workflow:", "  id: bench", "model: mock/echo", "tasks:"]
for i in range(500):
    lines.append(f"  t{i}:")
    if i:
        lines += ["    with:", f"      prev: ${{{{ tasks.t{i - 1}.output }}}}"]
        lines.append(f'    infer: {{ prompt: "step {i} after ${{{{ with.prev }}}}" }}')
    else:
        lines.append('    infer: { prompt: "start" }')
text = "\n".join(lines) + "\n"
uri = "file:///tmp/nika-bench/bench.nika.yaml"
docs = Documents()
docs.set(uri, text, 1)
docs.snapshot(uri)
work, scan = [], []
for r in range(int(sys.argv[1])):
    edited = text.replace('prompt: "start"', f'prompt: "start {r}{"x" * (r % 2)}"')
    t0 = time.process_time()
    p = CParser(edited)
    while p.get_event() is not None:
        pass
    scan.append(time.process_time() - t0)
    t0 = time.process_time()
    docs.change(uri, r + 2, [lsp.TextDocumentContentChangeWholeDocument(text=edited)])
    diagnostics.diagnostics_for(docs.snapshot(uri), "utf-16", related_support=True)
    work.append(time.process_time() - t0)
print(statistics.median(work) * 1000, statistics.median(scan) * 1000)
"""


def export(rev: str, into: Path) -> Path:
    """The tree of ``rev`` in ``into`` (``git archive``)."""
    into.mkdir(parents=True)
    archive = subprocess.run(["git", "-C", str(ROOT), "archive", rev], capture_output=True, check=True).stdout
    subprocess.run(["tar", "-x", "-C", str(into)], input=archive, check=True)
    return into


def compile_pyc(tree: Path) -> None:
    dirs = [d for d in ("checker", "nika", "nika_lsp", "runtime") if (tree / d).is_dir()]
    subprocess.run([sys.executable, "-m", "compileall", "-q", *dirs], cwd=tree, check=False)


class Bench:
    def __init__(self, trees: dict[str, Path], work: Path, runs: int) -> None:
        self.trees, self.work, self.runs = trees, work, runs
        self.env = {name: dict(os.environ, PYTHONPATH=str(tree)) for name, tree in trees.items()}

    def nika(self, *args: str) -> list[str]:
        return [sys.executable, "-m", "nika", *args]

    def measure(self, make: dict[str, Callable[[], tuple[float, int]]]) -> dict[str, tuple[float, int]]:
        """Median CPU seconds and peak RSS of each labelled command, run alternately."""
        got: dict[str, list[tuple[float, int]]] = {k: [] for k in make}
        for i in range(self.runs + 1):
            for label, fn in make.items():
                shutil.rmtree(self.work / ".nika", ignore_errors=True)  # the runs' traces
                sample = fn()
                if i:  # the first round warms the page cache
                    got[label].append(sample)
        return {k: (statistics.median(c for c, _ in v), max(r for _, r in v)) for k, v in got.items()}

    def proc(self, tree: str, argv: list[str]) -> Callable[[], tuple[float, int]]:
        return lambda: cpu_of(argv, env=self.env[tree], cwd=str(self.work))

    def floor(self, files: list[str]) -> Callable[[], tuple[float, int]]:
        return lambda: cpu_of(floor_argv(files), cwd=str(self.work))

    def lsp(self, tree: str) -> tuple[float, float]:
        out = subprocess.run(
            [sys.executable, "-c", LSP_PROBE, str(max(self.runs * 4, 30))],
            env=self.env[tree],
            cwd=str(self.work),
            capture_output=True,
            text=True,
            check=True,
        ).stdout.split()
        return float(out[0]), float(out[1])


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--base", default="HEAD~1", help="the commit to compare against (default HEAD~1)")
    ap.add_argument("--runs", type=int, default=7)
    a = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="nika-speed-") as tmp:
        t = Path(tmp)
        trees = {"base": export(a.base, t / "base"), "this": ROOT}
        for tree in trees.values():
            compile_pyc(tree)
        work = t / "work"
        work.mkdir()
        one = ROOT / "examples" / "summarize-article.nika.yaml"
        files = batch(work / "batch", sorted((ROOT / "examples").glob("*.nika.yaml")), 256)
        (work / "one.nika.yaml").write_text(echo_workflow(1))
        (work / "many.nika.yaml").write_text(echo_workflow(1000))
        b = Bench(trees, work, a.runs)
        rows: list[tuple[str, dict[str, tuple[float, int]], str]] = []
        plans = [
            ("check one file, cold", ["check", str(one)], b.floor([str(one)]), "floor"),
            ("check 256 files", ["check", "--output-format", "concise", str(work / "batch")], b.floor(files), "floor"),
            ("run one task", ["run", "one.nika.yaml"], None, "check one.nika.yaml"),
            ("run 1,000 mock tasks", ["run", "many.nika.yaml"], None, "check many.nika.yaml"),
        ]
        for label, args, floor, against in plans:
            make = {k: b.proc(k, b.nika(*args)) for k in trees}
            if floor is not None:
                make["floor"] = floor
            else:
                for k in trees:
                    make[f"{k} {against}"] = b.proc(k, b.nika(*against.split()))
            rows.append((label, b.measure(make), against))
        lsp = {k: b.lsp(k) for k in trees}
    return report(rows, lsp)


def report(rows: list[tuple[str, dict[str, tuple[float, int]], str]], lsp: dict[str, tuple[float, float]]) -> int:
    worse = []
    print(f"{'row':<24} {'base ms':>9} {'this ms':>9} {'change':>8}   ratio base -> this (against)")
    for label, m, against in rows:
        base, this = m["base"][0], m["this"][0]
        keys = ("base", "this")
        ref = {k: m["floor"][0] for k in keys} if "floor" in m else {k: m[f"{k} {against}"][0] for k in keys}
        change = this / base - 1
        print(
            f"{label:<24} {base * 1000:9.1f} {this * 1000:9.1f} {change:+8.1%}   "
            f"{base / ref['base']:.2f}x -> {this / ref['this']:.2f}x ({against}: {ref['this'] * 1000:.1f} ms)"
        )
        if label == "check 256 files":
            print(f"{'  peak RSS (kB)':<24} {m['base'][1]:9d} {m['this'][1]:9d}   floor {m['floor'][1]} kB")
        if this > base * LIMIT:
            worse.append(label)
    (bw, bs), (tw, ts) = lsp["base"], lsp["this"]
    change = tw / bw - 1
    print(
        f"{'lsp edit, 500 tasks':<24} {bw:9.2f} {tw:9.2f} {change:+8.1%}   "
        f"{bw / bs:.2f}x -> {tw / ts:.2f}x (scan: {ts:.2f} ms)"
    )
    if tw > bw * LIMIT:
        worse.append("lsp edit, 500 tasks")
    if worse:
        print(f"\nREGRESSION: more than {LIMIT - 1:.0%} slower than the base: {', '.join(worse)}", file=sys.stderr)
        return 1
    print(f"\nno row is more than {LIMIT - 1:.0%} slower than the base")
    return 0


if __name__ == "__main__":
    sys.exit(main())
