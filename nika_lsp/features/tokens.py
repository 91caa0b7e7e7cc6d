"""``textDocument/semanticTokens/full`` and ``…/full/delta``: tokens inside ``${{ }}`` islands
only, so the YAML around them keeps the editor's own highlighting.

The tokens of an expression site (one templated scalar of the model) depend on that site alone:
on its islands' text and on where its characters sit in their lines. The incremental analysis
keeps the very site objects of every task an edit did not touch (their text is unchanged, and a
task starts on a line of its own, so their columns are too; only their line numbers move), so
the tokens are kept per site and per position encoding (:class:`TokenCache`, one per open
document): after a one-line edit only the sites of the edited task are lexed again, and the
answer is assembled from the kept pieces, each placed at its first token's line. Every step is
linear in the document: columns are counted from the start of each token's line, in order, so a
long line costs its length once (a prefix encoded per token cost its square).

A request runs off the request loop, on the server's token worker (one thread, so a document's
pieces are never computed twice at once), and stops at the next site once the client cancels it.
"""

from __future__ import annotations

import itertools
import threading
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from lsprotocol import types as lsp

from checker.core.source import SourceText
from checker.expr.lexer import EOF, ERROR, FALSE, FLOAT, IDENT, IN, INT, NULL, STRING, TRUE, scan
from checker.parse.nodes import over_scalar_cap
from nika_lsp.convert import UTF32, position

if TYPE_CHECKING:
    from checker.model.workflow import ExprSite
    from nika_lsp.documents import Snapshot
    from nika_lsp.host import Host

TOKEN_TYPES = ("namespace", "property", "function", "operator", "string", "number", "keyword")
LEGEND = lsp.SemanticTokensLegend(token_types=list(TOKEN_TYPES), token_modifiers=[])
_OPERATORS = frozenset({"==", "!=", "<", "<=", ">", ">=", "&&", "||", "!", "?", ":", IN})
_LITERALS = {STRING: "string", INT: "number", FLOAT: "number", TRUE: "keyword", FALSE: "keyword", NULL: "keyword"}
_KIND_INDEX = {k: i for i, k in enumerate(TOKEN_TYPES)}


class Cancelled(Exception):
    """The client cancelled the request: the work stopped where it was."""


def classify(text: str) -> list[tuple[int, int, str]]:
    """``(start, end, token type)`` of each coloured token of one island's expression text.

    A name called like a function (``size(x)``, ``x.contains(y)``) is a function; a name after
    a dot is a property; any other name starts a reference, so it is a namespace (a root).
    Brackets, parentheses, dots and commas are left to the editor. Lexing stops at the first
    character the language refuses; the tokens before it keep their colour.
    """
    toks = scan(text)
    out: list[tuple[int, int, str]] = []
    for i, tok in enumerate(toks):
        if tok.kind in (EOF, ERROR):
            break
        if tok.kind == IDENT:
            nxt = toks[i + 1].kind if i + 1 < len(toks) else EOF
            prev = toks[i - 1].kind if i > 0 else None
            kind = "function" if nxt == "(" else "property" if prev == "." else "namespace"
        elif tok.kind in _LITERALS:
            kind = _LITERALS[tok.kind]
        elif tok.kind in _OPERATORS:
            kind = "operator"
        else:
            continue
        out.append((tok.start, tok.end, kind))
    return out


def _spans(site: ExprSite, src: SourceText) -> list[tuple[int, int, int]]:
    """``(start, end, kind index)`` in document offsets of each token of ``site`` written in one
    piece on one line, in order."""
    node = site.value
    if not node.offsets or over_scalar_cap(node.raw):
        return []  # unmappable (escapes, folding), or a scalar the checker refused (NIKA-YAML-005)
    out = []
    line_index = src.line_index
    for island in site.template.islands:
        base = island.expr_start
        for s, e, kind in classify(island.text):
            a, b = base + s, base + e
            start = node.offset_at(a)
            end = node.offset_at(b - 1) + 1
            if end - start != b - a or line_index(start) != line_index(end):
                continue  # the token is not written in one piece on one line
            out.append((start, end, _KIND_INDEX[kind]))
    return out


def _units(text: str, encoding: str) -> int:
    if encoding == UTF32 or text.isascii():
        return len(text)
    if encoding == "utf-8":
        return len(text.encode("utf-8", "surrogatepass"))
    return len(text.encode("utf-16-le", "surrogatepass")) // 2


