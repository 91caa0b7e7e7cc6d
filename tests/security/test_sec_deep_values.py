"""Deeply nested values never crash or hang the engine or the verifier (09-types: bad values are
typed failures; issue 18: deep JSON from `exec`, `nika trace verify` on a deep journal line).

A value nested hundreds of levels deep overflows every recursive walker (the report, the
journal, the redactor); the engine refuses it where it enters, and the verifier reads what it
can of a frame it cannot parse instead of crashing.
"""

from __future__ import annotations

import hashlib
import subprocess
import sys
from pathlib import Path

from runtime.journal.write import GENESIS_TAG, verify

ROOT = Path(__file__).resolve().parents[2]


def test_a_deep_jq_result_is_a_typed_failure(run) -> None:
    """`reduce range(900) as $i (0; [.])` under a jq-only grant: JQ-001, and the run ends."""
    result = run(
        """nika: v1
workflow: { id: deep }
permits: { tools: ["nika:jq"] }
tasks:
  d:
    invoke: { tool: "nika:jq", args: { expression: "reduce range(900) as $i (0; [.])" } }
"""
    )
    err = result.tasks["d"].error
    assert result.workflow_state == "failure"
    assert err is not None and err["code"] == "NIKA-BUILTIN-JQ-001" and "nests deeper" in err["message"], err["message"]


def test_deep_json_from_exec_is_the_decode_failure(run, tmp_path: Path) -> None:
    """300 levels decode fine in Python but are refused as EXEC-001 (the decode failure), not IMPL-001."""
    (tmp_path / "deep.py").write_text("print('[' * 300 + ']' * 300)\n")
    result = run(
        f"""nika: v1
workflow: {{ id: deep }}
permits: {{ exec: ["{sys.executable}"] }}
tasks:
  d:
    exec:
      command: ["{sys.executable}", "{tmp_path / "deep.py"}"]
      decode: json
"""
    )
    err = result.tasks["d"].error
    assert err is not None and err["code"] == "NIKA-EXEC-001" and "nests too deeply" in err["message"], err


def deep_journal(depth: int) -> bytes:
    genesis = hashlib.sha256(GENESIS_TAG).hexdigest()
    deep = "[" * depth + "]" * depth
    return (
        f'{{"chain":"{genesis}","correlation":null,"fields":[{{"key":"x","value":{deep}}}],'
        '"id":{"uuid":"u"},"kind":"workflow_started","run":null,"timestamp":1}\n'
    ).encode()


def test_trace_verify_reads_a_deep_line_without_crashing(tmp_path: Path) -> None:
    data = deep_journal(200_000)
    verdict = verify(data)
    assert verdict["verdict"] == "finding"
    assert any("nests too deeply" in p["problem"] for p in verdict["problems"])
    (tmp_path / "deep.ndjson").write_bytes(data)
    proc = subprocess.run(
        [sys.executable, "-m", "nika", "trace", "verify", str(tmp_path / "deep.ndjson")],
        env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 1 and "Traceback" not in proc.stderr, proc.stderr[-500:]
    assert "finding" in proc.stdout


def test_the_prologue_keeps_the_source_identity_fields(run) -> None:
    """17 §prologue: `workflow_sha256`, `workflow_sha256_lf` and `semantic_hash` are never dropped."""
    result = run(
        "nika: v1\r\nworkflow: { id: p }\r\ntasks:\r\n  t:\r\n"
        "    invoke: { tool: 'nika:jq', args: { expression: '1' } }\r\n"
    )
    started = next(e for e in result.events if e["type"] == "workflow.started")
    assert {"workflow_sha256", "workflow_sha256_lf", "semantic_hash"} <= set(started)
    assert started["workflow_sha256"] != started["workflow_sha256_lf"]  # CRLF source: the two differ
    assert started["semantic_hash"] is None and "not available" in started["semantic_hash_note"]
