"""An in-process DAP client for the adapter's tests: requests go to a :class:`Session` on the
test's loop, responses and events come back through a queue (no process, no pipes)."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from nika_dap.session import Session

DEADLINE = 60.0  # generous: a loaded machine; tests wait on events, never on a fixed sleep


class Client:
    def __init__(self, workdir: Path) -> None:
        self.seq = 0
        self.inbox: asyncio.Queue[dict[str, Any]] = asyncio.Queue()
        self.events: list[dict[str, Any]] = []
        self.responses: dict[int, dict[str, Any]] = {}
        self.session = Session(self.inbox.put_nowait, workdir)
        self._seen: list[dict[str, Any]] = []

    async def request(self, command: str, arguments: dict[str, Any] | None = None) -> dict[str, Any]:
        self.seq += 1
        seq = self.seq
        msg: dict[str, Any] = {"seq": seq, "type": "request", "command": command}
        if arguments is not None:
            msg["arguments"] = arguments
        task = asyncio.ensure_future(self.session.handle(msg))
        while seq not in self.responses:
            await self._one()
        await asyncio.wait_for(task, DEADLINE)
        return self.responses[seq]

    async def _one(self) -> None:
        m = await asyncio.wait_for(self.inbox.get(), DEADLINE)
        self._seen.append(m)
        if m["type"] == "response":
            self.responses[m["request_seq"]] = m
        else:
            self.events.append(m)

    async def event(self, name: str, after: int = 0) -> dict[str, Any]:
        """The first event ``name`` at or after position ``after`` of the event list."""
        while True:
            for i, e in enumerate(self.events):
                if i >= after and e["event"] == name:
                    return e
            await self._one()

    async def stopped(self) -> dict[str, Any]:
        """The next stopped event not consumed yet."""
        while True:
            for e in self.events:
                if e["event"] == "stopped" and not e.get("_taken"):
                    e["_taken"] = True
                    return e
            await self._one()

    async def start(
        self,
        launch: dict[str, Any],
        breakpoints: dict[str, list[dict[str, Any]]] | None = None,
        exceptions: bool = False,
    ) -> dict[str, Any]:
        init = await self.request("initialize", {"adapterID": "nika", "linesStartAt1": True})
        assert init["success"]
        await self.event("initialized")
        launched = await self.request("launch", launch)
        assert launched["success"], launched
        answers = {}
        for path, bps in (breakpoints or {}).items():
            answers[path] = await self.request("setBreakpoints", {"source": {"path": path}, "breakpoints": bps})
        await self.request("setExceptionBreakpoints", {"filters": ["task_failure"] if exceptions else []})
        done = await self.request("configurationDone")
        assert done["success"]
        return answers

    async def variables_of(self, thread: int) -> dict[str, dict[str, Any]]:
        """Every scope of the top frame, expanded two levels, as plain dicts of shown values."""
        st = await self.request("stackTrace", {"threadId": thread})
        frame = st["body"]["stackFrames"][0]
        scopes = await self.request("scopes", {"frameId": frame["id"]})
        out: dict[str, dict[str, Any]] = {}
        for s in scopes["body"]["scopes"]:
            out[s["name"]] = await self.expand(s["variablesReference"])
        return out

    async def expand(self, ref: int, depth: int = 3) -> Any:
        vs = (await self.request("variables", {"variablesReference": ref}))["body"]["variables"]
        out: dict[str, Any] = {}
        for v in vs:
            if v["variablesReference"] and depth > 1:
                out[v["name"]] = await self.expand(v["variablesReference"], depth - 1)
            else:
                out[v["name"]] = v["value"]
        return out

    async def finish(self) -> int:
        """Wait for the session's end: the exit code of the exited event."""
        e = await self.event("exited")
        return int(e["body"]["exitCode"])
