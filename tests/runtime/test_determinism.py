"""NEP-0010 declared determinism: `run: { entropy: { seeded: N }, clock: virtual }`.

Two runs of the same bytes, inputs and mocked providers, from the same relative layout (here two
different folders), write journals equal byte for byte outside the named nonce fields — with every
timestamp present and virtual, never normalised away — and `nika trace reproduce` finds a planted
difference at the frame where it is.
"""

from __future__ import annotations

import io
import json
import re
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path

import pytest

from nika.cli import main
from runtime.determinism import TICK_NS, VIRTUAL_EPOCH_NS, Entropy, VirtualClock, derive
from runtime.journal.nonces import NONCE_FIELDS, masked

CHILD = """\
nika: v1
workflow: { id: child }
permits: { tools: ["nika:uuid"] }
tasks:
  mint:
    invoke: { tool: "nika:uuid", args: { version: v4 } }
outputs:
  id: ${{ tasks.mint.output }}
"""

PARENT = """\
nika: v1
workflow: { id: det }
run: { entropy: { seeded: SEED }, clock: virtual }
model: mock/echo
inputs:
  word: { type: string, default: hi }
permits:
  tools: ["nika:uuid", "nika:date", "nika:assert", "nika:wait"]
  exec: ["echo"]
tasks:
  v7:
    invoke: { tool: "nika:uuid", args: {} }
  now:
    invoke: { tool: "nika:date", args: { op: now } }
  nap:
    invoke: { tool: "nika:wait", args: { duration: 1h } }
  ask:
    with: { id: "${{ tasks.v7.output }}" }
    infer: { prompt: "${{ inputs.word }} ${{ with.id }}" }
  fan:
    for_each: [a, b, c, d]
    max_parallel: 4
    exec: { command: ["echo", "${{ item }}"] }
  flaky:
    invoke: { tool: "nika:assert", args: { condition: false, message: no } }
    retry: { max_attempts: 3, backoff_ms: 20, on_codes: [NIKA-BUILTIN-ASSERT-001] }
    on_error: { skip: true }
  call:
    invoke: { workflow: ./child.nika.yaml }
outputs:
  v7: ${{ tasks.v7.output }}
  now: ${{ tasks.now.output }}
  nap: ${{ tasks.nap.output }}
  child: ${{ tasks.call.output }}
"""


def _run_in(folder: Path, monkeypatch, seed: int = 42) -> tuple[Path, dict]:
    folder.mkdir()
    (folder / "det.nika.yaml").write_text(PARENT.replace("SEED", str(seed)))
    (folder / "child.nika.yaml").write_text(CHILD)
    monkeypatch.chdir(folder)
    out = io.StringIO()
    with redirect_stdout(out), redirect_stderr(io.StringIO()):
        assert main(["run", "det.nika.yaml", "--output-format", "json", "--no-gc"]) == 0
    report = json.loads(out.getvalue())
    return folder / report["trace"], report


def _frames(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_bytes().splitlines()]


def _nonce_values(path: Path) -> list[str]:
    """The values of the named nonce fields, read straight from the frames (not through the masker)."""
    found = []
    top = {(k, p) for k, p, _ in NONCE_FIELDS if "." not in p and "[" not in p}
    for frame in _frames(path):
        for f in frame["fields"]:
            if (frame["kind"], f["key"]) in top and isinstance(f["value"], str):
                found.append(f["value"])
    return found


def _blank(path: Path) -> bytes:
    data = path.read_bytes()
    data = re.sub(rb'"chain":"[0-9a-f]{64}"', b'"chain":"-"', data)
    for value in _nonce_values(path):
        data = data.replace(value.encode(), b"<nonce>")
    return data


