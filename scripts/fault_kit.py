"""The fault-injection kit (issue 38): kill-then-resume trials of a 30-task workflow, judged.

One *trial* runs the workflow (:data:`WORKFLOW`: 30 ``exec`` tasks in a DAG, each appending its id
and its engine's pid to ``side.log`` first, then printing a value derived from its inputs) under a
plan of faults drawn from a seed, resuming after each interruption, until a resume finishes it:

* a SIGKILL, SIGTERM or SIGINT of the engine right after its k-th journal frame
  (``scripts/fault_engine.py`` arms it: an event, never a sleep);
* a SIGKILL or SIGTERM by the effect that writes the n-th side-log line (the workflow's own: an
  effect that finds ``kill_at`` naming a line count it reached takes the file and signals its engine);
* several resumes started at once behind one barrier (exactly one may run, the others exit 2);
* the resume target: the journal ``--resume latest`` names, or any journal of the history without a
  successful descendant (every member's completed work must count);
* not interruptions: the process warden SIGKILLed mid-run (exec must go on working), and the
  journal's disk refusing every write from the k-th frame on (``/dev/full``: the verdict stays, the
  run says where the journal stops and marks it, the next resume names what it cannot see).

:func:`judge` checks a trial: the last run succeeds with the outputs of an uninterrupted run; no task
is lost (each ran); no task whose completion a journal of the history holds runs again; each
interruption adds at most the tasks it cut off in flight (one, when tasks run one at a time); every
effect was witnessed (a ``permit_checked`` allow) in its engine's journal before it ran; a graceful
signal exits 3 with a whole journal; no stderr carries a traceback or asyncio noise; no exec dies of
SIGPIPE. A task a resume runs again because a refused journal could not show its completion is
counted apart (``rider_redone``), and must have been named first. ``scripts/fault_campaign.py`` runs
many seeds and prints the figures; ``tests/runtime/durable/test_faults.py`` runs a few in the
default suite.
"""

from __future__ import annotations

import itertools
import json
import os
import random
import signal
import subprocess
import sys
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
ENGINE = Path(__file__).resolve().parent / "fault_engine.py"
TASKS = 30
KILLER = (
    "if [ -f kill_at ]; then set -- $(cat kill_at 2>/dev/null); "
    'if [ -n "$1" ] && [ "$(wc -l < side.log)" -ge "$1" ] && mv kill_at kill_at.done 2>/dev/null; '
    "then kill -$2 $PPID; exec sleep 30; fi; fi"
)


