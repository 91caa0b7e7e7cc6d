"""Fixtures for the runtime tests (helpers live in rt_helpers.py)."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from rt_helpers import DASK_SECRET_VAR, RunResult, run_yaml


@pytest.fixture
def run(tmp_path: Path):
    def go(text: str, inputs: dict[str, Any] | None = None, **opts: Any) -> RunResult:
        return run_yaml(text, tmp_path, inputs, **opts)

    return go


@pytest.fixture(scope="session")
def dask_session() -> Iterator[Any]:
    """One real LocalCluster (two single-threaded worker processes) for every Dask test module of
    the test process; those modules share the `xdist_group("dask")`, so they run on one worker."""
    pytest.importorskip("distributed", reason="the Dask executor needs `pip install 'nika-tools[dask]'`")
    from runtime.engine.dask_executor import DaskSession

    os.environ[DASK_SECRET_VAR] = "s3cr3t"
    try:
        s = DaskSession.start(n_workers=2, dashboard=False)
    finally:
        del os.environ[DASK_SECRET_VAR]
    yield s
    s.close()
