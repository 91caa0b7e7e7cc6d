"""`nika check` over many files on several processes prints exactly what a serial run prints
(nika/commands/check_pool.py)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from nika.commands import check_pool

ROOT = Path(__file__).resolve().parents[2]

GOOD = 'nika: v1\nworkflow: {{ id: w{i} }}\ntasks:\n  t: {{ infer: {{ model: mock/echo, prompt: "x{i}" }} }}\n'
BAD = (
    "nika: v1\nworkflow: {{ id: b{i} }}\ntasks:\n"
    "  t:\n    after: {{ nope{i}: success }}\n    exec: {{ command: [make] }}\n"
)


def _nika(args: list[str], cwd: Path, jobs: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "NIKA_JOBS": jobs, "PYTHONPATH": str(ROOT)}
    return subprocess.run([sys.executable, "-m", "nika", *args], cwd=cwd, env=env, capture_output=True, text=True)


@pytest.mark.skipif(check_pool.jobs(10_000) < 2 and (os.cpu_count() or 1) < 2, reason="one core: no pool to compare")
def test_a_pooled_run_prints_what_a_serial_run_prints(tmp_path: Path) -> None:
    for i in range(check_pool.MIN_FILES + 12):
        (tmp_path / f"f{i:03d}.nika.yaml").write_text((BAD if i % 3 == 0 else GOOD).format(i=i))
    (tmp_path / "broken.nika.yaml").write_text("nika: v1\nworkflow: [\n")
    for fmt in ("full", "concise", "sarif"):
        serial = _nika(["check", "--output-format", fmt, "."], tmp_path, "1")
        pooled = _nika(["check", "--output-format", fmt, "."], tmp_path, "2")
        assert (pooled.returncode, pooled.stdout, pooled.stderr) == (serial.returncode, serial.stdout, serial.stderr)
        assert serial.returncode != 0 and "NIKA-DAG-002" in serial.stdout


def test_the_pool_is_used_only_past_the_threshold(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("NIKA_JOBS", "4")
    assert check_pool.jobs(check_pool.MIN_FILES - 1) == 1
    monkeypatch.setenv("NIKA_JOBS", "1")
    assert check_pool.jobs(10 * check_pool.MIN_FILES) == 1


def test_without_nika_jobs_the_pool_takes_only_idle_cores(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("NIKA_JOBS", raising=False)
    monkeypatch.setattr(check_pool, "_cores", lambda: 4)
    monkeypatch.setattr(check_pool, "_busy", lambda: 3)
    assert check_pool.jobs(10 * check_pool.MIN_FILES) == 1  # one idle core: serial
    monkeypatch.setattr(check_pool, "_busy", lambda: 0)
    assert check_pool.jobs(10 * check_pool.MIN_FILES) == 4
    monkeypatch.setenv("NIKA_JOBS", "2")  # asked for: taken whatever the load
    monkeypatch.setattr(check_pool, "_busy", lambda: 4)
    assert check_pool.jobs(10 * check_pool.MIN_FILES) == 2