def _deps(i: int) -> list[int]:
    """Task i's producers: a DAG with chains, fan-outs and fan-ins."""
    if i < 3:
        return []
    return sorted({i - 1, i // 2}) if i % 3 else [i - 3]


def workflow() -> str:
    lines = ["nika: v1", "workflow: { id: faults }", 'permits: { exec: ["sh"] }', "tasks:"]
    for i in range(TASKS):
        deps = _deps(i)
        lines.append(f"  t{i:02d}:")
        if deps:
            withs = ", ".join(f'd{j}: "${{{{ tasks.t{d:02d}.output }}}}"' for j, d in enumerate(deps))
            lines.append(f"    with: {{ {withs} }}")
        # the inputs come in as arguments ($0, $1), never spliced into the script (argv re-entry, issue 37)
        keep = "".join(f'a{j}="${j}"; ' for j in range(len(deps)))
        fold = "|".join(f"$a{j}" for j in range(len(deps)))
        script = (
            f"{keep}echo t{i:02d} $PPID >> side.log; {KILLER}; "
            f"printf 'v{i:02d}-%s' \"$(printf '%s' \"{fold}\" | cksum | cut -d' ' -f1)\""
        )
        args = "".join(f', "${{{{ with.d{j} }}}}"' for j in range(len(deps)))
        lines.append(f'    exec: {{ command: ["sh", "-c", {json.dumps(script)}{args}] }}')
    leaves = [f"t{i:02d}" for i in range(TASKS) if not any(i in _deps(j) for j in range(TASKS))]
    lines.append("outputs:")
    lines += [f'  {t}: "${{{{ tasks.{t}.output }}}}"' for t in leaves]
    return "\n".join(lines) + "\n"


WORKFLOW = workflow()


@dataclass
class Fault:
    how: str  # "frame" | "line" (interruptions) | "warden" | "full" (the journal's disk refuses) | "none"
    at: int = 0
    sig: str = "KILL"
    concurrent: int = 1  # resumes started together behind one barrier
    target: str = "latest"  # "latest" | "any"

    def label(self) -> str:
        extra = f" ×{self.concurrent}" if self.concurrent > 1 else ""
        if self.how in ("warden", "full"):
            return f"{self.how}:{self.at}{extra}"
        return f"{self.how}:{self.at}:{self.sig}{extra}" if self.how != "none" else f"none{extra}"


def plan(seed: int, interruptions: int | None = None) -> list[Fault]:
    """The faults of one trial, drawn from ``seed``: the interruptions, then a clean resume."""
    rng = random.Random(seed)
    n = interruptions if interruptions is not None else rng.choice([1, 1, 2, 2, 3])
    out = []
    for i in range(n):
        if rng.random() < 0.55:
            f = Fault("frame", rng.randint(2, 120), rng.choice(["KILL", "KILL", "TERM", "INT"]))
        else:
            f = Fault("line", rng.randint(1, TASKS), rng.choice(["KILL", "KILL", "TERM"]))
        if rng.random() < 0.08:  # the warden killed mid-run: exec must go on working (not an interruption)
            f = Fault("warden", rng.randint(2, 60))
        if i:
            f.concurrent = rng.choice([1, 1, 1, 3])
            f.target = rng.choice(["latest", "any"])
        out.append(f)
    out.append(Fault("none", concurrent=rng.choice([1, 1, 2]), target=rng.choice(["latest", "any"])))
    return out


def rider_plan(seed: int) -> list[Fault]:
    """An interruption, then a resume whose journal the disk refuses from a frame on, then a resume
    of that journal (it names and redoes what it cannot see)."""
    rng = random.Random(seed)
    return [
        Fault("frame", rng.randint(10, 60), "KILL"),
        Fault("full", rng.randint(2, 50), target="latest"),
        Fault("none", target="latest"),
    ]


@dataclass
class Attempt:
    fault: Fault
    pid: int
    code: int
    resumed: str | None
    journal: Path | None
    stderr: str
    refused: int = 0  # concurrent resumes that exited 2


@dataclass
class Trial:
    seed: int
    workdir: Path
    attempts: list[Attempt] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    duplicates: int = 0
    interruptions: int = 0
    dup_per_interruption: list[int] = field(default_factory=list)
    lost: int = 0
    rider_redone: int = 0  # tasks a resume ran again because a journal the disk refused could not show them


def _env() -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": str(ROOT), "NO_COLOR": "1"}


def _start(
    workdir: Path, args: list[str], fault: dict[str, Any], parallel: int, barrier: int | None = None
) -> subprocess.Popen[bytes]:
    env = _env()
    if barrier is not None:
        fault = {**fault, "barrier": barrier}
    env["NIKA_FAULT"] = json.dumps(fault)
    cmd = [sys.executable, str(ENGINE), "run", "wf.nika.yaml", "--trace-dir", "traces", "--no-gc"]
    cmd += ["--output-format", "json", "--max-parallel", str(parallel), *args]
    return subprocess.Popen(
        cmd,
        cwd=workdir,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        pass_fds=(barrier,) if barrier is not None else (),
    )


def journals(workdir: Path) -> set[Path]:
    d = workdir / "traces"
    return set(d.glob("*.ndjson")) if d.is_dir() else set()


def run_trial(
    seed: int, workdir: Path, baseline: dict[str, Any], faults: list[Fault] | None = None, parallel: int = 1
) -> Trial:
    """Run one trial in ``workdir`` (empty) and judge it against ``baseline`` (the outputs);
    ``parallel``: the engine's ``--max-parallel`` (1: one task in flight at a time)."""
    from runtime.journal.history import Histories, members_in

    rng = random.Random(seed * 7919 + 1)
    workdir.mkdir(parents=True, exist_ok=True)
    (workdir / "wf.nika.yaml").write_text(WORKFLOW)
    t = Trial(seed, workdir)
    faults = faults if faults is not None else plan(seed)
    for i, fault in enumerate(faults):
        resumed = None
        if i:
            resumed = _target(Histories(members_in([workdir / "traces"])), fault.target, rng)
        args = ["--resume", resumed] if resumed else []
        armed: dict[str, Any] = {}
        (workdir / "kill_at").unlink(missing_ok=True)
        if fault.how == "frame":
            armed = {"frame": fault.at, "do": fault.sig}
        elif fault.how in ("full", "warden"):
            armed = {"frame": fault.at, "do": fault.how}
        elif fault.how == "line":
            (workdir / "kill_at").write_text(f"{len(_lines(workdir)) + fault.at} {fault.sig}\n")
        if fault.concurrent > 1:  # started together behind one barrier: exactly one may run
            r, w = os.pipe()
            procs = [_start(workdir, args, armed, parallel, r) for _ in range(fault.concurrent)]
            os.close(r)
            os.write(w, b"x" * fault.concurrent)
            os.close(w)
        else:
            procs = [_start(workdir, args, armed, parallel)]
        results = [(p, *p.communicate(timeout=300)) for p in procs]
        ran = [(p, err) for p, _out, err in results if p.returncode != 2]
        refused = len(results) - len(ran)
        if not ran:
            t.problems.append(f"attempt {i}: every resume was refused: {results[0][2].decode()[-300:]}")
            continue
        runs = sorted(((p, err, _journal_of(workdir, p.pid)) for p, err in ran), key=lambda r: _opened(r[2]))
        if len(runs) > 1 and not _one_at_a_time([j for _, _, j in runs]):  # a later one only after one died
            t.problems.append(f"attempt {i}: {len(runs)} of {fault.concurrent} concurrent resumes ran at once")
        for p, err, journal in runs:
            t.attempts.append(Attempt(fault, p.pid, p.returncode, resumed, journal, err.decode(), refused))
    (workdir / "kill_at").unlink(missing_ok=True)
    judge(t, baseline)
    return t


def _opened(journal: Path | None) -> int:
    frames = _frames(journal)
    return int(frames[0].get("timestamp") or 0) if frames else 0


def _journal_of(workdir: Path, pid: int) -> Path | None:
    """The journal the engine ``pid`` wrote (fault_engine.py says it in ``.engines/<pid>``)."""
    said = workdir / ".engines" / str(pid)
    return Path(said.read_text()) if said.exists() else None


def _one_at_a_time(journals: list[Path | None]) -> bool:
    """Whether each journal began after the one before it ended (its last frame)."""
    spans = []
    for j in journals:
        frames = _frames(j)
        if frames:
            spans.append((int(frames[0].get("timestamp") or 0), int(frames[-1].get("timestamp") or 0)))
    spans.sort()
    return all(a[1] <= b[0] for a, b in itertools.pairwise(spans))


def _target(ms: Any, how: str, rng: random.Random) -> str:
    from runtime.journal.history import Member

    def ok(m: Member) -> bool:
        return not any(_state(d) == "success" for d in ms.descendants(m))

    if how == "any":
        choices = [m for m in ms.members if ok(m)]
        if choices:
            return str(rng.choice(choices).path)
    return "latest"


def _state(m: Any) -> str:
    from runtime.journal.find import peek_run

    return peek_run(m.path).state


def _lines(workdir: Path) -> list[tuple[str, int]]:
    log = workdir / "side.log"
    if not log.exists():
        return []
    out = []
    for line in log.read_text().splitlines():
        parts = line.split()
        if len(parts) == 2 and parts[1].isdigit():
            out.append((parts[0], int(parts[1])))
    return out


def _frames(path: Path | None) -> list[dict[str, Any]]:
    from runtime.journal.scan import scan

    if path is None or not path.exists():
        return []
    return scan(path.read_bytes()).frames


def _fields(frame: dict[str, Any]) -> dict[str, Any]:
    return {f["key"]: f.get("value") for f in frame.get("fields", []) if isinstance(f, dict) and "key" in f}


def judge(t: Trial, baseline: dict[str, Any]) -> None:
    """Check ``t`` (see the module docstring); what fails is appended to ``t.problems``."""
    from runtime.journal.incomplete import names, read_mark
    from runtime.journal.scan import scan

    lines = _lines(t.workdir)
    by_pid: dict[int, list[str]] = {}
    for task, pid in lines:
        by_pid.setdefault(pid, []).append(task)
    counts = Counter(task for task, _ in lines)
    lost = sorted({f"t{i:02d}" for i in range(TASKS)} - set(counts))
    t.lost = len(lost)
    if lost:
        t.problems.append(f"lost: {lost} never ran")
    completed: set[str] = set()  # completed in a journal of the history, so far
    unseen: set[str] = set()  # completed after a journal failed: the rider's mark names them, a resume redoes them
    for k, a in enumerate(t.attempts):
        frames = _frames(a.journal)
        kinds = [(f.get("kind"), _fields(f)) for f in frames]
        done_here = {f.get("task") for kind, f in kinds if kind == "task_completed"}
        started = {f.get("task") for kind, f in kinds if kind == "task_started"}
        allowed = {f.get("task") for kind, f in kinds if kind == "permit_checked" and f.get("decision") == "allow"}
        mark = read_mark(a.journal) if a.journal is not None else None
        ran = by_pid.get(a.pid, [])
        again = sorted(set(ran) & completed)
        if again:
            t.problems.append(f"attempt {k} ({a.fault.label()}): re-ran completed task(s) {again}")
        if set(ran) & unseen:  # expected, and named before the run: the resume said it cannot see them
            if "cannot see" not in a.stderr:
                t.problems.append(f"attempt {k}: re-ran {sorted(set(ran) & unseen)} without naming them first")
            t.rider_redone += len(set(ran) & unseen)
            unseen -= set(ran)
        rider = a.fault.how in ("full", "fsize")
        unwitnessed = sorted(set(ran) - allowed)
        if unwitnessed and not (rider and mark is not None):
            t.problems.append(f"attempt {k}: effect(s) {unwitnessed} ran without a permit_checked allow first")
        if len(ran) != len(set(ran)):
            t.problems.append(f"attempt {k}: an effect ran twice in one run: {sorted(ran)}")
        interrupted = a.fault.how in ("frame", "line") and a.code != 0
        in_flight = started - done_here
        cut = sorted(set(ran) - done_here)
        if rider:
            if a.code != 0:
                t.problems.append(f"attempt {k}: a journal the disk refused changed the verdict: exit {a.code}")
            if mark is None or "the journal is incomplete from frame" not in a.stderr:
                t.problems.append(f"attempt {k}: a journal the disk refused is not marked and said: {a.stderr[-300:]}")
            else:
                unseen |= set(names(mark, "completed"))
                extra = sorted(set(cut) - set(names(mark, "completed")) - set(names(mark, "started")) - in_flight)
                if extra:
                    t.problems.append(f"attempt {k}: {extra} ran unrecorded and the mark does not say so")
        elif interrupted:
            t.interruptions += 1
            t.dup_per_interruption.append(len(cut))
        elif cut and a.code == 0:
            t.problems.append(f"attempt {k}: finished, but {cut} ran without a completed record")
        if a.fault.how == "warden" and a.code != 0:
            t.problems.append(f"attempt {k}: a killed warden failed the run (exit {a.code}): {a.stderr[-300:]}")
        if "status -13" in json.dumps([f for kind, f in kinds if kind == "task_failed"]):
            t.problems.append(f"attempt {k}: an exec died of SIGPIPE (the warden poisoned its host)")
        if a.fault.sig in ("TERM", "INT") and interrupted:
            s = scan(a.journal.read_bytes()) if a.journal else None
            if a.code != 3:
                t.problems.append(f"attempt {k}: a graceful {a.fault.sig} exited {a.code}, not 3: {a.stderr[-300:]}")
            elif s is None or s.damage != "whole" or s.terminal != "workflow_cancelled":
                t.problems.append(
                    f"attempt {k}: a graceful {a.fault.sig} left a {s.damage if s else 'missing'} journal"
                )
        if a.code == -signal.SIGKILL and a.fault.sig != "KILL":
            t.problems.append(f"attempt {k}: died of SIGKILL unasked")
        noise = [w for w in ("Traceback", "Exception ignored", "Event loop is closed") if w in a.stderr]
        if noise:
            t.problems.append(f"attempt {k}: stderr carries {noise}: {a.stderr[-400:]}")
        completed |= done_here | {f.get("task") for kind, f in kinds if kind == "task_cache_hit"}
    t.duplicates = sum(n - 1 for n in counts.values() if n > 1) - t.rider_redone
    if t.duplicates > sum(t.dup_per_interruption):
        t.problems.append(f"{t.duplicates} duplicate(s) for {sum(t.dup_per_interruption)} task(s) cut off in flight")
    last = t.attempts[-1] if t.attempts else None
    if last is None or last.code != 0:
        t.problems.append(
            f"the last resume did not succeed: {last.code if last else None} {last.stderr[-400:] if last else ''}"
        )
    elif last.fault.how not in ("full", "fsize"):
        end = [
            f
            for kind, f in ((x.get("kind"), _fields(x)) for x in _frames(last.journal))
            if kind == "workflow_completed"
        ]
        outputs = json.loads(end[0]["outputs"]) if end else None
        if outputs != baseline:
            t.problems.append(f"outputs differ from an uninterrupted run: {outputs} != {baseline}")


def baseline(workdir: Path) -> dict[str, Any]:
    """The outputs of an uninterrupted run."""
    workdir.mkdir(parents=True, exist_ok=True)
    (workdir / "wf.nika.yaml").write_text(WORKFLOW)
    p = _start(workdir, [], {}, 4)
    out, err = p.communicate(timeout=300)
    assert p.returncode == 0, err.decode()[-2000:]
    return json.loads(out)["outputs"]
