"""The Starlette application of ``nika serve``: the run API, the webhooks, the dashboard.

Every request passes :class:`Guard` first (the ``Host`` header against the names this server
answers to, then the token); every body is read through :func:`nika.serve.guard.read_body` (bounded).
Authentication: ``Authorization: Bearer TOKEN`` on the API; the dashboard's session cookie (derived
from the token, ``HttpOnly; SameSite=Strict``) plus its CSRF field and a same-origin ``Origin`` on
the dashboard's forms; a webhook's HMAC signature on ``/hooks/NAME``. No CORS headers are sent.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, RedirectResponse, Response, StreamingResponse
from starlette.routing import Route
from starlette.types import ASGIApp, Receive, Scope, Send

from nika.serve import dashboard, guard
from nika.serve.config import ConfigError, Schedule, ServeConfig, Webhook, served_workflows, workflow_path
from nika.serve.runs import Admit, Busy, Conflict, RunStore
from nika.serve.schedule import Scheduler

OPEN_PATHS = ("/ui/login", "/ui/app.js", "/healthz")
HEADERS = {
    "X-Content-Type-Options": "nosniff",
    "X-Frame-Options": "DENY",  # the Approve button cannot be framed (clickjacking)
    "Content-Security-Policy": "default-src 'self'; style-src 'self' 'unsafe-inline'; frame-ancestors 'none'",
    "Referrer-Policy": "same-origin",  # no-referrer would make a browser send `Origin: null` on forms
    "Cache-Control": "no-store",
}


def _host_name(host: str) -> str:
    host = host.strip().lower()
    if host.startswith("["):
        return host[: host.find("]") + 1] if "]" in host else host
    return host.rsplit(":", 1)[0] if host.count(":") == 1 else host


class Guard:
    """ASGI middleware: ``Host`` validation (no DNS rebinding), then authentication, then the
    security headers. A refusal is a short JSON (or, for a browser page, the sign-in form)."""

    def __init__(self, app: ASGIApp, cfg: ServeConfig) -> None:
        self.app, self.cfg = app, cfg
        self.store: RunStore | None = None
        self.scheduler: Scheduler | None = None
        self.hosts = {h.lower() for h in cfg.hosts()}

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        request = Request(scope)
        host = request.headers.get("host", "")
        if _host_name(host) not in self.hosts:
            await _send(
                JSONResponse({"error": f"Host {host!r} is not a name this server answers to"}, 421),
                scope,
                receive,
                send,
            )
            return
        path = scope["path"]
        token = self.cfg.token
        authed = guard.bearer_ok(request.headers.get("authorization"), token)
        session = guard.session_ok(request.cookies.get(guard.SESSION_COOKIE), token)
        scope.setdefault("state", {})
        scope["state"]["auth"] = "bearer" if authed else ("session" if session else None)
        if path.startswith("/hooks/") or path in OPEN_PATHS:
            pass  # a webhook proves itself by its signature; sign-in by the token it posts
        elif path == "/" or path.startswith("/ui/"):
            if not (authed or session):
                await _send(HTMLResponse(dashboard.login(), 401), scope, receive, send)
                return
        elif not authed and not (session and request.method in ("GET", "HEAD")):
            msg = "a bearer token is required (Authorization: Bearer $NIKA_SERVE_TOKEN)"
            await _send(JSONResponse({"error": msg}, 401, headers={"WWW-Authenticate": "Bearer"}), scope, receive, send)
            return

        async def with_headers(message: Any) -> None:
            if message["type"] == "http.response.start":
                message.setdefault("headers", [])
                message["headers"] += [(k.lower().encode(), v.encode()) for k, v in HEADERS.items()]
            await send(message)

        await self.app(scope, receive, with_headers)


async def _send(response: Response, scope: Scope, receive: Receive, send: Send) -> None:
    response.headers.update(HEADERS)
    await response(scope, receive, send)


def create_app(
    cfg: ServeConfig,
    admit: Admit,
    *,
    clock: Callable[[], datetime] = lambda: datetime.now(UTC),
    log: Callable[[str], None] = lambda line: None,
    tick_scheduler: bool = True,
) -> Starlette:
    """The application; ``admit(file, inputs)`` is ``nika run``'s own admission (a refusal line, or None)."""
    store = RunStore(cfg, admit)

    def fire(s: Schedule) -> None:
        rec = store.start(s.workflow, s.inputs, f"schedule:{s.name}")
        log(
            f"nika serve: schedule `{s.name}` started run {rec['id']}"
            + (f" (refused: {rec['refused']})" if rec["refused"] else "")
        )

    scheduler = Scheduler(cfg.schedules, Path(cfg.state_dir) / "schedules.json", fire, now=clock, log=log)
    api, ui = _Api(cfg, store), _Dashboard(cfg, store)

    async def ticker() -> None:
        while True:
            await asyncio.sleep(min(scheduler.seconds_to_next(), 30.0) + 0.05)
            try:
                await run_in_threadpool(scheduler.tick)
            except Exception as exc:  # a schedule's failure is said, never the server's end
                log(f"nika serve: scheduler: {type(exc).__name__}: {exc}")

    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette) -> Any:
        task = asyncio.ensure_future(ticker()) if tick_scheduler and cfg.schedules else None
        try:
            yield
        finally:
            if task is not None:
                task.cancel()
            await run_in_threadpool(store.stop_all)

    app = Starlette(routes=[*api.routes(), *ui.routes()], lifespan=lifespan)
    guarded = Guard(app, cfg)
    guarded.store, guarded.scheduler = store, scheduler  # for the command's log and for tests
    return guarded  # type: ignore[return-value]


