"""`nika check` and the certificate: always in `json` (a `certificate` per file report, `null`
without a workflow), in `full`/`concise` only behind `--certificate`, never loaded otherwise."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from test_cli import ROOT, nika_here

PRICED = """\
nika: v1
workflow:
  id: priced
model: openai/gpt-x
tasks:
  draft:
    for_each: [fr, de]
    infer: { prompt: "Write in ${{ item }}", max_tokens: 1000 }
  review:
    with: { d: "${{ tasks.draft.output }}" }
    infer: { prompt: "Review ${{ with.d }}", max_tokens: 500 }
"""
PRICES = '{"openai/gpt-x": {"input": 0.15, "output": 0.6}}'


@pytest.fixture
def files(tmp_path: Path) -> dict[str, Path]:
    out = {
        "priced": tmp_path / "priced.nika.yaml",
        "broken": tmp_path / "broken.nika.yaml",
    }
    out["priced"].write_text(PRICED, encoding="utf-8")
    out["broken"].write_text("nika: v1\ntasks: [\n", encoding="utf-8")
    return out


def _reports(stdout: str) -> dict[str, dict[str, object]]:
    return {Path(str(r["path"])).name: r for r in json.loads(stdout)["reports"]}


def test_json_carries_a_certificate_per_report(files: dict[str, Path], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("NIKA_PRICES", PRICES)
    missing = str(files["priced"].with_name("gone.nika.yaml"))
    proc = nika_here("check", "--output-format", "json", str(files["priced"]), str(files["broken"]), missing)
    assert proc.returncode == 2, proc.stderr
    reports = _reports(proc.stdout)
    assert list(reports["priced.nika.yaml"]) == ["path", "clean", "findings", "certificate"]  # added last
    assert reports["broken.nika.yaml"]["certificate"] is None  # no workflow: no certificate
    assert reports["gone.nika.yaml"]["certificate"] is None
    cert = reports["priced.nika.yaml"]["certificate"]
    assert isinstance(cert, dict)
    assert cert["certificate_version"] == 1 and cert["workflow"] == "priced"
    assert cert["plan"]["waves"] == [["draft"], ["review"]] and cert["plan"]["critical_path"] == ["draft", "review"]
    cost = cert["cost"]
    assert cost["total"]["kind"] == "ceiling"
    assert cost["total"]["usd"] == pytest.approx((2 * 1000 + 500) * 0.6 / 1e6)
    assert cost["pricing"]["source"] == "NIKA_PRICES over the model catalog"  # its rows win over the catalog's
    assert cert["termination"]["verdict"] == "bounded" and cert["risk"]["grade"] == "low"
    assert set(cert) == {
        "certificate_version",
        "workflow",
        "plan",
        "cost",
        "resources",
        "termination",
        "effects",
        "risk",
    }


def test_json_without_prices_says_unknown(files: dict[str, Path], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("NIKA_PRICES", raising=False)
    proc = nika_here("check", "--output-format", "json", str(files["priced"]))
    cost = _reports(proc.stdout)["priced.nika.yaml"]["certificate"]["cost"]  # type: ignore[index]
    assert cost["total"] == {"kind": "unknown", "usd": None}
    assert cost["unpriced"] == ["draft", "review"]


def test_full_output_shows_the_certificate_only_when_asked(
    files: dict[str, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("NIKA_PRICES", PRICES)
    plain = nika_here("check", str(files["priced"]))
    assert plain.returncode == 0 and "certificate" not in plain.stdout
    proc = nika_here("check", "--certificate", str(files["priced"]), str(files["broken"]))
    assert proc.returncode == 2
    out = proc.stdout
    assert f"certificate · {files['priced']} (priced)" in out
    for label in ("plan", "cost", "runs", "termination", "effects", "risk"):
        assert f"\n  {label}" in out
    assert "cost         ≤ $0.0015 (prices from NIKA_PRICES over the model catalog)" in out
    assert "draft  openai/gpt-x  1000 tokens × 2 items  ≤ $0.0012" in out
    assert "risk         low" in out
    assert f"certificate · {files['broken']}\n  none: the file holds no workflow to certify" in out
    # after the findings, before the closing summary
    assert out.index("NIKA-PARSE-001") < out.index(f"certificate · {files['broken']}") < out.index("Found 1 error")


def test_concise_output_takes_the_flag_too(files: dict[str, Path], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("NIKA_PRICES", raising=False)
    proc = nika_here("check", "--output-format", "concise", "--certificate", str(files["priced"]))
    assert proc.returncode == 0
    assert "certificate · " in proc.stdout and "unknown: no price for `draft`, `review`" in proc.stdout


@pytest.mark.parametrize("fmt", ["sarif", "github"])
def test_certificate_with_a_format_that_cannot_hold_it_is_bad_usage(files: dict[str, Path], fmt: str) -> None:
    proc = nika_here("check", "--output-format", fmt, "--certificate", str(files["priced"]))
    assert proc.returncode == 1 and "--certificate" in proc.stderr and not proc.stdout


def test_help_documents_the_flag() -> None:
    proc = nika_here("check", "--help")
    assert "--certificate" in proc.stdout and "NIKA_PRICES" in proc.stdout


def test_a_plain_check_never_loads_the_certificate() -> None:
    code = (
        "import sys, io, contextlib\n"
        "from nika.cli import main\n"
        "with contextlib.redirect_stdout(io.StringIO()):\n"
        "    main(['check', 'examples'])\n"
        "    plain = 'checker.views.certificate' in sys.modules\n"
        "    main(['check', '--output-format', 'json', 'examples'])\n"
        "print(plain, 'checker.views.certificate' in sys.modules)\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT)
    assert proc.stdout.strip() == "False True", proc.stdout + proc.stderr
