"""A live run under the debugger: :class:`Live` is the runtime's :class:`~runtime.engine.debug.Debugger`.

One stop holds the whole run (``allThreadsStopped``): the held task waits at the seam before its
effect, a task made ready meanwhile waits before its ``task_started`` frame, and a task already
past the seam finishes its current effect. Threads are the tasks (and ``for_each`` iterations)
running now. What the Variables view shows is a snapshot taken when the run stopped, masked by
the run's redactor (the masking the journal uses).
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from checker.model.workflow import CompiledWorkflow
from nika_dap.views import Condition, Handles, TaskLines, task_at, task_lines
from runtime.engine.debug import Halt

Emit = Callable[[str, dict[str, Any]], None]
EXIT = {"success": 0, "failure": 1, "cancelled": 3, "paused": 4}
SECRET_NOTE = "«reads secrets: resolved at the effect, never shown»"


class LaunchError(Exception):
    """The launch cannot start (the file does not compile, `nika check` refuses it, an input does not fit)."""


@dataclass
class Breakpoint:
    id: int
    line: int
    task: str | None
    condition: Condition | None = None


@dataclass
class Frame:
    run_key: int
    task: str
    iteration: int | None
    source: str | None
    line: int
    halt: Halt | None


@dataclass
class RunInfo:
    source: str | None
    workflow: str
    parent: tuple[int, str] | None
    lines: list[TaskLines] = field(default_factory=list)
    halts: dict[str, Halt] = field(default_factory=dict)  # the last halt of each task (its snapshot)


def admit(program: str, given: dict[str, Any]) -> tuple[CompiledWorkflow, dict[str, Any]]:
    """What ``nika run`` admits (:func:`runtime.engine.admission.admit_file`), or :class:`LaunchError`."""
    from runtime.engine.admission import NotAdmitted, admit_file

    try:
        return admit_file(program, given, what="launch `inputs`")
    except NotAdmitted as exc:
        if exc.stage == "verdict":
            said = f"refused before any effect, as `nika check` refuses it ({exc.message})"
            raise LaunchError(f"{program}: {said}") from None
        if exc.stage == "unsupported":
            raise LaunchError(f"{program}: {exc.message}") from None
        raise LaunchError(exc.message) from None


def _real(path: str | None, workdir: Path) -> str:
    return os.path.realpath(os.path.join(workdir, path)) if path else ""


class Live:
    """The debugger of one live run."""

    def __init__(self, emit: Emit, compiled: CompiledWorkflow, inputs: dict[str, Any], workdir: Path) -> None:
        self.emit, self.compiled, self.inputs, self.workdir = emit, compiled, inputs, workdir
        self.handles = Handles()
        self.breakpoints: dict[str, list[Breakpoint]] = {}  # real source path -> its breakpoints
        self.exceptions = False
        self.stopped: tuple[Halt, int] | None = None
        self._running = asyncio.Event()
        self._running.set()
        self.step = False  # armed: the next task to reach its effect stops (reason `step`)
        self.stepping: tuple[int, str, int | None] | None = None  # `next` from this task: armed once it settles
        self.last_step: dict[str, Any] | None = None  # what the stepped task settled with
        self.reason = ""  # why the run last stopped
        self.pause_requested = False
        self.entry = False  # `stopOnEntry`: the first task to reach its effect stops, reason `entry`
        self.cancelling = False
        self.threads: dict[tuple[int, str, int | None], int] = {}
        self.thread_names: dict[int, str] = {}
        self.runs: dict[int, RunInfo] = {}
        self.frames: dict[int, Frame] = {}
        self._lines: dict[str, list[TaskLines]] = {_real(compiled.source.path, workdir): task_lines(compiled)}
        self.run: Any = None
        self.result: Any = None

    # -- breakpoints -------------------------------------------------------------------------

    def lines_of(self, path: str) -> list[TaskLines]:
        real = _real(path, self.workdir)
        if real not in self._lines:  # a child workflow's file: compiled to map its lines (never run from here)
            from runtime.engine.inputs import compile_file

            compiled, _ = compile_file(real, named=False)
            self._lines[real] = task_lines(compiled) if compiled is not None else []
        return self._lines[real]

    def set_breakpoints(self, path: str, wanted: list[dict[str, Any]], next_id: Callable[[], int]) -> list[dict]:
        lines = self.lines_of(path)
        kept, answer = [], []
        for b in wanted:
            line = int(b.get("line", 0))
            owner = task_at(lines, line)
            bp = Breakpoint(next_id(), line, owner.task if owner else None)
            shown: dict[str, Any] = {"id": bp.id, "verified": owner is not None, "line": line}
            if owner is None:
                shown["message"] = "no task on this line: a breakpoint goes on a task's key or inside its body"
            else:
                shown["line"] = owner.key_line
            text = b.get("condition")
            if owner is not None and isinstance(text, str) and text.strip():
                try:
                    bp.condition = Condition(text)
                except ValueError as exc:
                    shown["verified"], shown["message"] = False, f"the condition does not parse: {exc}"
                    bp.task = None
            kept.append(bp)
            answer.append(shown)
        self.breakpoints[_real(path, self.workdir)] = kept
        return answer

    def _hit(self, halt: Halt) -> tuple[list[int], str | None]:
        hits: list[int] = []
        for bp in self.breakpoints.get(_real(halt.source_path, self.workdir), []):
            if bp.task != halt.task.id:
                continue
            if bp.condition is not None:
                try:
                    if not bp.condition.holds(halt.scope):
                        continue
                except ValueError as exc:  # a condition that cannot be judged stops, and says why
                    self.emit("output", {"category": "console", "output": f"breakpoint condition: {exc}\n"})
            hits.append(bp.id)
        return hits, None

    # -- the runtime's seam (runtime.engine.debug.Debugger) ----------------------------------

    def _thread(self, run_key: int, tid: str, iteration: int | None) -> int:
        key = (run_key, tid, iteration)
        n = self.threads.get(key)
        if n is None:
            n = self.threads[key] = len(self.thread_names) + 1
            depth = self._depth(run_key)
            name = ("  " * depth) + (tid if iteration is None else f"{tid}[{iteration}]")
            self.thread_names[n] = name
            self.emit("thread", {"reason": "started", "threadId": n})
        return n

    def _depth(self, run_key: int) -> int:
        d, info = 0, self.runs.get(run_key)
        while info is not None and info.parent is not None and d < 16:
            d, info = d + 1, self.runs.get(info.parent[0])
        return d

    async def _gate(self) -> None:
        while self.stopped is not None and not self.cancelling:
            await self._running.wait()

    async def before_start(self, run_key: int, task_id: str) -> None:
        await self._gate()

    def _note(self, halt: Halt) -> RunInfo:
        info = self.runs.get(halt.run_key)
        if info is None:
            info = self.runs[halt.run_key] = RunInfo(halt.source_path, halt.workflow, halt.parent)
            info.lines = self.lines_of(halt.source_path or "")
        info.halts[halt.task.id] = halt
        return info

    async def before_effect(self, halt: Halt) -> None:
        self._note(halt)
        thread = self._thread(halt.run_key, halt.task.id, halt.iteration)
        await self._gate()
        if self.cancelling:
            return
        st = self.stepping
        if st is not None and st[:2] == (halt.run_key, halt.task.id) and st[2] != halt.iteration:
            self.stepping, self.step = None, True  # `next` from an iteration: the task's next one stops
        if self.entry:
            await self._stop(halt, thread, "entry")
        elif self.pause_requested:
            await self._stop(halt, thread, "pause")
        elif self.step:
            await self._stop(halt, thread, "step")
        else:
            hits, _ = self._hit(halt)
            if hits:
                await self._stop(halt, thread, "breakpoint", hits=hits)

    async def on_failure(self, halt: Halt) -> None:
        if not self.exceptions or self.cancelling:
            return
        self._note(halt)
        thread = self._thread(halt.run_key, halt.task.id, halt.iteration)
        await self._gate()
        err = halt.error
        text = f"{getattr(err, 'code', 'error')}: {halt.redact(getattr(err, 'message', str(err)))}"
        await self._stop(halt, thread, "exception", text=text)

    def ended(self, run_key: int, task_id: str, status: str, output: Any) -> None:
        if self.stepping is not None and self.stepping[:2] == (run_key, task_id):
            self.stepping, self.step = None, True
            self.last_step = {"task": task_id, "status": status, "output": output}
        for key in [k for k in self.threads if k[0] == run_key and k[1] == task_id]:
            n = self.threads.pop(key)
            self.emit("thread", {"reason": "exited", "threadId": n})
        self.emit("output", {"category": "console", "output": f"{status:>9} {task_id}\n"})

    async def _stop(self, halt: Halt, thread: int, reason: str, hits: list[int] | None = None, text: str = "") -> None:
        self.reason = reason
        if reason != "step":
            self.last_step = None
        self.stopped = (halt, thread)
        self.step = self.pause_requested = self.entry = False
        self.stepping = None
        self._running.clear()
        self.handles.reset()
        self.frames.clear()
        body: dict[str, Any] = {"reason": reason, "threadId": thread, "allThreadsStopped": True}
        where = halt.task.id if halt.iteration is None else f"{halt.task.id}[{halt.iteration}]"
        body["description"] = f"before the effect of `{where}`" if reason != "exception" else f"`{where}` failed"
        if hits:
            body["hitBreakpointIds"] = hits
        if text:
            body["text"] = text
        self.emit("stopped", body)
        try:
            await self._running.wait()
        finally:
            self.stopped = None

    # -- requests ----------------------------------------------------------------------------

    def resume(self, how: str) -> None:
        """``continue``; ``next``: the held task runs to its end, then the next task to reach its
        effect stops (the stepped task's outcome is the *Last step* scope there)."""
        if how == "next":
            if self.stopped is None:
                self.step = True
            else:
                halt = self.stopped[0]
                self.stepping = (halt.run_key, halt.task.id, halt.iteration)
        if self.stopped is None:
            return
        self.stopped = None
        self._running.set()  # no `continued` event: the request itself says the run goes on (DAP)

    def pause(self) -> None:
        self.pause_requested = True

    def thread_list(self) -> list[dict[str, Any]]:
        live = [{"id": n, "name": self.thread_names[n]} for n in sorted(set(self.threads.values()))]
        if self.stopped is not None and all(t["id"] != self.stopped[1] for t in live):
            live.append({"id": self.stopped[1], "name": self.thread_names[self.stopped[1]]})
        return live or [{"id": 0, "name": self.compiled.workflow.id if self.compiled.workflow else "workflow"}]

    def _frame(self, run_key: int, tid: str, iteration: int | None, halt: Halt | None) -> dict[str, Any]:
        info = self.runs.get(run_key)
        source = info.source if info else self.compiled.source.path
        line = next((t.key_line for t in (info.lines if info else []) if t.task == tid), 1)
        fid = len(self.frames) + 1
        self.frames[fid] = Frame(run_key, tid, iteration, source, line, halt)
        name = tid if iteration is None else f"{tid} [iteration {iteration}]"
        wf = info.workflow if info else ""
        frame: dict[str, Any] = {"id": fid, "name": f"{wf} › {name}" if wf else name, "line": line, "column": 1}
        if source:
            frame["source"] = {"name": os.path.basename(source), "path": _real(source, self.workdir)}
        return frame

    def stack(self, thread: int) -> list[dict[str, Any]]:
        key = next((k for k, n in self.threads.items() if n == thread), None)
        halt = None
        if self.stopped is not None and self.stopped[1] == thread:
            halt = self.stopped[0]
            key = (halt.run_key, halt.task.id, halt.iteration)
        if key is None:
            return []
        frames = [self._frame(key[0], key[1], key[2], halt)]
        info = self.runs.get(key[0])
        while info is not None and info.parent is not None and len(frames) < 32:  # the child-workflow chain
            parent_key, caller = info.parent
            parent = self.runs.get(parent_key)
            frames.append(self._frame(parent_key, caller, None, parent.halts.get(caller) if parent else None))
            info = parent
        return frames

    def scopes(self, frame_id: int) -> list[dict[str, Any]]:
        frame = self.frames.get(frame_id)
        if frame is None or frame.halt is None:
            return []
        snap = snapshot(frame.halt)
        out = []
        for name in ("task", "inputs", "const", "config", "tasks"):
            value = snap.get(name) or {}
            label = {"task": "Task", "inputs": "Inputs", "const": "Const", "config": "Config", "tasks": "Settled tasks"}
            out.append(
                {
                    "name": label[name],
                    "variablesReference": self.handles.ref(value) or self.handles.ref({"(empty)": None}),
                    "expensive": False,
                    "presentationHint": "locals" if name == "task" else None,
                }
            )
        if self.last_step is not None and self.reason == "step":
            out.insert(
                1,
                {
                    "name": "Last step",
                    "variablesReference": self.handles.ref(dict(self.last_step)),
                    "expensive": False,
                    "presentationHint": None,
                },
            )
        for s in out:
            if s["presentationHint"] is None:
                del s["presentationHint"]
        return out

    def evaluate(self, expression: str, frame_id: int | None) -> Any:
        frame = self.frames.get(frame_id or 0) if frame_id else None
        halt = frame.halt if frame is not None else (self.stopped[0] if self.stopped else None)
        if halt is None:
            raise ValueError("the run is not stopped: nothing to evaluate against")
        from checker.expr import EvalError, evaluate

        if "secrets" in expression:
            raise ValueError("`secrets` are not evaluated in the debugger (they are resolved at the effect)")
        cond = Condition(expression)
        try:
            return halt.redact(evaluate(cond.expr, halt.scope))
        except EvalError as exc:
            raise ValueError(exc.message) from None

    # -- the run -----------------------------------------------------------------------------

    async def execute(self, trace_dir: Path | None) -> int:
        from runtime.engine.options import Options
        from runtime.engine.run import Run
        from runtime.verbs import VERBS

        options = Options(trace_dir=trace_dir, debugger=self)
        self.run = Run(self.compiled, self.inputs, options, verbs=VERBS, workdir=self.workdir)
        self.result = result = await self.run.execute()
        where = f" (trace: {result.trace})" if result.trace else ""
        self.emit("output", {"category": "console", "output": f"workflow {result.workflow_state}{where}\n"})
        return EXIT.get(result.workflow_state, 1)

    def cancel(self) -> None:
        """Stop the session: the run is cancelled (exit 3); held tasks settle cancelled, never run."""
        self.cancelling = True
        if self.run is not None:
            self.run.cancel()
        self.stopped = None
        self._running.set()


def snapshot(halt: Halt) -> dict[str, Any]:
    """What the Variables view shows of a halt, masked by the run's redactor."""
    from runtime.values import materialise, roots_of

    s = halt.scope
    task: dict[str, Any] = {"id": halt.task.id, "with": dict(s.get("with") or {})}
    verb = halt.task.verb
    args: dict[str, Any] = {}
    if verb is not None:
        for entry in verb.value.entries:
            key = str(entry.key.value)
            if "secrets" in set(roots_of(entry.value)):
                args[key] = SECRET_NOTE
                continue
            try:
                args[key] = materialise(entry.value, s, key)
            except Exception as exc:  # shown, never raised: the verb reports its own errors
                args[key] = f"«cannot be resolved yet: {exc}»"
        task[verb.kind] = args
    if halt.iteration is not None:
        task["item"], task["index"] = s.get("item"), halt.iteration
    if halt.error is not None:
        task["error"] = {"code": halt.error.code, "message": halt.error.message}
    tasks = {k: v for k, v in (s.get("tasks") or {}).items() if v.get("status") not in (None, "pending")}
    out = {
        "task": task,
        "inputs": dict(s.get("inputs") or {}),
        "const": dict(s.get("const") or {}),
        "config": dict(s.get("config") or {}),
        "tasks": tasks,
    }
    from runtime.values import plain

    return halt.redact(plain(out))
