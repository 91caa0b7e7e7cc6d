"""Edit-storm memory benchmark for `nika lsp` (issue 28): RSS over N edits of a generated
workflow (500 tasks, 10,000 edits by default), failing when it grows beyond 10 % after warm-up.

    python benchmarks/lsp_memory.py [--tasks 500] [--edits 10000] [--warmup 1000]

Each edit is a one-line incremental `didChange` in the first task; every 500 edits a pull
`textDocument/diagnostic` waits for the analysis, so the storm is analysed, not only queued.
RSS is read from /proc/<pid>/status (Linux).
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "lsp"))

from lsp_speed import workflow
from raw_client import RawClient

URI = "file:///bench/storm.nika.yaml"


def rss_kib(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    raise RuntimeError("no VmRSS")


def storm(tasks: int, edits: int, warmup: int) -> tuple[int, int]:
    """``(RSS KiB after warm-up, RSS KiB at the end)``."""
    client = RawClient()
    try:
        client.call("initialize", {"processId": None, "rootUri": None, "capabilities": {}})
        client.notify("initialized", {})
        item = {"uri": URI, "languageId": "nika-workflow", "version": 1, "text": workflow(tasks)}
        client.notify("textDocument/didOpen", {"textDocument": item})
        line = 6  # the prompt line of t0
        base = 0
        for v in range(2, edits + 2):
            rng = {"start": {"line": line, "character": 0}, "end": {"line": line, "character": 1000}}
            text = f'    infer: {{ prompt: "start {v % 97}" }}'
            change = {"range": rng, "text": text}
            client.notify(
                "textDocument/didChange", {"textDocument": {"uri": URI, "version": v}, "contentChanges": [change]}
            )
            if v % 500 == 0:
                client.call("textDocument/diagnostic", {"textDocument": {"uri": URI}})
                if v - 1 >= warmup and not base:
                    base = rss_kib(client.proc.pid)
        client.call("textDocument/diagnostic", {"textDocument": {"uri": URI}})
        end = rss_kib(client.proc.pid)
        client.call("shutdown", None)
        client.notify("exit", None)
        client.proc.wait(timeout=10)
        return base, end
    finally:
        if client.proc.poll() is None:
            client.proc.kill()


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--tasks", type=int, default=500)
    ap.add_argument("--edits", type=int, default=10_000)
    ap.add_argument("--warmup", type=int, default=1000)
    a = ap.parse_args()
    t = time.monotonic()
    base, end = storm(a.tasks, a.edits, a.warmup)
    growth = (end - base) / base * 100
    print(
        f"{a.edits} edits of a {a.tasks}-task document in {time.monotonic() - t:.1f} s: "
        f"RSS {base / 1024:.1f} MiB after {a.warmup} edits -> {end / 1024:.1f} MiB ({growth:+.1f} %)"
    )
    return 1 if growth > 10 else 0


if __name__ == "__main__":
    sys.exit(main())
