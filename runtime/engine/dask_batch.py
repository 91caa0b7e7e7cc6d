"""The driver's side of the Dask wire, many effects at a time.

A fan-out starts its effects in one turn of the run's event loop: :class:`Submitter` sends them
to the scheduler as one graph (one ``client.map``, one message) at the end of that turn, where a
``client.submit`` each was one graph, one message and one scheduler update per effect.
:class:`Collector` fetches the records of every future that has finished by the time the client
reports one of them, with one ``gather``, where ``future.result()`` each was one round trip per
effect (queued behind each other on the client's one callback thread).

What an effect is and what its record means stay in :mod:`runtime.engine.dask_executor`;
``distributed`` is not imported here.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import threading
from collections.abc import Callable
from typing import Any

Outcome = tuple[str, Any]  # ("finished", record) or (status, exception)


def outcome(future: Any) -> Outcome:
    """One settled Dask future as an outcome (a cancelled or lost future still answers)."""
    try:
        return (
            ("finished", future.result()) if future.status == "finished" else (str(future.status), future.exception())
        )
    except BaseException as exc:
        return ("error", exc)


class Collector:
    """The records of settled futures, gathered from the workers in batches (one per session)."""

    def __init__(self, client: Any) -> None:
        self.client = client
        self._lock = threading.Lock()
        self._waiting: dict[str, tuple[Any, concurrent.futures.Future[Outcome]]] = {}

    def watch(self, future: Any) -> concurrent.futures.Future[Outcome]:
        bridge: concurrent.futures.Future[Outcome] = concurrent.futures.Future()
        with self._lock:
            self._waiting[str(future.key)] = (future, bridge)
        future.add_done_callback(self._settled)
        return bridge

    def forget(self, key: str) -> None:
        with self._lock:
            self._waiting.pop(key, None)

    def _settled(self, future: Any) -> None:
        """On the client's callback thread, one future at a time: this one and every other that
        has settled meanwhile (their own callbacks then find nothing left to do)."""
        with self._lock:
            if str(future.key) not in self._waiting:
                return
            ready = [k for k, (f, _) in self._waiting.items() if f.done()]
            batch = [self._waiting.pop(k) for k in ready]
        finished = [(f, b) for f, b in batch if f.status == "finished"]
        records: list[Any] | None = None
        if len(finished) > 1:
            try:
                records = list(self.client.gather([f for f, _ in finished]))
            except BaseException:  # one of them was lost meanwhile: each answers for itself
                records = None
        for i, (f, bridge) in enumerate(finished):
            _deliver(bridge, ("finished", records[i]) if records is not None else outcome(f))
        for f, bridge in batch:
            if f.status != "finished":
                _deliver(bridge, outcome(f))


class Submitter:
    """Effects started in one turn of the run's loop, submitted together at its end (one per run)."""

    def __init__(self, client: Any, fn: Callable[[dict[str, Any]], Any], collector: Collector) -> None:
        self.client, self.fn, self.collector = client, fn, collector
        self._queue: list[
            tuple[dict[str, Any], list[str] | None, asyncio.Future[concurrent.futures.Future[Outcome]]]
        ] = []
        self.futures: dict[str, Any] = {}  # key -> the Dask future, until its outcome is read

    def send(
        self, payload: dict[str, Any], workers: list[str] | None = None
    ) -> asyncio.Future[concurrent.futures.Future[Outcome]]:
        """Queue ``payload`` (its ``key`` set; run only on ``workers`` when given); the answer is
        the bridge to its outcome, once sent."""
        loop = asyncio.get_running_loop()
        if not self._queue:
            loop.call_soon(self._flush)
        sent: asyncio.Future[concurrent.futures.Future[Outcome]] = loop.create_future()
        self._queue.append((payload, workers, sent))
        return sent

    def _flush(self) -> None:
        queue = [(p, w, s) for p, w, s in self._queue if not s.cancelled()]
        self._queue = []
        free = [(p, s) for p, w, s in queue if w is None]
        if free:
            self._send(free, None)
        for p, w, s in queue:  # a session's effects go to the worker that holds it, and nowhere else
            if w is not None:
                self._send([(p, s)], w)

    def _send(
        self,
        queue: list[tuple[dict[str, Any], asyncio.Future[concurrent.futures.Future[Outcome]]]],
        workers: list[str] | None,
    ) -> None:
        try:
            if workers is None:
                keys = [p["key"] for p, _ in queue]
                futures = self.client.map(self.fn, [p for p, _ in queue], key=keys, pure=False, retries=0)
            else:
                ((payload, _),) = queue
                futures = [
                    self.client.submit(
                        self.fn,
                        payload,
                        key=payload["key"],
                        pure=False,
                        retries=0,
                        workers=workers,
                        allow_other_workers=False,
                    )
                ]
        except BaseException as exc:  # the client is closed, the scheduler gone: each effect says so
            for _, sent in queue:
                sent.set_exception(exc)
            return
        for (payload, sent), future in zip(queue, futures, strict=True):
            self.futures[payload["key"]] = future
            sent.set_result(self.collector.watch(future))

    def done(self, key: str) -> Any:
        """The Dask future of ``key`` (``None`` if it was never sent), no longer tracked here."""
        future = self.futures.pop(key, None)
        if future is not None:
            self.collector.forget(key)
        return future


def _deliver(bridge: concurrent.futures.Future[Outcome], result: Outcome) -> None:
    """Answer one effect, unless it is no longer waiting: the run's loop may cancel its bridge
    (the effect was cancelled) on its own thread at any moment, even between the check and the
    answer, and the rest of a batch must still be answered."""
    if not bridge.done():
        with contextlib.suppress(concurrent.futures.InvalidStateError):
            bridge.set_result(result)
