"""File work never stalls the engine: the I/O of the file builtins runs off the event loop, so
a task's `timeout:` fires on time even while a read is stuck (spec 02/03: a timeout is a hard
bound), and other tasks keep running. A read held until the test lets it go stands in for a huge
file or a slow disk."""

from __future__ import annotations

import asyncio
import textwrap
import threading
from collections.abc import Callable
from pathlib import Path

import pytest

from checker.engine.pipeline import compile_text
from runtime.engine.inputs import bind_inputs
from runtime.engine.options import Options
from runtime.engine.records import RunResult
from runtime.engine.run import Run
from runtime.verbs import VERBS

HELD_S = 120.0  # the longest a stuck read waits to be let go (never reached when all is well)
TIMEOUT_S = 600  # the task's `timeout: 600s`: never reached in real time, only by the jump of the loop's clock


class SteppedLoop(asyncio.SelectorEventLoop):
    """An event loop whose clock is real time plus an offset the test moves (asyncio's timers,
    ``wait_for`` among them, read ``loop.time()``)."""

    def __init__(self) -> None:
        super().__init__()
        self.offset = 0.0

    def time(self) -> float:
        return super().time() + self.offset

    def jump(self, seconds: float) -> None:
        """From any thread: move the clock on, and wake the loop so its timers see it."""

        def moved() -> None:
            self.offset += seconds

        self.call_soon_threadsafe(moved)


class StuckReads:
    """Every file read blocks until :meth:`release`; ``returned`` holds, per read that came back,
    whether it was let go (``True``) or gave up waiting (``False``)."""

    def __init__(self) -> None:
        self.gate = threading.Event()
        self.returned: list[bool] = []
        self.entered: list[Path] = []
        self.on_enter: list[Callable[[], None]] = []  # callables run in the reading thread once it is stuck

    def release(self) -> None:
        self.gate.set()


@pytest.fixture
def stuck(monkeypatch: pytest.MonkeyPatch):  # type: ignore[no-untyped-def]
    from runtime.builtins import REGISTRY, _load
    from runtime.builtins.files import READ

    _load()  # the whole registry first: importing one builtin module alone would leave it partial
    # the module the registered `nika:read` reads its helper from (not `runtime.builtins.files` as
    # named: a test that re-imports the builtins leaves that name on another copy of the module)
    scope = REGISTRY[READ].__globals__
    real = scope["read_regular"]
    reads = StuckReads()

    def held(path: Path) -> bytes:
        reads.entered.append(path)
        for hook in reads.on_enter:
            hook()
        reads.returned.append(reads.gate.wait(HELD_S))
        return real(path)

    monkeypatch.setitem(scope, "read_regular", held)
    yield reads
    reads.release()


def _run_then_release(text: str, tmp_path: Path, reads: StuckReads) -> tuple[RunResult, list[bool]]:
    """The run to its end, and what the reads had returned by then; only then are they let go
    (``asyncio.run`` would wait for the stuck worker thread before handing back the result)."""
    src = textwrap.dedent(text)
    compiled = compile_text(src, str(tmp_path / "wf.nika.yaml"), str(tmp_path))
    assert compiled.workflow is not None and not [d for d in compiled.diagnostics if d.is_error]
    bound = bind_inputs(compiled.workflow, {})
    run = Run(compiled, bound, Options(trace_dir=tmp_path / "traces"), verbs=VERBS, workdir=tmp_path)
    loop = SteppedLoop()
    reads.on_enter.append(lambda: loop.jump(TIMEOUT_S + 1))  # the read is stuck: now the deadline passes
    try:
        result = loop.run_until_complete(run.execute())
        returned = list(reads.returned)
    finally:
        reads.release()
        loop.run_until_complete(loop.shutdown_default_executor())
        loop.close()
    return result, returned


def test_a_stuck_read_does_not_hold_the_timeout(tmp_path: Path, stuck: StuckReads) -> None:
    (tmp_path / "big.txt").write_text("x")
    wf = """nika: v1
workflow: { id: slow }
permits: { fs: { read: ["./big.txt"] }, tools: ["nika:read", "nika:jq"] }
tasks:
  read:
    timeout: 600s
    invoke: { tool: "nika:read", args: { path: "./big.txt" } }
"""
    result, returned = _run_then_release(wf, tmp_path, stuck)
    rec = result.tasks["read"]
    assert rec.error is not None and rec.error["code"] == "NIKA-TIMEOUT-001", rec.error
    assert [p.name for p in stuck.entered] == ["big.txt"]  # the timeout fired while the read was held
    assert returned == [], "the timeout waited for the stuck read"  # the run ended while it was stuck
