"""The document store: edits applied on the client's lines, and nothing kept after didClose.

In process: the text the server holds is compared with what a client holding the same
document would have, and the server's state is inspected directly after a close.
"""

from __future__ import annotations

import asyncio
import gc
import re
import threading
import weakref
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest
from lsprotocol import types as lsp

from checker.core.source import SourceText
from checker.model.workflow import CompiledWorkflow
from nika_lsp.convert import client_lines
from nika_lsp.documents import Documents, apply_changes, uri_to_path

# Lone CR line breaks are split by SourceText (checker/core/source.py), as LSP counts lines.


def protocol_lines(text: str) -> list[str]:
    """The lines of ``text`` as the LSP specification counts them (independent of nika_lsp)."""
    return re.split(r"\r\n|\r|\n", text)


def edit(line: int, char: int, end_line: int, end_char: int, text: str) -> lsp.TextDocumentContentChangePartial:
    return lsp.TextDocumentContentChangePartial(
        range=lsp.Range(
            start=lsp.Position(line=line, character=char), end=lsp.Position(line=end_line, character=end_char)
        ),
        text=text,
    )


ODD = "a: 1\nb: 'x\u2028y\x85z\u2029w\x0c\x1cv'\nc: 3\n"


@pytest.mark.parametrize(
    "text",
    [
        "plain\ntext\n",
        "crlf\r\nline\r\n",
        ODD,
        "",
        "no final break",
        pytest.param("lone\rcr\rbreaks"),
        pytest.param("mixed\r\nbreaks\rhere\nend"),
    ],
)
def test_client_lines_are_the_protocol_lines(text: str) -> None:
    assert list(client_lines(SourceText(text))) == protocol_lines(text)


@pytest.mark.parametrize(
    ("text", "change", "expected"),
    [
        (ODD, edit(2, 3, 2, 4, "4"), ODD.replace("c: 3", "c: 4")),
        ("a\r\nb\r\nc", edit(1, 0, 1, 1, "B"), "a\r\nB\r\nc"),
        ("a\r\nb", edit(0, 1, 1, 0, ""), "ab"),  # joining lines removes the whole CRLF
        ("😀x\ny", edit(0, 2, 0, 3, "X"), "😀X\ny"),  # UTF-16: the emoji is two units
        ("ab\n", edit(99, 0, 99, 5, "tail"), "ab\ntail"),  # beyond the end: clamped to it
        ("ab\n", edit(0, 1, 0, 99, "!"), "a!\n"),  # beyond the line: clamped to its end
        pytest.param("a\rb\rc", edit(1, 0, 1, 1, "B"), "a\rB\rc"),
    ],
)
def test_incremental_change_lands_where_the_client_means(
    text: str, change: lsp.TextDocumentContentChangePartial, expected: str
) -> None:
    assert apply_changes(text, [change]) == expected


def test_changes_apply_in_order_and_in_the_negotiated_encoding() -> None:
    text = "é😀x\n"
    # UTF-8: é is 2 bytes and the emoji 4, so `x` starts at byte 6
    assert apply_changes(text, [edit(0, 6, 0, 7, "y")], "utf-8") == "é😀y\n"
    assert apply_changes(text, [edit(0, 2, 0, 3, "y")], "utf-32") == "é😀y\n"
    steps: list[Any] = [
        edit(0, 0, 0, 0, "1\n"),
        lsp.TextDocumentContentChangeWholeDocument(text="fresh\n"),
        edit(1, 0, 1, 0, "end"),
    ]
    assert apply_changes(text, steps) == "fresh\nend"


def test_a_change_to_a_never_opened_document_needs_the_full_text() -> None:
    docs = Documents()
    uri = "file:///tmp/nika-docs/ghost.nika.yaml"
    assert not docs.change(uri, 2, [edit(0, 0, 0, 0, "x")])
    assert not docs.known(uri)
    assert docs.change(uri, 3, [edit(0, 0, 0, 0, "lost"), lsp.TextDocumentContentChangeWholeDocument(text="whole")])
    doc = docs.text(uri)
    assert doc is not None and doc.text == "whole" and doc.version == 3


# -- nothing outlives didClose -----------------------------------------------------------------