class _Piece:
    """One site's tokens, delta-encoded from its first token: ``data`` as the protocol wants it
    but for the first token's line delta and column (``col``), which depend on what comes before."""

    __slots__ = ("col", "data", "end", "last_col", "last_line", "node", "origin", "start")

    def __init__(self, node: Any, start: int, end: int, col: int, data: list[int], last_line: int, last_col: int):
        self.node, self.origin = node, node.span.start  # where the scalar started when the piece was made
        self.start, self.end = start, end  # its first token's start, its last token's end, then
        self.col, self.data, self.last_line, self.last_col = col, data, last_line, last_col

    def shift(self) -> int:
        """How far the scalar moved since (its spans follow its task's anchor)."""
        return self.node.span.start - self.origin


def _piece(site: ExprSite, src: SourceText, encoding: str) -> _Piece | None:
    spans = _spans(site, src)
    if not spans:
        return None
    text, starts = src.text, src.line_starts
    line = src.line_index(spans[0][0])
    first_line = line
    nxt = starts[line + 1] if line + 1 < len(starts) else len(text) + 1
    data: list[int] = []
    prev_line = prev_col = col0 = 0
    for i, (start, end, kind) in enumerate(spans):
        while start >= nxt:  # tokens come in order: the lines are walked once
            line += 1
            nxt = starts[line + 1] if line + 1 < len(starts) else len(text) + 1
        ls = starts[line]
        if encoding == UTF32:
            col, length = start - ls, end - start
        else:
            col, length = _units(text[ls:start], encoding), _units(text[start:end], encoding)
        rel = line - first_line
        if i == 0:
            col0 = col
            data += [0, col, length, kind, 0]
        else:
            data += [rel - prev_line, col - prev_col if rel == prev_line else col, length, kind, 0]
        prev_line, prev_col = rel, col
    return _Piece(site.value, spans[0][0], spans[-1][1], col0, data, prev_line, prev_col)


class TokenCache:
    """The token pieces of one open document's sites, kept across its versions, and the last
    answer sent (for ``full/delta``). One per document (dropped with it); used by one thread at
    a time (the server's token worker; the lock guards any other caller)."""

    _ids = itertools.count(1)

    def __init__(self) -> None:
        self.lock = threading.Lock()
        # (id of a site, encoding) -> (the site, kept alive so its id stays its own; its piece)
        self.pieces: dict[tuple[int, str], tuple[Any, _Piece | None]] = {}
        self.last: tuple[str, list[list[int]], list[int]] | None = None  # (result id, chunks, data)

    def chunks(self, snap: Snapshot, encoding: str, cancel: threading.Event | None = None) -> list[list[int]] | None:
        """Each site's encoded tokens, in document order, placed after the one before; ``None``
        when sites overlap (then :func:`exact_tokens` answers)."""
        src = snap.source
        kept: dict[tuple[int, str], tuple[Any, _Piece | None]] = {}
        pieces: list[tuple[int, _Piece]] = []
        seen: set[int] = set()
        old = self.pieces
        for n, site in enumerate(snap.compiled.sites):
            if cancel is not None and n % 32 == 0 and cancel.is_set():
                raise Cancelled
            node = site.value
            if id(node) in seen:
                continue  # one scalar named by two sites: its tokens once
            seen.add(id(node))
            key = (id(site), encoding)
            hit = old.get(key)
            piece = hit[1] if hit is not None and hit[0] is site else _piece(site, src, encoding)
            kept[key] = (site, piece)
            if piece is not None:
                pieces.append((piece.start + piece.shift(), piece))
        self.pieces = kept  # what this version did not use is forgotten
        pieces.sort(key=lambda t: t[0])
        out: list[list[int]] = []
        prev_line = prev_col = 0
        prev_end = -1
        line_index = src.line_index
        for start, p in pieces:
            if start < prev_end:
                return None  # two sites' tokens interleave: assembled exactly instead
            line = line_index(start)
            head = [line - prev_line, p.col - prev_col if line == prev_line else p.col, *p.data[2:5]]
            out.append(head + p.data[5:] if len(p.data) > 5 else head)
            prev_line, prev_col = line + p.last_line, p.last_col
            prev_end = p.end + p.shift()
        return out


def exact_tokens(snap: Snapshot, encoding: str, cancel: threading.Event | None = None) -> list[int]:
    """The tokens computed directly, token by token (sites that overlap one another)."""
    src = snap.source
    found: dict[int, tuple[int, int]] = {}
    for n, site in enumerate(snap.compiled.sites):
        if cancel is not None and n % 32 == 0 and cancel.is_set():
            raise Cancelled
        for start, end, kind in _spans(site, src):
            found.setdefault(start, (end, kind))
    data: list[int] = []
    prev_line = prev_char = 0
    for start in sorted(found):
        end, kind_index = found[start]
        p = position(src, start, encoding)
        length = position(src, end, encoding).character - p.character
        delta_char = p.character - prev_char if p.line == prev_line else p.character
        data += [p.line - prev_line, delta_char, length, kind_index, 0]
        prev_line, prev_char = p.line, p.character
    return data


