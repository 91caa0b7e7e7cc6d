"""No test asserts on how fast the machine is (tests/timing_lint.py reads the suite's source).

A bound on wall-clock time, on a difference of clock readings, or an assertion after a fixed sleep
passes on an idle machine and fails on a loaded one. Wait on the event, poll with a generous
deadline and assert on the typed result, use a fake clock, or measure in ``benchmarks/``.
"""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest
from timing_lint import scan_source, scan_tree

TESTS = Path(__file__).resolve().parent


def test_no_test_asserts_on_wall_clock_time_or_after_a_fixed_sleep() -> None:
    found = scan_tree(TESTS)
    assert not found, "timing in tests (see tests/timing_lint.py for what to do instead):\n" + "\n".join(
        str(f) for f in found
    )


def _kinds(source: str) -> list[tuple[int, str]]:
    return [(f.line, f.kind) for f in scan_source(textwrap.dedent(source))]


# -- the static test itself: planted bad examples are caught ----------------------------------------

BAD = {
    "a difference of monotonic readings": """
        import time
        def test_x():
            t0 = time.monotonic()
            work()
            assert time.monotonic() - t0 < 1.5
        """,
    "a name holding the difference": """
        import time
        def test_x():
            t0 = time.perf_counter()
            work()
            took = time.perf_counter() - t0
            ok = took < 2
            assert ok or took < 3
        """,
    "a from-import with an alias": """
        from time import monotonic as now
        def test_x():
            start = now()
            work()
            elapsed = now() - start
            assert elapsed <= 0.5
        """,
    "an offset deadline compared": """
        import time as t
        def test_x():
            deadline = t.time() + 5
            work()
            assert t.time() < deadline
        """,
    "datetime.now arithmetic": """
        from datetime import UTC, datetime
        def test_x(stamp):
            assert abs(stamp - datetime.now(UTC).timestamp()) < 60
        """,
    "an event loop's clock": """
        import asyncio
        async def test_x():
            loop = asyncio.get_running_loop()
            t0 = loop.time()
            await work()
            assert loop.time() - t0 < 1
        """,
    "a recorded duration field": """
        def test_x(result):
            assert result.tasks["t"].duration_ms < 1500
        """,
    "a recorded duration key, lower bound": """
        def test_x(frame):
            assert frame["elapsed_ms"] >= 290
        """,
    "a duration returned by a helper": """
        def test_x():
            code, err, took = run_cli()
            assert took < 1.5
        """,
    "unittest style": """
        import time
        class T:
            def test_x(self):
                t0 = time.monotonic()
                self.assertLess(time.monotonic() - t0, 2)
        """,
    "an if that fails the test": """
        import time, pytest
        def test_x():
            t0 = time.monotonic()
            if time.monotonic() - t0 > 1:
                pytest.fail("slow")
        """,
    "a helper that collects a slow run as a problem": """
        import time
        def check_one(data):
            problems = []
            t0 = time.perf_counter()
            judge(data)
            elapsed = time.perf_counter() - t0
            if elapsed > 5.0:
                problems.append("slow")
            return problems
        """,
    "an elapsed time in milliseconds branched on": """
        import time
        def test_x(log):
            t0 = time.monotonic()
            work()
            if (time.monotonic() - t0) * 1000 >= 300:
                log.append("late")
            assert not log
        """,
    "an assert after a fixed time.sleep": """
        import time
        def test_x(server):
            server.kick()
            time.sleep(0.2)
            assert server.count == 2
        """,
    "an assert after a fixed asyncio.sleep": """
        import asyncio
        async def test_x(fake):
            await asyncio.sleep(0.6)
            assert "refresh" not in fake.seen
        """,
    "an assertion helper after a sleep": """
        import time
        def test_x(engine):
            time.sleep(0.2)
            engine.kill()
            assert_all_gone(engine)
        """,
    "a sleep in a for loop that cannot end early": """
        import time
        def test_x(fake):
            for _ in range(3):
                time.sleep(0.1)
            assert fake.count == 3
        """,
}


@pytest.mark.parametrize("source", list(BAD.values()), ids=list(BAD))
def test_a_planted_timing_assertion_is_caught(source: str) -> None:
    assert _kinds(source), "the static test missed a timing assertion"


GOOD = {
    "a poll loop with a generous deadline": """
        import time
        def test_x(proc):
            deadline = time.monotonic() + 30
            while proc.poll() is None and time.monotonic() < deadline:
                time.sleep(0.05)
            assert proc.poll() == 0
        """,
    "a for loop poll that breaks": """
        import asyncio
        async def test_x(ref):
            for _ in range(500):
                await asyncio.sleep(0.01)
                if ref() is None:
                    break
            assert ref() is None
        """,
    "readings bracketing a stamp": """
        import time
        def test_x():
            before = time.time_ns() // 1_000_000
            stamp = make_stamp()
            after = time.time_ns() // 1_000_000
            assert before <= stamp <= after
        """,
    "exact values from a fake clock": """
        async def test_x(clock):
            out = await wait("1m30s", clock)
            assert out == {"elapsed_ms": 90_000}
            assert out["elapsed_ms"] == 90_000
        """,
    "a duration is never negative": """
        def test_x(frame):
            assert frame["duration_ms"] >= 0
        """,
    "a sleep that only yields": """
        import asyncio
        async def test_x(q):
            await asyncio.sleep(0)
            assert q.empty()
        """,
    "a slow fake server sleeps in its own function": """
        import time
        def test_x(serve):
            def handler():
                time.sleep(1.5)
                return 200
            with serve(handler) as s:
                assert s.get().code == "NIKA-TIMEOUT-001"
        """,
    "a poll loop that gives up after a generous time": """
        import time
        def test_x(proc):
            t0 = time.monotonic()
            while True:
                if proc.poll() is not None or time.monotonic() - t0 > 60:
                    break
                time.sleep(0.05)
            assert proc.poll() == 0
        """,
    "a helper that raises at its deadline": """
        import time
        def wait_for(cond):
            deadline = time.monotonic() + 30
            while not cond():
                if time.monotonic() > deadline:
                    raise TimeoutError("never")
                time.sleep(0.01)
        """,
    "a deadline handed to the code under test": """
        import time
        def test_x(q):
            msg = q.get(timeout=30)
            assert msg["method"] == "exit"
        """,
}


@pytest.mark.parametrize("source", list(GOOD.values()), ids=list(GOOD))
def test_what_waits_on_the_event_is_not_flagged(source: str) -> None:
    assert _kinds(source) == []


def test_a_finding_names_the_file_and_line(tmp_path: Path) -> None:
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "test_planted.py").write_text(textwrap.dedent(BAD["a difference of monotonic readings"]))
    (found,) = scan_tree(tmp_path / "tests")
    assert (found.path, found.line, found.kind) == ("tests/test_planted.py", 6, "timing")
    assert str(found) == "tests/test_planted.py:6: timing: asserts on an elapsed wall-clock time"