DOC = """\
nika: v1
workflow:
  id: hygiene
tasks:
  fetch:
    infer: { model: mock/echo, prompt: x }
  use:
    with:
      got: ${{ tasks.fetch.output }}
    infer: { model: mock/echo, prompt: "${{ with.got }}" }
"""


def test_documents_forget_a_closed_document() -> None:
    docs = Documents()
    uri = "file:///tmp/nika-docs/flow.nika.yaml"
    docs.set(uri, DOC, 1)
    snap = docs.snapshot(uri)
    assert snap is not None and docs.last_good(uri) is snap and docs.should_publish(snap)
    assert snap.derived("key", lambda: 1) == 1 and snap.derived("key", lambda: 2) == 1
    ref = weakref.ref(snap)
    docs.close(uri)
    del snap
    gc.collect()
    assert not docs.holds(uri)
    assert ref() is None


async def _use_every_feature(server: Any, uri: str) -> weakref.ref[Any]:
    """Open ``uri`` and run each feature that derives something from its snapshot; a weak
    reference to the snapshot (the only reference this helper leaves behind)."""
    from nika_lsp.server import did_open

    doc = lsp.TextDocumentIdentifier(uri=uri)
    did_open(server, lsp.DidOpenTextDocumentParams(lsp.TextDocumentItem(uri, "yaml", 1, DOC)))
    snap = await server.snapshot_async(uri)
    features = server.protocol.fm.features
    on_use = lsp.Position(line=8, character=24)  # inside `tasks.fetch.output`
    hover = await features[lsp.TEXT_DOCUMENT_HOVER](lsp.HoverParams(doc, on_use))
    definition = await features[lsp.TEXT_DOCUMENT_DEFINITION](lsp.DefinitionParams(doc, on_use))
    completion = await features[lsp.TEXT_DOCUMENT_COMPLETION](
        lsp.CompletionParams(doc, lsp.Position(line=9, character=4))
    )
    whole = lsp.Range(start=lsp.Position(line=0, character=0), end=lsp.Position(line=10, character=0))
    hints = await features[lsp.TEXT_DOCUMENT_INLAY_HINT](lsp.InlayHintParams(doc, whole))
    if hover is None or completion is None or not hints:
        pytest.fail(f"a feature answered nothing: {hover=} {completion=} {hints=}")
    if definition is None or definition.range.start.line != 4:
        pytest.fail(f"definition went astray: {definition}")
    return weakref.ref(snap)


DRAIN_S = 60.0  # generous: the barrier is met as soon as the pool's earlier work is done


def _drain(pool: ThreadPoolExecutor) -> None:
    """Return once every task the pool held before the call has finished: as many tasks as the pool
    has threads meet at one barrier, so they are running together, and no earlier task still is."""
    n = pool._max_workers
    barrier = threading.Barrier(n + 1)
    met = [pool.submit(barrier.wait, DRAIN_S) for _ in range(n)]
    barrier.wait(DRAIN_S)
    for f in met:
        f.result()


