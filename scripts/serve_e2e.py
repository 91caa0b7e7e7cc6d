"""`nika serve`'s dashboard in a real headless Chromium (Playwright with the system chromium): the
named `.ci/run serve-e2e` step, not the default suite. It fails, never skips, when the browser or
playwright is missing.

It starts `nika serve` on loopback over a temporary root, then in the browser: signs in with the
token, starts a run from the dashboard's form, watches its first task turn green in the DAG,
approves the gate with the Approve button (the form sends the shown hash back), and sees the run
finish; then triggers a second run by a signed webhook and approves it from its run page too.
Both journals must verify clean (`nika trace verify`). Screenshots go to ARTIFACTS (default
.nika/serve-e2e/, gitignored).

usage: python3 scripts/serve_e2e.py [--chromium PATH] [--artifacts DIR]
"""

from __future__ import annotations

import argparse
import hashlib
import hmac
import json
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests" / "serve"))
from serve_helpers import RELEASE  # the workflow the suite's serve tests run

TOKEN = "e2e-" + "k" * 40
DEADLINE_S = 60.0
STEP_MS = 15_000


def fail(message: str) -> None:
    print(f"serve-e2e: FAIL: {message}", file=sys.stderr)
    sys.exit(1)


def until(what: str, probe, deadline: float = DEADLINE_S):
    end = time.monotonic() + deadline
    while time.monotonic() < end:
        got = probe()
        if got:
            return got
        time.sleep(0.1)
    fail(f"never happened: {what}")


def browse(page, base: str, api, art: Path, journals: list[str]) -> None:
    """The dashboard steps (any failure: the page is kept beside the screenshots)."""
    import httpx

    page.goto(base + "/")
    page.fill("#token", TOKEN)
    page.click("#signin")
    page.wait_for_selector("#start-run", timeout=STEP_MS)
    page.select_option("#workflow", "release.nika.yaml")
    page.fill("#inputs", json.dumps({"version": "v-browser"}))
    page.click("#start-run")
    page.wait_for_selector("#dag")
    page.wait_for_selector("rect[data-task='notes'][data-state='success']", timeout=DEADLINE_S * 1000)
    page.screenshot(path=str(art / "1-first-task-green.png"))
    page.wait_for_selector("#approve", timeout=DEADLINE_S * 1000)
    assert "release notes for v-browser" in page.inner_text(".gate .message")
    page.screenshot(path=str(art / "2-gate.png"))
    page.click("#approve")
    page.wait_for_selector("#state:text('success')", timeout=DEADLINE_S * 1000)
    page.wait_for_selector("rect[data-task='publish'][data-state='success']", timeout=DEADLINE_S * 1000)
    page.screenshot(path=str(art / "3-finished.png"))
    run_id = page.url.rsplit("/", 1)[-1]
    doc = api.get(f"/runs/{run_id}").json()
    if doc["workflow_state"] != "success" or doc["answers"][0]["by"] != "serve dashboard":
        fail(f"the dashboard run ended {doc['workflow_state']}: {doc.get('error')}")
    journals.append(doc["journal"])

    body = json.dumps({"version": "v-hook"}).encode()
    sig = "sha256=" + hmac.new(b"hook", body, hashlib.sha256).hexdigest()
    r = httpx.post(base + "/hooks/release", content=body, headers={"X-Hub-Signature-256": sig})
    if r.status_code != 201:
        fail(f"the webhook was answered {r.status_code}: {r.text}")
    hook_id = r.json()["id"]
    page.goto(f"{base}/ui/runs/{hook_id}")
    page.wait_for_selector("#approve", timeout=DEADLINE_S * 1000)
    page.click("#approve")
    page.wait_for_selector("#state:text('success')", timeout=DEADLINE_S * 1000)
    page.goto(base + "/")
    page.wait_for_selector(f"#runs a[href='/ui/runs/{hook_id}']")
    page.screenshot(path=str(art / "4-runs-list.png"))
    journals.append(api.get(f"/runs/{hook_id}").json()["journal"])


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--chromium", default=os.environ.get("CHROMIUM", "/usr/bin/chromium"))
    ap.add_argument("--artifacts", default=".nika/serve-e2e")
    args = ap.parse_args()
    if not os.access(args.chromium, os.X_OK):
        fail(f"no chromium at {args.chromium} (apt-get install -y chromium, or set CHROMIUM)")
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        fail("python3 cannot import playwright (pip install playwright)")
    import httpx

    art = Path(args.artifacts).resolve()
    art.mkdir(parents=True, exist_ok=True)
    for old in art.glob("*"):
        old.unlink()
    work = Path(tempfile.mkdtemp(prefix="nika-serve-e2e-"))
    root = work / "served"
    root.mkdir()
    (root / "release.nika.yaml").write_text(RELEASE, encoding="utf-8")
    (root / "nika.toml").write_text(
        '[serve.webhooks.release]\nworkflow = "release.nika.yaml"\nsecret_env = "E2E_HOOK_SECRET"\n', encoding="utf-8"
    )
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    env = {**os.environ, "NIKA_SERVE_TOKEN": TOKEN, "E2E_HOOK_SECRET": "hook", "XDG_CONFIG_HOME": str(work / "cfg")}
    log = open(art / "server.log", "wb")  # noqa: SIM115 - closed in finally
    server = subprocess.Popen(
        [sys.executable, "-m", "nika", "serve", str(root), "--port", str(port)],
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    base = f"http://127.0.0.1:{port}"
    api = httpx.Client(base_url=base, timeout=30, headers={"Authorization": f"Bearer {TOKEN}"})
    journals: list[str] = []
    try:

        def up() -> bool:
            if server.poll() is not None:
                fail(f"nika serve exited {server.returncode}; see {art / 'server.log'}")
            try:
                return api.get("/healthz").status_code == 200
            except httpx.TransportError:
                return False

        until("the server answers", up)
        with sync_playwright() as pw:
            browser = pw.chromium.launch(executable_path=args.chromium, args=["--no-sandbox"])
            page = browser.new_page()
            try:
                browse(page, base, api, art, journals)
            except Exception as exc:
                (art / "failure.html").write_text(page.content(), encoding="utf-8")
                page.screenshot(path=str(art / "failure.png"))
                fail(f"{type(exc).__name__}: {str(exc).splitlines()[0]} (the page: {art / 'failure.html'})")
            browser.close()
        for j in journals:
            v = subprocess.run(
                [sys.executable, "-m", "nika", "trace", "verify", j], cwd=root, capture_output=True, text=True
            )
            if v.returncode != 0:
                fail(f"nika trace verify {j}: exit {v.returncode}: {v.stdout}{v.stderr}")
    finally:
        server.send_signal(signal.SIGTERM)
        server.wait(timeout=30)
        log.close()
    print(f"serve-e2e: ok: 2 runs approved in Chromium, journals verified; screenshots in {art}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
