"""The run record on disk: two requests on one run never lose each other's change."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

from serve_helpers import AUTH, client, make_app, paused_run, served_root


def test_a_stale_read_does_not_drop_an_answer_given_meanwhile(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root = served_root(tmp_path)
    app = make_app(root)
    rec = paused_run(app, root, monkeypatch)
    stale = app.store.record(rec["id"])  # a GET that read the record before the answer came
    monkeypatch.setattr(app.store, "_launch", lambda r, resume: None)
    (p,) = client(app).get(f"/runs/{rec['id']}?events=0", headers=AUTH).json()["pending"]
    assert stale["attempts"][0].get("settled") is None
    ok = client(app).post(
        f"/runs/{rec['id']}/answers",
        json={"task": "approve", "value": True, "shown_hash": p["shown_hash"]},
        headers=AUTH,
    )
    assert ok.status_code == 200
    app.store.view(stale)  # settles what it read; must not write its stale copy back
    on_disk = app.store.record(rec["id"])
    assert [a["task"] for a in on_disk["answers"]] == ["approve"]
    assert on_disk["attempts"][0]["settled"] is True
