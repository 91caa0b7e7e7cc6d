"""The floors of the speed goals, the documents they are measured on, and the clocks.

A floor is what no tool can beat on the same input, measured in the same run as the row it
divides, so a loaded machine moves both:

- the check rows: a bare Python process that loads the same file(s) with ruamel.yaml's C safe
  loader (libyaml) and does nothing else (:data:`FLOOR_LOAD`);
- the run rows: a Python process that imports asyncio and, inside ``asyncio.run``, writes the
  same hash-chained journal frames a ``nika run`` of the same file writes (the same count and
  kinds, the same field bytes, each line's sha256 chained into the next, unbuffered writes and
  an ``fsync`` wherever the engine's journal does one: :data:`RUN_FLOOR`, fed the frames of a
  recorded run by :func:`journal_plan`);
- the language-server rows: libyaml's C event parser turning the same text into its event
  stream, nothing built (:func:`scan_events`), timed by the client in the same round.

CPU time (user + system of the child and what it waited for) is steadier than wall time on a
shared machine; :func:`cpu_of` reads it with ``os.wait4``, and the child's peak RSS through GNU
``time`` (whose own cost, the same on both sides of a comparison, is a fraction of a millisecond).
:func:`wall_of` gives wall time, the clock of the rows that use several cores.
"""

from __future__ import annotations

import json
import marshal
import os
import subprocess
import sys
import time
from pathlib import Path

FLOOR_LOAD = (
    "import sys\n"
    "from ruamel.yaml import YAML\n"
    "y = YAML(typ='safe', pure=False)\n"
    "for p in sys.argv[1:]:\n"
    "    with open(p, 'rb') as f:\n"
    "        y.load(f)\n"
)


def floor_argv(files: list[str]) -> list[str]:
    """A process that loads ``files`` with the C safe loader and exits."""
    return [sys.executable, "-c", FLOOR_LOAD, *files]


# The run floor: argv[1] is a marshal file of (kind, fields JSON, barrier) triples, argv[2] the
# journal's folder. Every frame gets a fresh id and timestamp, the previous line's sha256 as its
# chain, and goes to the OS as it is made; the barrier frames are fsync-ed, and so is the close.
RUN_FLOOR = r"""
import asyncio, hashlib, marshal, os, sys, time

async def main(plan, folder):
    os.makedirs(folder, exist_ok=True)
    head = hashlib.sha256(b"nika-trace/genesis/v2").hexdigest()
    with open(os.path.join(folder, "floor.ndjson"), "ab", buffering=0) as fh:
        for kind, fields, barrier in plan:
            h = os.urandom(16).hex()
            line = (
                '{"chain":"%s","correlation":null,"fields":%s,"id":{"uuid":"%s-%s-%s-%s-%s"},'
                '"kind":"%s","run":null,"timestamp":%d}' % (head, fields, h[:8], h[8:12], h[12:16], h[16:20], h[20:],
                kind, time.time_ns())
            ).encode()
            head = hashlib.sha256(line).hexdigest()
            fh.write(line + b"\n")
            if barrier:
                os.fsync(fh.fileno())
        os.fsync(fh.fileno())

with open(sys.argv[1], "rb") as f:
    plan = marshal.loads(f.read())
asyncio.run(main(plan, sys.argv[2]))
"""


def run_floor_argv(plan: Path, folder: Path) -> list[str]:
    """The run floor writing the frames of ``plan`` (see :func:`journal_plan`) into ``folder``."""
    return [sys.executable, "-c", RUN_FLOOR, str(plan), str(folder)]


def journal_plan(journal: Path, out: Path) -> int:
    """The frames of a recorded journal as the run floor's plan (written to ``out``): each
    frame's kind, its fields exactly as the engine encoded them, and whether the engine
    ``fsync``-ed after it (``workflow_started`` and every ``permit_checked`` allow:
    ``runtime.trace``'s barriers). Returns the number of frames."""
    plan = []
    for line in journal.read_bytes().splitlines():
        frame = json.loads(line)
        fields = json.dumps(frame["fields"], sort_keys=True, separators=(",", ":"), ensure_ascii=False)
        kind = frame["kind"]
        values = {f["key"]: f["value"] for f in frame["fields"]}
        barrier = kind == "workflow_started" or (kind == "permit_checked" and values.get("decision") == "allow")
        plan.append((kind, fields, barrier))
    out.write_bytes(marshal.dumps(plan))
    return len(plan)


TIME = "/usr/bin/time"  # GNU time: the child's own peak RSS (wait4's counts the forking parent's pages too)


