"""runtime/engine/dask_batch.py with a fake client: what one loop turn starts goes to the scheduler
as one graph; the records of futures that settled together are fetched with one gather; a future
that failed, or a batch that cannot be gathered, still answers each effect for itself."""

from __future__ import annotations

import asyncio
import concurrent.futures
from typing import Any

import pytest

from runtime.engine.dask_batch import Collector, Submitter


class FakeFuture:
    def __init__(self, key: str, status: str = "pending", value: Any = None, exc: BaseException | None = None):
        self.key, self.status, self.value, self.exc = key, status, value, exc
        self.callbacks: list[Any] = []

    def done(self) -> bool:
        return self.status != "pending"

    def result(self) -> Any:
        if self.status != "finished":
            raise self.exc or RuntimeError(self.status)
        return self.value

    def exception(self) -> BaseException | None:
        return self.exc

    def add_done_callback(self, fn: Any) -> None:
        self.callbacks.append(fn)

    def settle(self, status: str, value: Any = None, exc: BaseException | None = None) -> None:
        self.status, self.value, self.exc = status, value, exc


class FakeClient:
    def __init__(self, gather_fails: bool = False) -> None:
        self.maps: list[list[str]] = []
        self.gathers: list[list[str]] = []
        self.futures: dict[str, FakeFuture] = {}
        self.gather_fails = gather_fails

    def map(self, fn: Any, payloads: list[Any], *, key: list[str], pure: bool, retries: int) -> list[FakeFuture]:
        assert pure is False and retries == 0 and [p["key"] for p in payloads] == key
        self.maps.append(list(key))
        out = [FakeFuture(k) for k in key]
        self.futures.update((f.key, f) for f in out)
        return out

    def gather(self, futures: list[FakeFuture]) -> list[Any]:
        self.gathers.append([f.key for f in futures])
        if self.gather_fails:
            raise OSError("a worker was lost")
        return [f.value for f in futures]


def test_effects_started_in_one_turn_are_one_graph_and_a_cancelled_one_is_not_sent() -> None:
    client = FakeClient()
    sub = Submitter(client, lambda p: p, Collector(client))

    async def go() -> None:
        first = [sub.send({"key": k}) for k in ("a", "b", "c")]
        first[1].cancel()  # cancelled before the turn ended: never submitted
        await asyncio.sleep(0)
        assert client.maps == [["a", "c"]]
        assert first[0].done() and first[2].done()
        late = sub.send({"key": "d"})
        await late
        assert client.maps == [["a", "c"], ["d"]]

    asyncio.run(go())
    assert sub.done("a") is client.futures["a"] and sub.done("a") is None  # forgotten once read
    assert sub.done("b") is None


def test_futures_settled_together_are_gathered_once_and_failures_answer_alone() -> None:
    client = FakeClient()
    collector = Collector(client)
    futures = [FakeFuture(k) for k in ("a", "b", "c", "d")]
    bridges = [collector.watch(f) for f in futures]
    futures[0].settle("finished", {"output": 1})
    futures[1].settle("finished", {"output": 2})
    lost = OSError("worker lost")
    futures[2].settle("error", exc=lost)
    for f in futures[:3]:  # the client reports them one by one, on its callback thread
        for cb in f.callbacks:
            cb(f)
    assert client.gathers == [["a", "b"]]
    assert [b.result() for b in bridges[:3]] == [
        ("finished", {"output": 1}),
        ("finished", {"output": 2}),
        ("error", lost),
    ]
    assert not bridges[3].done()
    futures[3].settle("finished", {"output": 4})
    futures[3].callbacks[0](futures[3])  # alone: its own result, no batch
    assert bridges[3].result() == ("finished", {"output": 4}) and client.gathers == [["a", "b"]]


