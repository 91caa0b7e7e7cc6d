"""Served runs: each one a subprocess ``nika run`` in its served root, recorded on disk.

Why a subprocess and not the engine in this process: ``nika run`` resolves relative paths from the
process-wide working directory (spec 02: the run's ``workdir`` is ``Path.cwd()``, and so is its
trace folder), takes SIGINT/SIGTERM for cancellation process-wide (:mod:`nika.commands.run_stop`),
and owns the asyncio loop it runs on. Two served runs in two roots cannot share one cwd, so each
run is ``python -m nika run FILE --output-format json --events ndjson:PATH`` started with its root
as working directory: the journal is the one ``nika run`` writes (``nika trace`` and ``--resume``
work on it unchanged), the live events are the ``--events`` stream, cancel is SIGTERM (exit 3,
journal whole), and an answer resumes with ``--resume JOURNAL`` after the ticket was spent here
through :func:`runtime.durable.answers.answer_journal`.

On disk, under the state folder: ``runs/ID/run.json`` (what was asked, its attempts, its answers)
and per attempt ``aN.events.ndjson``, ``aN.report.json``, ``aN.stderr.log``. A run's state is read
from those files, so a restarted server shows what happened: a settled attempt its report's state,
an attempt whose process is still alive ``running``, one whose process is gone without a report
``interrupted`` (resumable).
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import threading
import time
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

from nika.serve.config import ServeConfig, root_of
from nika.serve.guard import TOKEN_ENV

SETTLED = ("success", "failure", "cancelled", "refused")
TASK_STATE = {
    "task.scheduled": "pending",
    "task.started": "running",
    "task.completed": "success",
    "task.cache_hit": "success",
    "task.failed": "failure",
    "task.skipped": "skipped",
    "task.cancelled": "cancelled",
}


class Busy(Exception):
    """The bound on concurrent runs is reached."""


class Conflict(Exception):
    """The run is not in a state that allows this (one line says why)."""


Admit = Callable[[str, dict[str, Any]], "str | None"]  # a refusal message, or None: admitted


class RunStore:
    """Every served run, read from and written to ``state_dir/runs``."""

    def __init__(self, cfg: ServeConfig, admit: Admit, *, now: Callable[[], float] = time.time) -> None:
        self.cfg, self.admit, self.now = cfg, admit, now
        self.dir = Path(cfg.state_dir) / "runs"
        self.dir.mkdir(parents=True, exist_ok=True, mode=0o700)
        self.procs: dict[tuple[str, int], subprocess.Popen[bytes]] = {}
        self.lock = threading.RLock()  # every read-modify-write of a record holds it (_mutate)

    # -- records ---------------------------------------------------------------------------------

    def ids(self) -> list[str]:
        return sorted((p.name for p in self.dir.iterdir() if (p / "run.json").is_file()), reverse=True)

    def record(self, run_id: str) -> dict[str, Any] | None:
        if not _id_ok(run_id):
            return None
        with contextlib.suppress(OSError, ValueError):
            return json.loads((self.dir / run_id / "run.json").read_text(encoding="utf-8"))
        return None

    def _mutate(self, rec: dict[str, Any], change: Callable[[dict[str, Any]], None]) -> None:
        """Change a record as it is on disk now (two requests on one run never lose each other's
        change), and bring the caller's copy up to date."""
        with self.lock:
            fresh = self.record(rec["id"]) or rec
            change(fresh)
            self._save(fresh)
            if fresh is not rec:
                rec.clear()
                rec.update(fresh)

    def _save(self, rec: dict[str, Any]) -> None:
        folder = self.dir / rec["id"]
        tmp = folder / "run.json.tmp"
        tmp.write_text(json.dumps(rec, indent=1, default=str), encoding="utf-8")
        os.replace(tmp, folder / "run.json")

    # -- starting --------------------------------------------------------------------------------

    def start(self, workflow: str, inputs: dict[str, Any], trigger: str) -> dict[str, Any]:
        """Admit ``workflow`` with ``inputs`` as ``nika run`` admits it, then start it. A refused
        workflow never runs: its record says why (state ``refused``)."""
        root = root_of(workflow, self.cfg.roots)
        assert root is not None  # judged by the caller
        run_id = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime(self.now())) + "-" + uuid.uuid4().hex[:8]
        rec: dict[str, Any] = {
            "id": run_id,
            "workflow": workflow,
            "root": root,
            "trigger": trigger,
            "created": self.now(),
            "inputs": inputs,
            "attempts": [],
            "answers": [],
            "refused": None,
        }
        why = self.admit(workflow, inputs)
        (self.dir / run_id).mkdir(mode=0o700)
        if why is not None:
            rec["refused"] = why
            self._save(rec)
            return rec
        with self.lock:
            if self.running_count() >= self.cfg.max_runs:
                raise Busy(f"{self.cfg.max_runs} runs are running already (--max-runs)")
            self._launch(rec, resume=None)
        return rec

    def _launch(self, rec: dict[str, Any], resume: str | None) -> None:
        """Start the next attempt (the caller holds the lock)."""
        fresh = self.record(rec["id"])
        if fresh is not None:
            rec.clear()
            rec.update(fresh)
        n = len(rec["attempts"]) + 1
        folder = self.dir / rec["id"]
        events = folder / f"a{n}.events.ndjson"
        argv = [self.cfg.python, "-m", "nika", "run", rec["workflow"], "--output-format", "json"]
        argv += ["--events", f"ndjson:{events}"]
        if resume is not None:
            argv += ["--resume", resume]
        argv += [f"--var={k}={json.dumps(v)}" for k, v in rec["inputs"].items()]  # a resume binds the same inputs
        env = {k: v for k, v in os.environ.items() if k != TOKEN_ENV}  # the server's token is not the run's
        with open(folder / f"a{n}.report.json", "wb") as out, open(folder / f"a{n}.stderr.log", "wb") as err:
            proc = subprocess.Popen(
                argv, cwd=rec["root"], stdin=subprocess.DEVNULL, stdout=out, stderr=err, env=env, start_new_session=True
            )
        self.procs[(rec["id"], n)] = proc
        attempt = {"n": n, "pid": proc.pid, "started": self.now(), "resume": resume, "exit": None}
        self._mutate(rec, lambda r: r["attempts"].append(attempt))

    # -- state -----------------------------------------------------------------------------------

    def _attempt_state(self, rec: dict[str, Any], a: dict[str, Any]) -> tuple[str, dict[str, Any] | None]:
        """An attempt's state and, when it settled, its report."""
        folder = self.dir / rec["id"]
        proc = self.procs.get((rec["id"], a["n"]))
        if proc is not None and proc.poll() is None:
            return "running", None
        report = _report(folder / f"a{a['n']}.report.json")
        if report is not None:
            if not a.get("settled"):
                code, n, ended = (proc.returncode if proc is not None else None), a["n"], self.now()

                def settle(r: dict[str, Any]) -> None:
                    for x in r["attempts"]:
                        if x["n"] == n and not x.get("settled"):
                            x.update(exit=code, ended=ended, settled=True)

                self._mutate(rec, settle)
                a.update(exit=code, ended=ended, settled=True)
                self.procs.pop((rec["id"], n), None)
            return str(report.get("workflow_state")), report
        if proc is None and _alive(a["pid"], str(folder / f"a{a['n']}.events.ndjson")):
            return "running", None  # started by an earlier server process, still going
        return "interrupted", None

    def running_count(self) -> int:
        n = 0
        for (run_id, _), proc in list(self.procs.items()):
            if proc.poll() is None:
                n += 1
            else:
                rec = self.record(run_id)
                if rec is not None:
                    self.view(rec)  # settles the attempt's record
        return n

    def view(self, rec: dict[str, Any], *, full: bool = True) -> dict[str, Any]:
        """``GET /runs/{id}``: the latest attempt's ``nika run`` JSON report (``workflow_state``
        ``running`` or ``paused`` while the run is not settled), with the run's own fields."""
        base = {
            "id": rec["id"],
            "workflow": rec["workflow"],
            "root": rec["root"],
            "trigger": rec["trigger"],
            "created": rec["created"],
            "attempts": rec["attempts"],
            "answers": rec["answers"],
        }
        if rec.get("refused") is not None:
            err = {"code": None, "message": rec["refused"]}
            return {**base, "workflow_state": "refused", "tasks": {}, "outputs": {}, "error": err, "pending": []}
        a = rec["attempts"][-1]
        state, report = self._attempt_state(rec, a)
        events = self.events(rec, a["n"])
        doc = dict(report) if report is not None else {"workflow_state": state, "outputs": {}, "error": None}
        doc["workflow_state"] = state if report is None else doc.get("workflow_state", state)
        folded = fold(events)
        tasks = doc.get("tasks") if isinstance(doc.get("tasks"), dict) else {}
        for tid, t in folded.items():  # the live states; a report's own entries win where it has them
            tasks[tid] = {**t, **tasks.get(tid, {})} if report is not None else t
        doc["tasks"] = tasks
        if not full:
            doc.pop("events", None)
        elif report is None:
            doc["events"] = events
        doc["journal"] = self.journal(rec, a, report, events)
        doc["pending"] = self.pending(rec, doc) if doc["workflow_state"] == "paused" else []
        for p in doc["pending"]:  # the gate waits: shown as paused, not as a task yet to start
            if isinstance(tasks.get(p["task"].split("/")[0]), dict):
                tasks[p["task"].split("/")[0]]["status"] = "paused"
        doc["duration_s"] = (a.get("ended") or self.now()) - rec["attempts"][0]["started"]
        return {**doc, **base}

    def journal(
        self, rec: dict[str, Any], a: dict[str, Any], report: dict[str, Any] | None, events: list
    ) -> str | None:
        """The attempt's journal (absolute): the report's ``trace``, else found by the run nonce."""
        if report is not None and isinstance(report.get("trace"), str):
            return os.path.join(rec["root"], report["trace"])
        nonce = next((e.get("run_nonce") for e in events if e.get("type") == "workflow.started"), None)
        if isinstance(nonce, str) and len(nonce) >= 12:
            for p in (Path(rec["root"]) / ".nika" / "traces").glob(f"*-{nonce[-12:]}.ndjson"):
                return str(p)
        return None

    def pending(self, rec: dict[str, Any], doc: dict[str, Any]) -> list[dict[str, Any]]:
        """The prompts a paused run waits on, each with the shown hash its ticket binds (NEP-0013)."""
        from runtime.durable.resume_index import ResumeRefused, read_history

        if not doc.get("journal"):
            return []
        try:
            index = read_history(doc["journal"], trace_dir=Path(rec["root"]) / ".nika" / "traces")
        except ResumeRefused:
            return []
        out = []
        for task, prompts in sorted(index.paused.items()):
            for p in prompts:
                t = p.get("ticket") if isinstance(p.get("ticket"), dict) else {}
                issued, ttl = t.get("issued_at"), t.get("ttl_s")
                expires = issued + ttl if isinstance(issued, int | float) and isinstance(ttl, int | float) else None
                out.append(
                    {
                        "task": task,
                        "message": p.get("message"),
                        "mode": p.get("mode"),
                        "choices": p.get("choices"),
                        "shown_hash": t.get("shown_hash", p.get("shown_hash")),
                        "expires_at": expires,
                    }
                )
        return out

    def events(self, rec: dict[str, Any], n: int) -> list[dict[str, Any]]:
        return list(_lines(self.dir / rec["id"] / f"a{n}.events.ndjson"))

    def events_path(self, rec: dict[str, Any], n: int) -> Path:
        return self.dir / rec["id"] / f"a{n}.events.ndjson"

    def settled(self, rec: dict[str, Any], n: int) -> bool:
        return self._attempt_state(rec, rec["attempts"][n - 1])[0] != "running"

    # -- acting ----------------------------------------------------------------------------------

    def cancel(self, rec: dict[str, Any]) -> None:
        """SIGTERM to the running attempt: ``nika run`` cancels (exit 3), its journal whole."""
        if rec.get("refused") is not None or not rec["attempts"]:
            raise Conflict("the run never started")
        a = rec["attempts"][-1]
        state, _ = self._attempt_state(rec, a)
        if state != "running":
            raise Conflict(f"the run is {state}, not running")
        with contextlib.suppress(ProcessLookupError):
            os.kill(a["pid"], signal.SIGTERM)

    def answer(
        self, rec: dict[str, Any], task: str, value: Any, shown_hash: str, by: str
    ) -> tuple[int, dict[str, Any]]:
        """Answer a paused gate through the one ticket mechanism (spent once, bound to what was shown,
        typed), then resume the run under the claim. The HTTP status and the body."""
        from runtime.durable.answers import answer_journal

        doc = self.view(rec, full=False)
        if doc["workflow_state"] != "paused":
            return 409, {"status": "not_paused", "message": f"the run is {doc['workflow_state']}, not paused"}
        got = answer_journal(
            doc["journal"], task, value, shown_hash=shown_hash, trace_dir=Path(rec["root"]) / ".nika" / "traces", by=by
        )
        body = {"status": got.status, "message": got.message}
        if not got.ok:
            return got.http, body
        given = {"task": task, "value": value, "by": by, "at": self.now(), "status": got.status}
        with self.lock:
            self._mutate(rec, lambda r: r["answers"].append(given))
            self._launch(rec, resume=doc["journal"])  # the resume runs under the claimed answer
        return got.http, body

    def refresh_expired(self, rec: dict[str, Any], doc: dict[str, Any]) -> bool:
        """Opening a paused run whose ticket expired issues a fresh one (NEP-0013 §2): the run is
        resumed without an answer, and pauses again with a new ticket. Whether it was."""
        if doc.get("workflow_state") != "paused" or not doc.get("journal"):
            return False
        if not any(
            isinstance(p.get("expires_at"), int | float) and p["expires_at"] <= self.now() for p in doc["pending"]
        ):
            return False
        with self.lock:
            if rec["attempts"][-1].get("resume") == doc["journal"] or self.running_count() >= self.cfg.max_runs:
                return False  # refreshed already (that attempt holds the new ticket), or no room now
            self._launch(rec, resume=doc["journal"])
        return True

    def resume(self, rec: dict[str, Any]) -> None:
        """Resume an interrupted, failed or cancelled run from its journal (the durable-runs rules apply)."""
        doc = self.view(rec, full=False)
        if doc["workflow_state"] not in ("interrupted", "failure", "cancelled"):
            raise Conflict(f"the run is {doc['workflow_state']}; only an interrupted, failed or cancelled run resumes")
        if not doc.get("journal"):
            raise Conflict("the run left no journal to resume from")
        with self.lock:
            if self.running_count() >= self.cfg.max_runs:
                raise Busy(f"{self.cfg.max_runs} runs are running already (--max-runs)")
            self._launch(rec, resume=doc["journal"])

    def stop_all(self) -> None:
        """On shutdown: cancel what this process started (each journal ends whole, resumable)."""
        for proc in self.procs.values():
            if proc.poll() is None:
                with contextlib.suppress(ProcessLookupError):
                    proc.send_signal(signal.SIGTERM)
        for proc in self.procs.values():
            with contextlib.suppress(subprocess.TimeoutExpired):
                proc.wait(timeout=10)