def _bad(status: int, message: str) -> JSONResponse:
    return JSONResponse({"error": message}, status)


RunHandler = Callable[[Any, Request, dict[str, Any]], Awaitable[Response]]


def _on_run(handler: RunHandler) -> Callable[[Any, Request], Awaitable[Response]]:
    """A handler of ``/runs/{id}…``: the run's record, or a 404 before the handler runs."""

    async def wrapped(self: Any, request: Request) -> Response:
        rec = self.store.record(request.path_params["id"])
        if rec is None:
            return _bad(404, "no such run")
        return await handler(self, request, rec)

    return wrapped


class _Served:
    """What every handler shares: the configuration, the run store, and starting a run."""

    def __init__(self, cfg: ServeConfig, store: RunStore) -> None:
        self.cfg, self.store = cfg, store

    async def start(self, workflow: Any, inputs: Any, trigger: str) -> tuple[int, dict[str, Any]]:
        if not isinstance(inputs, dict):
            return 400, {"error": "`inputs` must be a JSON object"}
        try:
            path = workflow_path(workflow, self.cfg.roots)
        except ConfigError as exc:
            return 403 if "outside" in str(exc) else 404, {"error": str(exc)}
        try:
            rec = await run_in_threadpool(self.store.start, path, inputs, trigger)
        except Busy as exc:
            return 429, {"error": str(exc)}
        if rec["refused"] is not None:
            return 422, {"id": rec["id"], "workflow_state": "refused", "error": rec["refused"]}
        return 201, {"id": rec["id"]}

    async def body(self, request: Request) -> bytes | Response:
        try:
            return await guard.read_body(request, self.cfg.max_body)
        except guard.TooLarge:
            return _bad(413, f"the body is over {self.cfg.max_body} bytes")


