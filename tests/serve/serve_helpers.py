"""Shared by tests/serve and tests/security/test_sec_serve.py: a served root with workflows, the
app in-process, and a paused run made in-process (no subprocess) that the server reads as its own."""

from __future__ import annotations

import io
import json
import os
import sys
from pathlib import Path
from typing import Any

from starlette.testclient import TestClient

TOKEN = "test-token-" + "x" * 40
AUTH = {"Authorization": f"Bearer {TOKEN}"}
BASE = "http://127.0.0.1:8765"

RELEASE = """nika: v1
workflow:
  id: release
model: mock/echo
inputs:
  version: { type: string, default: "v2.1" }
permits:
  tools: ["nika:prompt"]
  exec: ["echo"]
tasks:
  notes:
    infer: { prompt: "release notes for ${{ inputs.version }}", max_tokens: 200 }
  approve:
    with: { notes: "${{ tasks.notes.output }}" }
    invoke:
      tool: "nika:prompt"
      args: { mode: confirm, message: "Publish? ${{ with.notes }}" }
  publish:
    with: { ok: "${{ tasks.approve.output }}" }
    when: ${{ with.ok == true }}
    exec: { command: ["echo", "published"] }
outputs:
  published: ${{ tasks.publish.output }}
"""

BROKEN = """nika: v1
workflow:
  id: broken
model: mock/echo
tasks:
  a:
    infer: { prompt: "${{ tasks.nope.output }}" }
"""


def served_root(tmp_path: Path) -> Path:
    root = tmp_path / "served"
    root.mkdir()
    (root / "release.nika.yaml").write_text(RELEASE, encoding="utf-8")
    (root / "broken.nika.yaml").write_text(BROKEN, encoding="utf-8")
    return root


def make_app(root: Path, **cfg: Any) -> Any:
    from nika.commands.serve import admit_like_run
    from nika.serve.app import create_app
    from nika.serve.config import ServeConfig

    clock = cfg.pop("clock", None)
    config = ServeConfig(
        roots=(os.path.realpath(root),),
        token=TOKEN,
        state_dir=root / ".nika" / "serve",
        python=sys.executable,
        **cfg,
    )
    kw = {"clock": clock} if clock is not None else {}
    return create_app(config, admit_like_run, **kw)


def client(app: Any) -> TestClient:
    return TestClient(app, base_url=BASE)


def paused_run(app: Any, root: Path, monkeypatch: Any, version: str = "v2.1") -> dict[str, Any]:
    """A run of release.nika.yaml paused at `approve`, run in-process by ``nika run`` itself and
    recorded as the server records an attempt it started (its report file, its events file)."""
    from nika.commands.run import run_command

    store = app.store
    rec = {
        "id": "20260101T000000Z-0000abcd",
        "workflow": str(Path(os.path.realpath(root)) / "release.nika.yaml"),
        "root": os.path.realpath(root),
        "trigger": "api",
        "created": 0.0,
        "inputs": {"version": version},
        "attempts": [{"n": 1, "pid": 0, "started": 0.0, "resume": None, "exit": 4}],
        "answers": [],
        "refused": None,
    }
    folder = store.dir / rec["id"]
    folder.mkdir(parents=True)
    monkeypatch.chdir(root)
    out, err = io.StringIO(), io.StringIO()
    code = run_command(
        "release.nika.yaml",
        output_format="json",
        var_pairs=[f"version={json.dumps(version)}"],
        events=f"ndjson:{folder / 'a1.events.ndjson'}",
        out=out,
        err=err,
    )
    assert code == 4, err.getvalue()
    (folder / "a1.report.json").write_text(out.getvalue(), encoding="utf-8")
    (folder / "run.json").write_text(json.dumps(rec), encoding="utf-8")
    return rec
