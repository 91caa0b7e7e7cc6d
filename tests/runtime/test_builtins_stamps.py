"""nika:uuid, nika:date, nika:hash (against a virtual clock and seeded entropy) and nika:inspect."""

from __future__ import annotations

import hashlib
import re
import uuid as uuidlib
from datetime import UTC, datetime

import pytest
from builtins_harness import VirtualClock, fails, make_ctx, seeded

from runtime.builtins import call


@pytest.fixture
def clock():
    return VirtualClock(at=datetime(2026, 3, 29, 0, 30, 15, 250_000, tzinfo=UTC))


@pytest.fixture
def ctx(tmp_path, clock):
    return make_ctx(tmp_path, clock=clock, rng=seeded(7))[0]


# ── uuid ──────────────────────────────────────────────────────────────────────────────────────

CANONICAL = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")


async def test_uuid_v7_carries_the_clock_s_millisecond(ctx, clock):
    out = await call("nika:uuid", {}, ctx)
    u = uuidlib.UUID(out)
    assert CANONICAL.fullmatch(out)
    assert (u.version, u.variant) == (7, uuidlib.RFC_4122)
    assert u.int >> 80 == int(clock.at.timestamp() * 1000)


async def test_uuid_v7_sorts_by_time(ctx, clock):
    first = await call("nika:uuid", {"version": "v7"}, ctx)
    await clock.sleep(0.001)
    assert await call("nika:uuid", {"version": "v7"}, ctx) > first


async def test_uuid_v4(ctx):
    u = uuidlib.UUID(await call("nika:uuid", {"version": "v4"}, ctx))
    assert (u.version, u.variant) == (4, uuidlib.RFC_4122)


async def test_uuid_is_reproducible_under_a_seed(tmp_path):
    runs = []
    for _ in range(2):
        c = make_ctx(tmp_path, clock=VirtualClock(), rng=seeded(3))[0]
        runs.append([await call("nika:uuid", {"version": v}, c) for v in ("v7", "v4", "v7")])
    assert runs[0] == runs[1] and len(set(runs[0])) == 3


async def test_uuid_without_seams_uses_the_system(tmp_path):
    c = make_ctx(tmp_path)[0]
    import math

    before = math.floor(datetime.now(UTC).timestamp() * 1000)
    a, b = await call("nika:uuid", {}, c), await call("nika:uuid", {}, c)
    after = math.ceil(datetime.now(UTC).timestamp() * 1000)
    assert a != b
    assert before <= uuidlib.UUID(a).int >> 80 <= after  # its millisecond stamp is the system clock's


async def test_uuid_contract_refusal(ctx):
    e = await fails("nika:uuid", {"version": "v1"}, ctx)
    assert e.code == "NIKA-BUILTIN-001"


# ── date ──────────────────────────────────────────────────────────────────────────────────────


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        ({"op": "now"}, "2026-03-29T00:30:15.250000Z"),
        ({"op": "now", "tz": "Europe/Paris"}, "2026-03-29T01:30:15.250000+01:00"),
        ({"op": "add", "base": "2026-05-23T09:00:00Z", "duration": "1h30m"}, "2026-05-23T10:30:00Z"),
        ({"op": "subtract", "base": "2026-05-23T09:00:00+02:00", "duration": "48h"}, "2026-05-21T09:00:00+02:00"),
        ({"op": "add", "duration": "500ms"}, "2026-03-29T00:30:15.750000Z"),
        # absolute time across the spring-forward change: 24 hours, not one calendar day
        (
            {"op": "add", "base": "2026-03-28T12:00:00+01:00", "duration": "24h", "tz": "Europe/Paris"},
            "2026-03-29T13:00:00+02:00",
        ),
        ({"op": "format", "input": "2026-05-23T09:05:00Z", "format": "%Y/%m/%d %H:%M"}, "2026/05/23 09:05"),
        ({"op": "format", "input": "2026-05-23T09:05:00Z", "format": "%H:%M", "tz": "Asia/Tokyo"}, "18:05"),
        ({"op": "parse", "input": "23/05/2026 09:05", "format": "%d/%m/%Y %H:%M"}, "2026-05-23T09:05:00Z"),
        (
            {"op": "parse", "input": "23/05/2026", "format": "%d/%m/%Y", "tz": "America/New_York"},
            "2026-05-23T00:00:00-04:00",
        ),
        ({"op": "diff", "start": "2026-05-23T09:00:00Z", "end": "2026-05-23T10:30:00Z", "unit": "m"}, 90),
        ({"op": "diff", "start": "2026-05-23T10:30:00Z", "end": "2026-05-23T09:00:00Z", "unit": "hours"}, -1),
        ({"op": "diff", "start": "2026-05-01T00:00:00Z", "end": "2026-05-23T12:00:00+02:00", "unit": "d"}, 22),
        ({"op": "diff", "start": "2026-05-23T09:00:00Z", "end": "2026-05-23T09:00:01.5Z", "unit": "ms"}, 1500),
    ],
)
async def test_date_known_answers(ctx, args, expected):
    assert await call("nika:date", args, ctx) == expected


