"""A run's time and randomness, as its ``run:`` block declares them (NEP-0010).

Every reading of time and every random draw a run makes goes through the two objects here, which
the run builds once from its declaration (:meth:`Determinism.of`) and hands to everything that
stamps, waits or draws: the journal (frame ids and timestamps), the task records (``started_at``,
``ended_at``, ``duration_ms``), the executor (an effect's duration), the agent's audit frames, the
builtins (``nika:uuid``, ``nika:date``, ``nika:wait``: ``BuiltinContext.extra["clock"|"rng"]``) and
``retry:``'s jitter.

**The clock.** ``clock: system`` is wall time. ``clock: virtual`` starts at
:data:`VIRTUAL_EPOCH_NS` (2000-01-01T00:00:00Z) and moves only when it is read or slept on: each
reading returns the current instant and then advances it by :data:`TICK_NS` (one millisecond); a
sleep advances it by its length at once and never waits. A task's duration is therefore the
number of readings made while it ran, in milliseconds: the same for the same run, whatever the
machine's load. Safety deadlines are not readings of this clock: ``timeout:``, a provider's or a
fetch's deadline, an agent's wall-clock envelope and an approval ticket's TTL stay on the real
monotonic (or wall) clock, so a hung effect still times out in a virtual-clock run.

**The entropy.** ``entropy: ambient`` draws from the operating system. ``entropy: { seeded: N }``
derives every value from ``N``, one stream per purpose and key, each a ``random.Random`` seeded
with the first 16 bytes of ``sha256("nika-entropy/1" NUL N NUL purpose NUL key…)``; inside a
stream, values are drawn in the order the run asks for them. The streams (:data:`STREAMS`):

* ``frame``: the 74 random bits of each journal frame's UUIDv7 id, in frame order (one per journal);
* ``builtin`` keyed by task id: ``nika:uuid``'s bits, in call order within the task (iterations in
  index order, attempts in order);
* ``retry`` keyed by task id: the jitter of each backoff, in retry order;
* ``child`` keyed by task id: the seed of each child workflow the task runs, in call order (the
  child's own streams derive from it).

``entropy: none`` derives the engine's own ids the same way from the fixed seed 0 (``nika check``
refuses a workflow that draws randomness of its own under it, NIKA-PARSE-028).

**Deterministic runs.** ``entropy: none | { seeded: N }`` with ``clock: virtual`` claims
byte-identical journals. To keep the claim the run executes one task at a time (one ``for_each``
iteration, one agent tool call at a time) in the order the ready set gives them, and its journal
names no absolute path. Two values stay random by design: the run nonce and the approval tickets
(NEP-0013: a ticket must never be replayable across runs); :data:`runtime.journal.nonces.NONCE_FIELDS`
names every journal field that carries one or follows from one.
"""

from __future__ import annotations

import asyncio
import hashlib
import os
import random
import time
from datetime import UTC, datetime
from typing import Any

from checker.core.records import field, record

VIRTUAL_EPOCH_NS = 946_684_800 * 1_000_000_000  # 2000-01-01T00:00:00Z
TICK_NS = 1_000_000  # a virtual reading advances the clock by one millisecond
STREAMS = ("frame", "builtin", "retry", "child")
NONE_SEED = 0  # `entropy: none`: the engine's own ids derive from this fixed seed


class SystemClock:
    """Wall time (``now_ns``) and the monotonic clock (``monotonic``); sleeping waits for real."""

    virtual = False

    def now_ns(self) -> int:
        return time.time_ns()

    def monotonic(self) -> float:
        return time.monotonic()

    def now(self) -> datetime:
        return datetime.now(UTC)

    async def sleep(self, seconds: float) -> None:
        await asyncio.sleep(seconds)