def test_two_seeded_runs_write_the_same_bytes_outside_the_nonce_fields(tmp_path: Path, monkeypatch) -> None:
    a, report_a = _run_in(tmp_path / "one", monkeypatch)
    b, report_b = _run_in(tmp_path / "two", monkeypatch)
    raw_a, raw_b = a.read_bytes().splitlines(), b.read_bytes().splitlines()
    assert len(raw_a) == len(raw_b) > 40
    assert _blank(a) == _blank(b)  # byte for byte, once the chain and the named nonces are blanked
    nonce_kinds = {k for k, _, _ in NONCE_FIELDS}
    for fa, fb in zip(_frames(a), _frames(b), strict=True):
        assert masked(fa) == masked(fb)  # what `nika trace reproduce` compares
        if fa["kind"] not in nonce_kinds:  # a frame with no nonce field differs by its chain alone
            assert {k: v for k, v in fa.items() if k != "chain"} == {k: v for k, v in fb.items() if k != "chain"}
    # the child's journal is deterministic too (its caller's clock and a seed from the caller's stream)
    kids_a = sorted(p for p in a.parent.glob("*.ndjson") if p != a)
    kids_b = sorted(p for p in b.parent.glob("*.ndjson") if p != b)
    assert len(kids_a) == len(kids_b) == 1 and _blank(kids_a[0]) == _blank(kids_b[0])
    # timestamps are there and virtual: from the epoch, strictly increasing, an hour's nap and a few ticks on
    stamps = [f["timestamp"] for f in _frames(a)]
    assert stamps[0] == VIRTUAL_EPOCH_NS and stamps == sorted(set(stamps))
    assert 3600 * 10**9 < stamps[-1] - VIRTUAL_EPOCH_NS < 3600 * 10**9 + 1000 * TICK_NS
    assert report_a["outputs"] == report_b["outputs"]
    assert report_a["outputs"]["now"].startswith("2000-01-01T00:00:00.")
    # an hour on the virtual clock, at once (and the one tick of the reading that began the wait)
    assert report_a["outputs"]["nap"] == {"elapsed_ms": 3_600_001}
    assert all(t["started_at"].startswith("2000-01-01T") for t in report_a["tasks"].values())
    retries = [f for f in _frames(a) if f["kind"] == "task_retrying"]
    delays = [next(x["value"] for x in f["fields"] if x["key"] == "delay_ms") for f in retries]
    assert len(delays) == 2 and delays != [20.0, 40.0]  # the jitter was drawn, from the seed
    assert report_a["determinism"] == {
        "entropy": "seeded",
        "seed": 42,
        "clock": "virtual",
        "deterministic": True,
        "not_deterministic": [],
    }


def test_another_seed_diverges_where_the_randomness_lives(tmp_path: Path, monkeypatch) -> None:
    _, one = _run_in(tmp_path / "one", monkeypatch, seed=42)
    _, other = _run_in(tmp_path / "two", monkeypatch, seed=43)
    assert one["outputs"]["v7"] != other["outputs"]["v7"]
    assert one["outputs"]["child"] != other["outputs"]["child"]
    assert one["outputs"]["now"] == other["outputs"]["now"]  # time does not depend on the seed


def test_the_streams_follow_the_documented_derivation() -> None:
    import hashlib
    import random

    e = Entropy(42)
    want = int.from_bytes(hashlib.sha256(b"nika-entropy/1\x0042\x00builtin\x00t").digest()[:16], "big")
    assert derive(42, "builtin", "t") == want
    assert e.stream("builtin", "t").getrandbits(32) == random.Random(want).getrandbits(32)
    assert e.stream("builtin", "t") is e.stream("builtin", "t")  # one stream: values come in draw order
    clock = VirtualClock()
    assert [clock.now_ns(), clock.now_ns()] == [VIRTUAL_EPOCH_NS, VIRTUAL_EPOCH_NS + TICK_NS]


