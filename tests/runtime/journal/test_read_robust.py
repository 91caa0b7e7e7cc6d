"""A journal is untrusted input: whatever its bytes, reading it back never raises (spec 17's
additive law: unknown kinds, members and fields are skipped; torn lines are counted)."""

from __future__ import annotations

import json
from pathlib import Path

from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from nika.output.trace_text import outputs_text, show_text
from runtime.journal.diff import diff_runs
from runtime.journal.find import peek_run
from runtime.journal.read import read_run
from runtime.journal.write import verify

KINDS = [
    *("workflow_started", "task_started", "task_completed", "task_failed", "task_retrying", "verb_invoked"),
    *("tool_invoked", "workflow_paused", "workflow_completed", "cost_incurred", "agent_budget_checkpoint", "novel"),
]
KEYS = [
    *("task", "note", "duration_ms", "output", "outcome", "error_code", "message", "phase", "model", "tokens_in"),
    *("tokens_out", "cost_usd", "attempt", "workflow", "state", "outputs", "depth", "index", "tool", "event"),
]
scalars = st.one_of(st.none(), st.booleans(), st.integers(), st.floats(allow_nan=False), st.text(max_size=8))
values = st.recursive(
    scalars, lambda c: st.lists(c, max_size=2) | st.dictionaries(st.text(max_size=3), c, max_size=2), max_leaves=4
)
frames = st.fixed_dictionaries(
    {
        "kind": st.one_of(st.sampled_from(KINDS), values),
        "timestamp": st.one_of(st.integers(min_value=0, max_value=2**63), values),
        "fields": st.one_of(
            st.lists(st.fixed_dictionaries({"key": st.sampled_from(KEYS) | values, "value": values}), max_size=6),
            values,
        ),
    }
)
lines = st.lists(st.one_of(frames.map(json.dumps), values.map(json.dumps), st.text(max_size=20)), max_size=12)


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(lines=lines)
@example(lines=['{"kind": [], "timestamp": 0, "fields": []}'])  # found by this test: a kind that is no string
@example(lines=['{"kind": "workflow_started", "timestamp": 0, "fields": true}'])  # and fields that are no list
@example(lines=['{"chain": [], "kind": "workflow_started", "fields": []}'])  # a chain that is no string
def test_any_journal_reads_and_renders_without_raising(tmp_path: Path, lines: list[str]) -> None:
    path = tmp_path / "j.ndjson"
    path.write_text("\n".join(lines), encoding="utf-8", errors="surrogatepass")
    view = read_run(path)
    peek_run(path)
    assert verify(path.read_bytes())["verdict"] in ("clean", "finding", "forged")
    show_text(view)
    outputs_text(view)
    json.dumps(view.to_json(), default=str)
    diff_runs(view, view)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(cut=st.integers(min_value=0, max_value=4000), flip=st.integers(min_value=0, max_value=4000))
def test_a_torn_or_flipped_real_journal_reads(tmp_path: Path, cut: int, flip: int) -> None:
    from runtime.journal.write import Journal

    j = Journal(tmp_path / "src")
    j.append("workflow_started", [("workflow", "w"), ("trace_format", 2)])
    for i in range(5):
        j.append("task_started", [("task", f"t{i}"), ("note", "infer · mock/echo")])
        j.append("verb_invoked", [("task", f"t{i}"), ("phase", "model_call"), ("tokens_in", 3), ("tokens_out", 4)])
        j.append("task_completed", [("task", f"t{i}"), ("output", json.dumps({"n": i})), ("duration_ms", 1.5)])
    j.append("workflow_completed", [("workflow", "w"), ("state", "success"), ("outputs", "{}")])
    j.close()
    assert j.path is not None
    data = bytearray(j.path.read_bytes()[: max(1, cut % (j.path.stat().st_size + 1))])
    if data:
        data[flip % len(data)] ^= 0x5A
    path = tmp_path / "x.ndjson"
    path.write_bytes(bytes(data))
    view = read_run(path)
    assert view.frames + len(view.torn_lines) <= 17
    show_text(view)
    peek_run(path)


def test_a_frame_nested_past_the_json_reader_is_read_by_every_reader(tmp_path: Path) -> None:
    """One frame reader for all (`read_frame`): a well-chained journal whose frame holds a value
    nested 100 000 deep (a raw field value, and a serialized `outputs` string) is read by the fold,
    the retention look, `show`/`outputs`/`diff` and `--resume` without a RecursionError, and the
    verifier says it saw the frame without decoding it."""
    from runtime.durable.resume_index import _read as resume_read  # what --resume reads with: the one reader
    from runtime.journal.write import Journal

    deep = "[" * 100_000 + "]" * 100_000
    j = Journal(tmp_path / "src")
    j.append("workflow_started", [("workflow", "w"), ("trace_format", 2)])
    j.append("task_started", [("task", "a"), ("note", "invoke · nika:log")])
    j.append("tool_invoked", [("task", "a"), ("message", "MARK")])
    j.append("task_completed", [("task", "a"), ("output", "null"), ("duration_ms", 1.0)])
    j.append("workflow_completed", [("workflow", "w"), ("state", "success"), ("outputs", deep)])
    j.close()
    assert j.path is not None
    # re-chain after planting a raw deep value where the writer wrote a string (the writer never would)
    import hashlib

    lines = j.path.read_bytes().split(b"\n")[:-1]
    lines[2] = lines[2].replace(b'"MARK"', deep.encode())
    for i in range(1, len(lines)):
        lines[i] = lines[i][:10] + hashlib.sha256(lines[i - 1]).hexdigest().encode() + lines[i][74:]
    path = tmp_path / "deep.ndjson"
    path.write_bytes(b"\n".join(lines) + b"\n")

    view = read_run(path)
    assert view.deep_lines == [3] and view.state == "success" and view.torn_lines == []
    assert view.outputs == deep  # too deep to read back: kept as the text it was written as
    peek_run(path)
    show_text(view)
    outputs_text(view)
    diff_runs(view, view)
    verdict = verify(path.read_bytes())
    assert verdict["verdict"] == "finding" and "nests too deeply" in verdict["problems"][0]["problem"]
    assert [f.get("kind") for f in resume_read("deep.ndjson", path).frames][2] == "tool_invoked"
