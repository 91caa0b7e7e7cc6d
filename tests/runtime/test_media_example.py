"""examples/media-assets.nika.yaml runs offline under `mock`, and twice gives the same artifacts."""

from __future__ import annotations

from pathlib import Path

from rt_helpers import run_yaml

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "media-assets.nika.yaml"


def test_the_media_example_runs_offline_and_reruns_identically(tmp_path):
    first = run_yaml(EXAMPLE.read_text(), tmp_path)
    assert {t: r.status for t, r in first.tasks.items()} == dict.fromkeys(
        ("hero", "styled", "narrate", "spend"), "success"
    )
    assert first.tasks["styled"].output["path"] == "./assets/og/hero-styled.png"
    assert (tmp_path / "assets" / "spend.vl.json").is_file()
    again = run_yaml(EXAMPLE.read_text(), tmp_path)
    assert again.tasks["spend"].output["wrote"] is False and again.tasks["styled"].output["skipped_existing"] is True
    assert again.tasks["hero"].output["images"][0]["sha256"] == first.tasks["hero"].output["images"][0]["sha256"]
    assert again.tasks["narrate"].output["audio"]["sha256"] == first.tasks["narrate"].output["audio"]["sha256"]
