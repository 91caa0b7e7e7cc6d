"""Fixtures for the runtime tests (helpers live in rt_helpers.py)."""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from rt_helpers import DASK_SECRET_VAR, RunResult, dask_ready, run_yaml


@pytest.fixture
def run(tmp_path: Path):
    def go(text: str, inputs: dict[str, Any] | None = None, **opts: Any) -> RunResult:
        return run_yaml(text, tmp_path, inputs, **opts)

    return go


def _start_cluster() -> Any:
    from runtime.engine.dask_executor import DaskSession

    os.environ[DASK_SECRET_VAR] = "s3cr3t"
    try:
        return DaskSession.start(n_workers=2, dashboard=False)
    finally:
        del os.environ[DASK_SECRET_VAR]


@pytest.fixture(scope="session")
def _dask_holder() -> Iterator[dict[str, Any]]:
    # the test extra installs [dask]: missing, the Dask tests fail here, never skip. Imported here, not
    # at the top of the Dask modules, so a worker that only collects them never pays for it.
    import distributed  # noqa: F401

    holder: dict[str, Any] = {"session": None}
    yield holder
    if holder["session"] is not None:
        holder["session"].close()


@pytest.fixture
def dask_session(_dask_holder: dict[str, Any]) -> Any:
    """One real LocalCluster (two single-threaded worker processes) for every Dask test module of
    the test process; those modules share the `xdist_group("dask")`, so they run on one worker.
    Each test gets it with two workers that answer: a worker a test killed is restarted by its
    nanny, and when that restart does not come (a nanny on a loaded machine can give up), the
    cluster is replaced, so one test's killed worker never fails the tests after it."""
    session = _dask_holder["session"]
    if session is not None:
        try:
            dask_ready(session.client, timeout=20)
            return session
        except Exception:
            with contextlib.suppress(Exception):
                session.close()
    session = _dask_holder["session"] = _start_cluster()
    dask_ready(session.client)
    return session
