"""Attacks on `nika serve` (SECURITY.md, "nika serve"): no token, a wrong token, a forged Host (DNS
rebinding), a cross-site form post, unsigned and mis-signed webhooks, oversized bodies, path
escapes, a refused workflow, an answer whose shown hash no longer matches, a second answer, CORS.
All in-process (Starlette's TestClient); no run is started except where a test says so."""

from __future__ import annotations

import hashlib
import hmac
import json
import os
import stat
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "serve"))

from serve_helpers import AUTH, TOKEN, client, make_app, paused_run, served_root


@pytest.fixture
def root(tmp_path: Path) -> Path:
    return served_root(tmp_path)


@pytest.fixture
def app(root: Path):
    return make_app(root)


def _no_run_started(app) -> None:
    for rid in app.store.ids():
        assert app.store.record(rid)["attempts"] == [], "a refused request started a run"


def test_no_token_and_a_wrong_token_are_401_on_every_api_endpoint(app) -> None:
    c = client(app)
    for headers in (
        {},
        {"Authorization": "Bearer wrong"},
        {"Authorization": TOKEN},
        {"Authorization": "Basic " + TOKEN},
    ):
        assert c.post("/runs", json={"workflow": "release.nika.yaml"}, headers=headers).status_code == 401
        assert c.get("/runs", headers=headers).status_code == 401
        assert c.get("/runs/x", headers=headers).status_code == 401
        assert c.post("/runs/x/answers", json={}, headers=headers).status_code == 401
        assert c.post("/runs/x/cancel", headers=headers).status_code == 401
        assert c.get("/", headers=headers).status_code == 401  # the dashboard: the sign-in form only
    assert c.get("/runs", headers=AUTH).status_code == 200
    _no_run_started(app)


def test_a_forged_host_is_refused_before_anything_else(app) -> None:
    c = client(app)
    for host in ("evil.example", "evil.example:8765", "127.0.0.1.evil.example", "localhost.", ""):
        r = c.get("/runs", headers={**AUTH, "Host": host})
        assert r.status_code == 421, host
        r = c.post("/hooks/x", content=b"{}", headers={"Host": host})
        assert r.status_code == 421, host
    for host in ("127.0.0.1:8765", "localhost:8765", "[::1]:8765"):
        assert c.get("/runs", headers={**AUTH, "Host": host}).status_code == 200, host


def test_a_cross_site_form_post_is_refused(app) -> None:
    c = client(app)
    signed_in = c.post("/ui/login", data={"token": TOKEN}, follow_redirects=False)
    assert signed_in.status_code == 303
    cookie = signed_in.cookies.get("nika_serve_session")
    assert cookie and cookie != TOKEN  # the cookie is derived, never the token itself
    assert "httponly" in signed_in.headers["set-cookie"].lower()
    assert "samesite=strict" in signed_in.headers["set-cookie"].lower()
    form = {"workflow": "release.nika.yaml", "inputs": "{}"}
    # the session cookie alone (what a cross-site page's form would carry): no CSRF field
    assert c.post("/ui/runs", data=form, follow_redirects=False).status_code == 403
    # a CSRF field that is not this server's
    assert c.post("/ui/runs", data={**form, "csrf": "0" * 64}, follow_redirects=False).status_code == 403
    # the right CSRF value posted from another origin
    page = c.get("/").text
    csrf = page.split("name=csrf value='")[1].split("'")[0]
    r = c.post(
        "/ui/runs", data={**form, "csrf": csrf}, headers={"Origin": "http://evil.example"}, follow_redirects=False
    )
    assert r.status_code == 403
    # the JSON API never takes the cookie for a mutation (only a bearer token)
    assert c.post("/runs", json={"workflow": "release.nika.yaml"}).status_code == 401
    # a sign-in posted from another origin
    other = client(app)
    r = other.post(
        "/ui/login", data={"token": TOKEN}, headers={"Origin": "http://evil.example"}, follow_redirects=False
    )
    assert r.status_code == 403
    assert other.post("/ui/login", data={"token": "wrong"}, follow_redirects=False).status_code == 401
    _no_run_started(app)


def test_the_dashboard_cannot_be_framed_and_sends_no_cors(app) -> None:
    c = client(app)
    r = c.get("/runs", headers={**AUTH, "Origin": "http://evil.example"})
    assert "access-control-allow-origin" not in {k.lower() for k in r.headers}
    assert r.headers["x-frame-options"] == "DENY"
    assert "frame-ancestors 'none'" in r.headers["content-security-policy"]
    pre = c.options("/runs", headers={"Origin": "http://evil.example", "Access-Control-Request-Method": "POST"})
    assert pre.status_code in (401, 405)
    assert "access-control-allow-origin" not in {k.lower() for k in pre.headers}


