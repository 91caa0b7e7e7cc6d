"""What a feature sees of the language server: :class:`Host`, a narrow Protocol of what the
features read and call (the document store, the negotiated encoding and capabilities, the
settings, snapshots, the worker pool, the guard every handler runs under, and ``feature`` to
register a handler). :class:`nika_lsp.server.NikaLanguageServer` is one; the features never
import the server, and the server imports each feature to register it."""

from __future__ import annotations

import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

if TYPE_CHECKING:
    from lsprotocol import types as lsp

    from nika_lsp.documents import Documents, Snapshot
    from nika_lsp.settings import Settings

T = TypeVar("T")
F = TypeVar("F", bound=Callable[..., Any])


class Host(Protocol):
    docs: Documents
    settings: Settings

    @property
    def encoding(self) -> str: ...
    @property
    def client_capabilities(self) -> lsp.ClientCapabilities: ...
    @property
    def thread_pool(self) -> ThreadPoolExecutor: ...

    def snapshot(self, uri: str) -> Snapshot | None: ...
    async def snapshot_async(self, uri: str) -> Snapshot | None: ...
    def safely(self, what: str, fn: Callable[[], T], default: T) -> T: ...
    async def off_loop(self, what: str, work: Callable[[threading.Event], T], default: T) -> T: ...
    def feature(self, feature_name: str, options: Any | None = None) -> Callable[[F], F]: ...
