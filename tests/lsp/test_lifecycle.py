"""The server's process lifecycle and protocol edges (issue 28; LSP 3.17 §initialize, §exit)."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator

import pytest
from raw_client import TIMEOUT, RawClient

pytestmark = pytest.mark.xdist_group("lsp-lifecycle")  # one worker starts the module's shared server

INIT = {"processId": None, "rootUri": None, "capabilities": {}}


def _initialized(params: dict | None = None) -> RawClient:
    client = RawClient()
    client.call("initialize", params or INIT)
    client.notify("initialized", {})
    return client


def _ends(client: RawClient, within: float = TIMEOUT) -> int:
    """The server's exit code; it must exit on its own within a generous deadline (how soon is
    measured in benchmarks/bounds.py, never asserted here)."""
    try:
        return client.proc.wait(timeout=within)
    finally:
        if client.proc.poll() is None:
            client.proc.kill()
            client.proc.wait()


def test_exit_without_shutdown_exits_1() -> None:
    """LSP §exit: the exit code is 1 when no `shutdown` request came before `exit`."""
    client = _initialized()
    client.notify("exit", None)
    assert _ends(client) == 1


def test_shutdown_then_exit_exits_0() -> None:
    client = _initialized()
    assert "result" in client.call("shutdown", None)
    client.notify("exit", None)
    assert _ends(client) == 0


@pytest.fixture(scope="module")
def misused() -> Iterator[RawClient]:
    """One initialized server for the requests that must be refused without ending it."""
    client = _initialized()
    yield client
    client.notify("exit", None)
    _ends(client)


def test_a_second_initialize_is_an_error(misused: RawClient) -> None:
    """LSP §initialize: the request is sent only once; a second one is answered with an error."""
    reply = misused.call("initialize", INIT)
    assert reply.get("error", {}).get("code") == -32600


def test_nika_semantic_document_with_malformed_params_is_invalid_params(misused: RawClient) -> None:
    for params in ({"bogus": 1}, 5, {"textDocument": {"uri": 3}}):
        assert misused.call("nika/semanticDocument", params).get("error", {}).get("code") == -32602


def test_the_server_exits_when_the_client_process_dies() -> None:
    """LSP §initialize `processId`: the server exits when that process is gone (code 1)."""
    parent = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        client = _initialized({**INIT, "processId": parent.pid})
        parent.kill()
        parent.wait()
        assert _ends(client) == 1
    finally:
        if parent.poll() is None:
            parent.kill()
            parent.wait()


def test_closing_stdin_during_analysis_exits_promptly() -> None:
    """An editor that crashes closes the pipe: the server ends on its own, with code 1 (no
    `shutdown` came), even while a large document is being analysed (how soon it ends:
    benchmarks/bounds.py)."""
    from test_server_bounds import _open

    client = _initialized()
    big = "nika: v1\nworkflow:\n  id: big\ntasks:\n" + "".join(
        f'  t{i}:\n    infer: {{ prompt: "step {i}" }}\n' for i in range(2000)
    )
    _open(client, "file:///big.nika.yaml", big)
    client.request("textDocument/diagnostic", {"textDocument": {"uri": "file:///big.nika.yaml"}})
    assert client.proc.stdin is not None
    client.proc.stdin.close()
    assert _ends(client) == 1
