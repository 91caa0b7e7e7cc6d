"""Speed regression guard: every speed row, this tree against a base commit, each row a ratio to
its floor measured side by side in the same run.

    python benchmarks/speed_guard.py                          # against HEAD~1, every row
    python benchmarks/speed_guard.py --base main --runs 9
    python benchmarks/speed_guard.py --rows check,lsp         # some rows only (see --help)

The base commit is exported (``git archive``) to a temporary folder; both trees get their
``.pyc`` files compiled first (an installed package has them). In every row the base's command,
this tree's and the floor run in turn, ``--runs`` times (at least 7, after one warm-up round),
from a temporary working folder (never the tree's root: ``python -m nika`` puts the working
folder first on ``sys.path``); each round gives a ratio for each tree and the row is the median
of those ratios. Each row names its clock (wall time for every process row: the batch row uses
the machine's cores).

Rows (goal in brackets; the floors are :mod:`floors`):

- ``check``: cold ``nika check`` of one file [≤ 1.3x] and of 256 files in one call [≤ 1.8x],
  against a process loading the same files with ruamel's C safe loader. Every round checks
  fresh copies (a comment names the round), so no cache of results has seen them.
- ``run``: ``nika run`` of 1,000 ``mock/echo`` tasks against the run floor, a process that
  imports asyncio and writes the same hash-chained journal frames [≤ 1.5x]; ``nika run`` of a
  one-task workflow against ``nika check`` of it [≤ check + 40 ms]. Each is given twice from the
  same processes: on wall time and on CPU time (user + system, steadier on a shared machine).
- ``dask``: ``--executor dask`` per-task wall time against ``dask.delayed`` of the same function
  on the same 2-worker cluster [≤ 1.3x] (:mod:`dask_overhead`; needs the ``dask`` extra).
- ``lsp``: a pull ``textDocument/diagnostic`` right after a ``didChange`` of a 500-task document,
  whole-document and incremental, timed by an independent client against a libyaml event scan
  of the same text in the same round [≤ 1.5x].
- ``tokens``: ``semanticTokens/full/delta`` after a one-line edit of 0.8 MB of long legal
  expressions (40-term ``&&`` chains; 120-member chains), once the edit is analysed, against the
  scan [≤ 10x]; the cold ``semanticTokens/full`` of the same documents, and of half of each
  (linear in size: the 0.8 MB one takes about twice the 0.4 MB one), are printed beside it.
- ``memory``: the server's RSS over 10,000 whole-document edits of the 500-task document, each
  analysed (a pull after each), growth after the 100th edit [≤ +10 %].

Exits 1, loudly, when any row of this tree is more than 15 % worse than the base's (its ratio;
for the memory row its final RSS). A benchmark to run by hand before merging a change that could
cost speed, not a timed test.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from floors import (
    batch,
    chain_workflow,
    echo_workflow,
    expression_workflow,
    floor_argv,
    journal_plan,
    run_floor_argv,
    scan_events,
    wall_and_cpu_of,
    wall_of,
)
from lsp_client import Client

ROOT = Path(__file__).resolve().parents[1]
LIMIT = 1.15
ROW_GROUPS = ("check", "run", "dask", "lsp", "tokens", "memory")


@dataclass
class Row:
    name: str
    clock: str
    goal: float
    unit: str  # "x": a ratio to the floor; "ms": milliseconds over the reference; "%": growth
    against: str
    values: dict[str, list[float]] = field(default_factory=dict)  # tree -> one figure per round
    note: str = ""
    measured_only: bool = False

    def median(self, tree: str) -> float:
        return statistics.median(self.values[tree])


def export(rev: str, into: Path) -> Path:
    """The tree of ``rev`` in ``into`` (``git archive``)."""
    into.mkdir(parents=True)
    archive = subprocess.run(["git", "-C", str(ROOT), "archive", rev], capture_output=True, check=True).stdout
    subprocess.run(["tar", "-x", "-C", str(into)], input=archive, check=True)
    return into


def compile_pyc(tree: Path) -> None:
    dirs = [d for d in ("checker", "nika", "nika_lsp", "runtime") if (tree / d).is_dir()]
    subprocess.run([sys.executable, "-m", "compileall", "-q", *dirs], cwd=tree, check=False, capture_output=True)


class Bench:
    def __init__(self, trees: dict[str, Path], work: Path, runs: int) -> None:
        self.trees, self.work, self.runs = trees, work, runs
        self.env = {name: dict(os.environ, PYTHONPATH=str(tree)) for name, tree in trees.items()}

    def nika(self, tree: str, *args: str) -> Callable[[], float]:
        argv = [sys.executable, "-m", "nika", *args]
        return lambda: wall_of(argv, env=self.env[tree], cwd=str(self.work))

    def order(self, r: int) -> list[str]:
        """The trees in the order round ``r`` runs them: alternating, so neither always goes first."""
        names = list(self.trees)
        return names if r % 2 == 0 else names[::-1]

    def rounds(self, one: Callable[[int], dict[str, float]]) -> dict[str, list[float]]:
        """``one(round)`` for a warm-up round and then ``runs`` rounds: each tree's figure per round."""
        got: dict[str, list[float]] = {}
        for r in range(self.runs + 1):
            shutil.rmtree(self.work / ".nika", ignore_errors=True)  # the runs' traces
            sample = one(r)
            if r:  # the first round warms the page cache and the servers
                for k, v in sample.items():
                    got.setdefault(k, []).append(v)
        return got

    # -- check ---------------------------------------------------------------------------------
    def check_rows(self) -> list[Row]:
        one = ROOT / "examples" / "summarize-article.nika.yaml"
        examples = sorted((ROOT / "examples").glob("*.nika.yaml"))
        single = Row("check one file, cold", "wall", 1.3, "x", "ruamel C-loader floor")
        many = Row("check 256 files, one call", "wall", 1.8, "x", "ruamel C-loader floor")

        def single_round(r: int) -> dict[str, float]:
            out = {}
            floor_files = batch(self.work / f"one-floor-{r}", [one], 1, nonce=f"floor {r}")
            floor = wall_of(floor_argv(floor_files))
            for tree in self.order(r):
                files = batch(self.work / f"one-{tree}-{r}", [one], 1, nonce=f"{tree} {r}")
                out[tree] = self.nika(tree, "check", "--output-format", "concise", files[0])() / floor
            return out

        def many_round(r: int) -> dict[str, float]:
            out = {}
            floor_files = batch(self.work / f"many-floor-{r}", examples, 256, nonce=f"floor {r}")
            floor = wall_of(floor_argv(floor_files))
            for tree in self.order(r):
                folder = self.work / f"many-{tree}-{r}"
                batch(folder, examples, 256, nonce=f"{tree} {r}")
                out[tree] = self.nika(tree, "check", "--output-format", "concise", str(folder))() / floor
            return out

        single.values = self.rounds(single_round)
        many.values = self.rounds(many_round)
        return [single, many]

    # -- run -----------------------------------------------------------------------------------
    def run_rows(self) -> list[Row]:
        (self.work / "one.nika.yaml").write_text(echo_workflow(1))
        (self.work / "many.nika.yaml").write_text(echo_workflow(1000))
        # The floor's frames: those of a run of this tree (the base writes the same kinds).
        shutil.rmtree(self.work / ".nika", ignore_errors=True)
        self.nika("this", "run", "many.nika.yaml")()
        (journal,) = (self.work / ".nika").rglob("*.ndjson")
        plan = self.work / "many.plan"
        frames = journal_plan(journal, plan)
        against = f"run floor ({frames} journal frames)"
        many = Row("run 1,000 mock tasks", "wall", 1.5, "x", against, measured_only=True)
        many_cpu = Row("run 1,000 mock tasks", "cpu", 1.5, "x", against, measured_only=True)
        single = Row("run one task", "wall", 40.0, "ms", "over `nika check` of it", measured_only=True)
        single_cpu = Row("run one task", "cpu", 40.0, "ms", "over `nika check` of it", measured_only=True)

        def timed(tree: str, *args: str) -> tuple[float, float]:
            argv = [sys.executable, "-m", "nika", *args]
            return wall_and_cpu_of(argv, env=self.env[tree], cwd=str(self.work))

        def many_round(r: int) -> dict[str, float]:
            fw, fc = wall_and_cpu_of(run_floor_argv(plan, self.work / "floor-traces" / str(r)))
            out = {}
            for tree in self.order(r):
                w, c = timed(tree, "run", "many.nika.yaml")
                out[tree], out[f"{tree} cpu"] = w / fw, c / fc
            return out

        def single_round(r: int) -> dict[str, float]:
            out = {}
            for tree in self.order(r):
                cw, cc = timed(tree, "check", "one.nika.yaml")
                rw, rc = timed(tree, "run", "one.nika.yaml")
                out[tree], out[f"{tree} cpu"] = (rw - cw) * 1000, (rc - cc) * 1000
            return out

        for row, cpu_row, one in ((many, many_cpu, many_round), (single, single_cpu, single_round)):
            got = self.rounds(one)
            row.values = {t: got[t] for t in self.trees}
            cpu_row.values = {t: got[f"{t} cpu"] for t in self.trees}
        return [many, many_cpu, single, single_cpu]

    # -- dask ----------------------------------------------------------------------------------
    def dask_rows(self) -> list[Row]:
        row = Row("dask per-task overhead", "wall", 1.3, "x", "dask.delayed, same function", measured_only=True)
        notes = []
        for tree in self.trees:
            out = subprocess.run(
                [sys.executable, str(ROOT / "benchmarks" / "dask_overhead.py"), "--runs", str(self.runs)],
                env=self.env[tree],
                cwd=str(self.work),
                capture_output=True,
                text=True,
                check=False,
            )
            if out.returncode:
                raise SystemExit(f"dask_overhead.py failed on {tree}: {out.stderr[-600:]}")
            got = json.loads(out.stdout.strip().splitlines()[-1])
            row.values[tree] = [got["ratio"]]
            notes.append(f"{tree} {got['nika_ms']:.2f} vs {got['delayed_ms']:.2f} ms/task")
        row.note = "; ".join(notes) + " (each tree's rounds alternate inside its own probe)"
        return [row]

    # -- language server ------------------------------------------------------------------------
    def clients(self) -> dict[str, Client]:
        return {tree: Client(self.trees[tree], cwd=str(self.work)) for tree in self.trees}

    def lsp_rows(self) -> list[Row]:
        text = chain_workflow(500)
        uri = (self.work / "bench.nika.yaml").as_uri()
        whole = Row("lsp pull, whole-document change", "wall", 1.5, "x", "libyaml event scan")
        incr = Row("lsp pull, incremental change", "wall", 1.5, "x", "libyaml event scan")
        clients = self.clients()
        version = {t: 1 for t in clients}
        try:
            for c in clients.values():
                c.open(uri, text)
                c.pull(uri)
            line = text.split("\n").index('    infer: { prompt: "start" }')

            def edit(r: int) -> str:
                return f'    infer: {{ prompt: "start {r}{"x" * (r % 2)}" }}'

            def whole_round(r: int) -> dict[str, float]:
                edited = text.replace('    infer: { prompt: "start" }', edit(r))
                out = {}
                for tree in self.order(r):
                    c = clients[tree]
                    scan = scan_events(edited)
                    version[tree] += 1
                    t = timed_pull(c, uri, version[tree], [{"text": edited}])
                    out[tree] = t / scan
                return out

            def incr_round(r: int) -> dict[str, float]:
                new_line = edit(r + 1000)
                edited = text.split("\n")
                edited[line] = new_line
                full = "\n".join(edited)
                rng = {"start": {"line": line, "character": 0}, "end": {"line": line + 1, "character": 0}}
                out = {}
                for tree in self.order(r):
                    c = clients[tree]
                    scan = scan_events(full)
                    version[tree] += 1
                    t = timed_pull(c, uri, version[tree], [{"range": rng, "text": new_line + "\n"}])
                    out[tree] = t / scan
                return out

            whole.values = self.rounds(whole_round)
            # the incremental edits start from the document's original text
            for tree, c in clients.items():
                version[tree] += 1
                c.change(uri, version[tree], [{"text": text}])
                c.pull(uri)
            incr.values = self.rounds(incr_round)
        finally:
            for c in clients.values():
                c.close()
        return [whole, incr]

    def token_rows(self) -> list[Row]:
        return [self.token_row("and", "40-term && chains"), self.token_row("member", "120-member chains")]

    def token_row(self, shape: str, label: str) -> Row:
        row = Row(f"lsp semantic tokens, {label}", "wall", 10.0, "x", "libyaml event scan")
        text = expression_workflow(800_000, shape)
        half = expression_workflow(400_000, shape)
        clients = self.clients()
        cold: dict[str, list[float]] = {t: [] for t in clients}
        uri = (self.work / f"tokens-{shape}.nika.yaml").as_uri()
        try:
            for tree, c in clients.items():
                for size, t in (("half", half), ("full", text)):
                    u = uri.replace(".nika.yaml", f"-{size}.nika.yaml")
                    c.open(u, t)
                    c.pull(u)
                    cold[tree].append(c.timed("textDocument/semanticTokens/full", {"textDocument": {"uri": u}})[0])
                c.open(uri, text)
                c.pull(uri)
                c.request("textDocument/semanticTokens/full", {"textDocument": {"uri": uri}})
            lines = text.split("\n")
            target = len(lines) // 2
            while "prompt" not in lines[target]:
                target += 1
            state: dict[str, dict[str, object]] = {t: {"version": 1, "result": None} for t in clients}

            def one_round(r: int) -> dict[str, float]:
                new_line = lines[target].replace("> 0", f"> {r + 1}").replace("field0", f"field0x{r}")
                edited = list(lines)
                edited[target] = new_line
                full = "\n".join(edited)
                rng = {"start": {"line": target, "character": 0}, "end": {"line": target + 1, "character": 0}}
                out = {}
                for tree in self.order(r):
                    c, s = clients[tree], state[tree]
                    s["version"] = int(s["version"]) + 1  # type: ignore[call-overload]
                    c.change(uri, int(s["version"]), [{"range": rng, "text": new_line + "\n"}])  # type: ignore[call-overload]
                    c.pull(uri)
                    scan = scan_events(full)
                    out[tree] = tokens_after_edit(c, uri, s) / scan
                return out

            row.values = self.rounds(one_round)
            scan_full, scan_half = scan_events(text), scan_events(half)
            row.note = "cold full: " + "; ".join(
                f"{tree} {cold[tree][1] * 1000:.0f} ms = {cold[tree][1] / scan_full:.0f}x scan, "
                f"0.4 MB {cold[tree][0] * 1000:.0f} ms (0.8/0.4 MB = {cold[tree][1] / cold[tree][0]:.2f}; "
                f"scans {scan_full / scan_half:.2f})"
                for tree in clients
            )
        finally:
            for c in clients.values():
                c.close()
        return row

    def memory_rows(self, edits: int) -> list[Row]:
        row = Row(f"lsp RSS, {edits:,} whole-document edits", "RSS", 10.0, "%", "RSS after the 100th edit")
        text = chain_workflow(500)
        notes = []
        for tree in self.trees:
            c = Client(self.trees[tree], cwd=str(self.work))
            uri = (self.work / "storm.nika.yaml").as_uri()
            try:
                c.open(uri, text)
                c.pull(uri)
                base = 0
                for v in range(2, edits + 2):
                    edited = text.replace('prompt: "start"', f'prompt: "start {v}"')
                    c.change(uri, v, [{"text": edited}])
                    c.pull(uri)
                    if v == 101:
                        base = c.rss_kib()
                end = c.rss_kib()
            finally:
                c.close()
            row.values[tree] = [(end - base) / base * 100]
            notes.append(f"{tree} {base / 1024:.1f} -> {end / 1024:.1f} MiB")
        row.note = "; ".join(notes)
        return [row]