async def test_the_server_keeps_nothing_after_did_close(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every feature that derives something from a snapshot runs, then the document closes:
    the server holds no state for it and the snapshot itself is gone (nothing module-level
    kept a reference)."""
    from nika_lsp.server import did_close, server

    monkeypatch.setattr(server.protocol, "client_capabilities", lsp.ClientCapabilities(), raising=False)
    monkeypatch.setattr(server.protocol, "server_capabilities", lsp.ServerCapabilities(), raising=False)
    published: list[lsp.PublishDiagnosticsParams] = []
    monkeypatch.setattr(server, "text_document_publish_diagnostics", published.append)
    uri = "file:///tmp/nika-docs/server.nika.yaml"
    ref = await _use_every_feature(server, uri)
    assert server.docs.holds(uri) and ref() is not None

    did_close(server, lsp.DidCloseTextDocumentParams(lsp.TextDocumentIdentifier(uri=uri)))
    # A check cancelled while its snapshot is being built in a pool thread lets go of it only when
    # that thread returns: wait for that event (every pool thread idle), let the loop run the
    # callbacks it queued, then one full collection. (A collection costs a good part of a second
    # in a worker that has run thousands of tests: polling with one was most of this test.)
    await asyncio.to_thread(_drain, server.thread_pool)
    for _ in range(3):
        await asyncio.sleep(0)
    gc.collect()
    assert not server.docs.holds(uri)
    assert uri not in server._pending
    leaked = ref()
    assert leaked is None, [type(r).__name__ for r in gc.get_referrers(leaked)]
    models = [o for o in gc.get_objects() if isinstance(o, CompiledWorkflow) and o.source.path == uri_to_path(uri)]
    assert not models, "a compiled model of the closed document is still referenced"
    assert published and published[-1].uri == uri and published[-1].diagnostics == []


# -- many edits: the snapshot always equals a from-scratch check -----------------------------


def _big_workflow(n: int) -> str:
    lines = ["nika: v1", "workflow:", "  id: many", "model: mock/echo", "tasks:"]
    for i in range(n):
        lines.append(f"  t{i}:")
        if i:
            lines.append(f'    with: {{ prev: "${{{{ tasks.t{i - 1}.output }}}}" }}')
        lines.append(
            f'    infer: {{ prompt: "step {i} é ${{{{ with.prev }}}}" }}' if i else '    infer: { prompt: "go" }'
        )
    return "\n".join(lines) + "\n"


def test_random_line_edits_give_what_a_fresh_check_gives(monkeypatch: pytest.MonkeyPatch) -> None:
    """Ranged edits (UTF-16 positions, as VS Code sends them) at random lines: after each, the
    server's analysis is exactly what `nika check` computes from the resulting text. Now and
    then the document is put back whole, so the walk keeps meeting texts the incremental
    analysis takes (not only ones it hands to the whole-document analysis)."""
    import random

    from checker.engine.incremental import IncrementalDocument
    from checker.engine.pipeline import compile_text
    from nika_lsp.documents import analyze_source

    engaged: list[bool] = []
    real = IncrementalDocument._compile

    def counting(
        self: IncrementalDocument,
        src: SourceText,
        base_dir: str | None,
        roots: tuple[str, ...] | None = None,
        buffers: Any = None,
    ) -> Any:
        done = real(self, src, base_dir, roots, buffers)
        engaged.append(done is not None)
        return done

    monkeypatch.setattr(IncrementalDocument, "_compile", counting)
    rng = random.Random(7)
    uri = "untitled:many.nika.yaml"
    original = text = _big_workflow(40)
    docs = Documents()
    docs.set(uri, text, 1)
    edits = ["x", "${{ tasks.t3.outptu }}", "", "'", ": {", "status == 'failed'", "  ", "é", "\n    retry: 2"]
    for version in range(2, 60):
        if rng.random() < 0.3:
            text = original
            assert docs.change(uri, version, [lsp.TextDocumentContentChangeWholeDocument(text=text)])
            assert docs.snapshot(uri) is not None
            continue
        lines = text.split("\n")
        line = rng.randrange(len(lines) - 1)
        col = rng.randrange(len(lines[line]) + 1)
        cut = rng.randrange(0, 3)
        new = rng.choice(edits)
        end_col = min(len(lines[line]), col + cut)
        utf16 = lambda s: len(s.encode("utf-16-le")) // 2  # noqa: E731
        change = lsp.TextDocumentContentChangePartial(
            range=lsp.Range(
                start=lsp.Position(line=line, character=utf16(lines[line][:col])),
                end=lsp.Position(line=line, character=utf16(lines[line][:end_col])),
            ),
            text=new,
        )
        lines[line] = lines[line][:col] + new + lines[line][end_col:]
        text = "\n".join(lines)
        assert docs.change(uri, version, [change])
        snap = docs.snapshot(uri)
        assert snap is not None and snap.source.text == text
        fresh = compile_text(text, uri)
        assert [d.sort_key() for d in snap.compiled.diagnostics] == [d.sort_key() for d in fresh.diagnostics]
        assert [(d.code, d.rule, d.message) for d in snap.compiled.diagnostics] == [
            (d.code, d.rule, d.message)
            for d in analyze_source(uri, SourceText(text, uri), version).compiled.diagnostics
        ]
    assert sum(engaged) > 20, engaged  # most versions were analysed incrementally


def test_two_threads_asking_for_one_version_share_one_analysis(monkeypatch: pytest.MonkeyPatch) -> None:
    import threading

    import nika_lsp.documents as documents

    calls = []
    started = threading.Event()
    release = threading.Event()
    real = documents.analyze_source

    def slow(
        uri: str, src: SourceText, version: int | None, incremental: Any = None, folders: Any = (), docs: Any = None
    ) -> Any:
        calls.append(version)
        started.set()
        release.wait(5)
        return real(uri, src, version, incremental, folders, docs)

    monkeypatch.setattr(documents, "analyze_source", slow)
    docs = Documents()
    uri = "untitled:a.nika.yaml"
    docs.set(uri, _big_workflow(3), 1)
    out: list[Any] = []
    first = threading.Thread(target=lambda: out.append(docs.snapshot(uri)))
    first.start()
    assert started.wait(5)
    second = threading.Thread(target=lambda: out.append(docs.snapshot(uri)))
    second.start()
    second.join(0.3)  # it is waiting for the first analysis, not computing its own
    assert second.is_alive()
    release.set()
    first.join(5)
    second.join(5)
    assert calls == [1]
    assert len(out) == 2 and out[0] is out[1]


_RACE_V1 = (
    "nika: v1\nworkflow:\n  id: w\nmodel: mock/echo\ntasks:\n"
    '  a:\n    infer: hi\n  b:\n    infer: "${{ tasks.a.output }}"\n    returns: {type: object, fields: {x: string}}\n'
)


def test_an_analysis_overtaken_by_an_edit_is_still_the_last_good_one(monkeypatch: pytest.MonkeyPatch) -> None:
    """Version 2 is analysed while version 3 (broken YAML) arrives: the analysis of 2 moved the
    tasks it shares with version 1, so it, not version 1, must be what hover reads next."""
    from checker.engine.incremental import IncrementalDocument
    from nika_lsp.features.hover import task_card
    from nika_lsp.features.model_view import view_of

    uri = "file:///tmp/nika-race/w.nika.yaml"
    v2 = _RACE_V1.replace("  a:\n", "  # a new comment line\n  a:\n")
    v3 = v2 + '  c: "unterminated\n'
    docs = Documents()
    docs.set(uri, _RACE_V1, 1)
    assert docs.snapshot(uri) is not None
    docs.set(uri, v2, 2)
    real = IncrementalDocument.compile

    def overtaken(
        self: IncrementalDocument,
        src: SourceText,
        base: str | None = None,
        version: int | None = None,
        roots: tuple[str, ...] | None = None,
        buffers: Any = None,
    ) -> Any:
        done = real(self, src, base, version, roots, buffers)
        docs.set(uri, v3, 3)  # the next edit lands while this analysis runs
        return done

    monkeypatch.setattr(IncrementalDocument, "compile", overtaken)
    docs.snapshot(uri)
    monkeypatch.setattr(IncrementalDocument, "compile", real)
    assert docs.snapshot(uri) is not None
    good = docs.last_good(uri)
    assert good is not None and good.version == 2
    assert "`{type: object, fields: {x: string}}`" in task_card(view_of(good), "b")


def test_an_older_text_analysed_after_a_newer_one_moves_nothing() -> None:
    """Two analyses of one document finishing out of order: the older text is analysed whole,
    so the newer analysis's positions stay right."""
    from checker.engine.incremental import IncrementalDocument
    from checker.engine.pipeline import compile_source

    v2 = _RACE_V1.replace("  a:\n", "  # a new comment line\n  a:\n")
    doc = IncrementalDocument()
    doc.compile(SourceText(_RACE_V1, "w.nika.yaml"), None, 1)
    newer = doc.compile(SourceText(v2, "w.nika.yaml"), None, 3)
    older = doc.compile(SourceText(_RACE_V1, "w.nika.yaml"), None, 2)
    assert newer.workflow is not None and older.workflow is not None
    assert older.workflow.tasks["b"] is not newer.workflow.tasks["b"]  # built afresh
    fresh = compile_source(SourceText(v2, "w.nika.yaml"))
    assert fresh.workflow is not None
    assert newer.workflow.tasks["b"].key.span == fresh.workflow.tasks["b"].key.span
