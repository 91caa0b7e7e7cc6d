"""nika:decide at run time: the bundle path through the fs read boundary, inline bundles,
refusals as NIKA-DECIDE-001/002 task errors, the decide event, and `nika decide` exit codes."""

from __future__ import annotations

import copy
import json
import subprocess
import sys
from pathlib import Path

import pytest
from builtins_harness import fails, make_ctx

from runtime.builtins import REGISTRY, _load, call

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "decide"))
from decide_fixtures import BUNDLE, item, snap

ROOT = Path(__file__).resolve().parents[2]
SNAP = snap(
    item("open_incidents", 0, source="pager"), item("test_pass_bp", 9900, source="ci", integrity="authoritative")
)


def test_decide_is_in_the_ordinary_registry():
    """The builtin registers like every other (the check-time availability warning reads this)."""
    _load()
    assert "nika:decide" in REGISTRY


async def test_bundle_path_is_read_through_the_read_boundary(tmp_path):
    """Spec 11 §nika:decide: a `bundle:` path reads like any declared fs.read."""
    (tmp_path / "b.json").write_text(json.dumps(BUNDLE))
    ctx, events = make_ctx(tmp_path)
    receipt = await call("nika:decide", {"bundle": "b.json", "evidence": SNAP}, ctx)
    assert receipt["outcome"] == "recommend"
    (ev,) = [e for e in events if e["type"] == "decide"]
    assert ev["outcome"] == "recommend" and len(ev["receipt_blake3"]) == 64


async def test_a_path_outside_the_grant_is_refused_before_reading(tmp_path):
    inside = tmp_path / "in"
    inside.mkdir()
    (tmp_path / "b.json").write_text(json.dumps(BUNDLE))
    ctx, _ = make_ctx(inside)
    assert (await fails("nika:decide", {"bundle": "../b.json", "evidence": SNAP}, ctx)).code == "NIKA-SEC-004"


async def test_inline_bundle_needs_no_filesystem(tmp_path):
    ctx, _ = make_ctx(tmp_path)
    assert (await call("nika:decide", {"bundle": BUNDLE, "evidence": SNAP}, ctx))["outcome"] == "recommend"


@pytest.mark.parametrize(
    "text, code",
    [
        ("{not json", "NIKA-DECIDE-001"),
        ('{"a": 1, "a": 2}', "NIKA-DECIDE-001"),
        ('{"w": NaN}', "NIKA-DECIDE-001"),
        ("missing", "NIKA-DECIDE-001"),
    ],
)
async def test_bad_bundle_files_are_decide_001(tmp_path, text, code):
    """Bad input: an unparsable, duplicated-key, NaN-bearing or absent bundle is a clean refusal."""
    if text != "missing":
        (tmp_path / "b.json").write_text(text)
    ctx, _ = make_ctx(tmp_path)
    assert (await fails("nika:decide", {"bundle": "b.json", "evidence": SNAP}, ctx)).code == code


async def test_a_float_weight_and_a_misfit_snapshot_carry_their_codes(tmp_path):
    ctx, _ = make_ctx(tmp_path)
    b = copy.deepcopy(BUNDLE)
    b["rules"]["dimensions"]["risk"]["terms"][0]["weight_bp"] = 0.5
    e = await fails("nika:decide", {"bundle": b, "evidence": SNAP}, ctx)
    assert e.code == "NIKA-DECIDE-001" and e.category == "validation_error"
    e = await fails(
        "nika:decide", {"bundle": BUNDLE, "evidence": snap(item("open_incidents", "1", source="pager"))}, ctx
    )
    assert e.code == "NIKA-DECIDE-002" and e.details["where"] == "/evidence/0/value"


def test_cli_exit_codes(tmp_path):
    """`nika decide`: exit 0 for any outcome (defer included), 2 for DECIDE-001/002, 1 unreadable."""
    (tmp_path / "b.json").write_text(json.dumps(BUNDLE))
    (tmp_path / "defer.json").write_text(json.dumps(snap(item("open_incidents", 0, source="pager"))))
    (tmp_path / "bad.json").write_text(json.dumps(snap(item("nope", 0, source="pager"))))

    def run(*argv):
        return subprocess.run(
            [sys.executable, "-m", "nika", "decide", *argv],
            capture_output=True,
            text=True,
            cwd=tmp_path,
            env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"},
            check=False,
        )

    ok = run("b.json", "defer.json")
    assert ok.returncode == 0 and json.loads(ok.stdout)["outcome"] == "defer"
    bad = run("b.json", "bad.json")
    assert bad.returncode == 2 and "NIKA-DECIDE-002" in bad.stderr and not bad.stdout
    assert run("b.json", "absent.json").returncode == 1


def test_the_example_records_the_bundle_read_and_the_decision_in_the_trace(tmp_path):
    """Spec 17: the bundle read is a permit_checked frame and the decision an event frame carrying
    the receipt's digest; the journal verifies clean."""
    import shutil

    shutil.copytree(ROOT / "examples", tmp_path / "ex")
    env = {"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"}
    argv = [sys.executable, "-m", "nika", "run", "deploy-gate.nika.yaml", "--trace-dir", str(tmp_path / "t")]
    p = subprocess.run(argv, capture_output=True, text=True, cwd=tmp_path / "ex", env=env, check=False)
    assert p.returncode == 0, p.stderr
    (journal,) = (tmp_path / "t").glob("*.ndjson")
    frames = [json.loads(line) for line in journal.read_text().splitlines()]
    fields = [{f["key"]: f["value"] for f in fr.get("fields", [])} for fr in frames]
    assert any(f.get("plane") == "fs" and f.get("decision") == "allow" for f in fields)
    (decided,) = [f for f in fields if f.get("event") == "decide"]
    assert decided["outcome"] == "recommend" and len(decided["receipt_blake3"]) == 64
    v = subprocess.run([sys.executable, "-m", "nika", "trace", "verify", str(journal)], env=env, check=False)
    assert v.returncode == 0