REPRO = """\
nika: v1
workflow: { id: repro }
run: { entropy: { seeded: 7 }, clock: virtual }
permits:
  exec: ["cat"]
  tools: ["nika:uuid"]
tasks:
  a:
    invoke: { tool: "nika:uuid", args: {} }
  b:
    exec: { command: ["cat", "data.txt"] }
  c:
    with: { b: "${{ tasks.b.output }}" }
    exec: { command: ["cat", "data.txt"] }
"""


def _cli(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        code = main(list(argv))
    return code, out.getvalue(), err.getvalue()


@pytest.fixture
def recorded(tmp_path: Path, monkeypatch) -> Path:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "repro.nika.yaml").write_text(REPRO)
    (tmp_path / "data.txt").write_text("one\n")
    code, out, err = _cli("run", "repro.nika.yaml", "--output-format", "json")
    assert code == 0, err
    return Path(json.loads(out)["trace"])


def test_reproduce_says_same_when_nothing_changed(recorded: Path) -> None:
    code, out, err = _cli("trace", "reproduce", recorded.name.removesuffix(".ndjson"))
    assert code == 0, out + err
    assert "same:" in out and "agree byte for byte" in out


def test_reproduce_finds_a_planted_difference_at_its_frame(recorded: Path) -> None:
    frames = _frames(recorded)
    where = next(
        n
        for n, f in enumerate(frames, 1)
        if f["kind"] == "task_completed" and {"key": "task", "value": "b"} in f["fields"]
    )
    Path("data.txt").write_text("two\n")  # what `b` reads changed: the first frame to differ is its result
    code, out, _ = _cli("trace", "reproduce", str(recorded), "--output-format", "json")
    assert code == 1
    doc = json.loads(out)
    d = doc["first_difference"]
    assert (d["frame"], d["kind"], d["task"], d["member"]) == (where, "task_completed", "b", "fields.output")
    assert (d["recorded"], d["reproduced"]) == ("one", "two")
    code, text, _ = _cli("trace", "reproduce", str(recorded))
    assert code == 1 and f"differs at frame {where} (task_completed of `b`): fields.output" in text


def test_reproduce_finds_a_planted_edit_of_the_journal(recorded: Path) -> None:
    """An edit of the recorded journal (its chain redone, so it even verifies) is found at its frame."""
    import hashlib

    lines = recorded.read_bytes().splitlines()
    n = next(i for i, line in enumerate(lines) if b'"kind":"task_completed"' in line)
    lines[n] = lines[n].replace(b'"key":"duration_ms","value":', b'"key":"duration_ms","value":1', 1)
    for i in range(n + 1, len(lines)):  # re-chain: verification cannot tell, the reproduction can
        prev = hashlib.sha256(lines[i - 1]).hexdigest().encode()
        lines[i] = re.sub(rb'^\{"chain":"[0-9a-f]{64}"', b'{"chain":"' + prev + b'"', lines[i])
    recorded.write_bytes(b"\n".join(lines) + b"\n")
    code, out, _ = _cli("trace", "reproduce", str(recorded), "--output-format", "json")
    assert code == 1
    d = json.loads(out)["first_difference"]
    assert d["frame"] == n + 1 and d["member"] == "fields.duration_ms"


def test_reproduce_refuses_an_ambient_run_and_a_changed_file(recorded: Path, tmp_path: Path) -> None:
    Path("repro.nika.yaml").write_text(REPRO.replace("seeded: 7", "seeded: 8"))
    code, _, err = _cli("trace", "reproduce", str(recorded))
    assert code == 2 and "sha256 differs" in err
    plain = "nika: v1\nworkflow: { id: plain }\npermits: { exec: [cat] }\n"
    plain += "tasks:\n  a:\n    exec: { command: [cat, data.txt] }\n"
    Path("plain.nika.yaml").write_text(plain)
    code, out, err = _cli("run", "plain.nika.yaml", "--output-format", "json")
    assert code == 0, err
    code, _, err = _cli("trace", "reproduce", json.loads(out)["trace"])
    assert code == 2 and "not a deterministic pair" in err
