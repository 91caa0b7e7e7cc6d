"""`semanticTokens/full` never blocks the request loop or another document, stops when it is
cancelled, and never tokenises a scalar the checker refused (issues 28 and 41). The project rule
(bad input is a finding, never a hang) and the parser's 65536-byte scalar cap (NIKA-YAML-005)
are what these tests enforce; none of them times anything: they watch the order of events."""

from __future__ import annotations

import asyncio
import threading
from pathlib import Path

import pytest
from raw_client import RawClient

from checker.parse.nodes import MAX_DOCUMENT_BYTES, MAX_SCALAR_BYTES
from nika_lsp.documents import Documents
from nika_lsp.features import tokens
from nika_lsp.features.tokens import Cancelled, TokenCache, exact_tokens, full, semantic_tokens

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
    """While the tokens of a 1 MB `${{ a.a.… }}` line are on their way (its analysis first), a
    hover and the tokens of another document, asked after it, are answered before it."""
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
        hover = client.request(
            "textDocument/hover", {"textDocument": {"uri": other}, "position": {"line": 4, "character": 3}}
        )
        quick = client.request("textDocument/semanticTokens/full", {"textDocument": {"uri": other}})
        got = client.collect_until(slow)
        order = [m.get("id") for m in got]
        assert hover in order and quick in order and order.index(quick) < order.index(slow), order
        answer = next(m for m in got if m.get("id") == slow)
        assert answer["result"]["data"] == []
        assert "result" in client.call("shutdown", None)
        client.notify("exit", None)
        assert client.proc.wait(timeout=5.0) == 0
    finally:
        if client.proc.poll() is None:
            client.proc.kill()
            client.proc.wait()


def _doc(n: int) -> str:
    lines = ["nika: v1", "workflow:", "  id: chains", "model: mock/echo", "tasks:"]
    for i in range(n):
        expr = " && ".join(f"with.n > {i * 10 + j}" for j in range(10))
        lines += [f"  t{i}:", "    with: { n: 1 }", f'    infer: {{ prompt: "${{{{ {expr} }}}}" }}']
    return "\n".join(lines) + "\n"


def test_a_cancelled_computation_stops_at_the_next_site(monkeypatch: pytest.MonkeyPatch) -> None:
    """The cancel flag is read between sites: set after the first site is coloured, nothing
    after the next check is computed."""
    docs = Documents()
    uri = "file:///cancel.nika.yaml"
    docs.set(uri, _doc(200), 1)
    snap = docs.snapshot(uri)
    assert snap is not None and len(snap.compiled.sites) >= 200
    cancel = threading.Event()
    made = []
    piece = tokens._piece

    def counting(*args: object) -> object:
        made.append(1)
        cancel.set()
        return piece(*args)  # type: ignore[arg-type]

    monkeypatch.setattr(tokens, "_piece", counting)
    with pytest.raises(Cancelled):
        full(snap, "utf-16", TokenCache(), cancel)
    assert 1 <= len(made) <= 32  # one batch of sites at most, of the 200


async def test_cancelling_the_request_stops_the_work() -> None:
    """`$/cancelRequest` cancels the handler's task; the token thread sees its flag set and
    its work ends (the wait below is for that event, not for a time)."""
    from nika_lsp.server import server

    started, stopped = threading.Event(), threading.Event()

    def work(cancel: threading.Event) -> list[int]:
        started.set()
        assert cancel.wait(60)
        stopped.set()
        raise Cancelled

    task = asyncio.ensure_future(server.off_loop("semanticTokens", work, []))
    assert await asyncio.to_thread(started.wait, 60)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert await asyncio.to_thread(stopped.wait, 60)


def test_kept_pieces_follow_edits_and_match_the_direct_computation() -> None:
    """After edits above, inside and below the sites, the answer assembled from kept pieces is
    the one computed token by token; unchanged tasks' pieces are reused, not made again."""
    docs = Documents()
    uri = "file:///kept.nika.yaml"
    text = _doc(40)
    cache = TokenCache()
    docs.set(uri, text, 1)
    first = docs.snapshot(uri)
    assert first is not None
    assert semantic_tokens(first, "utf-16", cache) == exact_tokens(first, "utf-16")
    lines = text.split("\n")
    edits = [
        (7, lines[7].replace("> 20", "> 2000")),  # inside t1's expression
        (5, "  # a comment above every task"),
        (len(lines) - 2, lines[-2] + "  # trailing"),
    ]
    version = 1
    for at, line in edits:
        inserted = line.startswith("  #")  # a new line, or one line replaced
        lines = [*lines[:at], line, *lines[at if inserted else at + 1 :]]
        version += 1
        docs.set(uri, "\n".join(lines), version)
        snap = docs.snapshot(uri)
        assert snap is not None
        for enc in ("utf-16", "utf-8"):
            assert semantic_tokens(snap, enc, cache) == exact_tokens(snap, enc)
    reused = sum(1 for site, piece in cache.pieces.values() if piece is not None and piece.node is site.value)
    assert reused == len(cache.pieces)
