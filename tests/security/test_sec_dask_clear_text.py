"""Secrets never cross to Dask workers in clear.

An effect sent to a Dask cluster carries its resolved arguments (a secret in an `exec.env`, a
fetch header) and, for a model call, its provider's key. Distributed's TCP comm is unencrypted and
unauthenticated, so before the driver sends such an effect it asks the judge of that wire
(runtime/engine/dask_wire.py `clear_text`): a `tls://` scheduler, or a scheduler and workers all on
loopback, may receive it; any other cluster gets nothing and the task fails NIKA-SEC-004 with the
way to configure TLS. Before, the effect was sent whatever the cluster's address.
"""

from __future__ import annotations

import asyncio
import types
from typing import Any

import pytest

from runtime.engine.dask_executor import DaskExecutor
from runtime.engine.dask_wire import clear_text, shipped_secrets
from runtime.engine.executor import ToolEffect
from runtime.net.egress import Held, Rule

SECRET = "wk-2c81f7-relay"


@pytest.mark.parametrize(
    ("scheduler", "workers", "clear"),
    [
        ("tcp://10.20.30.40:8786", [], True),
        ("tcp://sched.lab.example:8786", ["tcp://127.0.0.1:4100"], True),
        ("tcp://127.0.0.1:8786", ["tcp://192.0.2.17:4100"], True),  # a loopback scheduler, a worker elsewhere
        ("ucx://10.0.0.9:13337", [], True),
        ("tls://10.20.30.40:8786", ["tls://10.20.30.41:4100"], False),
        ("tcp://127.0.0.1:8786", ["tcp://127.0.0.1:4100", "tcp://[::1]:4101"], False),
        ("tcp://localhost:8786", ["inproc://10.0.0.1/1/2"], False),
    ],
)
def test_the_wire_judge(scheduler: str, workers: list[str], clear: bool) -> None:
    assert (clear_text(scheduler, workers) is not None) is clear


def test_what_a_payload_carries_is_found_by_value_and_by_key_name() -> None:
    held = [Held("relay", SECRET, (Rule("exec"),)), Held("other", "not-in-it-9f", ())]
    payload = {"call": {"argv": ["sync", f"--token={SECRET}"]}, "env": {"OPENAI_API_KEY": "sk-1", "NIKA_X": "1"}}
    found, keys = shipped_secrets(payload, held)
    assert [h.name for h in found] == ["relay"] and keys == ["OPENAI_API_KEY"]


def _executor(address: str, workers: list[str]) -> tuple[DaskExecutor, list[Any]]:
    sent: list[Any] = []

    class Submitter:
        async def send(self, payload: dict[str, Any], _workers: Any) -> Any:
            sent.append(payload)
            raise AssertionError("an effect carrying a secret was sent to a clear-text cluster")

        def done(self, key: str) -> None:
            return None

    remembered: list[str] = []
    services = types.SimpleNamespace(
        held={"relay": Held("relay", SECRET, (Rule("nika:fetch", "hooks.lab.example"),))},
        remember_secret=remembered.append,
    )
    ex = object.__new__(DaskExecutor)
    ex.session = types.SimpleNamespace(started={}, address=address, worker_addresses=lambda: workers)
    ex.host = types.SimpleNamespace(services=services, events=types.SimpleNamespace(emit=lambda *a: None))
    ex.submitter = Submitter()
    return ex, sent


def test_an_effect_carrying_a_secret_is_refused_on_a_clear_text_cluster() -> None:
    ex, sent = _executor("tcp://10.20.30.40:8786", ["tcp://10.20.30.41:4100"])
    call = ToolEffect("post", "nika:fetch", {"url": "https://hooks.lab.example/x", "headers": {"k": SECRET}})
    payload = {"kind": "tool", "call": call, "env": {}}
    result = asyncio.run(ex.remote(call, payload))
    assert result.error is not None and result.error["code"] == "NIKA-SEC-004"
    assert result.error["details"]["plane"] == "dask" and "tls://" in result.error["message"]
    assert "`relay`" in result.error["message"] and SECRET not in result.error["message"]
    assert sent == []


def test_a_provider_key_in_the_engine_variables_counts_too() -> None:
    ex, sent = _executor("tcp://10.20.30.40:8786", [])
    call = ToolEffect("gen", "nika:fetch", {"url": "https://x.example"})
    result = asyncio.run(ex.remote(call, {"kind": "model", "call": call, "env": {"NIKA_GROQ_API_KEY": "gsk-77"}}))
    assert result.error is not None and "NIKA_GROQ_API_KEY" in result.error["message"] and sent == []
