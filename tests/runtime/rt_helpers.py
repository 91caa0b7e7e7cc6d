"""Helpers: compile a workflow text with the checker and run it in-process."""

from __future__ import annotations

import asyncio
import contextlib
import textwrap
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from checker.engine.pipeline import compile_text
from runtime.engine.inputs import bind_inputs

# In the driver's environment while the shared Dask cluster's workers start (conftest.py): they
from runtime.engine.options import Options
from runtime.engine.records import RunResult
from runtime.engine.run import Run
from runtime.verbs import VERBS

# must not keep it.
DASK_SECRET_VAR = "NIKA_TEST_DRIVER_ONLY_TOKEN"


def run_yaml(text: str, tmp_path: Path, inputs: dict[str, Any] | None = None, **opts: Any) -> RunResult:
    src = textwrap.dedent(text)
    path = tmp_path / "wf.nika.yaml"
    path.write_text(src)
    compiled = compile_text(src, str(path), str(tmp_path))
    errors = [d for d in compiled.diagnostics if d.is_error]
    assert not errors, [(d.code, d.message) for d in errors]
    assert compiled.workflow is not None
    bound = bind_inputs(compiled.workflow, inputs or {})
    options = Options(trace_dir=tmp_path / "traces", **opts)
    return asyncio.run(Run(compiled, bound, options, verbs=VERBS, workdir=tmp_path).execute())


def statuses(result: RunResult) -> dict[str, str]:
    return {tid: rec.status for tid, rec in result.tasks.items()}


@contextlib.contextmanager
def serving(handler: type[BaseHTTPRequestHandler], *, block_on_close: bool = True) -> Iterator[int]:
    """A threaded HTTP server on 127.0.0.1 with ``handler``, its port yielded; shut down on leaving.
    A short poll makes ``shutdown()`` return at once instead of after half a second."""
    srv = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    srv.daemon_threads = True
    srv.block_on_close = block_on_close
    threading.Thread(target=srv.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True).start()
    try:
        yield srv.server_address[1]
    finally:
        srv.shutdown()
        srv.server_close()


def dask_ready(client: Any, n: int = 2, timeout: float = 90.0) -> None:
    """Wait until the cluster has ``n`` workers that answer. A worker killed by a test is restarted
    by its nanny, and the scheduler may list the dead one for a while after: counting workers is
    not enough, each must run a function (a loaded machine can take seconds for both)."""
    import os
    import time

    deadline = time.monotonic() + timeout
    while True:
        left = deadline - time.monotonic()
        try:
            client.wait_for_workers(n, timeout=max(left, 1.0))
            if len(client.run(os.getpid)) >= n:
                return
        except Exception:
            if time.monotonic() >= deadline:
                raise
        if time.monotonic() >= deadline:
            raise TimeoutError(f"the test cluster did not get {n} answering workers within {timeout:g}s")
        time.sleep(0.1)