class _Api(_Served):
    """The run API (bearer token) and the signed webhooks."""

    def __init__(self, cfg: ServeConfig, store: RunStore) -> None:
        super().__init__(cfg, store)
        self.hooks: dict[str, Webhook] = {h.name: h for h in cfg.webhooks}

    def routes(self) -> list[Route]:
        return [
            Route("/runs", self.post_runs, methods=["POST"]),
            Route("/runs", self.get_runs, methods=["GET"]),
            Route("/runs/{id}", self.get_run, methods=["GET"]),
            Route("/runs/{id}/events", self.events, methods=["GET"]),
            Route("/runs/{id}/cancel", self.cancel, methods=["POST"]),
            Route("/runs/{id}/resume", self.resume, methods=["POST"]),
            Route("/runs/{id}/answers", self.answer, methods=["POST"]),
            Route("/hooks/{name}", self.hook, methods=["POST"]),
            Route("/healthz", self.healthz, methods=["GET"]),
        ]

    async def json_body(self, request: Request) -> dict[str, Any] | Response:
        body = await self.body(request)
        if isinstance(body, Response):
            return body
        try:
            return guard.json_object(body)
        except guard.BadBody as exc:
            return _bad(400, str(exc))

    async def post_runs(self, request: Request) -> Response:
        doc = await self.json_body(request)
        if isinstance(doc, Response):
            return doc
        status, body = await self.start(doc.get("workflow"), doc.get("inputs", {}), "api")
        return JSONResponse(body, status)

    async def get_runs(self, request: Request) -> Response:
        def rows() -> list[dict[str, Any]]:
            records = (self.store.record(rid) for rid in self.store.ids()[:200])
            return [_row(self.store.view(rec, full=False)) for rec in records if rec is not None]

        return JSONResponse({"runs": await run_in_threadpool(rows)})

    @_on_run
    async def get_run(self, request: Request, rec: dict[str, Any]) -> Response:
        full = request.query_params.get("events") != "0"
        doc = await run_in_threadpool(self.store.view, rec, full=full)
        if await run_in_threadpool(self.store.refresh_expired, rec, doc):  # a fresh ticket is on its way
            doc = await run_in_threadpool(self.store.view, rec, full=full)
        return JSONResponse(doc)

    @_on_run
    async def cancel(self, request: Request, rec: dict[str, Any]) -> Response:
        try:
            await run_in_threadpool(self.store.cancel, rec)
        except Conflict as exc:
            return _bad(409, str(exc))
        return JSONResponse({"id": rec["id"], "cancelling": True}, 202)

    @_on_run
    async def resume(self, request: Request, rec: dict[str, Any]) -> Response:
        try:
            await run_in_threadpool(self.store.resume, rec)
        except Conflict as exc:
            return _bad(409, str(exc))
        except Busy as exc:
            return _bad(429, str(exc))
        return JSONResponse({"id": rec["id"], "attempt": len(rec["attempts"])}, 202)

    @_on_run
    async def answer(self, request: Request, rec: dict[str, Any]) -> Response:
        doc = await self.json_body(request)
        if isinstance(doc, Response):
            return doc
        task, shown = doc.get("task"), doc.get("shown_hash")
        if not isinstance(task, str) or "value" not in doc or not isinstance(shown, str):
            return _bad(400, 'an answer is {"task": TASK, "value": VALUE, "shown_hash": HASH}')
        status, body = await run_in_threadpool(self.store.answer, rec, task, doc["value"], shown, "serve api")
        return JSONResponse(body, status)

    @_on_run
    async def events(self, request: Request, rec: dict[str, Any]) -> Response:
        return StreamingResponse(_sse(self.store, rec), media_type="text/event-stream")

    async def hook(self, request: Request) -> Response:
        h = self.hooks.get(request.path_params["name"])
        if h is None:
            return _bad(404, "no such webhook")
        body = await self.body(request)
        if isinstance(body, Response):
            return body
        secret = os.environ.get(h.secret_env, "")
        if not secret:
            return _bad(503, f"webhook `{h.name}`: its secret ({h.secret_env}) is not set in the server's environment")
        if not guard.signature_ok(body, request.headers.get("x-hub-signature-256"), secret):
            return _bad(401, "the X-Hub-Signature-256 header does not sign this body with the webhook's secret")
        try:
            doc = guard.json_object(body)
        except guard.BadBody as exc:
            return _bad(400, str(exc))
        inputs = {h.input: doc} if h.input else doc
        status, out = await self.start(h.workflow, inputs, f"webhook:{h.name}")
        return JSONResponse(out, status)

    async def healthz(self, request: Request) -> Response:
        return JSONResponse({"ok": True})


