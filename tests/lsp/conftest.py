"""Shared fixtures: `nika lsp` started as a subprocess and driven by pytest-lsp."""

from __future__ import annotations

import sys

import pytest
import pytest_lsp
from lsprotocol import types as lsp
from pytest_lsp import ClientServerConfig, LanguageClient, client_capabilities


@pytest_lsp.fixture(
    params=["visual_studio_code", "neovim"],
    config=ClientServerConfig(server_command=[sys.executable, "-m", "nika", "lsp"]),
)
async def client(request: pytest.FixtureRequest, lsp_client: LanguageClient):  # type: ignore[no-untyped-def]
    params = lsp.InitializeParams(capabilities=client_capabilities(request.param))
    await lsp_client.initialize_session(params)
    yield
    await lsp_client.shutdown_session()
