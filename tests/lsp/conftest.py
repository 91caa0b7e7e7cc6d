"""Shared fixtures: one `nika lsp` subprocess per client capability set, for the whole session.

Starting a server costs most of a second, so the end-to-end tests share one per capability
set (``visual_studio_code`` pushes diagnostics and counts UTF-16; ``neovim`` pulls them and
counts UTF-8). Tests stay independent: every document a test opens is closed when it ends,
and a round trip then makes sure the server has handled the closes before the next test
starts. A test that needs a fresh server (position-encoding negotiation) starts its own with
:data:`lsp_wire.SERVER`.

What a feature answers is mostly checked in-process instead (``editor``, see
:mod:`lsp_local`), for the same capability sets; the end-to-end tests keep the protocol path
covered for each: initialize, diagnostics push and pull, hover, completion, code actions,
navigation, configuration, the custom ``nika/semanticDocument`` request and shutdown.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import pytest
import pytest_asyncio
import pytest_lsp
from lsp_local import Editor
from lsp_wire import CLIENTS, SERVER, OpenDocuments
from lsprotocol import types as lsp
from pytest_lsp import LanguageClient, client_capabilities


async def _initialize(client: LanguageClient, name: str) -> None:
    await client.initialize_session(lsp.InitializeParams(capabilities=client_capabilities(name)))
    OpenDocuments.track(client)


@pytest_lsp.fixture(scope="session", config=SERVER)
async def vscode_server(lsp_client: LanguageClient):  # type: ignore[no-untyped-def]
    await _initialize(lsp_client, "visual_studio_code")
    yield
    await lsp_client.shutdown_session()


@pytest_lsp.fixture(scope="session", config=SERVER)
async def neovim_server(lsp_client: LanguageClient):  # type: ignore[no-untyped-def]
    await _initialize(lsp_client, "neovim")
    yield
    await lsp_client.shutdown_session()


_SERVER_FIXTURE = {"visual_studio_code": "vscode_server", "neovim": "neovim_server"}


@pytest.fixture(params=CLIENTS)
def shared_server(request: pytest.FixtureRequest) -> Any:
    """The session's server for this capability set (started on first use)."""
    return request.getfixturevalue(_SERVER_FIXTURE[request.param])


@pytest_asyncio.fixture
async def client(shared_server: LanguageClient) -> AsyncIterator[LanguageClient]:
    """The shared server, handed to one test; the documents it opened are closed afterwards."""
    yield shared_server
    await OpenDocuments.of(shared_server).close_all()


@pytest.fixture(params=CLIENTS)
def editor(request: pytest.FixtureRequest) -> Editor:
    """The feature functions in-process, answering a client with this capability set."""
    return Editor.of(request.param)


@pytest.hookimpl(tryfirst=True)  # before pytest-xdist reads the groups (--dist loadgroup)
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """The tests on the session's shared servers run on one xdist worker, so the servers start
    once per run rather than once per worker (each start costs most of a second)."""
    for item in items:
        if "shared_server" in getattr(item, "fixturenames", ()):
            item.add_marker(pytest.mark.xdist_group("lsp-session"))