class VirtualClock:
    """Time as a counter: a reading returns the current instant and advances it by :data:`TICK_NS`;
    a sleep advances it by its length and yields to the event loop without waiting."""

    virtual = True

    def __init__(self, start_ns: int = VIRTUAL_EPOCH_NS) -> None:
        self._ns = start_ns

    def now_ns(self) -> int:
        ns = self._ns
        self._ns += TICK_NS
        return ns

    def monotonic(self) -> float:
        return (self.now_ns() - VIRTUAL_EPOCH_NS) / 1e9

    def now(self) -> datetime:
        ns = self.now_ns()
        return datetime.fromtimestamp(ns // 1_000_000_000, UTC).replace(microsecond=ns // 1000 % 1_000_000)

    async def sleep(self, seconds: float) -> None:
        self._ns += max(0, round(seconds * 1e9))
        await asyncio.sleep(0)


Clock = SystemClock | VirtualClock
SYSTEM_CLOCK = SystemClock()


def iso(ns: int) -> str:
    """``ns`` (unix nanoseconds) as UTC to the millisecond, ``2026-12-02T06:43:38.553Z``."""
    second = ns // 1_000_000_000
    return f"{time.strftime('%Y-%m-%dT%H:%M:%S', time.gmtime(second))}.{ns // 1_000_000 % 1000:03d}Z"


def elapsed_ms(clock: Clock, since: float) -> float:
    """Milliseconds from ``since`` (an earlier ``clock.monotonic()``) to now, on ``clock``."""
    return round((clock.monotonic() - since) * 1000, 3)


class Entropy:
    """The run's randomness: the operating system's (``seed`` None), or streams derived from a seed."""

    def __init__(self, seed: int | None) -> None:
        self.seed = seed
        self._streams: dict[tuple[str, ...], random.Random] = {}

    @property
    def seeded(self) -> bool:
        return self.seed is not None

    def stream(self, purpose: str, *key: str) -> random.Random:
        """The generator for ``purpose`` and ``key`` (the same object for the run's whole life, so
        its values come in the order they are drawn); the system's entropy when ambient."""
        if self.seed is None:
            return _SYSTEM
        k = (purpose, *key)
        found = self._streams.get(k)
        if found is None:
            found = self._streams[k] = random.Random(derive(self.seed, purpose, *key))
        return found

    def child_seed(self, task: str) -> int | None:
        """The seed of the next child workflow ``task`` runs (``None``: the child draws ambiently)."""
        return self.stream("child", task).getrandbits(64) if self.seed is not None else None


_SYSTEM = random.SystemRandom()


def derive(seed: int, purpose: str, *key: str) -> int:
    """The seed of one stream: the first 16 bytes of ``sha256("nika-entropy/1" NUL seed NUL purpose NUL key…)``."""
    text = "\0".join(("nika-entropy/1", str(seed), purpose, *key))
    return int.from_bytes(hashlib.sha256(text.encode("utf-8")).digest()[:16], "big")


def uuid7(ns: int | None = None, rng: Any = None) -> str:
    """A time-ordered UUIDv7 (RFC 9562): 48 bits of unix milliseconds (``ns``, default now), the
    version, 12 random bits, the variant, 62 random bits (from ``rng``, default the system's)."""
    ms = (time.time_ns() if ns is None else ns) // 1_000_000
    rand = bytearray(os.urandom(10) if rng is None else rng.getrandbits(80).to_bytes(10, "big"))
    rand[0] = 0x70 | (rand[0] & 0x0F)  # the version (byte 6 of the UUID)
    rand[2] = 0x80 | (rand[2] & 0x3F)  # the variant (byte 8)
    h = (ms & 0xFFFF_FFFF_FFFF).to_bytes(6, "big").hex() + rand.hex()
    return f"{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:]}"


@record(frozen=False, slots=False)
class Determinism:
    """What a run's ``run:`` block declares, and the clock and entropy built from it."""

    entropy_mode: str = "ambient"  # ambient | none | seeded
    seed: int | None = None
    clock_mode: str = "system"  # system | virtual
    declared: bool = False  # the workflow has a `run:` block (or its caller's binds it)
    clock: Clock = field(default=SYSTEM_CLOCK)
    entropy: Entropy = field(default_factory=lambda: Entropy(None))

    @classmethod
    def of(cls, block: Any, inherited: Determinism | None = None, child_seed: int | None = None) -> Determinism:
        """From a ``run:`` block (:class:`checker.model.workflow.RunSettings`, or ``None``). A child
        workflow of a deterministic run (``inherited``) runs on its caller's clock with the seed the
        caller's ``child`` stream gave it (``child_seed``): one run, one clock (NEP-0010 §5)."""
        if inherited is not None and inherited.deterministic:
            seed = child_seed if child_seed is not None else NONE_SEED
            return cls(inherited.entropy_mode, seed, "virtual", True, inherited.clock, Entropy(seed))
        entropy = getattr(block, "entropy", None) or "ambient"
        clock = getattr(block, "clock", None) or "system"
        seed = getattr(block, "seed", None) if entropy == "seeded" else (NONE_SEED if entropy == "none" else None)
        return cls(
            entropy,
            seed,
            clock,
            block is not None,
            VirtualClock() if clock == "virtual" else SYSTEM_CLOCK,
            Entropy(seed),
        )

    @property
    def deterministic(self) -> bool:
        """The run claims byte-identical journals (NEP-0010 §4: ``none | seeded`` × ``virtual``)."""
        return self.entropy_mode in ("none", "seeded") and self.clock_mode == "virtual"

    def describe(self) -> str:
        """``seeded 42 · virtual clock`` (what the summary and the prologue say)."""
        entropy = f"seeded {self.seed}" if self.entropy_mode == "seeded" else f"{self.entropy_mode} entropy"
        return f"{entropy} · {self.clock_mode} clock"
