"""`nika` with one fault armed: the engine the fault-injection suite runs (scripts/fault_kit.py).

Never part of the product: it starts the real command line in this process after patching one
seam, so a fault lands on an *event*, never after a sleep. The fault is JSON in ``NIKA_FAULT``:

* ``{"frame": K, "do": "KILL" | "TERM" | "INT"}``: signal this process right after the K-th
  journal frame is written (SIGKILL: the hardest death; TERM/INT: the graceful stop);
* ``{"frame": K, "do": "full"}``: from the K-th frame on, the journal writes to ``/dev/full``
  (every write fails ENOSPC: a disk that fills up);
* ``{"fsize": N}``: ``RLIMIT_FSIZE`` of N bytes for the engine's files (its journal write past N
  fails, torn mid-frame; the effects' children inherit it too, and write only a short side log);
* ``{"frame": K, "do": "warden"}``: SIGKILL the process warden (``runtime.tools.process_warden``)
  after the K-th frame; exec must go on working;
* ``{"frame": K, "do": "pid", "pid": P}``: SIGKILL process P (a Dask scheduler) after the K-th frame;
* ``{"barrier": FD}``: before anything, read one byte from the inherited pipe FD: concurrent
  resumes started behind one barrier are released together.

A kill on the n-th side-log line is the workflow's own (its effects read ``kill_at``): see fault_kit.
"""

from __future__ import annotations

import json
import os
import signal
import sys


def _note_journal() -> None:
    """Say which journal this engine writes (``.engines/<pid>`` in the working directory), for the kit."""
    from runtime.journal import write

    original = write.Journal.record

    def record(self, kind, fields):  # type: ignore[no-untyped-def]
        out = original(self, kind, fields)
        if kind == "workflow_started" and self.path is not None and not getattr(record, "said", False):
            record.said = True  # type: ignore[attr-defined]
            os.makedirs(".engines", exist_ok=True)
            with open(os.path.join(".engines", str(os.getpid())), "w") as fh:
                fh.write(str(self.path.resolve()))
        return out

    write.Journal.record = record  # type: ignore[method-assign]


def _arm(plan: dict) -> None:
    if plan.get("fsize"):
        import resource

        n = int(plan["fsize"])
        resource.setrlimit(resource.RLIMIT_FSIZE, (n, n))
    if "frame" not in plan:
        return
    from runtime.journal import write

    original = write.Journal.record
    seen = [0]
    at, do = int(plan["frame"]), plan["do"]

    def record(self, kind, fields):  # type: ignore[no-untyped-def]
        out = original(self, kind, fields)
        seen[0] += 1
        if seen[0] == at:
            _act(self, do, plan)
        return out

    write.Journal.record = record  # type: ignore[method-assign]


def _act(journal, do: str, plan: dict) -> None:  # type: ignore[no-untyped-def]
    if do in ("KILL", "TERM", "INT"):
        os.kill(os.getpid(), getattr(signal, f"SIG{do}"))
    elif do == "full":
        if journal._fh is not None:
            journal._fh.close()
        journal._fh = open("/dev/full", "ab", buffering=0)  # noqa: SIM115 - the journal's file from now on
    elif do == "warden":
        from runtime.tools import process_warden

        proc = process_warden._proc
        if proc is not None and proc.poll() is None:
            proc.kill()
            proc.wait()
    elif do == "pid":
        os.kill(int(plan["pid"]), signal.SIGKILL)


def main() -> int:
    plan = json.loads(os.environ.pop("NIKA_FAULT", "") or "{}")
    if plan.get("barrier") is not None:
        os.read(int(plan["barrier"]), 1)
        os.close(int(plan["barrier"]))
    _note_journal()
    _arm(plan)
    from nika.cli import main as nika

    sys.argv = ["nika", *sys.argv[1:]]
    return nika()


if __name__ == "__main__":
    sys.exit(main())
