"""Schedules on a fake clock: a slot fires once, never before its time, never twice across a
restart; slots missed while the server was down are not run late; a bad expression and a missing
cron library are one line each."""

from __future__ import annotations

import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from nika.serve.config import ConfigError, Schedule
from nika.serve.schedule import EXTRA_LINE, Scheduler


class Clock:
    def __init__(self, at: datetime) -> None:
        self.at = at

    def __call__(self) -> datetime:
        return self.at


SIX_HOURLY = Schedule("digest", "0 */6 * * *", "/x/digest.nika.yaml", {"topic": "tides"})


def _scheduler(state: Path, clock: Clock, fired: list[str], schedules=(SIX_HOURLY,)) -> Scheduler:
    return Scheduler(schedules, state, lambda s: fired.append(f"{s.name}@{clock()}"), now=clock)


def test_a_slot_fires_once_at_its_time(tmp_path: Path) -> None:
    clock, fired = Clock(datetime(2026, 1, 1, 5, 0, tzinfo=UTC)), []
    s = _scheduler(tmp_path / "s.json", clock, fired)
    assert s.tick() == [] and s.seconds_to_next() == 3600
    clock.at = datetime(2026, 1, 1, 5, 59, 59, tzinfo=UTC)
    assert s.tick() == []
    clock.at = datetime(2026, 1, 1, 6, 0, tzinfo=UTC)
    assert s.tick() == ["digest"]
    assert s.tick() == []  # the same slot never twice
    clock.at = datetime(2026, 1, 1, 12, 0, 1, tzinfo=UTC)
    assert s.tick() == ["digest"]
    assert len(fired) == 2


def test_a_restart_never_fires_a_slot_twice(tmp_path: Path) -> None:
    clock, fired = Clock(datetime(2026, 1, 1, 6, 0, 0, tzinfo=UTC)), []
    first = _scheduler(tmp_path / "s.json", Clock(datetime(2026, 1, 1, 5, 0, tzinfo=UTC)), fired)
    first.now = clock
    assert first.tick() == ["digest"]
    clock.at = datetime(2026, 1, 1, 6, 0, 30, tzinfo=UTC)  # restarted within the slot's minute
    again = _scheduler(tmp_path / "s.json", clock, fired)
    assert again.tick() == []
    assert again.next["digest"] == datetime(2026, 1, 1, 12, 0, tzinfo=UTC)
    assert len(fired) == 1


def test_slots_missed_while_down_are_not_run_late(tmp_path: Path) -> None:
    clock, fired, lines = Clock(datetime(2026, 1, 1, 6, 0, tzinfo=UTC)), [], []
    s = _scheduler(tmp_path / "s.json", Clock(datetime(2026, 1, 1, 5, 0, tzinfo=UTC)), fired)
    s.now = clock
    s.tick()
    clock.at = datetime(2026, 1, 2, 1, 0, tzinfo=UTC)  # down for 19 hours: 12:00, 18:00, 00:00 missed
    back = Scheduler((SIX_HOURLY,), tmp_path / "s.json", lambda s: fired.append(s.name), now=clock, log=lines.append)
    assert back.tick() == []
    assert back.next["digest"] == datetime(2026, 1, 2, 6, 0, tzinfo=UTC)
    assert "missed 3 slot(s)" in lines[0]


def test_a_late_tick_fires_once_not_once_per_slot(tmp_path: Path) -> None:
    clock, fired = Clock(datetime(2026, 1, 1, 5, 0, tzinfo=UTC)), []
    s = _scheduler(tmp_path / "s.json", clock, fired)
    clock.at += timedelta(hours=20)
    assert s.tick() == ["digest"]
    assert s.tick() == []


def test_a_bad_expression_and_a_missing_library_are_one_line(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    bad = Schedule("x", "every tuesday", "/x/a.nika.yaml")
    with pytest.raises(ConfigError, match="cron expression 'every tuesday'"):
        _scheduler(tmp_path / "s.json", Clock(datetime(2026, 1, 1, tzinfo=UTC)), [], (bad,))
    monkeypatch.setitem(sys.modules, "cronsim", None)
    with pytest.raises(ConfigError) as got:
        _scheduler(tmp_path / "s.json", Clock(datetime(2026, 1, 1, tzinfo=UTC)), [])
    assert str(got.value) == EXTRA_LINE and "nika-tools[serve]" in EXTRA_LINE
