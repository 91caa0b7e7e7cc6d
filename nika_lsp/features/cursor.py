"""Where is the cursor? Answered from the raw text around it, shared by hover and completion.

The document under edit is usually broken (a half-typed key, an unclosed ``${{``), so nothing
here parses YAML. The enclosing block is found from indentation alone: walk up from the
cursor line and keep every key written further left than the current threshold. The cursor
line itself is scanned by a small flow-aware tokenizer (``{ a: x, b: [` …), so inline mappings
and lists are understood as well. Columns are code-point offsets into one line; turning them
into protocol positions is :mod:`nika_lsp.convert`'s job. What the compiled snapshot says about
the names found here is :mod:`nika_lsp.features.model_view`.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field

from checker.grammar import table as G

# Keys of which at most one may appear in the same block.
EXCLUSIVE: tuple[frozenset[str], ...] = G.exclusive_groups()

_KEY_AT = re.compile(r"""("(?:[^"\\]|\\.)*"|'[^']*'|[^\s#'"{}\[\],:][^#{}\[\],]*?)[ \t]*:(?=[ \t]|$)""")
CODE_TOKEN = re.compile(r"NIKA-[A-Z0-9_]+(?:-[A-Z0-9_]+)*")


# ---------------------------------------------------------------------------------------------
# Line shapes
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Shape:
    """The structure of one non-blank line: indentation, ``- `` markers and a leading key."""

    indent: int  # column of the first non-space character
    key_col: int  # column of the content after any ``- `` markers
    dashes: int  # how many ``- `` markers open the line
    key: str | None  # the block key the line starts with, if any
    after: int  # column just past the key's colon (``-1`` without a key)


def skip_dashes(text: str) -> tuple[str, int, int]:
    """Strip leading ``- `` list markers: (the rest, the columns consumed, how many markers)."""
    start = len(text)
    dashes = 0
    while text[:1] == "-" and (len(text) == 1 or text[1] in " \t\r"):
        text = text[1:].lstrip(" \t")
        dashes += 1
    return text, start - len(text), dashes


def shape(line: str) -> Shape | None:
    """The :class:`Shape` of ``line``; ``None`` for blank and comment-only lines."""
    line = line.rstrip("\r")
    stripped = line.lstrip(" ")
    if not stripped or stripped[0] == "#":
        return None
    indent = len(line) - len(stripped)
    stripped, width, dashes = skip_dashes(stripped)
    col = indent + width
    key = None
    after = -1
    m = _KEY_AT.match(stripped)
    if m:
        key = _unquote(m.group(1).rstrip())
        after = col + m.end()
    return Shape(indent, col, dashes, key, after)


def _opens_block_scalar(line: str) -> bool:
    """Whether ``line`` is ``key: |`` or ``key: >`` (its value is the indented text below)."""
    sh = shape(line)
    if sh is None or sh.key is None:
        return False
    rest = line[sh.after :].lstrip(" ")
    return rest[:1] in ("|", ">")


def _unquote(text: str) -> str:
    if len(text) >= 2 and text[0] == text[-1] and text[0] in "\"'":
        return text[1:-1]
    return text


@dataclass(frozen=True, slots=True)
class Frame:
    """An enclosing block key: its text, column and line."""

    key: str
    col: int
    line: int


def ancestors(lines: Sequence[str], line_no: int, col: int) -> tuple[Frame, ...]:
    """Every block key enclosing column ``col`` of line ``line_no``, outermost first."""
    frames: list[Frame] = []
    threshold = col
    for i in range(min(line_no, len(lines)) - 1, -1, -1):
        if threshold <= 0:
            break
        line = lines[i]
        # cheap pre-filter: a line indented at or past the threshold cannot enclose the cursor
        # (a ``- key:`` line is the exception: its key sits right of its indentation)
        n = len(line) - len(line.lstrip(" "))
        if n >= threshold:
            continue
        sh = shape(line)
        if sh is None or sh.key is None or sh.key_col >= threshold:
            continue
        frames.append(Frame(sh.key, sh.key_col, i))
        threshold = sh.key_col
    frames.reverse()
    return tuple(frames)


def block_end(lines: Sequence[str], frame: Frame) -> int:
    """The first line after ``frame``'s block (its value lines are more indented)."""
    for i in range(frame.line + 1, len(lines)):
        sh = shape(lines[i])
        if sh is None:
            continue
        if sh.indent < frame.col or (sh.indent == frame.col and not sh.dashes):
            return i
    return len(lines)


def child_keys(lines: Sequence[str], frame: Frame, *, skip: int = -1) -> dict[str, int]:
    """The keys written directly under ``frame`` (block style), with their lines.

    ``skip`` leaves one line out (the cursor line, whose key is still being typed).
    """
    out: dict[str, int] = {}
    child_col = -1
    for i in range(frame.line + 1, block_end(lines, frame)):
        sh = shape(lines[i])
        if sh is None or sh.key is None:
            continue
        if child_col < 0:
            child_col = sh.key_col
        if sh.key_col == child_col and i != skip:
            out.setdefault(sh.key, i)
    return out


def value_text(line: str) -> str | None:
    """The scalar written after the line's block key (quotes removed), if any."""
    line = line.rstrip("\r")
    sh = shape(line)
    if sh is None or sh.key is None:
        return None
    rest = line[sh.after :].split(" #", 1)[0].strip()
    if not rest or rest[0] in "{[|>":
        return None
    return _unquote(rest)


# ---------------------------------------------------------------------------------------------
# The cursor line
# ---------------------------------------------------------------------------------------------


@dataclass(slots=True)
class _Level:
    kind: str  # "top" | "{" | "["
    owner: str | None  # key whose value this flow collection is
    key: str | None = None  # the key whose value is being written
    value: bool = False
    keys: list[str] = field(default_factory=list)
    values: dict[str, str] = field(default_factory=dict)
    tok: str = ""
    tok_start: int = -1
    quoted: bool = False


@dataclass(frozen=True, slots=True)
class FlowState:
    """What a flow-aware scan of a line fragment ends in."""

    path: tuple[str, ...]  # keys of the flow collections opened (innermost last)
    mode: str  # "key" | "value" | "item" | "none"
    key: str | None
    partial: str
    start: int  # column where the partial starts
    quote: str | None
    keys: tuple[str, ...]  # keys already written in the innermost flow mapping
    parent_values: dict[str, str]  # scalar values written next to the innermost collection


def _mask_islands(text: str) -> str:
    """Replace every closed ``${{ … }}`` by ``x`` of the same length (columns stay put)."""
    out = text
    i = out.find("${{")
    while i != -1:
        j = out.find("}}", i + 3)
        if j == -1:
            break
        out = out[:i] + "x" * (j + 2 - i) + out[j + 2 :]
        i = out.find("${{", j + 2)
    return out


def scan_flow(text: str, base: int, *, top_key: str | None, full: str = "") -> FlowState:
    """Scan ``text`` (a line fragment starting at column ``base``) up to its end.

    ``top_key`` is the block key whose value the fragment is (``None`` for a bare item);
    ``full`` is the rest of the line after the fragment, used to tell ``a:`` (a key) from
    ``nika:log`` (a plain scalar holding a colon).
    """
    text = _mask_islands(text)
    stack = [_Level("top", None, key=top_key, value=True)]
    n = len(text)
    i = 0
    while i < n:
        lv = stack[-1]
        ch = text[i]
        if ch in "\"'" and not lv.tok.strip():
            j = i + 1
            while j < n and text[j] != ch:
                j += 2 if (ch == '"' and text[j] == "\\") else 1
            if j >= n:  # unclosed: the cursor is inside the quotes
                return _state(stack, text[i + 1 :], base + i + 1, ch)
            lv.tok, lv.tok_start, lv.quoted = text[i + 1 : j], base + i, True
            i = j + 1
            continue
        if ch == "#" and (i == 0 or text[i - 1] in " \t"):
            return FlowState((), "none", None, "", base + i, None, (), {})
        if ch == ":":
            nxt = text[i + 1] if i + 1 < n else (full[:1] or " ")
            if (nxt in " \t,{}[]" or lv.quoted) and not (lv.kind != "[" and lv.value):
                lv.key = _unquote(lv.tok.strip())
                lv.keys.append(lv.key)
                lv.value, lv.tok, lv.tok_start, lv.quoted = True, "", -1, False
                i += 1
                continue
        if ch in "{[":
            owner = lv.key if lv.kind != "[" and lv.value else None
            stack.append(_Level(ch, owner, value=(ch == "[")))
            i += 1
            continue
        if ch in "}]":
            if len(stack) > 1:
                stack.pop()
            up = stack[-1]
            up.tok, up.tok_start, up.quoted = "\x00", -1, False  # a finished collection value
            i += 1
            continue
        if ch == ",":
            _commit(lv)
            if lv.kind == "{":
                lv.key, lv.value = None, False
            lv.tok, lv.tok_start, lv.quoted = "", -1, False
            i += 1
            continue
        if ch not in " \t" and lv.tok_start < 0:
            lv.tok_start = base + i
        if lv.tok_start >= 0:
            lv.tok += ch
        i += 1
    lv = stack[-1]
    partial = "" if lv.tok == "\x00" else lv.tok.strip()
    start = lv.tok_start if lv.tok_start >= 0 else base + n
    return _state(stack, partial, start, None, closed_value=lv.tok == "\x00" or lv.quoted)


def _commit(lv: _Level) -> None:
    if lv.key is not None and lv.value and lv.tok and lv.tok != "\x00":
        lv.values[lv.key] = lv.tok.strip()


def _state(
    stack: list[_Level], partial: str, start: int, quote: str | None, *, closed_value: bool = False
) -> FlowState:
    path = tuple(lv.owner for lv in stack[1:] if lv.owner is not None)
    lv = stack[-1]
    parent_values: dict[str, str] = {}
    if len(stack) > 1:
        up = stack[-2]
        _commit(up)
        parent_values = dict(up.values)
    if closed_value:
        mode = "none"
    elif lv.kind == "[":
        mode = "item"
    elif lv.value:
        mode = "value"
    else:
        mode = "key"
    key = lv.key if mode == "value" else (lv.owner if mode == "item" else None)
    return FlowState(path, mode, key, partial, start, quote, tuple(lv.keys), parent_values)


def open_island(prefix: str) -> int:
    """Column of the live ``${{`` left open before the end of ``prefix``, or ``-1``."""
    i = prefix.rfind("${{")
    while i != -1:
        run = 0
        while i - run > 0 and prefix[i - run - 1] == "\\":
            run += 1
        if run % 2 == 0:
            return i if prefix.find("}}", i + 3) == -1 else -1
        i = prefix.rfind("${{", 0, i)
    return -1


@dataclass(frozen=True, slots=True)
class Context:
    """The syntactic situation at the cursor.

    ``kind`` is ``key`` (a mapping key is being written), ``value`` (the scalar after
    ``key:``), ``item`` (an entry of a list owned by ``key``), ``expr`` (inside ``${{``) or
    ``none``. ``path`` lists the enclosing mapping keys, outermost first; for ``value``/
    ``item``/``expr`` it stops before ``key``. ``start`` is the column where the text being
    written (``partial``) starts; the cursor column is ``col``.
    """

    kind: str
    path: tuple[str, ...]
    key: str | None
    partial: str
    start: int
    col: int
    line: int
    quote: str | None = None
    present: frozenset[str] = frozenset()
    frames: tuple[Frame, ...] = ()
    expr: str = ""
    expr_start: int = -1
    flow_values: dict[str, str] = field(default_factory=dict)

    @property
    def task_id(self) -> str | None:
        """The task the cursor is in (``tasks.<id>…``)."""
        full = self.full_path
        return full[1] if len(full) >= 2 and full[0] == "tasks" else None

    @property
    def full_path(self) -> tuple[str, ...]:
        return (*self.path, self.key) if self.key is not None and self.kind in ("value", "expr") else self.path


def _flow_suffix_keys(rest: str) -> list[str]:
    """Keys written after the cursor in the same flow mapping (up to its closing brace)."""
    keys: list[str] = []
    depth = 0
    tok = ""
    i = 0
    rest = _mask_islands(rest)
    while i < len(rest):
        ch = rest[i]
        if ch in "{[":
            depth += 1
        elif ch in "}]":
            if depth == 0:
                break
            depth -= 1
        elif ch == "," and depth == 0:
            tok = ""
        elif ch == ":" and depth == 0 and (i + 1 >= len(rest) or rest[i + 1] in " \t"):
            if tok.strip():
                keys.append(_unquote(tok.strip()))
            tok = ""
        elif depth == 0:
            tok += ch
        i += 1
    return keys


def analyze(lines: Sequence[str], line_no: int, col: int) -> Context:
    """The :class:`Context` at column ``col`` of line ``line_no`` (code points)."""
    line = lines[line_no].rstrip("\r") if 0 <= line_no < len(lines) else ""
    col = max(0, min(col, len(line)))
    prefix = line[:col]
    isl = open_island(prefix)
    if isl >= 0:
        outer = _structure(lines, line_no, isl, line)
        expr = prefix[isl + 3 :]
        return Context(
            "expr",
            outer.path,
            outer.key,
            "",
            col,
            col,
            line_no,
            frames=outer.frames,
            expr=expr,
            expr_start=isl + 3,
        )
    return _structure(lines, line_no, col, line)


def _structure(lines: Sequence[str], line_no: int, col: int, line: str) -> Context:
    prefix = line[:col]
    body = prefix.lstrip(" ")
    indent = len(prefix) - len(body)
    body, width, dashes = skip_dashes(body)
    key_col = indent + width
    frames = ancestors(lines, line_no, indent)
    if frames and _opens_block_scalar(lines[frames[-1].line]):
        # a content line of a `key: |` block scalar: text of that key, whatever it looks like
        owner = frames[-1]
        return Context("value", tuple(f.key for f in frames[:-1]), owner.key, "", col, col, line_no, frames=frames[:-1])
    if key_col != indent:
        frames = ancestors(lines, line_no, key_col)
    m = _KEY_AT.match(line[key_col:]) if body else None
    if m is not None and key_col + m.end() <= col:
        # `key: …` with the cursor after the colon: the value of `key` (maybe a flow collection)
        key = _unquote(m.group(1).rstrip())
        after = key_col + m.end()
        st = scan_flow(line[after:col], after, top_key=key, full=line[col:])
        path = tuple(f.key for f in frames) + st.path
        common = {"frames": frames, "flow_values": st.parent_values}
        if st.mode == "key":
            present = (frozenset(st.keys) | frozenset(_flow_suffix_keys(line[col:]))) - {st.partial}
            return Context("key", path, None, st.partial, st.start, col, line_no, present=present, **common)
        if st.mode == "value":
            return Context("value", path, st.key, st.partial, st.start, col, line_no, st.quote, **common)
        if st.mode == "item" and st.key is not None:
            return Context("item", path[:-1], st.key, st.partial, st.start, col, line_no, st.quote, **common)
        return Context("none", path, None, "", col, col, line_no, frames=frames)
    if m is None and body and any(c in body for c in "{[,"):
        return Context("none", (), None, "", col, col, line_no)
    # a key (or a bare list item) being written at `key_col`
    path = tuple(f.key for f in frames)
    partial = body.strip()
    quote = None
    if partial and partial[0] in "\"'":
        quote, partial = partial[0], partial[1:]
    start = col - len(partial)
    present = _siblings(lines, frames, line_no, key_col, dashes=bool(dashes))
    if dashes:
        # `- x`: an entry of the list under the nearest frame, or the first key of a mapping item
        owner = path[-1] if path else None
        return Context("item", path[:-1], owner, partial, start, col, line_no, quote, present=present, frames=frames)
    return Context("key", path, None, partial, start, col, line_no, quote, present=present, frames=frames)


def _siblings(
    lines: Sequence[str], frames: tuple[Frame, ...], line_no: int, col: int, *, dashes: bool
) -> frozenset[str]:
    """Keys already written at column ``col`` in the block the cursor is in (its item only)."""
    lo, hi = (frames[-1].line + 1, block_end(lines, frames[-1])) if frames else (0, len(lines))
    # inside a list of mappings, only the item holding the cursor counts
    in_item = dashes
    if dashes:
        lo = line_no
    else:
        for i in range(line_no - 1, lo - 1, -1):
            sh = shape(lines[i])
            if sh is None or sh.key_col > col:
                continue
            if sh.key_col == col and sh.dashes:
                lo, in_item = i, True
            break_now = sh.key_col < col or in_item
            if break_now:
                break
    if in_item:
        for i in range(line_no + 1, hi):
            sh = shape(lines[i])
            if sh is not None and sh.key_col <= col and (sh.dashes or sh.key_col < col):
                hi = i
                break
    out: set[str] = set()
    for i in range(lo, hi):
        if i == line_no:
            continue
        line = lines[i]
        if len(line) - len(line.lstrip(" ")) > col:
            continue
        sh = shape(line)
        if sh is not None and sh.key is not None and sh.key_col == col:
            out.add(sh.key)
    return frozenset(out)


# ---------------------------------------------------------------------------------------------
# Positions classes and field tables
# ---------------------------------------------------------------------------------------------


def where_of(path: tuple[str, ...]) -> str:
    """The position class of an expression written at ``path`` (see ``ExprSite.where``)."""
    if not path:
        return "envelope"
    if path[0] == "outputs":
        return "outputs"
    if path[0] != "tasks" or len(path) < 3:
        return "envelope"
    head = path[2]
    if head == "on_error":
        return "recover" if len(path) > 3 and path[3] == "recover" else "other"
    if head in ("with", "when", "for_each", "output"):
        return head
    if head == "on_finally":
        return "finally"
    if head in G.VERB_BLOCKS:
        return "body"
    return "other"


def fields_for(path: tuple[str, ...]) -> tuple[G.Block, str] | None:
    """The grammar block at ``path`` and a short name for its fields (the grammar's nesting table)."""
    return G.block_at(path)


def args_owner(path: tuple[str, ...]) -> bool:
    """Whether ``path`` is an ``invoke:`` block's ``args:`` mapping."""
    return len(path) >= 2 and path[-1] == "args" and path[-2] == "invoke"


def tool_near(lines: Sequence[str], ctx: Context) -> str | None:
    """The ``tool:`` written in the ``invoke:`` block enclosing the cursor (text only)."""
    if "tool" in ctx.flow_values:
        return _unquote(ctx.flow_values["tool"])
    invoke = next((f for f in reversed(ctx.frames) if f.key == "invoke"), None)
    if invoke is None:
        return None
    m = re.search(r"""[{,]\s*tool\s*:\s*("[^"]*"|'[^']*'|[^\s,}]+)""", lines[invoke.line].rstrip("\r"))
    if m:
        return _unquote(m.group(1))
    line = child_keys(lines, invoke).get("tool")
    return value_text(lines[line]) if line is not None else None


def task_frame(frames: tuple[Frame, ...]) -> Frame | None:
    """The frame of the task key (``tasks: → <id>:``) among ``frames``."""
    if len(frames) >= 2 and frames[0].key == "tasks" and frames[0].col == 0:
        return frames[1]
    return None
