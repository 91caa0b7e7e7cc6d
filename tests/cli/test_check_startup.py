"""`nika check` pauses the garbage collector while the checker loads; a caller in the same
process (a test, an embedder) gets the collector back exactly as it was."""

from __future__ import annotations

import gc
import io
from pathlib import Path

import pytest

from nika.cli import main

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "summarize-article.nika.yaml"


@pytest.mark.parametrize("enabled", [True, False])
def test_the_collector_is_left_as_it_was(enabled: bool, capsys: pytest.CaptureFixture[str]) -> None:
    was, frozen = gc.isenabled(), gc.get_freeze_count()
    try:
        (gc.enable if enabled else gc.disable)()
        assert main(["check", "--output-format", "concise", str(EXAMPLE)]) == 0
        assert gc.isenabled() is enabled
        assert gc.get_freeze_count() == frozen
    finally:
        (gc.enable if was else gc.disable)()
    assert "no findings" in capsys.readouterr().out


def test_the_collector_runs_again_after_the_first_file() -> None:
    from nika.heap import paused as loading_pause

    gc.enable()
    before = gc.get_freeze_count()
    with loading_pause() as loaded:
        assert not gc.isenabled()
        loaded()
        assert gc.isenabled()
    assert gc.isenabled() and gc.get_freeze_count() == before


def test_objects_the_caller_froze_stay_frozen(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    """A server that froze its heap before forking (the copy-on-write pattern) and then checks or
    runs a workflow in process keeps its heap frozen, and gets no more frozen than it had."""
    from nika.commands.run import run_command

    was = gc.isenabled()
    gc.freeze()
    try:
        frozen = gc.get_freeze_count()
        assert frozen > 0
        assert main(["check", "--output-format", "concise", str(EXAMPLE)]) == 0
        # still frozen, nothing added (frozen objects that die meanwhile leave the count)
        assert 0.9 * frozen <= gc.get_freeze_count() <= frozen
        wf = tmp_path / "one.nika.yaml"
        wf.write_text("nika: v1\nworkflow: { id: one }\ntasks:\n  a:\n    infer: { model: mock/echo, prompt: hi }\n")
        out, err = io.StringIO(), io.StringIO()
        assert run_command(str(wf), output_format="json", trace_dir=str(tmp_path / "t"), out=out, err=err) == 0
        assert 0.9 * frozen <= gc.get_freeze_count() <= frozen and gc.isenabled() is was
    finally:
        gc.unfreeze()
        (gc.enable if was else gc.disable)()
    capsys.readouterr()