def timed_pull(c: Client, uri: str, version: int, changes: list[dict[str, object]]) -> float:
    """Seconds from sending ``didChange`` to the pulled report (the client's clock)."""
    import time

    t0 = time.perf_counter()
    c.change(uri, version, changes)
    rep = c.pull(uri)
    wall = time.perf_counter() - t0
    if rep.get("kind") != "full":
        raise SystemExit(f"expected a full report, got {rep}")
    return wall


def tokens_after_edit(c: Client, uri: str, state: dict[str, object]) -> float:
    """Seconds of the tokens request a client sends after an edit: ``full/delta`` against the
    last result where the server offers it, else ``full``."""
    caps = state.setdefault("delta", None)
    prev = state.get("result")
    if prev is not None and caps is not False:
        wall, rep = c.timed(
            "textDocument/semanticTokens/full/delta", {"textDocument": {"uri": uri}, "previousResultId": prev}
        )
        if "error" in rep:  # a server without delta support
            state["delta"] = False
        else:
            state["result"] = rep["result"].get("resultId")
            return wall
    wall, rep = c.timed("textDocument/semanticTokens/full", {"textDocument": {"uri": uri}})
    state["result"] = (rep.get("result") or {}).get("resultId")
    return wall


def report(rows: list[Row], trees: tuple[str, ...]) -> int:
    worse = []
    print(f"{'row':<44} {'clock':<5} {'base':>8} {'this':>8} {'goal':>8}  {'change':>7}  against")
    for row in rows:
        b, t = row.median("base"), row.median("this")
        if row.unit == "%":
            fmt = lambda v: f"{v:+.1f}%"  # noqa: E731
            goal = f"≤{row.goal:+.0f}%"
            regressed = t > b + 15 and t > row.goal
        elif row.unit == "ms":
            fmt = lambda v: f"{v:.1f}ms"  # noqa: E731
            goal = f"≤{row.goal:.0f}ms"
            regressed = t > b * LIMIT + 2
        else:
            fmt = lambda v: f"{v:.2f}x"  # noqa: E731
            goal = f"≤{row.goal:g}x"
            regressed = t > b * LIMIT
        met = "met" if t <= row.goal else "NOT met"
        tag = " (measured only)" if row.measured_only else ""
        change = f"{t / b - 1:+.0%}" if b else "n/a"
        figures = f"{fmt(b):>8} {fmt(t):>8} {goal:>8}  {change:>7}"
        print(f"{row.name:<44} {row.clock:<5} {figures}  {row.against}; {met}{tag}")
        if row.note:
            print(f"{'':<4}{row.note}")
        if regressed:
            worse.append(row.name)
    runs = {len(v) for r in rows for v in r.values.values()}
    print(f"\n(medians of {', '.join(str(n) for n in sorted(runs))} rounds; trees: {', '.join(trees)})")
    if worse:
        print(f"\nREGRESSION: more than {LIMIT - 1:.0%} worse than the base: {', '.join(worse)}", file=sys.stderr)
        return 1
    print(f"no row is more than {LIMIT - 1:.0%} worse than the base")
    return 0


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--base", default="HEAD~1", help="the commit to compare against (default HEAD~1)")
    ap.add_argument("--runs", type=int, default=7, help="rounds per row (at least 7)")
    ap.add_argument("--rows", default=",".join(ROW_GROUPS), help=f"which rows: {', '.join(ROW_GROUPS)}")
    ap.add_argument("--edits", type=int, default=10_000, help="edits in the memory row")
    a = ap.parse_args()
    if a.runs < 7:
        ap.error("--runs: at least 7 rounds (the medians of fewer say little on a shared machine)")
    groups = [g.strip() for g in a.rows.split(",") if g.strip()]
    unknown = [g for g in groups if g not in ROW_GROUPS]
    if unknown:
        ap.error(f"--rows: unknown {', '.join(unknown)} (choose from {', '.join(ROW_GROUPS)})")
    with tempfile.TemporaryDirectory(prefix="nika-speed-") as tmp:
        t = Path(tmp)
        trees = {"base": export(a.base, t / "base"), "this": ROOT}
        for tree in trees.values():
            compile_pyc(tree)
        work = t / "work"
        work.mkdir()
        b = Bench(trees, work, a.runs)
        rows: list[Row] = []
        for g in groups:
            if g == "memory":
                rows += b.memory_rows(a.edits)
            else:
                rows += getattr(b, f"{g}_rows" if g != "tokens" else "token_rows")()
            print(f"… {g} measured", file=sys.stderr)
    return report(rows, tuple(trees))


if __name__ == "__main__":
    sys.exit(main())
