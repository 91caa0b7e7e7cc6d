"""One debugging session: DAP requests in, responses and events out (the messages, not the bytes).

:class:`Session` is driven by :meth:`Session.handle` with each request the client sends, on the
loop the run executes on; it writes through ``send`` (a function taking one message). A launch
with ``"trace": PATH`` replays a recorded journal (:mod:`nika_dap.replay`); without, it runs
``"program"`` live (:mod:`nika_dap.live`), starting once ``configurationDone`` arrives.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable
from pathlib import Path
from typing import Any

from nika_dap.live import LaunchError, Live
from nika_dap.replay import Replay
from nika_dap.views import show

Send = Callable[[dict[str, Any]], None]

CAPABILITIES: dict[str, Any] = {
    "supportsConfigurationDoneRequest": True,
    "supportsConditionalBreakpoints": True,
    "supportsStepBack": True,
    "supportsEvaluateForHovers": False,
    "supportsTerminateRequest": True,
    "supportTerminateDebuggee": True,
    "exceptionBreakpointFilters": [
        {
            "filter": "task_failure",
            "label": "Task failures",
            "description": "stop when a task fails, before on_error: decides",
            "default": False,
        }
    ],
}


class RequestError(Exception):
    """A request that cannot be honoured: its response says why (``success: false``)."""


class Session:
    def __init__(self, send: Send, workdir: Path | None = None) -> None:
        self._send = send
        self.seq = 0
        self.workdir = (workdir or Path.cwd()).resolve()
        self.live: Live | None = None
        self.replay: Replay | None = None
        self.configured = asyncio.Event()
        self.launched = False
        self.runner: asyncio.Task[None] | None = None
        self.done = asyncio.Event()  # the session is over (disconnect answered, or the run ended and exited)
        self._bp_id = 0
        self._pending_bps: dict[str, list[dict[str, Any]]] = {}
        self._exceptions = False
        self.trace_dir: Path | None = None
        self.stop_on_entry = False

    # -- output ------------------------------------------------------------------------------

    def send(self, message: dict[str, Any]) -> None:
        self.seq += 1
        self._send({"seq": self.seq, **message})

    def event(self, name: str, body: dict[str, Any] | None = None) -> None:
        msg: dict[str, Any] = {"type": "event", "event": name}
        if body is not None:
            msg["body"] = body
        self.send(msg)

    def _respond(self, req: dict[str, Any], body: Any = None, error: str | None = None) -> None:
        msg: dict[str, Any] = {
            "type": "response",
            "request_seq": req.get("seq", 0),
            "command": req.get("command", ""),
            "success": error is None,
        }
        if error is not None:
            msg["message"] = error
            msg["body"] = {"error": {"id": 1, "format": error, "showUser": True}}
        elif body is not None:
            msg["body"] = body
        self.send(msg)

    def _next_id(self) -> int:
        self._bp_id += 1
        return self._bp_id

    # -- requests ----------------------------------------------------------------------------

    async def handle(self, req: dict[str, Any]) -> None:
        if req.get("type") != "request":
            return
        command = str(req.get("command", ""))
        args = req.get("arguments") or {}
        if not isinstance(args, dict):
            args = {}
        handler = getattr(self, "do_" + command, None)
        if handler is None:
            self._respond(req, error=f"`{command}` is not supported by nika dap")
            return
        try:
            body = await handler(args)
        except RequestError as exc:
            self._respond(req, error=str(exc))
            return
        except LaunchError as exc:
            self._respond(req, error=str(exc))
            return
        if command == "disconnect" or command == "terminate":
            self._respond(req, body)
            if command == "disconnect":
                self.done.set()
            return
        self._respond(req, body)
        if command == "initialize":
            self.event("initialized")

    async def do_initialize(self, args: dict[str, Any]) -> dict[str, Any]:
        return CAPABILITIES

    async def do_launch(self, args: dict[str, Any]) -> None:
        if self.launched:
            raise RequestError("this session has launched already")
        cwd = args.get("cwd")
        if isinstance(cwd, str) and cwd:
            self.workdir = Path(self.workdir, cwd).resolve()
        program = args.get("program")
        trace = args.get("trace")
        self.stop_on_entry = bool(args.get("stopOnEntry", False))
        if isinstance(trace, str) and trace:
            self.replay = Replay(trace, program if isinstance(program, str) else None, self.workdir)
            self.stop_on_entry = bool(args.get("stopOnEntry", True))
        else:
            if not isinstance(program, str) or not program:
                raise RequestError("launch needs `program` (a workflow file) or `trace` (a journal to replay)")
            inputs = args.get("inputs") or {}
            if not isinstance(inputs, dict):
                raise RequestError("launch `inputs` must be an object of input values")
            from nika_dap.live import admit

            compiled, bound = admit(str(Path(self.workdir, program)), inputs)
            self.live = Live(self.event, compiled, bound, self.workdir)
            self.live.entry = self.stop_on_entry
            td = args.get("traceDir")
            self.trace_dir = (
                Path(self.workdir, td) if isinstance(td, str) and td else Path(self.workdir, ".nika/traces")
            )
        self.launched = True
        if self.live is not None:  # a live run cannot step back: the client's buttons say so
            self.event("capabilities", {"capabilities": {"supportsStepBack": False}})
        for path, bps in self._pending_bps.items():
            self._apply_breakpoints(path, bps)
        self._apply_exceptions()
        if self.configured.is_set():
            self._start()
        return None

    def _apply_breakpoints(self, path: str, wanted: list[dict[str, Any]]) -> list[dict[str, Any]]:
        if self.live is not None:
            return self.live.set_breakpoints(path, wanted, self._next_id)
        if self.replay is not None:
            return self.replay.set_breakpoints(wanted, self._next_id)
        return []

    def _apply_exceptions(self) -> None:
        if self.live is not None:
            self.live.exceptions = self._exceptions
        if self.replay is not None:
            self.replay.exceptions = self._exceptions

    async def do_setBreakpoints(self, args: dict[str, Any]) -> dict[str, Any]:
        source = args.get("source") or {}
        path = source.get("path") if isinstance(source, dict) else None
        wanted = args.get("breakpoints")
        if not isinstance(wanted, list):
            wanted = [{"line": n} for n in args.get("lines") or []]
        wanted = [b for b in wanted if isinstance(b, dict)]
        if not isinstance(path, str):
            return {"breakpoints": [{"verified": False, "message": "a breakpoint needs a source path"} for _ in wanted]}
        self._pending_bps[path] = wanted
        if not self.launched:  # configured before launch: held until the launch says which file runs
            return {
                "breakpoints": [
                    {
                        "id": self._next_id(),
                        "verified": False,
                        "line": b.get("line", 0),
                        "message": "pending until launch",
                    }
                    for b in wanted
                ]
            }
        return {"breakpoints": self._apply_breakpoints(path, wanted)}

    async def do_setExceptionBreakpoints(self, args: dict[str, Any]) -> dict[str, Any]:
        filters = args.get("filters") or []
        self._exceptions = "task_failure" in filters
        self._apply_exceptions()
        return {"breakpoints": [{"verified": True} for f in filters if f == "task_failure"]}

    async def do_configurationDone(self, args: dict[str, Any]) -> None:
        self.configured.set()
        if self.launched:
            self._start()
        return None

    def _start(self) -> None:
        if self.runner is not None:
            return
        self.runner = asyncio.ensure_future(self._run())

    async def _run(self) -> None:
        if self.replay is not None:
            await asyncio.sleep(0)  # the launch/configurationDone response goes first
            self._replay_move("entry" if self.stop_on_entry else "start")
            return
        assert self.live is not None
        code = 1
        try:
            code = await self.live.execute(self.trace_dir)
        except Exception as exc:  # the run itself settles every task; this is the adapter's own failure
            self.event("output", {"category": "stderr", "output": f"nika dap: the run failed: {exc}\n"})
        self.event("terminated")
        self.event("exited", {"exitCode": code})

    def _replay_move(self, how: str) -> None:
        assert self.replay is not None
        self.replay.handles.reset()
        landed = self.replay.move(how)
        if landed is None:
            self.event("output", {"category": "console", "output": f"end of the recorded run: {self.replay.state}\n"})
            self.event("terminated")
            self.event("exited", {"exitCode": self.replay.exit_code})
            return
        reason, hits = landed
        p = self.replay.current()
        body: dict[str, Any] = {"reason": reason, "threadId": 1, "allThreadsStopped": True}
        if p is not None:
            body["description"] = f"recorded: `{p.task}` settled {p.status}"
        if hits:
            body["hitBreakpointIds"] = hits
        self.event("stopped", body)

    async def do_threads(self, args: dict[str, Any]) -> dict[str, Any]:
        if self.live is not None:
            return {"threads": self.live.thread_list()}
        return {"threads": [{"id": 1, "name": f"replay of {self.replay.workflow}" if self.replay else "nika"}]}

    async def do_stackTrace(self, args: dict[str, Any]) -> dict[str, Any]:
        thread = int(args.get("threadId", 0))
        frames = self.live.stack(thread) if self.live is not None else self.replay.stack() if self.replay else []
        return {"stackFrames": frames, "totalFrames": len(frames)}

    async def do_scopes(self, args: dict[str, Any]) -> dict[str, Any]:
        frame = int(args.get("frameId", 0))
        if self.live is not None:
            return {"scopes": self.live.scopes(frame)}
        return {"scopes": self.replay.scopes() if self.replay else []}

    def _handles(self) -> Any:
        return self.live.handles if self.live is not None else self.replay.handles if self.replay else None

    async def do_variables(self, args: dict[str, Any]) -> dict[str, Any]:
        handles = self._handles()
        ref = int(args.get("variablesReference", 0))
        return {"variables": handles.variables(ref) if handles is not None else []}

    async def do_evaluate(self, args: dict[str, Any]) -> dict[str, Any]:
        if self.live is None:
            raise RequestError("evaluate is for live runs (a replay holds no scope to evaluate against)")
        try:
            value = self.live.evaluate(str(args.get("expression", "")), args.get("frameId"))
        except ValueError as exc:
            raise RequestError(str(exc)) from None
        return {"result": show(value, 2000), "variablesReference": self.live.handles.ref(value)}

    async def do_continue(self, args: dict[str, Any]) -> dict[str, Any]:
        self._go("continue")
        return {"allThreadsContinued": True}

    async def do_next(self, args: dict[str, Any]) -> None:
        self._go("next")

    async def do_stepIn(self, args: dict[str, Any]) -> None:
        self._go("next")

    async def do_stepOut(self, args: dict[str, Any]) -> None:
        self._go("next")

    async def do_stepBack(self, args: dict[str, Any]) -> None:
        if self.replay is None:
            raise RequestError("a live run cannot step back (replay its journal: launch with `trace`)")
        self._go("stepBack")

    async def do_reverseContinue(self, args: dict[str, Any]) -> None:
        if self.replay is None:
            raise RequestError("a live run cannot reverse-continue (replay its journal: launch with `trace`)")
        self._go("reverseContinue")

    def _go(self, how: str) -> None:
        if self.live is not None:
            self.live.resume(how)
        elif self.replay is not None:
            asyncio.get_running_loop().call_soon(self._replay_move, how)  # after this request's response
        else:
            raise RequestError("nothing is running: launch first")

    async def do_pause(self, args: dict[str, Any]) -> None:
        if self.live is not None:
            self.live.pause()
        return None

    async def do_terminate(self, args: dict[str, Any]) -> None:
        await self._end()

    async def do_disconnect(self, args: dict[str, Any]) -> None:
        await self._end()

    async def _end(self) -> None:
        """Cancel a live run (exit 3 semantics: held tasks settle cancelled, the journal ends
        `workflow_cancelled`) and wait for it; a replay has nothing to stop."""
        if self.live is not None:
            self.live.cancel()
        if self.runner is not None:
            with contextlib.suppress(Exception):
                await asyncio.wait_for(asyncio.shield(self.runner), 30)