def cpu_of(argv: list[str], *, env: dict[str, str] | None = None, cwd: str | None = None) -> tuple[float, int]:
    """(CPU seconds, peak RSS in kB, 0 without GNU time) of one run of ``argv``; output discarded."""
    import tempfile

    with tempfile.NamedTemporaryFile("r", suffix=".rss") as rss:
        wrap = [TIME, "-o", rss.name, "-f", "%M"] if Path(TIME).exists() else []
        p = subprocess.Popen([*wrap, *argv], env=env, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        _pid, _status, ru = os.wait4(p.pid, 0)
        p.returncode = 0  # reaped here: keep Popen from waiting again
        text = rss.read().strip().splitlines()
    peak = int(text[-1]) if text and text[-1].isdigit() else 0
    return ru.ru_utime + ru.ru_stime, peak


def wall_of(argv: list[str], *, env: dict[str, str] | None = None, cwd: str | None = None) -> float:
    """Wall seconds of one run of ``argv`` (output discarded); a failing command is an error."""
    t0 = time.perf_counter()
    p = subprocess.run(argv, env=env, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, check=False)
    wall = time.perf_counter() - t0
    if p.returncode not in (0, 1):  # 1: the check found something (the benchmark files are clean)
        raise SystemExit(f"{' '.join(argv[:4])}… exited {p.returncode}: {p.stderr.decode()[-400:]}")
    return wall


def wall_and_cpu_of(
    argv: list[str], *, env: dict[str, str] | None = None, cwd: str | None = None
) -> tuple[float, float]:
    """(wall seconds, CPU seconds) of one run of ``argv``: both clocks read on the same process
    (the CPU time through ``os.wait4``, user + system), so a row can give its ratio on either; a
    failing command is an error, as for :func:`wall_of`."""
    t0 = time.perf_counter()
    p = subprocess.Popen(argv, env=env, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    assert p.stderr is not None
    err = p.stderr.read()  # drained while it runs (a full pipe would block the child)
    _pid, status, ru = os.wait4(p.pid, 0)
    wall = time.perf_counter() - t0
    p.returncode = os.waitstatus_to_exitcode(status)  # reaped here: keep Popen from waiting again
    p.stderr.close()
    if p.returncode not in (0, 1):
        raise SystemExit(f"{' '.join(argv[:4])}… exited {p.returncode}: {err.decode()[-400:]}")
    return wall, ru.ru_utime + ru.ru_stime


def scan_events(text: str) -> float:
    """Wall seconds libyaml's C parser takes to turn ``text`` into its event stream (nothing built)."""
    from _ruamel_yaml import CParser  # type: ignore[import-not-found]

    t0 = time.perf_counter()
    parser = CParser(text)
    while parser.get_event() is not None:
        pass
    return time.perf_counter() - t0


# -- the documents ---------------------------------------------------------------------------


def echo_workflow(n: int) -> str:
    """``n`` independent ``mock/echo`` tasks (what ``nika run`` overhead is measured on)."""
    lines = ["nika: v1", "workflow: { id: echo }", "model: mock/echo", "tasks:"]
    for i in range(n):
        lines += [f"  t{i}:", f'    infer: {{ prompt: "task {i}" }}']
    return "\n".join(lines) + "\n"


def chain_workflow(n: int) -> str:
    """The language server's benchmark document: ``n`` tasks, each reading the one before."""
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


def expression_workflow(size: int, shape: str) -> str:
    """About ``size`` bytes of tasks whose prompts hold long legal expressions: ``and``, one
    40-term ``&&`` chain each; ``member``, one long member chain each (``inputs.doc.field0.field1…``)."""
    head = ["nika: v1", "workflow:", "  id: expressions", "model: mock/echo"]
    if shape == "member":
        head += ["inputs:", "  doc: { type: { object: {}, additional: true }, default: {} }"]
    head.append("tasks:")
    lines, total, i = list(head), 0, 0
    while total < size:
        if shape == "and":
            expr = " && ".join(f"with.n{j % 4} > {j}" for j in range(40))
        else:
            expr = "inputs.doc." + ".".join(f"field{j}" for j in range(120))
        task = [
            f"  t{i}:",
            "    with:",
            "      n0: 1",
            "      n1: 2",
            "      n2: 3",
            "      n3: 4",
            f'    infer: {{ prompt: "${{{{ {expr} }}}}" }}',
        ]
        lines += task
        total += sum(len(t) + 1 for t in task)
        i += 1
    return "\n".join(lines) + "\n"


def batch(folder: Path, sources: list[Path], n: int, nonce: str = "") -> list[str]:
    """``n`` workflow files in ``folder``, copies of ``sources`` in turn (the 256-file row); with
    ``nonce``, each ends in a comment naming it, so no cache of results has seen the files."""
    folder.mkdir(parents=True, exist_ok=True)
    out = []
    for i in range(n):
        src = sources[i % len(sources)]
        dst = folder / f"w{i:03d}-{src.name}"
        data = src.read_bytes()
        if nonce:
            data = data.rstrip(b"\n") + f"\n# {nonce} {i}\n".encode()
        dst.write_bytes(data)
        out.append(str(dst))
    return out


__all__ = [
    "FLOOR_LOAD",
    "RUN_FLOOR",
    "batch",
    "chain_workflow",
    "cpu_of",
    "echo_workflow",
    "expression_workflow",
    "floor_argv",
    "journal_plan",
    "run_floor_argv",
    "scan_events",
    "wall_and_cpu_of",
    "wall_of",
]
