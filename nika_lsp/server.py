"""The server object, its feature registrations and the command-line entry of ``nika lsp``.

Each handler is a thin shell: get the document's snapshot, call a pure function of
:mod:`nika_lsp.features`, return its result. Analysis runs in a worker thread, debounced per
document; a result is published only if its version is still the newest. Messages reach the
handlers through :class:`nika_lsp.protocol.NikaProtocol`, which answers every malformed request.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import gc
import json
import logging
import os
import sys
import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any, TypeVar

from lsprotocol import types as lsp
from pygls.lsp.server import LanguageServer

from nika_lsp import settings as settings_mod
from nika_lsp.convert import UTF16
from nika_lsp.documents import Documents, Snapshot, regresses, uri_to_path
from nika_lsp.features import diagnostics
from nika_lsp.protocol import NikaProtocol, strict_converter
from nika_lsp.settings import Settings

log = logging.getLogger("nika_lsp")
T = TypeVar("T")

DEBOUNCE_SECONDS = 0.15
COLLECT_EVERY = 200


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("nika-tools")
    except PackageNotFoundError:
        return "0.0.0"


class NikaLanguageServer(LanguageServer):
    """pygls server plus the document store and the per-document check scheduler."""

    protocol: NikaProtocol

    def __init__(self) -> None:
        super().__init__(
            "nika",
            _version(),
            text_document_sync_kind=lsp.TextDocumentSyncKind.Incremental,
            protocol_cls=NikaProtocol,
            converter_factory=strict_converter,
        )
        self.docs = Documents(self.workspace_paths)
        self.docs.analysed = self._collect_now_and_then
        self._analyses_done = 0
        self._pending: dict[str, asyncio.Task[None]] = {}
        self._due: dict[str, float] = {}  # when each pending check is to run (the loop's clock)
        self._waiting: set[str] = set()  # the documents whose pending check is still waiting
        self._background: set[asyncio.Future[Any]] = set()
        self._analyses: dict[str, tuple[object, asyncio.Future[Snapshot | None]]] = {}
        self._token_pool: ThreadPoolExecutor | None = None
        self.settings = Settings()

    def _collect_now_and_then(self) -> None:
        """A full collection every :data:`COLLECT_EVERY` analyses. The server's first generation
        is large (:data:`GC_THRESHOLDS`), and CPython runs a full pass only once the objects
        waiting for one reach a quarter of all long-lived ones: the small reference cycles the
        protocol layers leave per message (futures, frames) piled up for thousands of edits, and
        the memory with them. One pass per few hundred analyses keeps it flat (issue 41)."""
        self._analyses_done += 1
        if self._analyses_done % COLLECT_EVERY == 0:
            gc.collect()

    def shutdown(self) -> None:
        """As pygls, but never wait for a worker: pygls joins its thread pool here, and the pool
        holds the stdin reader (blocked until the client closes the pipe) and any analysis still
        running, so `exit` took a second or more, and forever behind a stuck read."""
        if self._stop_event is not None:
            self._stop_event.set()
        for pool in (self._thread_pool, self._token_pool):
            if pool:
                pool.shutdown(wait=False, cancel_futures=True)
        if self._server:
            self._server.close()

    def report_server_error(self, error: Exception, source: Any) -> None:
        """A body that is not JSON is answered with a Parse error; anything else as pygls does."""
        if isinstance(error, (json.JSONDecodeError, UnicodeDecodeError)):
            self.protocol.reply_parse_error(error)
            return
        super().report_server_error(error, source)

    # -- settings ----------------------------------------------------------------------------
    def workspace_paths(self) -> tuple[str, ...]:
        """The local paths of the client's workspace folders (pygls keeps them across
        ``didChangeWorkspaceFolders``); none before ``initialize`` or without a workspace."""
        try:
            ws = self.workspace
            uris = [f.uri for f in ws.folders.values()] or ([ws.root_uri] if ws.root_uri else [])
        except (AttributeError, RuntimeError):
            return ()
        paths = (uri_to_path(u) for u in uris)
        return tuple(p for p in paths if p)

    def apply_settings(self, payload: Any, *, bare: bool = False, origin: str = "settings") -> bool:
        """Read ``payload`` into :attr:`settings` (see :mod:`nika_lsp.settings`); ``False`` when
        it holds no ``nika`` section at all."""
        parsed = settings_mod.parse(payload, self.settings, bare=bare)
        for problem in parsed.problems:
            log.warning("%s: %s", origin, problem)
            with contextlib.suppress(Exception):
                self.window_log_message(lsp.LogMessageParams(type=lsp.MessageType.Warning, message=f"nika: {problem}"))
        old, self.settings = self.settings, parsed.settings
        if old.inlay_hints != parsed.settings.inlay_hints:
            self._refresh_inlay_hints()
        if old.run_lenses != parsed.settings.run_lenses:
            self._refresh_code_lenses()
        return parsed.found

    def _refresh_code_lenses(self) -> None:
        ws = self.client_capabilities.workspace
        if not (ws and ws.code_lens and ws.code_lens.refresh_support):
            return
        with contextlib.suppress(Exception):
            future = self.workspace_code_lens_refresh(None)
            future.add_done_callback(lambda f: f.exception() if not f.cancelled() else None)

    def _refresh_inlay_hints(self) -> None:
        ws = self.client_capabilities.workspace
        if not (ws and ws.inlay_hint and ws.inlay_hint.refresh_support):
            return
        with contextlib.suppress(Exception):
            future = self.workspace_inlay_hint_refresh(None)
            future.add_done_callback(lambda f: f.exception() if not f.cancelled() else None)

    async def pull_settings(self) -> None:
        """Ask the client for the ``nika`` section (clients that send no settings with a change)."""
        with contextlib.suppress(Exception):
            result = await self.workspace_configuration_async(
                lsp.ConfigurationParams(items=[lsp.ConfigurationItem(section=settings_mod.SECTION)])
            )
            if result:
                self.apply_settings(result[0], bare=True, origin="workspace/configuration")

    def in_background(self, coro: Any) -> None:
        """Run ``coro`` on the loop, holding a reference until it is done."""
        task = asyncio.ensure_future(coro)
        self._background.add(task)
        task.add_done_callback(self._background.discard)

    # -- negotiated client features --------------------------------------------------------
    @property
    def encoding(self) -> str:
        enc = getattr(self.server_capabilities, "position_encoding", None) or UTF16
        return str(enc.value if hasattr(enc, "value") else enc)

    @property
    def pull_diagnostics(self) -> bool:
        td = self.client_capabilities.text_document
        return bool(td and td.diagnostic)

    @property
    def related_information(self) -> bool:
        td = self.client_capabilities.text_document
        pd = td.publish_diagnostics if td else None
        if pd is None or pd.related_information is None:
            return self.pull_diagnostics  # pull-capable clients render related information
        return bool(pd.related_information)

    # -- snapshots ---------------------------------------------------------------------------
    def snapshot(self, uri: str) -> Snapshot | None:
        """The analysis of an open document (``None`` for one the client never opened)."""
        if not self.docs.known(uri):
            return None
        return self.docs.snapshot(uri)

    async def snapshot_async(self, uri: str) -> Snapshot | None:
        """:meth:`snapshot` computed in the worker pool, so the request loop never blocks on analysis.

        Requests that wait for the same analysis share one worker: they await one future on the
        loop, instead of each holding a pool thread blocked until it is done (a burst of requests
        on a slow document would otherwise take every thread, and a hover on another document
        would queue behind them). A waiter that is cancelled leaves the analysis running for the others."""
        if not self.docs.known(uri):
            return None
        key = self.docs.analysis_key(uri)
        running = self._analyses.get(uri)
        if running is None or running[0] != key:
            loop = asyncio.get_running_loop()
            future = loop.run_in_executor(self.thread_pool, self.docs.snapshot, uri)
            self._analyses[uri] = (key, future)

            def done(f: asyncio.Future[Snapshot | None], uri: str = uri) -> None:
                if self._analyses.get(uri, (None, None))[1] is f:
                    del self._analyses[uri]
                if not f.cancelled():
                    f.exception()  # retrieved: the waiters see it

            future.add_done_callback(done)
            running = self._analyses[uri]
        return await asyncio.shield(running[1])

    @property
    def token_pool(self) -> ThreadPoolExecutor:
        """The one thread semantic tokens are computed on: a slow document's tokens never take a
        thread analyses and other requests need."""
        if self._token_pool is None:
            self._token_pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="nika-tokens")
        return self._token_pool

    async def off_loop(self, what: str, work: Callable[[threading.Event], T], default: T) -> T:
        """``work(cancel)`` on the token thread; when the client cancels the request, ``cancel``
        is set and the work stops at its next check (``Cancelled``)."""
        from nika_lsp.features.tokens import Cancelled

        cancel = threading.Event()

        def guarded() -> T:
            try:
                return work(cancel)
            except Cancelled:
                return default

        def run() -> T:
            return self.safely(what, guarded, default)

        loop = asyncio.get_running_loop()
        future = loop.run_in_executor(self.token_pool, run)
        try:
            return await asyncio.shield(future)
        except asyncio.CancelledError:
            cancel.set()  # the request was cancelled: stop the work, not only the wait
            raise

    def safely(self, what: str, fn: Callable[[], T], default: T) -> T:
        """Run a feature; an exception is logged to the client and answered with ``default``."""
        try:
            return fn()
        except Exception as exc:  # a bug in one feature must never take the server down
            log.exception("%s failed", what)
            with contextlib.suppress(Exception):
                self.window_log_message(
                    lsp.LogMessageParams(type=lsp.MessageType.Error, message=f"nika: {what} failed: {exc!r}")
                )
            return default

    # -- scheduling --------------------------------------------------------------------------
    def schedule_check(self, uri: str, *, delay: float = DEBOUNCE_SECONDS) -> None:
        """Check ``uri`` once no edit has come for ``delay`` seconds.

        A check still waiting out its delay is not cancelled by the next edit: it waits on until
        the new time (a cancelled task per keystroke left a reference cycle of its frames and
        exception behind, garbage only a full collection frees: the server's memory grew with every
        edit). An earlier time (``delay`` 0: an open, a save) or a check already analysing gets a
        new task; the one analysing finishes, and its answer is dropped when the text moved on."""
        loop = asyncio.get_running_loop()
        due = loop.time() + delay
        old = self._pending.get(uri)
        if old is not None and not old.done() and uri in self._waiting:
            if due >= self._due.get(uri, 0.0):
                self._due[uri] = due
                return
            old.cancel()  # wanted sooner (rare: an open, a save)
        # (a check already analysing runs on: its answer is dropped if the text moved on)
        self._due[uri] = due
        self._pending[uri] = asyncio.ensure_future(self._check_later(uri))

    async def _check_later(self, uri: str) -> None:
        try:
            loop = asyncio.get_running_loop()
            self._waiting.add(uri)
            try:
                while (wait := self._due.get(uri, 0.0) - loop.time()) > 0:
                    await asyncio.sleep(wait)
            finally:
                self._waiting.discard(uri)
            version = self.docs.version(uri)
            loop = asyncio.get_running_loop()
            snap = await loop.run_in_executor(self.thread_pool, self.docs.snapshot, uri)
        except asyncio.CancelledError:
            return
        except Exception as exc:
            log.exception("analysis of %s failed", uri)
            self.window_log_message(lsp.LogMessageParams(type=lsp.MessageType.Error, message=f"nika: {exc!r}"))
            return
        if snap is None or self.docs.version(uri) != version:
            return  # superseded by a newer edit, or closed meanwhile
        if self.pull_diagnostics:
            self._refresh_diagnostics()  # a client that pulls asks again on its own after an edit
            return
        self.publish(snap)

    def recheck_dependents(self, uri: str, *, delay: float = DEBOUNCE_SECONDS) -> None:
        """Analyse again every open document that read ``uri``'s file (a parent that invokes it,
        and their parents): open documents are the source of truth for child workflows."""
        for parent in self.docs.dependents(uri):
            self.docs.invalidate(parent)
            self.schedule_check(parent, delay=delay)

    def _refresh_diagnostics(self) -> None:
        """Ask the client to pull diagnostics again, only when it declared ``refreshSupport``."""
        ws = self.client_capabilities.workspace
        if not (ws and ws.diagnostics and ws.diagnostics.refresh_support):
            return
        with contextlib.suppress(Exception):
            future = self.workspace_diagnostic_refresh(None)
            future.add_done_callback(lambda f: f.exception() if not f.cancelled() else None)

    def publish(self, snap: Snapshot) -> None:
        if not self.docs.should_publish(snap):
            return
        diags = diagnostics.diagnostics_for(snap, self.encoding, related_support=self.related_information)
        self.text_document_publish_diagnostics(
            lsp.PublishDiagnosticsParams(uri=snap.uri, diagnostics=diags, version=snap.version)
        )


server = NikaLanguageServer()


CLIENT_POLL_SECONDS = 0.5


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except (PermissionError, OSError, OverflowError):
        return True  # it exists (not ours to signal), or the id cannot be checked: keep serving
    return True


def watch_client(pid: int) -> None:
    """LSP 3.17 §initialize `processId`: when the client process dies, the server exits (code 1,
    no `shutdown` came), so a crashed editor leaves no orphan. A daemon thread polls the pid."""
    import threading
    import time

    if pid <= 0 or not _alive(pid):
        return

    def poll() -> None:
        while _alive(pid):
            time.sleep(CLIENT_POLL_SECONDS)
        log.warning("the client process %d is gone; exiting", pid)
        os._exit(1)

    threading.Thread(target=poll, name="nika-client-watch", daemon=True).start()


@server.feature(lsp.INITIALIZE)
def initialize(ls: NikaLanguageServer, params: lsp.InitializeParams) -> None:
    if params.process_id is not None:
        watch_client(params.process_id)
    if params.initialization_options is not None:
        ls.apply_settings(params.initialization_options, bare=True, origin="initializationOptions")


@server.feature(lsp.WORKSPACE_DID_CHANGE_CONFIGURATION)
def did_change_configuration(ls: NikaLanguageServer, params: lsp.DidChangeConfigurationParams) -> None:
    # Settings sent with the notification apply before the next request is read; a client
    # that sends none is asked for the `nika` section.
    if ls.apply_settings(params.settings, origin="workspace/didChangeConfiguration"):
        return
    ws = ls.client_capabilities.workspace
    if ws and ws.configuration:
        ls.in_background(ls.pull_settings())


@server.feature(lsp.TEXT_DOCUMENT_DID_OPEN)
def did_open(ls: NikaLanguageServer, params: lsp.DidOpenTextDocumentParams) -> None:
    doc = params.text_document
    ls.docs.set(doc.uri, doc.text, doc.version)
    ls.schedule_check(doc.uri, delay=0)
    ls.recheck_dependents(doc.uri, delay=0)


@server.feature(lsp.TEXT_DOCUMENT_DID_CHANGE)
def did_change(ls: NikaLanguageServer, params: lsp.DidChangeTextDocumentParams) -> None:
    uri = params.text_document.uri
    version = params.text_document.version
    before = ls.docs.version(uri)
    # A change for a document that was never opened is taken only if it gives the full text.
    if not ls.docs.change(uri, version, params.content_changes, ls.encoding):
        return
    if ls.docs.known(uri) and regresses(before, version):
        # LSP 3.17 says a version only grows, but the changes are still the client's latest
        # edit of its buffer: refusing them would leave our text behind the client's, and every
        # later incremental change would land at the wrong place. So the text is taken, its
        # diagnostics are pushed (the stale-push guard is reset for it), and the client is told.
        ls.window_log_message(
            lsp.LogMessageParams(
                type=lsp.MessageType.Warning,
                message=f"nika: didChange of {uri} has version {version} after version {before}; "
                "versions must increase (the change was applied and its diagnostics pushed)",
            )
        )
    ls.schedule_check(uri)
    ls.recheck_dependents(uri)


@server.feature(lsp.TEXT_DOCUMENT_DID_SAVE)
def did_save(ls: NikaLanguageServer, params: lsp.DidSaveTextDocumentParams) -> None:
    if ls.docs.known(params.text_document.uri):
        ls.schedule_check(params.text_document.uri, delay=0)
    ls.recheck_dependents(params.text_document.uri, delay=0)  # its parents no longer read a buffer


@server.feature(lsp.WORKSPACE_DID_CHANGE_WATCHED_FILES)
def did_change_watched_files(ls: NikaLanguageServer, params: lsp.DidChangeWatchedFilesParams) -> None:
    # A child workflow changed on disk (another editor, git): its open parents read it again.
    for change in params.changes:
        ls.recheck_dependents(change.uri, delay=0)


@server.feature(lsp.TEXT_DOCUMENT_DID_CLOSE)
def did_close(ls: NikaLanguageServer, params: lsp.DidCloseTextDocumentParams) -> None:
    uri = params.text_document.uri
    task = ls._pending.pop(uri, None)
    ls._due.pop(uri, None)
    if task is not None:
        task.cancel()
    parents = ls.docs.dependents(uri)
    ls.docs.close(uri)
    for parent in parents:  # they read its buffer, now gone: the file on disk again
        ls.docs.invalidate(parent)
        ls.schedule_check(parent, delay=0)
    if not ls.pull_diagnostics:
        ls.text_document_publish_diagnostics(lsp.PublishDiagnosticsParams(uri=uri, diagnostics=[]))


@server.feature(
    lsp.TEXT_DOCUMENT_DIAGNOSTIC,
    # inter-file: a parent's findings depend on the child workflows it invokes (open buffers first)
    lsp.DiagnosticOptions(identifier="nika", inter_file_dependencies=True, workspace_diagnostics=False),
)
async def pull_diagnostic(ls: NikaLanguageServer, params: lsp.DocumentDiagnosticParams) -> lsp.DocumentDiagnosticReport:
    uri = params.text_document.uri
    loop = asyncio.get_running_loop()
    snap = await loop.run_in_executor(ls.thread_pool, ls.snapshot, uri)
    if snap is None:
        return lsp.RelatedFullDocumentDiagnosticReport(items=[], result_id=None)
    result_id = f"{snap.version}.{snap.serial}"  # a new analysis of one version (a child changed) is new
    if params.previous_result_id == result_id:
        return lsp.RelatedUnchangedDocumentDiagnosticReport(result_id=result_id)
    items = ls.safely(
        "diagnostics",
        lambda: diagnostics.diagnostics_for(snap, ls.encoding, related_support=ls.related_information),
        [],
    )
    return lsp.RelatedFullDocumentDiagnosticReport(items=items, result_id=result_id)


def _register_features() -> None:
    from nika_lsp.features import (
        actions,
        completion,
        hover,
        lenses,
        navigation,
        outline,
        semantic_document,
        tokens,
    )

    for module in (hover, completion, navigation, outline, tokens, actions, semantic_document, lenses):
        module.register(server)


_register_features()


# An analysis of a large workflow allocates tens of thousands of small objects that live
# exactly as long as its snapshot. With the default thresholds the collector runs full passes
# over every open snapshot several times per keystroke; a larger first generation (the setting
# mypy's daemon uses for the same reason) lets it run about once per analysis.
GC_THRESHOLDS = (200_000, 30, 30)


def serve(tcp: str | None = None, client_pid: int | None = None) -> int:
    logging.basicConfig(level=logging.WARNING, stream=sys.stderr)
    gc.set_threshold(*GC_THRESHOLDS)
    if client_pid is not None:
        from nika_lsp.transport import watch

        watch(client_pid)
    if tcp:
        from nika_lsp.transport import parse_tcp

        host, port = parse_tcp(tcp)
        server.start_tcp(host, port)
    else:
        server.start_io()
    # LSP 3.17 §exit: 0 when `shutdown` came first, 1 otherwise (an `exit` alone, a closed stdin).
    code = 0 if server.protocol._shutdown else 1
    # End the process here: a worker thread (the stdin reader, an analysis) must not outlive the
    # server, and the interpreter would otherwise join every executor thread before exiting.
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(Exception):
            stream.flush()
    os._exit(code)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="nika-lsp", description="The Nika language server.")
    ap.add_argument("--tcp", metavar="HOST:PORT", help="listen on TCP instead of stdio")
    a = ap.parse_args(argv)
    return serve(a.tcp)