def _hook_app(root: Path, monkeypatch: pytest.MonkeyPatch):
    from nika.serve.config import Webhook

    monkeypatch.setenv("NIKA_TEST_HOOK_SECRET", "s3cret")
    hook = Webhook("release", str(Path(os.path.realpath(root)) / "release.nika.yaml"), "NIKA_TEST_HOOK_SECRET")
    return make_app(root, webhooks=(hook,))


def test_unsigned_and_mis_signed_webhooks_are_401(root: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    app = _hook_app(root, monkeypatch)
    c = client(app)
    body = json.dumps({"version": "v9"}).encode()
    good = "sha256=" + hmac.new(b"s3cret", body, hashlib.sha256).hexdigest()
    wrong_key = "sha256=" + hmac.new(b"guess", body, hashlib.sha256).hexdigest()
    other_body = "sha256=" + hmac.new(b"s3cret", b"{}", hashlib.sha256).hexdigest()
    for sig in (None, "", good.replace("sha256=", "sha1="), wrong_key, other_body, good[:-2]):
        headers = {"X-Hub-Signature-256": sig} if sig is not None else {}
        assert c.post("/hooks/release", content=body, headers=headers).status_code == 401, sig
    assert c.post("/hooks/unknown", content=body, headers={"X-Hub-Signature-256": good}).status_code == 404
    _no_run_started(app)


def test_a_webhook_whose_secret_is_unset_never_runs(root: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    app = _hook_app(root, monkeypatch)
    monkeypatch.delenv("NIKA_TEST_HOOK_SECRET")
    sig = "sha256=" + hmac.new(b"", b"{}", hashlib.sha256).hexdigest()
    assert client(app).post("/hooks/release", content=b"{}", headers={"X-Hub-Signature-256": sig}).status_code == 503


def test_oversized_bodies_are_413_declared_or_streamed(root: Path) -> None:
    app = make_app(root, max_body=2048)
    c = client(app)
    big = json.dumps({"workflow": "release.nika.yaml", "inputs": {"version": "v" * 5000}})
    assert c.post("/runs", content=big, headers={**AUTH, "Content-Type": "application/json"}).status_code == 413

    def chunks():  # no Content-Length: the bound holds on what is read
        for _ in range(10):
            yield b" " * 1000

    assert c.post("/runs", content=chunks(), headers=AUTH).status_code == 413
    assert c.post("/ui/login", content=b"token=" + b"a" * 5000).status_code == 413
    _no_run_started(app)


def test_no_path_outside_the_served_roots_is_run_or_read(app, root: Path, tmp_path: Path) -> None:
    outside = tmp_path / "outside.nika.yaml"
    outside.write_text((root / "release.nika.yaml").read_text(), encoding="utf-8")
    (root / "link.nika.yaml").symlink_to(outside)
    c = client(app)
    for name in ("../outside.nika.yaml", str(outside), "link.nika.yaml", "/etc/passwd", "release.nika.yaml\x00x"):
        r = c.post("/runs", json={"workflow": name}, headers=AUTH)
        assert r.status_code in (403, 404), (name, r.text)
    assert c.post("/runs", json={"workflow": "../outside.nika.yaml"}, headers=AUTH).status_code == 403
    # not a workflow file, though under the root
    (root / "notes.txt").write_text("x", encoding="utf-8")
    assert c.post("/runs", json={"workflow": "notes.txt"}, headers=AUTH).status_code == 404
    assert c.get("/runs/..%2F..%2Fetc", headers=AUTH).status_code == 404
    _no_run_started(app)


def test_a_refused_workflow_never_runs_and_says_why(app) -> None:
    c = client(app)
    r = c.post("/runs", json={"workflow": "broken.nika.yaml"}, headers=AUTH)
    assert r.status_code == 422
    assert "NIKA-" in r.json()["error"]
    # inputs judged against the workflow's declared `inputs:`
    r = c.post("/runs", json={"workflow": "release.nika.yaml", "inputs": {"undeclared": 1}}, headers=AUTH)
    assert r.status_code == 422 and "undeclared" in r.json()["error"]
    r = c.post("/runs", json={"workflow": "release.nika.yaml", "inputs": {"version": 3}}, headers=AUTH)
    assert r.status_code == 422
    listed = c.get("/runs", headers=AUTH).json()["runs"]
    assert {x["workflow_state"] for x in listed} == {"refused"}
    _no_run_started(app)


def test_an_answer_whose_shown_hash_no_longer_matches_is_refused_and_a_ticket_is_spent_once(
    app, root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    rec = paused_run(app, root, monkeypatch)
    launched: list[str | None] = []
    monkeypatch.setattr(app.store, "_launch", lambda r, resume: launched.append(resume))
    c = client(app)
    doc = c.get(f"/runs/{rec['id']}", headers=AUTH).json()
    assert doc["workflow_state"] == "paused"
    (pending,) = doc["pending"]
    assert pending["task"] == "approve" and pending["shown_hash"].startswith("sha256:")
    assert pending["message"] == "Publish? release notes for v2.1" and pending["expires_at"] > 0
    url = f"/runs/{rec['id']}/answers"
    stale = {"task": "approve", "value": True, "shown_hash": "sha256:" + "0" * 64}
    r = c.post(url, json=stale, headers=AUTH)
    assert r.status_code == 412 and r.json()["status"] == "hash_mismatch"
    assert (
        c.post(url, json={**stale, "shown_hash": pending["shown_hash"], "value": "yes"}, headers=AUTH).status_code
        == 422
    )
    assert c.post(url, json={"task": "approve", "value": True}, headers=AUTH).status_code == 400  # no shown hash
    assert launched == []
    good = {"task": "approve", "value": True, "shown_hash": pending["shown_hash"]}
    assert c.post(url, json=good, headers=AUTH).status_code == 200
    assert len(launched) == 1 and launched[0] == doc["journal"]  # the resume runs under the claim
    again = c.post(url, json=good, headers=AUTH)  # a ticket is spent once
    assert again.status_code == 409 and again.json()["status"] == "already_claimed"
    assert len(launched) == 1
    # a deny before the gated action started revokes the allow (NEP-0013 §5); a deny is final
    assert c.post(url, json={**good, "value": False}, headers=AUTH).json()["status"] == "revoked"
    assert c.post(url, json=good, headers=AUTH).status_code == 409


def test_the_token_file_is_user_only_and_the_env_token_wins(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from nika.serve.guard import load_token

    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "cfg"))
    token, where = load_token({})
    assert len(token) >= 32 and where.endswith("serve-token")
    assert stat.S_IMODE(os.stat(where).st_mode) == 0o600
    assert stat.S_IMODE(os.stat(os.path.dirname(where)).st_mode) == 0o700
    assert load_token({}) == (token, where)  # stored: the same token on the next start
    os.chmod(where, 0o644)
    load_token({})
    assert stat.S_IMODE(os.stat(where).st_mode) == 0o600
    assert load_token({"NIKA_SERVE_TOKEN": "from-env"}) == ("from-env", "NIKA_SERVE_TOKEN")


def test_a_run_does_not_inherit_the_servers_token(app, root: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import subprocess

    seen: dict[str, object] = {}

    class FakePopen:
        pid = 1

        def __init__(self, argv, **kw):
            seen.update(kw, argv=argv)

        def poll(self):
            return None

    monkeypatch.setenv("NIKA_SERVE_TOKEN", TOKEN)
    monkeypatch.setattr(subprocess, "Popen", FakePopen)
    r = client(app).post("/runs", json={"workflow": "release.nika.yaml"}, headers=AUTH)
    assert r.status_code == 201
    assert "NIKA_SERVE_TOKEN" not in seen["env"]
    assert seen["cwd"] == os.path.realpath(root)  # the run's working directory is its served root (02)
    assert seen["argv"][1:4] == ["-m", "nika", "run"]


def test_concurrent_runs_are_bounded(root: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import subprocess

    class Running:
        pid = 1

        def __init__(self, argv, **kw):
            pass

        def poll(self):
            return None

    monkeypatch.setattr(subprocess, "Popen", Running)
    app = make_app(root, max_runs=2)
    c = client(app)
    codes = [c.post("/runs", json={"workflow": "release.nika.yaml"}, headers=AUTH).status_code for _ in range(3)]
    assert codes == [201, 201, 429]


def test_opening_a_run_whose_ticket_expired_asks_for_a_fresh_one(app, root: Path, monkeypatch) -> None:
    rec = paused_run(app, root, monkeypatch)
    launched: list[str | None] = []
    monkeypatch.setattr(app.store, "_launch", lambda r, resume: launched.append(resume))
    c = client(app)
    doc = c.get(f"/runs/{rec['id']}", headers=AUTH).json()
    assert launched == []  # inside its TTL: nothing to refresh
    (p,) = doc["pending"]
    monkeypatch.setattr(app.store, "now", lambda: p["expires_at"] + 1)
    c.get(f"/runs/{rec['id']}", headers=AUTH)
    assert launched == [doc["journal"]]  # resumed without an answer: it pauses again with a new ticket
    # and an answer on the expired ticket is refused by the one ticket API (410)
    from runtime.durable.answers import answer_journal

    got = answer_journal(doc["journal"], "approve", True, shown_hash=p["shown_hash"], now=p["expires_at"] + 1)
    assert got.status == "expired" and got.http == 410