def _flat(chunks: Sequence[list[int]]) -> list[int]:
    out: list[int] = []
    for c in chunks:
        out.extend(c)
    return out


def semantic_tokens(
    snap: Snapshot, encoding: str, cache: TokenCache | None = None, cancel: threading.Event | None = None
) -> list[int]:
    """The relative (delta) encoding of every island token, positions in ``encoding`` units."""
    return full(snap, encoding, cache or TokenCache(), cancel).data


def full(snap: Snapshot, encoding: str, cache: TokenCache, cancel: threading.Event | None = None) -> lsp.SemanticTokens:
    """The whole answer, remembered as the document's last (``full/delta`` starts from it)."""
    with cache.lock:
        chunks = cache.chunks(snap, encoding, cancel)
        if chunks is None:
            data = exact_tokens(snap, encoding, cancel)
            chunks = [data]
        else:
            data = _flat(chunks)
        rid = f"{snap.version}.{next(TokenCache._ids)}"
        cache.last = (rid, chunks, data)
    return lsp.SemanticTokens(data=data, result_id=rid)


def delta(
    snap: Snapshot, encoding: str, cache: TokenCache, previous: str, cancel: threading.Event | None = None
) -> lsp.SemanticTokens | lsp.SemanticTokensDelta:
    """The edit from the answer ``previous`` to this one: the chunks both share at the start and
    at the end are kept, the middle replaced. A ``previous`` that is not the last answer gets
    the whole answer."""
    with cache.lock:
        last = cache.last
    if last is None or last[0] != previous:
        return full(snap, encoding, cache, cancel)
    _, old_chunks, old_data = last
    answer = full(snap, encoding, cache, cancel)
    with cache.lock:
        assert cache.last is not None
        new_chunks, new_data = cache.last[1], cache.last[2]
    p = 0
    limit = min(len(old_chunks), len(new_chunks))
    while p < limit and old_chunks[p] == new_chunks[p]:
        p += 1
    q = 0
    while q < limit - p and old_chunks[-1 - q] == new_chunks[-1 - q]:
        q += 1
    start = sum(len(c) for c in old_chunks[:p])
    old_tail = sum(len(c) for c in old_chunks[len(old_chunks) - q :]) if q else 0
    new_tail = sum(len(c) for c in new_chunks[len(new_chunks) - q :]) if q else 0
    edits = []
    if old_data != new_data:
        edits.append(
            lsp.SemanticTokensEdit(
                start=start,
                delete_count=len(old_data) - old_tail - start,
                data=new_data[start : len(new_data) - new_tail],
            )
        )
    return lsp.SemanticTokensDelta(edits=edits, result_id=answer.result_id)


# -- registration ----------------------------------------------------------------------------


def _cache(ls: Host, uri: str) -> TokenCache:
    return ls.docs.state(uri, "semantic-tokens", TokenCache)


def register(server: Host) -> None:
    """Attach the semantic token handlers (``full`` and ``full/delta``)."""

    @server.feature(lsp.TEXT_DOCUMENT_SEMANTIC_TOKENS_FULL, LEGEND)
    async def semantic_tokens_full(ls: Host, params: lsp.SemanticTokensParams) -> lsp.SemanticTokens | None:
        uri = params.text_document.uri
        snap = await ls.snapshot_async(uri)
        if snap is None:
            return None
        cache = _cache(ls, uri)
        empty = lsp.SemanticTokens(data=[])
        return await ls.off_loop("semanticTokens", lambda cancel: full(snap, ls.encoding, cache, cancel), empty)

    @server.feature(lsp.TEXT_DOCUMENT_SEMANTIC_TOKENS_FULL_DELTA, LEGEND)
    async def semantic_tokens_delta(
        ls: Host, params: lsp.SemanticTokensDeltaParams
    ) -> lsp.SemanticTokens | lsp.SemanticTokensDelta | None:
        uri = params.text_document.uri
        snap = await ls.snapshot_async(uri)
        if snap is None:
            return None
        cache = _cache(ls, uri)
        previous = params.previous_result_id
        empty = lsp.SemanticTokens(data=[])
        return await ls.off_loop(
            "semanticTokens", lambda cancel: delta(snap, ls.encoding, cache, previous, cancel), empty
        )


__all__ = [
    "LEGEND",
    "TOKEN_TYPES",
    "Cancelled",
    "TokenCache",
    "classify",
    "delta",
    "full",
    "register",
    "semantic_tokens",
]