async def test_date_parse_without_a_year_is_1900_and_warns_nothing(ctx):
    """A format with a day but no year parses as strptime always did (year 1900), without the
    DeprecationWarning Python 3.13 gives for it."""
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        got = await call("nika:date", {"op": "parse", "input": "23/05 09:05", "format": "%d/%m %H:%M"}, ctx)
    assert got == "1900-05-23T09:05:00Z"


@pytest.mark.parametrize(
    "args",
    [
        {"op": "now", "tz": "PST"},
        {"op": "now", "tz": "../../etc/passwd"},
        {"op": "add", "base": "yesterday", "duration": "1h"},
        {"op": "add", "base": "2026-05-23T09:00:00Z"},
        {"op": "add", "base": "2026-05-23T09:00:00Z", "duration": "1d"},
        {"op": "format", "input": "2026-05-23T09:00:00Z"},
        {"op": "parse", "input": "May 23", "format": "%d/%m"},
        {"op": "diff", "start": "2026-05-23T09:00:00Z", "end": "2026-05-23T10:00:00Z"},
        {"op": "diff", "start": "2026-05-23T09:00:00Z", "end": "2026-05-23T10:00:00Z", "unit": "months"},
        {"op": "tomorrow"},
    ],
)
async def test_date_refusals(ctx, args):
    e = await fails("nika:date", args, ctx)
    assert (e.code, e.category) == ("NIKA-BUILTIN-DATE-001", "validation_error")


async def test_date_contract_refusal(ctx):
    e = await fails("nika:date", {"op": "now", "tz": 5}, ctx)
    assert e.code == "NIKA-BUILTIN-001"


# ── hash ──────────────────────────────────────────────────────────────────────────────────────

# blake3("abc"), from the BLAKE3 reference test vectors
BLAKE3_ABC = "6437b3ac38465133ffb63b75273a8db548c558465d79db03fd359c6cd5bd9d85"


async def test_hash_defaults_to_blake3_hex(ctx):
    assert await call("nika:hash", {"content": "abc"}, ctx) == BLAKE3_ABC


@pytest.mark.parametrize("algo", ["sha256", "sha512"])
async def test_hash_sha2(ctx, algo):
    assert await call("nika:hash", {"content": "abc", "algo": algo}, ctx) == hashlib.new(algo, b"abc").hexdigest()


async def test_hash_base64(ctx):
    out = await call("nika:hash", {"content": "abc", "algo": "sha256", "encoding": "base64"}, ctx)
    assert out == "ungWv48Bz+pBQUDeXa4iI7ADYaOWF3qctBD/YfIAFa0="


async def test_hash_of_a_value_is_of_its_canonical_json(ctx):
    a = await call("nika:hash", {"content": {"b": [1, "é"], "a": None}, "algo": "sha256"}, ctx)
    b = await call("nika:hash", {"content": {"a": None, "b": [1, "é"]}, "algo": "sha256"}, ctx)
    assert a == b == hashlib.sha256('{"a":null,"b":[1,"é"]}'.encode()).hexdigest()


async def test_hash_of_bytes_is_of_the_bytes(ctx):
    assert await call("nika:hash", {"content": b"abc"}, ctx) == BLAKE3_ABC


@pytest.mark.parametrize("algo", ["md5", "sha1", "crc32"])
async def test_hash_refuses_broken_or_unknown_algorithms(ctx, algo):
    e = await fails("nika:hash", {"content": "x", "algo": algo}, ctx)
    assert (e.code, e.category) == ("NIKA-BUILTIN-HASH-001", "validation_error")


async def test_hash_contract_refusal(ctx):
    e = await fails("nika:hash", {"algo": "sha256"}, ctx)
    assert e.code == "NIKA-BUILTIN-001"


# ── inspect ───────────────────────────────────────────────────────────────────────────────────

STATE = {
    "cost": {"total_usd": 0.0, "by_task": {}, "by_provider": {}, "internal": "dropped"},
    "records": {"tasks": [{"id": "a", "status": "success", "duration_ms": 3}]},
    "dag_info": {"nodes": ["a", "b"], "edges": [["a", "b"]], "waves": [["a"], ["b"]]},
    "threads": {"active": 1, "queued": 0, "completed": 1},
}


@pytest.mark.parametrize("view", list(STATE))
async def test_inspect_returns_the_view_s_keys(tmp_path, view):
    c = make_ctx(tmp_path, inspect=STATE.__getitem__)[0]
    out = await call("nika:inspect", {"view": view}, c)
    assert out == {k: v for k, v in STATE[view].items() if k != "internal"}


async def test_inspect_unknown_view(tmp_path):
    c = make_ctx(tmp_path, inspect=STATE.__getitem__)[0]
    e = await fails("nika:inspect", {"view": "dag"}, c)
    assert (e.code, e.category) == ("NIKA-BUILTIN-INSPECT-001", "validation_error")


async def test_inspect_without_run_state_is_a_host_bug(ctx):
    e = await fails("nika:inspect", {"view": "cost"}, ctx)
    assert e.code == "NIKA-IMPL-001" and "without its run's state" in e.message


async def test_inspect_contract_refusal(ctx):
    e = await fails("nika:inspect", {}, ctx)
    assert e.code in ("NIKA-BUILTIN-001", "NIKA-BUILTIN-INSPECT-001")
