"""`nika dap` never shows a secret: the debugger does not resolve one, and every value it shows
(variables, evaluations, a replay's recorded frames) is masked as the journal masks it."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "dap"))
from dap_client import Client


def _write(tmp: Path, name: str, text: str) -> Path:
    p = tmp / name
    p.write_text(text, encoding="utf-8")
    return p


def _line(path: Path, needle: str) -> int:
    return next(i for i, line in enumerate(path.read_text().splitlines(), 1) if needle in line)


SECRET = "s3cr3t-value-9876"
SECRETS = """nika: v1
workflow:
  id: masked
permits:
  exec: ["echo"]
secrets:
  api:
    source: env
    key: NIKA_DAP_TEST_KEY
    egress: [{ to: "exec" }]
tasks:
  leak:
    exec:
      command: ["echo", "key=${{ secrets.api }}"]
  after_leak:
    with:
      seen: ${{ tasks.leak.output }}
    exec:
      command: ["echo", "${{ with.seen }}"]
"""


async def test_a_secret_stays_masked_in_every_view(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("NIKA_DAP_TEST_KEY", SECRET)
    wf = _write(tmp_path, "s.nika.yaml", SECRETS)
    c = Client(tmp_path)
    await c.start({"program": str(wf)}, {str(wf): [{"line": _line(wf, "leak:")}, {"line": _line(wf, "after_leak:")}]})
    stop = await c.stopped()
    v = await c.variables_of(stop["body"]["threadId"])
    assert "reads secrets" in v["Task"]["exec"]["command"]  # never resolved by the debugger
    await c.request("continue", {"threadId": stop["body"]["threadId"]})
    stop = await c.stopped()
    v = await c.variables_of(stop["body"]["threadId"])
    assert "«redacted»" in v["Task"]["with"]["seen"]
    assert "«redacted»" in v["Settled tasks"]["leak"]["output"]
    ev = await c.request("evaluate", {"expression": "with.seen", "frameId": 1, "context": "watch"})
    assert ev["success"] and "«redacted»" in ev["body"]["result"]
    refused = await c.request("evaluate", {"expression": "secrets.api", "frameId": 1})
    assert refused["success"] is False
    await c.request("continue", {"threadId": stop["body"]["threadId"]})
    assert await c.finish() == 0
    assert SECRET not in repr(c._seen)


async def test_a_replay_of_a_run_with_a_secret_shows_it_masked(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("NIKA_DAP_TEST_KEY", SECRET)
    wf = _write(tmp_path, "s.nika.yaml", SECRETS)
    c = Client(tmp_path)
    await c.start({"program": str(wf), "traceDir": "traces"})
    assert await c.finish() == 0
    (trace,) = (tmp_path / "traces").rglob("*.ndjson")
    r = Client(tmp_path)
    await r.start({"trace": str(trace), "program": str(wf)})
    shown = []
    for _ in range(2):
        await r.stopped()
        shown.append(await r.variables_of(1))
        await r.request("next", {"threadId": 1})
    assert await r.finish() == 0
    assert "«redacted»" in repr(shown) and SECRET not in repr(r._seen)
