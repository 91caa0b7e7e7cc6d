"""Schedules from the engine configuration: cron expressions (``cronsim`` computes the next time),
a clock seam (``now``) so tests drive a fake clock, and a fire record on disk so a restart never
fires one slot twice.

Each schedule's last fired slot is written (atomically) *before* its run starts. On start the next
slot is the first after the recorded one, or after ``now`` for a schedule never fired; slots that
passed while the server was down are not run late (one line in the log says how many were missed).
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from nika.serve.config import ConfigError, Schedule

EXTRA_LINE = "nika serve: schedules need the cron library: pip install 'nika-tools[serve]'"


def _cron(expr: str, after: datetime) -> Any:
    try:
        from cronsim import CronSim, CronSimError
    except ImportError:
        raise ConfigError(EXTRA_LINE) from None
    try:
        return CronSim(expr, after)
    except CronSimError as exc:
        raise ConfigError(f"cron expression {expr!r}: {exc}") from None


class Scheduler:
    """Fires due schedules when :meth:`tick` is called; ``fire(schedule)`` starts the run."""

    def __init__(
        self,
        schedules: tuple[Schedule, ...],
        state_file: Path,
        fire: Callable[[Schedule], Any],
        *,
        now: Callable[[], datetime] = lambda: datetime.now(UTC),
        log: Callable[[str], None] = lambda line: None,
    ) -> None:
        self.schedules, self.state_file, self.fire, self.now, self.log = schedules, state_file, fire, now, log
        self.last: dict[str, str] = self._read()
        self.next: dict[str, datetime] = {}
        start = self.now()
        for s in schedules:
            fired = self.last.get(s.name)
            base = datetime.fromisoformat(fired) if fired else start
            nxt = next(_cron(s.cron, base))
            missed = 0
            while nxt <= start and fired:  # slots that passed while the server was down
                missed += 1
                nxt = next(_cron(s.cron, nxt))
            if missed:
                log(f"nika serve: schedule `{s.name}` missed {missed} slot(s) while the server was down; next {nxt}")
            self.next[s.name] = nxt

    def _read(self) -> dict[str, str]:
        try:
            doc = json.loads(self.state_file.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return {}
        return {k: v for k, v in doc.items() if isinstance(v, str)} if isinstance(doc, dict) else {}

    def _write(self) -> None:
        self.state_file.parent.mkdir(parents=True, exist_ok=True)
        tmp = self.state_file.with_suffix(".tmp")
        tmp.write_text(json.dumps(self.last, indent=1), encoding="utf-8")
        os.replace(tmp, self.state_file)

    def tick(self) -> list[str]:
        """Fire every schedule whose slot has come (at most once each per tick); the names fired."""
        now, fired = self.now(), []
        for s in self.schedules:
            slot = self.next[s.name]
            if slot > now:
                continue
            self.last[s.name] = slot.isoformat()
            self._write()  # recorded before the run starts: a restart never fires this slot again
            nxt = next(_cron(s.cron, slot))
            while nxt <= now:  # a late tick fires once, not once per slot it slept through
                nxt = next(_cron(s.cron, nxt))
            self.next[s.name] = nxt
            self.fire(s)
            fired.append(s.name)
        return fired

    def seconds_to_next(self) -> float:
        if not self.next:
            return 3600.0
        return max(0.0, min((t - self.now()).total_seconds() for t in self.next.values()))
