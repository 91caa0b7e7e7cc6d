"""The journal writes each frame by hand (``encode_frame``): byte for byte what the sorted-key
compact JSON encoder writes for the same frame, or ``nika trace verify`` and every reader of an
older journal would disagree with the chain."""

from __future__ import annotations

import enum
import json
import re

import pytest

from runtime.journal.write import Journal, encode, encode_frame, uuid7, verify


class Colour(enum.StrEnum):
    RED = "red"


class Level(enum.IntEnum):
    HIGH = 3


VALUES = [
    "plain",
    'é ☃ 💥 \u2028 \x00 \x1f "quoted" \\ back',
    "",
    0,
    -17,
    10**30,
    True,
    False,
    None,
    1.5,
    float("nan"),
    float("inf"),
    1e-300,
    [1, "two", None, {"b": 1, "a": [True]}],
    {"z": 1, "a": {"y": 2, "b": 3}, "é": "x"},
    (1, 2),
    Colour.RED,
    Level.HIGH,
    object,  # not JSON: the encoder's default (str)
]


def _frame(fields: list[tuple[str, object]], uuid: str, kind: str, run: str | None, ts: int) -> dict[str, object]:
    return {
        "chain": "ab" * 32,
        "correlation": None,
        "fields": [{"key": k, "value": v} for k, v in fields],
        "id": {"uuid": uuid},
        "kind": kind,
        "run": run,
        "timestamp": ts,
    }


@pytest.mark.parametrize("value", VALUES, ids=repr)
@pytest.mark.parametrize("run", [None, "run-é"])
def test_a_hand_written_frame_is_the_encoders_frame(value: object, run: str | None) -> None:
    fields = [("task", "t0"), ("value", value), ("note", "infer · mock/echo")]
    uuid, ts = uuid7(), 1_796_192_319_506_406_322
    assert encode_frame("ab" * 32, fields, uuid, "task_completed", run, ts) == encode(
        _frame(fields, uuid, "task_completed", run, ts)
    )


def test_a_frame_without_fields_and_the_journal_it_makes_verify(tmp_path) -> None:
    assert encode_frame("0" * 64, [], "u", "k", None, 1) == encode(_frame([], "u", "k", None, 1) | {"chain": "0" * 64})
    j = Journal(tmp_path)
    j.append("workflow_started", [("workflow", "w"), ("permits", "p"), ("permits_json", "{}"), ("trace_format", 2)])
    j.append("task_completed", [("task", "t"), ("output", {"b": [1.5, None], "a": "é"})])
    j.append("workflow_completed", [("workflow", "w"), ("state", "success")])
    j.close()
    assert j.path is not None
    data = j.path.read_bytes()
    assert verify(data)["verdict"] == "clean"
    assert [json.loads(line)["fields"][0]["key"] for line in data.splitlines()] == ["workflow", "task", "workflow"]


def test_uuid7_carries_the_version_the_variant_and_the_time() -> None:
    ids = {uuid7() for _ in range(2000)}
    assert len(ids) == 2000
    for u in ids:
        assert re.fullmatch(r"[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}", u), u
    import time

    before = time.time_ns() // 1_000_000
    ms = int(uuid7().replace("-", "")[:12], 16)
    after = time.time_ns() // 1_000_000
    assert before <= ms <= after  # the 48-bit stamp is the clock's millisecond


def test_now_iso_is_utc_to_the_millisecond() -> None:
    from datetime import UTC, datetime

    from runtime.engine.records import now_iso

    before = datetime.now(UTC)
    stamps = [now_iso() for _ in range(3)]
    after = datetime.now(UTC)
    for s in stamps:
        assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z", s), s
        at = datetime.fromisoformat(s.replace("Z", "+00:00"))
        assert before.replace(microsecond=before.microsecond // 1000 * 1000) <= at <= after
