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


@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Make ``--dist loadgroup`` group again under pytest 9.2: pytest-xdist (3.8) marks a test of an
    ``xdist_group`` by appending ``@group`` to ``item._nodeid``, which pytest 9.2 no longer reads
    (the id is ``item._id``), so every group was spread over all workers, each starting its own
    Dask cluster, language servers and module fixtures. The suffix is put where pytest 9 reads it."""
    if not getattr(config.option, "loadgroup", False):
        return
    try:  # pytest 9.2 moved the id to ``item._id``; before it, xdist's own ``_nodeid`` suffix works
        from _pytest.nodeid import NodeId
    except ImportError:
        return

    for item in items:
        names = sorted(
            {str(m.args[0] if m.args else m.kwargs.get("name", "default")) for m in item.iter_markers("xdist_group")}
        )
        if names and not item.nodeid.endswith(f"@{'_'.join(names)}"):
            item._id = NodeId.parse(f"{item.nodeid}@{'_'.join(names)}")  # type: ignore[attr-defined]


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


class _Blocker:
    """A meta-path finder that makes ``names`` (and their submodules) impossible to import, as on
    an installation without the extra that ships them (the :func:`without_modules` fixture)."""

    def __init__(self, names: tuple[str, ...]) -> None:
        self.names = names

    def blocks(self, fullname: str) -> bool:
        return any(fullname == n or fullname.startswith(n + ".") for n in self.names)

    def find_spec(self, fullname: str, path: object = None, target: object = None) -> None:
        if self.blocks(fullname):
            raise ModuleNotFoundError(f"No module named {fullname!r} (blocked by the test)", name=fullname)
        return None


@pytest.fixture
def without_modules(monkeypatch: pytest.MonkeyPatch):  # type: ignore[no-untyped-def]
    """``without_modules("selectolax", "numpy")``: for the rest of the test those modules cannot be
    imported (their loaded copies are hidden from ``sys.modules`` and put back afterwards), so the
    missing-extra path runs in-process without uninstalling anything."""
    blockers: list[_Blocker] = []

    def block(*names: str) -> None:
        blocker = _Blocker(names)
        for loaded in [m for m in sys.modules if blocker.blocks(m)]:
            monkeypatch.delitem(sys.modules, loaded)
        monkeypatch.setattr(sys, "meta_path", [blocker, *sys.meta_path])
        blockers.append(blocker)

    return block


# -- progress while the workers come up ----------------------------------------------------------
# `bringing up nodes...` is all pytest-xdist says until every worker has imported the suite and
# collected it (seconds each, more on a loaded machine); these lines say what is happening.


def _say(config: pytest.Config, line: str) -> None:
    reporter = config.pluginmanager.get_plugin("terminalreporter")
    if reporter is not None:
        reporter.write_line(line)


@pytest.hookimpl(optionalhook=True)
def pytest_testnodeready(node) -> None:  # type: ignore[no-untyped-def]
    _say(node.config, f"{node.gateway.id}: started, collecting the suite")


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_node_collection_finished(node, ids) -> None:  # type: ignore[no-untyped-def]
    _say(node.config, f"{node.gateway.id}: {len(ids)} tests collected")
