"""Benchmark `nika lsp` over stdio on a generated workflow (500 tasks by default).

    python benchmarks/lsp_speed.py [--tasks 500] [--rounds 30]

Measures, as medians over the rounds:
- diagnostics latency: a `didChange` followed at once by a pull `textDocument/diagnostic`; the
  time until the report arrives. Four kinds of one-line edit, each typed differently every
  round: in the first task (the headline: every later task moves), in a middle task, a new
  line in a middle task, and in the envelope. Pull requests are answered without the push debounce, so this
  is the analysis time the user waits for once the debounce has fired.
- completion latency: `textDocument/completion` inside `${{ tasks.` and on a task key position.
- the yardstick: the time libyaml's C event parser (the one `nika check` reads) needs merely to
  produce the event stream of the same text, measured in this process inside every round, so the
  ratio compares two figures taken on the same machine under the same load.
- the same two in CPU time (user+sys): the server process's, read from ``/proc`` around each round,
  against the scan's, summed over the rounds (the kernel counts in ticks, so only the sum is
  exact enough); on a shared machine this ratio is the steadier one.
A plain JSON-RPC client over pipes, so the figures include the protocol round trip.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import time
from typing import Any


def workflow(n: int) -> str:
    lines = ["nika: v1", "workflow:", "  id: bench", "model: mock/echo", "tasks:"]
    for i in range(n):
        lines.append(f"  t{i}:")
        if i:
            lines.append("    with:")
            lines.append(f"      prev: ${{{{ tasks.t{i - 1}.output }}}}")
            lines.append(f'    infer: {{ prompt: "step {i} after ${{{{ with.prev }}}}" }}')
        else:
            lines.append('    infer: { prompt: "start" }')
    return "\n".join(lines) + "\n"


class Figures:
    """One kind of edit: wall times per round, CPU seconds summed over the rounds."""

    def __init__(self) -> None:
        self.diag: list[float] = []
        self.scan: list[float] = []
        self.server_cpu = 0.0  # the server process's user+sys time from didChange to the report
        self.scan_cpu = 0.0


class Client:
    def __init__(self) -> None:
        self.p = subprocess.Popen(
            [sys.executable, "-m", "nika", "lsp"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
        )
        self.next_id = 0

    def send(self, method: str, params: Any, *, request: bool = True) -> int | None:
        msg: dict[str, Any] = {"jsonrpc": "2.0", "method": method, "params": params}
        rid = None
        if request:
            self.next_id += 1
            rid = msg["id"] = self.next_id
        body = json.dumps(msg).encode()
        assert self.p.stdin is not None
        self.p.stdin.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
        self.p.stdin.flush()
        return rid

    def read(self) -> dict[str, Any]:
        assert self.p.stdout is not None
        header = b""
        while not header.endswith(b"\r\n\r\n"):
            header += self.p.stdout.read(1)
        length = int(next(h for h in header.split(b"\r\n") if h.lower().startswith(b"content-length")).split(b":")[1])
        return json.loads(self.p.stdout.read(length))

    def request(self, method: str, params: Any) -> dict[str, Any]:
        rid = self.send(method, params)
        while True:
            msg = self.read()
            if msg.get("id") == rid and "method" not in msg:
                return msg

    def close(self) -> None:
        self.request("shutdown", None)
        self.send("exit", None, request=False)
        self.p.wait(timeout=10)


def scan_events(text: str) -> tuple[float, float]:
    """Seconds (wall, CPU) libyaml's C parser takes to turn ``text`` into its event stream (nothing built)."""
    from _ruamel_yaml import CParser  # type: ignore[import-not-found]

    t0, c0 = time.perf_counter(), time.process_time()
    parser = CParser(text)
    while parser.get_event() is not None:
        pass
    return time.perf_counter() - t0, time.process_time() - c0


