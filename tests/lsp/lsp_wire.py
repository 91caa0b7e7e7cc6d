"""Helpers for the end-to-end tests: how the server is started, a client that keeps every
diagnostics publication, and the bookkeeping that lets tests share one server.

A shared server sees the publications of earlier tests, so the tests never take "the next
``publishDiagnostics``" for theirs: :func:`next_publication` waits for the next one *for a
given URI*, from a log the client keeps, so a publication cannot slip by between two waits.
"""

from __future__ import annotations

import asyncio
import os
import sys
import weakref
from dataclasses import dataclass, field
from pathlib import Path
from typing import ClassVar

from lsprotocol import types as lsp
from pygls.protocol import default_converter
from pytest_lsp import ClientServerConfig, LanguageClient
from pytest_lsp.client import DEFAULT_CLIENT_FEATURES, register_lsp_features

ROOT = Path(__file__).resolve().parents[2]
CLIENTS = ("visual_studio_code", "neovim")
"""The capability sets every end-to-end test runs with (push + UTF-16, pull + UTF-8)."""


@dataclass
class _Log:
    by_uri: dict[str, list[lsp.PublishDiagnosticsParams]] = field(default_factory=dict)
    arrived: asyncio.Event | None = None


_LOGS: weakref.WeakKeyDictionary[LanguageClient, _Log] = weakref.WeakKeyDictionary()


def _record(client: LanguageClient, params: lsp.PublishDiagnosticsParams) -> None:
    client.diagnostics[params.uri] = params.diagnostics  # what pytest-lsp's own handler does
    log = _LOGS.setdefault(client, _Log())
    log.by_uri.setdefault(params.uri, []).append(params)
    if log.arrived is not None:
        log.arrived.set()


def make_client() -> LanguageClient:
    """pytest-lsp's test client, with every diagnostics publication logged per URI."""
    client = LanguageClient(converter_factory=default_converter)
    register_lsp_features(client, {**DEFAULT_CLIENT_FEATURES, lsp.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS: _record})
    return client


def _server_env() -> dict[str, str]:
    """This process's environment with this checkout first on the server's import path, so
    the server runs the code under test wherever pytest was started from."""
    path = [str(ROOT), *filter(None, [os.environ.get("PYTHONPATH")])]
    return {**os.environ, "PYTHONPATH": os.pathsep.join(path)}


SERVER = ClientServerConfig(
    server_command=[sys.executable, "-m", "nika", "lsp"],
    client_factory=make_client,
    server_env=_server_env(),
)


async def next_publication(client: LanguageClient, uri: str, *, timeout: float = 20.0) -> lsp.PublishDiagnosticsParams:
    """The first publication for ``uri`` that arrives after this call.

    Call it right after the notification that should cause the publication (nothing from the
    server is read before the first ``await``).
    """
    log = _LOGS.setdefault(client, _Log())
    seen = len(log.by_uri.get(uri, []))
    async with asyncio.timeout(timeout):
        while len(log.by_uri.get(uri, [])) <= seen:
            if log.arrived is None:
                log.arrived = asyncio.Event()
            log.arrived.clear()
            await log.arrived.wait()
    return log.by_uri[uri][seen]


def pulls(client: LanguageClient) -> bool:
    """Whether the client pulls diagnostics (else the server pushes them)."""
    caps = client.capabilities.text_document if client.capabilities else None
    return bool(caps and caps.diagnostic)


async def diagnostics(client: LanguageClient, uri: str) -> list[lsp.Diagnostic]:
    """The current findings for ``uri``: pulled when the client pulls, else the next publication."""
    if pulls(client):
        rep = await client.text_document_diagnostic_async(
            lsp.DocumentDiagnosticParams(text_document=lsp.TextDocumentIdentifier(uri=uri))
        )
        assert isinstance(rep, lsp.RelatedFullDocumentDiagnosticReport)
        return list(rep.items)
    return list((await next_publication(client, uri)).diagnostics)


class OpenDocuments:
    """The documents a shared client has open, so each test can close what it opened."""

    _of: ClassVar[weakref.WeakKeyDictionary[LanguageClient, OpenDocuments]] = weakref.WeakKeyDictionary()

    def __init__(self, client: LanguageClient) -> None:
        self.client = client
        self.uris: set[str] = set()

    @classmethod
    def track(cls, client: LanguageClient) -> None:
        """Note every didOpen and didClose the client sends from now on."""
        docs = cls._of[client] = cls(client)
        did_open, did_close = client.text_document_did_open, client.text_document_did_close

        def opening(params: lsp.DidOpenTextDocumentParams) -> None:
            docs.uris.add(params.text_document.uri)
            did_open(params)

        def closing(params: lsp.DidCloseTextDocumentParams) -> None:
            docs.uris.discard(params.text_document.uri)
            did_close(params)

        client.text_document_did_open = opening  # type: ignore[method-assign]
        client.text_document_did_close = closing  # type: ignore[method-assign]

    @classmethod
    def of(cls, client: LanguageClient) -> OpenDocuments:
        return cls._of[client]

    async def close_all(self) -> None:
        """Close every open document, then wait until the server has handled the closes."""
        for uri in sorted(self.uris):
            self.client.text_document_did_close(
                lsp.DidCloseTextDocumentParams(text_document=lsp.TextDocumentIdentifier(uri=uri))
            )
        # The server handles messages in order: once a later request is answered, the closes
        # (and the empty publications they cause) are done.
        await self.client.text_document_hover_async(
            lsp.HoverParams(
                text_document=lsp.TextDocumentIdentifier(uri="file:///tmp/nika-test/barrier.nika.yaml"),
                position=lsp.Position(line=0, character=0),
            )
        )
        assert not self.uris
