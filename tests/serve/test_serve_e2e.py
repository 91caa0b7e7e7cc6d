"""`nika serve` end to end. One test starts the real server (uvicorn on loopback, a subprocess):
a webhook starts a run, it pauses at its gate, the answer goes through the API (a stale shown hash
refused, a second answer 409), the run finishes, and `nika trace verify` finds its journal clean.
The other drives the app in-process with a fake clock: a schedule fires a run; a restarted server
does not fire it again, shows a killed run as interrupted, and resumes it. Every wait polls an
event with a generous deadline; nothing asserts on time."""

from __future__ import annotations

import hashlib
import hmac
import json
import os
import signal
import socket
import subprocess
import sys
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import httpx
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

from serve_helpers import AUTH, TOKEN, client, make_app, served_root

pytestmark = pytest.mark.xdist_group("serve-e2e")
DEADLINE_S = 120


def _until(what: str, probe: Any) -> Any:
    end = time.monotonic() + DEADLINE_S
    while time.monotonic() < end:
        got = probe()
        if got:
            return got
        time.sleep(0.1)
    raise AssertionError(f"never happened: {what}")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_webhook_run_paused_answered_through_the_api_and_journal_verified(tmp_path: Path) -> None:
    root = served_root(tmp_path)
    (root / "nika.toml").write_text(
        '[serve.webhooks.release]\nworkflow = "release.nika.yaml"\nsecret_env = "NIKA_E2E_HOOK_SECRET"\n',
        encoding="utf-8",
    )
    port = _free_port()
    env = {**os.environ, "NIKA_SERVE_TOKEN": TOKEN, "NIKA_E2E_HOOK_SECRET": "hook-secret"}
    env["XDG_CONFIG_HOME"] = str(tmp_path / "cfg")
    server = subprocess.Popen(
        [sys.executable, "-m", "nika", "serve", str(root), "--port", str(port)],
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    base = f"http://127.0.0.1:{port}"
    try:
        with httpx.Client(base_url=base, timeout=30) as c:

            def up() -> bool:
                assert server.poll() is None, server.stderr.read().decode() if server.stderr else ""
                try:
                    return c.get("/healthz").status_code == 200
                except httpx.TransportError:
                    return False

            _until("the server answers", up)
            assert c.get("/runs").status_code == 401  # no token
            body = json.dumps({"version": "v7"}).encode()
            sig = "sha256=" + hmac.new(b"hook-secret", body, hashlib.sha256).hexdigest()
            r = c.post("/hooks/release", content=body, headers={"X-Hub-Signature-256": sig})
            assert r.status_code == 201, r.text
            rid = r.json()["id"]

            def settled_as(*states: str) -> Any:
                def probe() -> Any:
                    doc = c.get(f"/runs/{rid}", headers=AUTH).json()
                    return doc if doc["workflow_state"] in states else None

                return probe

            doc = _until("the run pauses at its gate", settled_as("paused", "failure", "refused"))
            assert doc["workflow_state"] == "paused", doc.get("error")
            assert doc["trigger"] == "webhook:release"
            (p,) = doc["pending"]
            assert p["message"] == "Publish? release notes for v7"
            url = f"/runs/{rid}/answers"
            stale = c.post(
                url, json={"task": "approve", "value": True, "shown_hash": "sha256:" + "1" * 64}, headers=AUTH
            )
            assert stale.status_code == 412
            ok = c.post(url, json={"task": "approve", "value": True, "shown_hash": p["shown_hash"]}, headers=AUTH)
            assert ok.status_code == 200, ok.text
            second = c.post(url, json={"task": "approve", "value": True, "shown_hash": p["shown_hash"]}, headers=AUTH)
            assert second.status_code == 409
            done = _until("the run finishes", settled_as("success", "failure"))
            assert done["workflow_state"] == "success" and done["outputs"] == {"published": "published"}
            assert done["answers"][0]["by"] == "serve api"
            with c.stream("GET", f"/runs/{rid}/events", headers=AUTH) as events:
                lines = [line for line in events.iter_lines() if line.startswith("data:")]
            kinds = [json.loads(line[5:]).get("type") for line in lines[:-1]]
            assert kinds.count("workflow.started") == 2 and "workflow.paused" in kinds and "approval.decided" in kinds
            assert json.loads(lines[-1][5:]) == {"workflow_state": "success"}
        verify = subprocess.run(
            [sys.executable, "-m", "nika", "trace", "verify", done["journal"]],
            cwd=root,
            capture_output=True,
            text=True,
            timeout=DEADLINE_S,
        )
        assert verify.returncode == 0, verify.stdout + verify.stderr
    finally:
        server.send_signal(signal.SIGTERM)
        server.wait(timeout=DEADLINE_S)


SLOW = """nika: v1
workflow:
  id: slow
model: mock/echo
permits:
  exec: ["sleep"]
tasks:
  first:
    infer: { prompt: "hello", max_tokens: 20 }
  wait:
    with: { x: "${{ tasks.first.output }}" }
    exec: { command: ["sleep", "60"] }
"""


class Clock:
    def __init__(self, at: datetime) -> None:
        self.at = at

    def __call__(self) -> datetime:
        return self.at


def test_a_schedule_fires_once_across_a_restart_and_an_interrupted_run_resumes(tmp_path: Path) -> None:
    from nika.serve.config import Schedule

    root = served_root(tmp_path)
    (root / "slow.nika.yaml").write_text(SLOW, encoding="utf-8")
    sched = Schedule("slow", "0 * * * *", str(Path(os.path.realpath(root)) / "slow.nika.yaml"))
    clock = Clock(datetime(2026, 1, 1, 9, 59, tzinfo=UTC))
    app = make_app(root, schedules=(sched,), clock=clock)
    c = client(app)
    assert app.scheduler.tick() == []
    clock.at = datetime(2026, 1, 1, 10, 0, tzinfo=UTC)
    assert app.scheduler.tick() == ["slow"]
    (rid,) = app.store.ids()

    def task_running() -> bool:
        doc = c.get(f"/runs/{rid}", headers=AUTH).json()
        return doc["tasks"].get("wait", {}).get("status") == "running"

    _until("the scheduled run reaches its second task", task_running)
    rec = app.store.record(rid)
    assert rec["trigger"] == "schedule:slow"
    os.killpg(rec["attempts"][0]["pid"], signal.SIGKILL)  # the run dies with the machine it ran on
    app.store.procs[(rid, 1)].wait(timeout=DEADLINE_S)

    restarted = make_app(root, schedules=(sched,), clock=clock)  # a new server on the same state
    assert restarted.scheduler.tick() == []  # the 10:00 slot fired already
    c2 = client(restarted)
    doc = c2.get(f"/runs/{rid}", headers=AUTH).json()
    assert doc["workflow_state"] == "interrupted" and doc["journal"]
    assert c2.post(f"/runs/{rid}/cancel", headers=AUTH).status_code == 409
    r = c2.post(f"/runs/{rid}/resume", headers=AUTH)
    assert r.status_code == 202, r.text

    def resumed_past_cache() -> bool:
        d = c2.get(f"/runs/{rid}", headers=AUTH).json()
        return d["tasks"].get("first", {}).get("cache_hit") and d["tasks"].get("wait", {}).get("status") == "running"

    _until("the resume rehydrates `first` and runs `wait` again", resumed_past_cache)
    assert c2.post(f"/runs/{rid}/cancel", headers=AUTH).status_code == 202

    def cancelled() -> Any:
        d = c2.get(f"/runs/{rid}", headers=AUTH).json()
        return d if d["workflow_state"] not in ("running",) else None

    final = _until("the resume is cancelled", cancelled)
    assert final["workflow_state"] == "cancelled"
    assert len(final["attempts"]) == 2 and final["attempts"][1]["resume"] == doc["journal"]