class _Dashboard(_Served):
    """The dashboard's pages and forms (session cookie, CSRF field, same-origin ``Origin``)."""

    def routes(self) -> list[Route]:
        return [
            Route("/", self.index, methods=["GET"]),
            Route("/ui/login", self.login, methods=["GET", "POST"]),
            Route("/ui/runs", self.start_form, methods=["POST"]),
            Route("/ui/runs/{id}", self.run_page, methods=["GET"]),
            Route("/ui/runs/{id}/answer", self.answer_form, methods=["POST"]),
            Route("/ui/app.js", self.app_js, methods=["GET"]),
        ]

    def csrf_refusal(self, request: Request, form: dict[str, str]) -> Response | None:
        auth = request.scope["state"].get("auth")
        if auth not in ("session", "bearer"):
            return HTMLResponse(dashboard.login(), 401)
        if not guard.same_origin(request.headers.get("origin"), request.headers.get("host")):
            return _bad(403, "a cross-site form post is refused (Origin does not match)")
        if auth == "session" and not guard.csrf_ok(form.get("csrf"), self.cfg.token):
            return _bad(403, "the form's CSRF token is missing or wrong; reload the page")
        return None

    async def form(self, request: Request, *, csrf: bool = True) -> dict[str, str] | Response:
        """The posted form's fields, or the refusal: too large, then (with ``csrf``) the CSRF checks."""
        from urllib.parse import parse_qs

        try:
            body = await guard.read_body(request, self.cfg.max_body)
        except guard.TooLarge:
            return _bad(413, "too large")
        fields = {k: v[0] for k, v in parse_qs(body.decode("utf-8", "replace")).items()}
        refusal = self.csrf_refusal(request, fields) if csrf else None
        return fields if refusal is None else refusal

    async def index(self, request: Request) -> Response:
        def build() -> str:
            records = (self.store.record(rid) for rid in self.store.ids()[:100])
            rows = [self.store.view(rec, full=False) for rec in records if rec is not None]
            names = [os.path.relpath(w, self.cfg.roots[0]) for w in served_workflows(self.cfg.roots)]
            return dashboard.runs_list(rows, names, guard.csrf_value(self.cfg.token))

        return HTMLResponse(await run_in_threadpool(build))

    async def run_page(self, request: Request) -> Response:
        rec = self.store.record(request.path_params["id"])
        if rec is None:
            return HTMLResponse(dashboard.page("no such run", ""), 404)
        doc = await run_in_threadpool(self.store.view, rec, full=False)
        proj = await run_in_threadpool(_projection, rec["workflow"])
        return HTMLResponse(dashboard.run_page(doc, proj, guard.csrf_value(self.cfg.token)))

    async def login(self, request: Request) -> Response:
        if request.method == "GET":
            return HTMLResponse(dashboard.login())
        if not guard.same_origin(request.headers.get("origin"), request.headers.get("host")):
            return _bad(403, "a cross-site sign-in is refused (Origin does not match)")
        f = await self.form(request, csrf=False)
        if isinstance(f, Response):
            return f
        if not guard.bearer_ok("Bearer " + f.get("token", ""), self.cfg.token):
            return HTMLResponse(dashboard.login("wrong token"), 401)
        resp = RedirectResponse("/", 303)
        resp.set_cookie(
            guard.SESSION_COOKIE, guard.session_value(self.cfg.token), httponly=True, samesite="strict", path="/"
        )
        return resp

    async def start_form(self, request: Request) -> Response:
        f = await self.form(request)
        if isinstance(f, Response):
            return f
        try:
            inputs = json.loads(f.get("inputs") or "{}")
        except ValueError:
            return _bad(400, "the inputs are not JSON")
        status, body = await self.start(f.get("workflow"), inputs, "dashboard")
        if "id" in body:
            return RedirectResponse(f"/ui/runs/{body['id']}", 303)
        return HTMLResponse(dashboard.page("refused", f"<p id=error>{body.get('error')}</p>"), status)

    @_on_run
    async def answer_form(self, request: Request, rec: dict[str, Any]) -> Response:
        f = await self.form(request)
        if isinstance(f, Response):
            return f
        raw = f.get("value", f.get("value_text"))
        try:
            value = json.loads(raw) if "value" in f else raw
        except (TypeError, ValueError):
            value = raw
        status, body = await run_in_threadpool(
            self.store.answer, rec, str(f.get("task")), value, str(f.get("shown_hash")), "serve dashboard"
        )
        if status >= 400:
            return HTMLResponse(dashboard.page("answer refused", f"<p id=error>{body['message']}</p>"), status)
        return RedirectResponse(f"/ui/runs/{rec['id']}", 303)

    async def app_js(self, request: Request) -> Response:
        return Response(dashboard.SCRIPT, media_type="text/javascript")


def _row(doc: dict[str, Any]) -> dict[str, Any]:
    keys = ("id", "workflow", "trigger", "workflow_state", "created", "duration_s", "cost_usd", "answers", "journal")
    return {k: doc.get(k) for k in keys}


def _projection(workflow: str) -> dict[str, Any] | None:
    """Spec 16's projection of the workflow as ``nika inspect`` prints it (``None``: there is none)."""
    from checker.project.admission import configured
    from checker.project.files import compile_path
    from checker.views.projection import project

    compiled, _ = compile_path(workflow)
    if compiled is None:
        return None
    text = project(configured(compiled, workflow)).canonical()
    return json.loads(text) if text is not None else None


async def _sse(store: RunStore, rec: dict[str, Any]) -> Any:
    """The run's events as server-sent events: every attempt's ``--events`` lines in order, live,
    until the run is no longer running (then one ``end`` event naming its state)."""
    n = 1
    while True:
        fresh = store.record(rec["id"]) or rec
        if n > len(fresh["attempts"]):
            break
        path = store.events_path(fresh, n)
        offset = 0
        while True:
            done = await run_in_threadpool(store.settled, fresh, n)
            try:
                with open(path, "rb") as f:
                    f.seek(offset)
                    data = f.read()
            except OSError:
                data = b""
            cut = data.rfind(b"\n") + 1
            for line in data[:cut].splitlines():
                if line.strip():
                    yield b"data: " + line + b"\n\n"
            offset += cut
            if done and cut == len(data):
                break
            await asyncio.sleep(0.1)
        n += 1
    final = store.view(store.record(rec["id"]) or rec, full=False)
    yield b"event: end\ndata: " + json.dumps({"workflow_state": final["workflow_state"]}).encode() + b"\n\n"