def test_a_batch_that_cannot_be_gathered_answers_each_future_for_itself() -> None:
    client = FakeClient(gather_fails=True)
    collector = Collector(client)
    futures = [FakeFuture(k) for k in ("a", "b")]
    bridges = [collector.watch(f) for f in futures]
    futures[0].settle("finished", {"output": 1})
    futures[1].settle("finished", {"output": 2})
    futures[0].callbacks[0](futures[0])
    assert client.gathers == [["a", "b"]]
    assert [b.result() for b in bridges] == [("finished", {"output": 1}), ("finished", {"output": 2})]


def test_a_forgotten_future_is_not_delivered() -> None:
    client = FakeClient()
    collector = Collector(client)
    f = FakeFuture("a")
    bridge = collector.watch(f)
    collector.forget("a")
    f.settle("cancelled")
    f.callbacks[0](f)
    assert not bridge.done()


class _CancelledMeanwhile(concurrent.futures.Future):
    """A bridge the run's loop cancels between the collector's check and its answer."""

    def done(self) -> bool:
        return False  # what the check saw, an instant before the cancel landed

    def set_result(self, result: Any) -> None:
        raise concurrent.futures.InvalidStateError("CANCELLED")


def test_a_bridge_cancelled_while_its_batch_is_answered_does_not_stop_the_others() -> None:
    client = FakeClient()
    collector = Collector(client)
    futures = [FakeFuture(k) for k in ("a", "b", "c")]
    bridges = [collector.watch(f) for f in futures]
    collector._waiting["a"] = (futures[0], _CancelledMeanwhile())
    futures[0].settle("finished", {"output": 1})
    futures[1].settle("finished", {"output": 2})
    futures[2].settle("cancelled")
    futures[0].callbacks[0](futures[0])  # on the client's callback thread: must not raise
    assert bridges[1].result(timeout=0) == ("finished", {"output": 2})
    assert bridges[2].result(timeout=0)[0] == "cancelled"


@pytest.mark.parametrize("word_first", [True, False], ids=["word-then-record", "record-then-word"])
def test_a_spawn_witnessed_early_is_journaled_once_whichever_comes_first(word_first: bool) -> None:
    """A worker sends an MCP server's spawn witness at once (another channel than the record,
    which carries it too): whether that word arrives before or after the record, the journal
    gets the witness once."""
    import concurrent.futures
    import types

    from runtime.engine.dask_executor import DaskExecutor
    from runtime.engine.executor import McpEffect

    witness = {"task": "t", "plane": "exec", "gate": "permits.exec", "ok": True, "why": "granted"}
    journaled: list[dict[str, Any]] = []
    late: list[Any] = []  # (hook, word): a word the client's thread hands over after the record
    record = ("finished", {"output": 1, "witness": [witness], "events": [], "worker": "tcp://w"})

    class Submitter:
        async def send(self, payload: dict[str, Any], workers: Any) -> concurrent.futures.Future[Any]:
            word = {"key": payload["key"], "worker": "tcp://w", "witness": [witness], "events": []}
            fut: concurrent.futures.Future[Any] = concurrent.futures.Future()
            if word_first:
                ex.session.started[payload["key"]](word)
                fut.set_result(record)
            else:  # the client's thread took the hook, then the record settled and was read first
                late.append((ex.session.started[payload["key"]], word))
                fut.set_result(record)
            return fut

        def done(self, key: str) -> None:
            return None

    events = types.SimpleNamespace(
        witness=lambda *w: journaled.append(dict(zip(("task", "plane", "gate", "ok", "why"), w, strict=True))),
        tool_event=lambda tid, e: None,
        emit=lambda kind, fields: None,
    )
    ex = object.__new__(DaskExecutor)
    ex.session = types.SimpleNamespace(started={})
    ex.host = types.SimpleNamespace(events=events)
    ex.submitter = Submitter()

    async def go() -> Any:
        result = await ex.remote(McpEffect("t", "mcp:demo/add", {}), {"kind": "mcp"})
        from runtime.engine.executor import journal_witness

        journal_witness(events, result)  # what the caller does with the record's witnesses
        for hook, word in late:
            hook(word)
        await asyncio.sleep(0)  # the late word runs now
        return result

    asyncio.run(go())
    assert journaled == [witness]