def cpu_seconds(pid: int) -> float:
    """User + system CPU seconds the process ``pid`` has used so far (Linux ``/proc``)."""
    import os
    from pathlib import Path

    fields = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--tasks", type=int, default=500)
    ap.add_argument("--rounds", type=int, default=30)
    a = ap.parse_args()
    text = workflow(a.tasks)
    uri = "file:///tmp/nika-bench/bench.nika.yaml"
    c = Client()
    caps = {"textDocument": {"diagnostic": {"dynamicRegistration": False}, "completion": {}}}
    c.request("initialize", {"processId": None, "rootUri": None, "capabilities": caps})
    c.send("initialized", {}, request=False)
    c.send(
        "textDocument/didOpen",
        {"textDocument": {"uri": uri, "languageId": "yaml", "version": 1, "text": text}},
        request=False,
    )
    c.request("textDocument/diagnostic", {"textDocument": {"uri": uri}})  # warm-up
    mid = a.tasks // 2

    # One-line edits, each round a different text: the headline one types in the first task
    # (every later task moves); the others edit a middle task, add a line, edit the envelope.
    # Consecutive rounds differ in length too, so every edit moves all the text after it.
    def tag(r: int) -> str:
        return f"{r}{'x' * (r % 2)}"

    edits: dict[str, Any] = {
        "edit in the first task": lambda r: text.replace('prompt: "start"', f'prompt: "start {tag(r)}"'),
        "edit in a middle task": lambda r: text.replace(f'"step {mid} after', f'"step {mid}{tag(r)} after'),
        "new line in a middle task": lambda r: text.replace(
            f"  t{mid}:\n", f"  t{mid}:\n    description: step {tag(r)}\n"
        ),
        "edit in the envelope": lambda r: text.replace("id: bench", f"id: bench-{tag(r)}"),
    }
    version = 1
    figures: dict[str, Figures] = {}
    for name, edit in edits.items():
        fig = figures[name] = Figures()
        for r in range(a.rounds):
            edited = edit(r)
            assert edited != text, name
            wall, cpu = scan_events(edited)
            fig.scan.append(wall)
            fig.scan_cpu += cpu
            version += 1
            c0 = cpu_seconds(c.p.pid)
            t0 = time.perf_counter()
            c.send(
                "textDocument/didChange",
                {"textDocument": {"uri": uri, "version": version}, "contentChanges": [{"text": edited}]},
                request=False,
            )
            rep = c.request("textDocument/diagnostic", {"textDocument": {"uri": uri}})
            fig.diag.append(time.perf_counter() - t0)
            fig.server_cpu += cpu_seconds(c.p.pid) - c0
            assert rep["result"]["kind"] == "full", rep
    lines = text.split("\n")
    target = next(i for i, ln in enumerate(lines) if "tasks.t249.output" in ln)
    col = lines[target].index("tasks.") + len("tasks.")
    comp: list[float] = []
    for _ in range(a.rounds):
        t0 = time.perf_counter()
        c.request(
            "textDocument/completion",
            {"textDocument": {"uri": uri}, "position": {"line": target, "character": col}},
        )
        comp.append(time.perf_counter() - t0)
    c.close()
    ms = 1000
    print(f"workflow: {a.tasks} tasks, {len(text) / 1e3:.0f} kB; {a.rounds} rounds")
    for i, (name, fig) in enumerate(figures.items()):
        label = "didChange -> diagnostics (pull, no debounce)" if i == 0 else f"  {name}"
        diag, scan = statistics.median(fig.diag), statistics.median(fig.scan)
        print(
            f"{label}, {name if i == 0 else 'same'}: median {diag * ms:.1f} ms "
            f"(min {min(fig.diag) * ms:.1f}, max {max(fig.diag) * ms:.1f}); C event parser alone, same text: "
            f"median {scan * ms:.1f} ms; diagnostics / scan = {diag / scan:.2f}x wall; "
            f"CPU per edit {fig.server_cpu / a.rounds * ms:.1f} ms (server) vs {fig.scan_cpu / a.rounds * ms:.1f} ms "
            f"(scan) = {fig.server_cpu / max(fig.scan_cpu, 1e-9):.2f}x"
        )
    print(
        f"completion in `${{{{ tasks.`: median {statistics.median(comp) * ms:.1f} ms "
        f"(min {min(comp) * ms:.1f}, max {max(comp) * ms:.1f})"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
