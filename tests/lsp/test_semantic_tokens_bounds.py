"""`semanticTokens/full` never blocks the request loop and never tokenises a scalar the checker
refused (issue 28). The project rule (bad input is a finding, never a hang) and the parser's
65536-byte scalar cap (NIKA-YAML-005) are what these tests enforce."""

from __future__ import annotations

from pathlib import Path

from raw_client import TIMEOUT, RawClient

from checker.parse.nodes import MAX_DOCUMENT_BYTES, MAX_SCALAR_BYTES
from nika_lsp.documents import Documents
from nika_lsp.features.outline import semantic_tokens

OTHER = "nika: v1\nworkflow:\n  id: other\ntasks:\n  a:\n    infer: { prompt: hi }\n"


def _huge(size: int) -> str:
    head = "nika: v1\nworkflow:\n  id: big\ntasks:\n  a:\n    infer:\n      prompt: "
    tail = "\n"
    chain = "a" + ".a" * ((size - len(head) - len(tail) - 8) // 2)
    return f"{head}${{{{ {chain} }}}}{tail}"


def _open(client: RawClient, uri: str, text: str) -> None:
    item = {"uri": uri, "languageId": "nika-workflow", "version": 1, "text": text}
    client.notify("textDocument/didOpen", {"textDocument": item})


def test_an_oversized_scalar_gets_no_tokens() -> None:
    """A scalar over the checker's byte cap is refused (NIKA-YAML-005), so no feature colours it."""
    text = _huge(MAX_SCALAR_BYTES + 4096)  # over the cap is enough: the check's cost grows with the size
    docs = Documents()
    uri = "file:///big.nika.yaml"
    docs.set(uri, text, 1)
    snap = docs.snapshot(uri)
    assert snap is not None
    assert any(d.code == "NIKA-YAML-005" for d in snap.compiled.diagnostics)
    assert semantic_tokens(snap, "utf-16") == []


def test_tokens_of_a_one_megabyte_line_do_not_block_other_documents(tmp_path: Path) -> None:
    """While a 1 MB `${{ a.a.… }}` line is being checked and coloured, another document's request,
    sent after it, is answered before it (the latency: benchmarks/bounds.py)."""
    big = (tmp_path / "big.nika.yaml").as_uri()
    other = (tmp_path / "other.nika.yaml").as_uri()
    text = _huge(MAX_DOCUMENT_BYTES - 1024)
    client = RawClient()
    try:
        client.call("initialize", {"processId": None, "rootUri": tmp_path.as_uri(), "capabilities": {}})
        client.notify("initialized", {})
        _open(client, other, OTHER)
        assert "result" in client.call("textDocument/semanticTokens/full", {"textDocument": {"uri": other}})
        _open(client, big, text)
        slow = client.request("textDocument/semanticTokens/full", {"textDocument": {"uri": big}})
        quick = client.request("textDocument/semanticTokens/full", {"textDocument": {"uri": other}})
        got = client.collect_until(slow)
        # asked second, answered first: the big document's check and colouring did not hold the loop
        early = [m for m in got if m.get("id") == quick]
        assert early and "result" in early[0], [m.get("id") for m in got]
        answer = next(m for m in got if m.get("id") == slow)
        assert answer["result"]["data"] == []
        assert "result" in client.call("shutdown", None)
        client.notify("exit", None)
        assert client.proc.wait(timeout=TIMEOUT) == 0
    finally:
        if client.proc.poll() is None:
            client.proc.kill()
            client.proc.wait()