def fold(events: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """Each task's state as the events so far say (and per ``for_each`` item, from ``checkpoint.written``)."""
    tasks: dict[str, dict[str, Any]] = {}
    for e in events:
        tid, kind = e.get("task"), e.get("type")
        if not isinstance(tid, str) or ".on_finally[" in tid:
            continue
        t = tasks.setdefault(tid, {"status": "pending"})
        if kind in TASK_STATE:
            t["status"] = TASK_STATE[kind]
            if kind == "task.cache_hit":
                t["cache_hit"] = True
            if isinstance(e.get("output"), str):
                with contextlib.suppress(ValueError):
                    t["output"] = json.loads(e["output"])
            if e.get("error_code"):
                t["error"] = {"code": e.get("error_code"), "message": e.get("message")}
        elif kind == "checkpoint.written" and isinstance(e.get("index"), int):
            t.setdefault("items", {})[str(e["index"])] = e.get("status")
        elif kind == "workflow.paused" and tid:
            t["status"] = "paused"
    return tasks


def _report(path: Path) -> dict[str, Any] | None:
    try:
        text = path.read_text(encoding="utf-8")
    except OSError:
        return None
    with contextlib.suppress(ValueError):
        doc = json.loads(text)
        return doc if isinstance(doc, dict) else None
    return None


def _lines(path: Path) -> list[dict[str, Any]]:
    out = []
    try:
        data = path.read_bytes()
    except OSError:
        return out
    for line in data.split(b"\n"):
        if line.strip():
            with contextlib.suppress(ValueError):
                e = json.loads(line)
                if isinstance(e, dict):
                    out.append(e)
    return out


def _alive(pid: int, marker: str) -> bool:
    """Whether ``pid`` is still the ``nika run`` this server started (its command line names ``marker``)."""
    try:
        cmdline = Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return False
    return marker.encode() in cmdline


def _id_ok(run_id: str) -> bool:
    return bool(run_id) and len(run_id) < 64 and all(c.isalnum() or c in "-T" for c in run_id)
