"""The floor processes of the speed goals (issue 26), and one way to time a process in CPU.

A floor is what no YAML-based tool can beat on the same input: a bare Python process that loads
the same file(s) with ruamel.yaml's C safe loader (libyaml) and does nothing else. Each speed row
is quoted as a ratio to its floor measured in the same run, so a loaded machine moves both.

CPU time (user + system of the child and what it waited for) is steadier than wall time on a
shared machine; :func:`cpu_of` reads it with ``os.wait4``, and the child's peak RSS through GNU
``time`` (whose own cost, the same on both sides of a comparison, is a fraction of a millisecond).
"""

from __future__ import annotations

import os
import subprocess
import sys
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


def echo_workflow(n: int) -> str:
    """``n`` independent ``mock/echo`` tasks (what ``nika run`` overhead is measured on)."""
    lines = ["nika: v1", "workflow: { id: echo }", "model: mock/echo", "tasks:"]
    for i in range(n):
        lines += [f"  t{i}:", f'    infer: {{ prompt: "task {i}" }}']
    return "\n".join(lines) + "\n"


def batch(folder: Path, sources: list[Path], n: int) -> list[str]:
    """``n`` workflow files in ``folder``, copies of ``sources`` in turn (the 256-file row)."""
    folder.mkdir(parents=True, exist_ok=True)
    out = []
    for i in range(n):
        src = sources[i % len(sources)]
        dst = folder / f"w{i:03d}-{src.name}"
        dst.write_bytes(src.read_bytes())
        out.append(str(dst))
    return out


__all__ = ["FLOOR_LOAD", "batch", "cpu_of", "echo_workflow", "floor_argv"]
