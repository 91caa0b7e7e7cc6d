"""Settings for the whole suite.

Property tests run under one Hypothesis profile: no per-example deadline and no "input
generation is slow" health check, because CI machines are shared and a loaded core makes both
fire on tests that are fine (the suite runs on every core with pytest-xdist); the examples are
derived from each test's name (``derandomize``), so a CI run is reproducible and a failure
replays. ``NIKA_HYPOTHESIS=explore`` keeps the checks' speed limits off but draws fresh random
examples, for a longer search by hand.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Generator

import pytest
from hypothesis import HealthCheck, settings

settings.register_profile(
    "suite", deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large], derandomize=True
)
settings.register_profile("explore", deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.load_profile("explore" if os.environ.get("NIKA_HYPOTHESIS") == "explore" else "suite")


@pytest.hookimpl(wrapper=True)
def pytest_collection(session: pytest.Session) -> Generator[None, object, object]:
    """Keep pytest's cache of rewritten test modules while the suite is collected, even when the
    shell turns bytecode writing off (``PYTHONDONTWRITEBYTECODE``): without it every xdist worker
    rewrites the assertions of every test module again on every run, seconds of each worker's start.
    Only collection writes (the ``__pycache__`` folders git ignores); the tests run as the shell set."""
    saved, sys.dont_write_bytecode = sys.dont_write_bytecode, False
    try:
        return (yield)
    finally:
        sys.dont_write_bytecode = saved


@pytest.hookimpl(wrapper=True, optionalhook=True)
def pytest_xdist_auto_num_workers(config: pytest.Config) -> Generator[None, int, int]:
    """``-n auto`` starts one worker more than there are cores: a good part of the suite waits
    (language servers and `nika` processes starting, timeouts and deadlines running out), and the
    extra worker fills those waits (on 2 cores: 57 s instead of 70 s). An explicit
    ``PYTEST_XDIST_AUTO_NUM_WORKERS`` is kept as given."""
    count = yield
    if os.environ.get("PYTEST_XDIST_AUTO_NUM_WORKERS"):
        return count
    return count + 1
