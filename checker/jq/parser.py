"""jq's grammar and precedence table: the recursive-descent parser (terms in :mod:`checker.jq.terms`)."""

from __future__ import annotations

from typing import Any

from checker.jq.lexer import _KEYWORDS, _OPENERS, JqProblem, Token, _Syntax, _TooDeep
from checker.jq.terms import _Terms
from checker.jq.tree import _OTHER, _const, _FuncDef, _kind, _Node

_MAX_DEPTH = 160  # parser recursion levels (two per bracket): ~80 nested brackets

_PREC = {
    "//": 1,
    "=": 2,
    "|=": 2,
    "+=": 2,
    "-=": 2,
    "*=": 2,
    "/=": 2,
    "%=": 2,
    "//=": 2,
    "or": 3,
    "and": 4,
    "==": 5,
    "!=": 5,
    "<": 5,
    ">": 5,
    "<=": 5,
    ">=": 5,
    "+": 6,
    "-": 6,
    "*": 7,
    "/": 7,
    "%": 7,
}
_NONASSOC = {2, 5}
_RIGHT = {1}
_TERM_START = frozenset(
    {".", "..", "FIELD", "LITERAL", "STR_START", "FORMAT", "-", "(", "[", "{", "$", "BINDING", "LOC", "IDENT"}
    | {"reduce", "foreach", "if", "try", "break"}
)
_CLOSE_NAME = {"(": ")", "[": "]", "{": "}", "INTERP_START": ")", "if": "end", "STR_START": '"'}
_DANGLING = frozenset({"|", ",", ";", ":", "as", "?//", "-", "and", "or"})
_CHAR_HINTS = {
    "!": " (`!=` compares; negation is `not`)",
    "&": " (jq's conjunction is `and`)",
    "'": " (jq strings use double quotes)",
    "@": " (a format is `@name`, e.g. `@base64`)",
}


class _Parser(_Terms):
    def __init__(self, text: str, toks: list[Token], unclosed: list[Token]) -> None:
        self.text = text
        self.toks = toks
        self.unclosed = unclosed  # openers the lexer saw no closer for
        self.pos = 0
        self.depth = 0
        self.problems: list[JqProblem] = []  # found while parsing (jq reports them, then stops)

    # ── token helpers ──

    def peek(self, ahead: int = 0) -> str:
        return self.toks[min(self.pos + ahead, len(self.toks) - 1)][0]

    def tok(self) -> Token:
        return self.toks[self.pos]

    def advance(self) -> Token:
        t = self.toks[self.pos]
        if t[0] != "EOF":
            self.pos += 1
        return t

    def describe(self, t: Token) -> str:
        kind, s, e = t
        if kind == "EOF":
            return "the end of the program"
        if kind == "STR_START":
            return "a string"
        if kind == "INVALID":
            return f"the character `{self.text[s:e]}`"
        if kind == "LITERAL":
            return f"the number `{self.text[s:e]}`"
        if kind in ("IDENT", "BINDING", "FIELD", "FORMAT", "LOC"):
            return f"`{self.text[s:e]}`"
        if kind == "INTERP_END":
            return "`)`"
        return f"`{kind}`"

    def fail(self, t: Token, message: str) -> _Syntax:
        return _Syntax(JqProblem(message, t[1], max(t[2], t[1] + 1)))

    def unexpected(self, wanted: str = "") -> _Syntax:
        """The syntax error at the current token, worded for the common cases."""
        t = self.tok()
        kind, s, e = t
        prev = self.toks[self.pos - 1] if self.pos else None
        dangling = prev is not None and (prev[0] in _PREC or prev[0] in _DANGLING) and kind not in _TERM_START
        if kind == "EOF" and prev is not None:
            if dangling:
                return self.fail(prev, f"`{prev[0]}` has nothing on its right")
            if self.unclosed:
                opener = self.unclosed[-1]
                what = "string interpolation `\\(`" if opener[0] == "INTERP_START" else f"`{opener[0]}`"
                if opener[0] == "STR_START":
                    return self.fail(opener, 'unterminated string (missing the closing `"`)')
                return self.fail(opener, f"{what} is never closed (missing `{_CLOSE_NAME[opener[0]]}`)")
            need = f" (expected {wanted})" if wanted else ""
            return self.fail(prev, f"the program ends too early after {self.describe(prev)}{need}")
        if kind == "INVALID":
            ch = self.text[s:e]
            if ch in ")]}":
                return self.fail(t, f"`{ch}` closes nothing here")
            return self.fail(t, f"unexpected character `{ch}`{_CHAR_HINTS.get(ch, '')}")
        leading = prev is None or prev[0] in _PREC or prev[0] in _OPENERS or prev[0] in _DANGLING
        if (kind in ("|", ",") or kind in _PREC) and leading:
            return self.fail(t, f"`{kind}` has nothing on its left")
        if dangling and prev is not None and prev[0] != "-":
            return self.fail(prev, f"`{prev[0]}` has nothing on its right")
        if kind == "catch":
            return self.fail(
                t, "`catch` must directly follow the `try` body; put a compound body in parentheses: `try (…) catch …`"
            )
        if prev is not None and prev[0] == "." and (kind == "IDENT" or kind in _KEYWORDS):
            word = self.text[s:e]
            return self.fail(t, f'a field name must touch its `.`: write `.{word}` (or `.["{word}"]`)')
        if prev is not None and self._ends_value(prev) and kind in _TERM_START:
            return self.fail(t, "two values follow each other without an operator between them")
        need = f", expected {wanted}" if wanted else ""
        return self.fail(t, f"unexpected {self.describe(t)}{need}")

    @staticmethod
    def _ends_value(t: Token) -> bool:
        return t[0] in ("IDENT", "FIELD", "LITERAL", "BINDING", "LOC", "STR_END", ")", "]", "}", "end", "..", "FORMAT")

    def expect(self, kind: str, wanted: str) -> Token:
        if self.peek() != kind:
            raise self.unexpected(wanted)
        return self.advance()

    def close(self, kind: str, opener: Token) -> Token:
        """Consume the closer of ``opener``; a missing one is reported at the opener."""
        if self.peek() == kind:
            return self.advance()
        closer = _CLOSE_NAME.get(opener[0], kind)
        if self.peek() == "EOF":
            what = "string interpolation `\\(`" if opener[0] == "INTERP_START" else f"`{opener[0]}`"
            raise self.fail(opener, f"{what} is never closed (missing `{closer}`)")
        raise self.unexpected(f"`{closer}` to close the `{self.text[opener[1] : opener[2]]}` at offset {opener[1]}")

    # ── program ──

    def program(self) -> _Node | JqProblem:
        if self.peek() == "module":
            self.advance()
            meta = self.query()
            kind = _kind(_const(meta))
            if kind is None:
                self.problems.append(JqProblem("`module` metadata must be a constant", meta.start, meta.end))
            elif kind != "object":
                self.problems.append(JqProblem("`module` metadata must be an object", meta.start, meta.end))
            self.expect(";", "`;` after the `module` metadata")
        imports: list[Token] = []
        while self.peek() in ("import", "include"):
            imports.append(self.tok())
            self.import_()
        if self.peek() == "EOF":
            raise _Syntax(JqProblem("the jq program is empty", 0, len(self.text)))
        body = self.query(top=True)
        if self.peek() != "EOF":
            raise self.unexpected()
        if imports:
            t = imports[0]
            return JqProblem(
                f"`{t[0]}` cannot load a jq module here: the runtime's jq has no module search path", t[1], t[2]
            )
        return body

    def import_(self) -> None:
        word = self.advance()
        path = self.string_or_fail("the module path (a string)")
        if _const(path) == _OTHER:
            self.problems.append(JqProblem("an import path must be a constant string", path.start, path.end))
        if word[0] == "import":
            self.expect("as", "`as` and a name after the module path")
            if self.peek() not in ("IDENT", "BINDING"):
                raise self.unexpected("a name or `$name` for the imported module")
            self.advance()
        if self.peek() != ";":
            meta = self.query()
            if _kind(_const(meta)) != "object":
                self.problems.append(JqProblem("import metadata must be a constant object", meta.start, meta.end))
        self.expect(";", "`;` to end the import")

    # ── queries: pipelines of expressions; `def`, `… as $x |` and `label $x |` reach to the end ──

    def query(self, top: bool = False) -> _Node:
        self.depth += 1
        if self.depth > _MAX_DEPTH:
            raise _TooDeep
        frames: list[tuple[list[_Node | str], str, Any, int]] = []
        items: list[_Node | str] = []  # operands and separators, alternating
        only_defs = top
        while True:
            kind = self.peek()
            if kind == "def":
                fd = self.funcdef()
                frames.append((items, "defs", fd, fd.start))
                items = []
                if only_defs and self.peek() == "EOF":
                    raise _Syntax(
                        JqProblem(
                            "the program only defines functions: add the expression to run after the last `def …;`",
                            fd.start,
                            fd.end,
                        )
                    )
                continue
            only_defs = False
            if kind == "label":
                t = self.advance()
                name = self.expect("BINDING", "a label name like `$out` after `label`")
                self.expect("|", "`|` after the label name")
                frames.append((items, "label", self.text[name[1] + 1 : name[2]], t[1]))
                items = []
                continue
            e = self.expr()
            if self.peek() == "as":
                self.advance()
                pats = self.patterns()
                self.expect("|", "`|` after the binding (`… as $x | body`)")
                frames.append((items, "bind", (e, pats), e.start))
                items = []
                continue
            items.append(e)
            if self.peek() in ("|", ","):
                items.append(self.advance()[0])
                continue
            break
        node = self.sequence(items)
        while frames:
            outer, what, data, start = frames.pop()
            if what == "defs":
                node = _Node("defs", start, node.end, [node], extra=data)
            elif what == "label":
                node = _Node("label", start, node.end, [node], name=data)
            else:
                src, pats = data
                node = _Node("bind", start, node.end, [src, node], extra=pats)
            node = self.sequence([*outer, node])
        self.depth -= 1
        return node

    @staticmethod
    def sequence(items: list[_Node | str]) -> _Node:
        """Operands joined by `,` (binding tighter, to the left) and `|` (an n-ary pipeline)."""
        stages: list[_Node] = []
        cur: _Node | None = None
        for i in range(0, len(items), 2):
            node = items[i]
            sep = items[i - 1] if i else "|"
            assert isinstance(node, _Node)
            if sep == ",":
                assert cur is not None
                cur = _Node("comma", cur.start, node.end, [cur, node])
            else:
                if cur is not None:
                    stages.append(cur)
                cur = node
        assert cur is not None
        stages.append(cur)
        if len(stages) == 1:
            return stages[0]
        return _Node("pipe", stages[0].start, stages[-1].end, stages)

    def funcdef(self) -> _FuncDef:
        start = self.advance()[1]
        if self.peek() != "IDENT":
            if self.peek() in _KEYWORDS:
                raise self.fail(self.tok(), f"`{self.peek()}` is a keyword and cannot name a function")
            raise self.unexpected("a function name after `def`")
        t = self.advance()
        name = self.text[t[1] : t[2]]
        params: list[tuple[str, bool]] = []
        if self.peek() == "(":
            opener = self.advance()
            while True:
                p = self.tok()
                if p[0] == "IDENT":
                    params.append((self.text[p[1] : p[2]], False))
                elif p[0] == "BINDING":
                    params.append((self.text[p[1] + 1 : p[2]], True))
                else:
                    raise self.unexpected("a parameter (`f` or `$v`)")
                self.advance()
                if self.peek() == ";":
                    self.advance()
                    continue
                self.close(")", opener)
                break
        self.expect(":", f"`:` before the body of `{name}`")
        body = self.query()
        end = self.expect(";", f"`;` to end the definition of `{name}`")
        return _FuncDef(name, params, body, start, end[2])

    # ── expressions: binary operators by jq's precedence table ──

    def expr(self) -> _Node:
        operands = [self.postfix_term()]
        ops: list[Token] = []

        def reduce() -> None:
            op = ops.pop()
            b = operands.pop()
            a = operands.pop()
            operands.append(_Node("binop", a.start, b.end, [a, b], name=op[0]))

        while True:
            t = self.tok()
            prec = _PREC.get(t[0])
            if prec is None:
                break
            while ops:
                top = _PREC[ops[-1][0]]
                if top > prec or (top == prec and prec not in _RIGHT):
                    if top == prec and prec in _NONASSOC:
                        raise self.fail(
                            t, f"`{t[0]}` cannot follow `{ops[-1][0]}` directly: these operators do not chain"
                        )
                    reduce()
                else:
                    break
            ops.append(self.advance())
            operands.append(self.postfix_term())
        while ops:
            reduce()
        return operands[0]

    # ── terms ──

    def postfix_term(self) -> _Node:
        self.depth += 1
        if self.depth > _MAX_DEPTH:
            raise _TooDeep
        node = self.term()
        while True:
            kind = self.peek()
            if kind == "FIELD":
                t = self.advance()
                node = _Node("index", node.start, t[2], [node])
            elif kind == ".":
                dot = self.advance()
                if self.peek() == "[":
                    node = self.bracket_suffix(node, dotted=True)
                elif self.peek() in ("STR_START", "FORMAT"):
                    key = self.string_or_fail("a quoted field name")
                    node = _Node("index", node.start, key.end, [node, key])
                else:
                    raise self._after_dot(dot)
            elif kind == "[":
                node = self.bracket_suffix(node)
            elif kind == "?":
                t = self.advance()
                node = _Node("try", node.start, t[2], [node])
            else:
                break
        self.depth -= 1
        return node

    def _after_dot(self, dot: Token) -> _Syntax:
        t = self.tok()
        if t[0] == "IDENT" or t[0] in _KEYWORDS:
            word = self.text[t[1] : t[2]]
            return self.fail(t, f'a field name must touch its `.`: write `.{word}` (or `.["{word}"]`)')
        if t[0] == "EOF":
            return self.fail(dot, "`.` here must be followed by a field name, a quoted string or `[`")
        return self.fail(t, f"unexpected {self.describe(t)} after `.` (expected a field name, a string or `[`)")

    def bracket_suffix(self, node: _Node, dotted: bool = False) -> _Node:
        """``[]``, ``[i]`` or a slice after ``node``; jq has no slice after a dot (``.a.[1:]``)."""
        opener = self.advance()
        kids = [node]
        if self.peek() == "]":
            pass
        elif self.peek() == ":" and dotted:
            raise self.fail(self.tok(), "a slice cannot follow a `.`: write `.a[1:2]`, not `.a.[1:2]`")
        elif self.peek() == ":":
            self.advance()
            if self.peek() == "]":
                raise self.fail(self.tok(), "a slice needs at least one bound: `.[n:]`, `.[:m]` or `.[n:m]`")
            kids.append(self.query())
        else:
            kids.append(self.query())
            if self.peek() == ":":
                if dotted:
                    raise self.fail(self.tok(), "a slice cannot follow a `.`: write `.a[1:2]`, not `.a.[1:2]`")
                self.advance()
                if self.peek() != "]":
                    kids.append(self.query())
        end = self.close("]", opener)
        return _Node("index", node.start, end[2], kids)

    def string_or_fail(self, wanted: str) -> _Node:
        if self.peek() == "FORMAT" and self.peek(1) == "STR_START":
            fmt = self.advance()
            return self.string(fmt[1])
        if self.peek() == "STR_START":
            return self.string(self.tok()[1])
        if self.peek() == "FORMAT":
            self.advance()
            raise self.unexpected("a string after the format")
        raise self.unexpected(wanted)

    def string(self, start: int) -> _Node:
        opener = self.advance()
        parts: list[_Node] = []
        size = 0
        while True:
            kind = self.peek()
            if kind == "STR_TEXT":
                t = self.advance()
                size += t[2] - t[1]
            elif kind == "INTERP_START":
                inter = self.advance()
                parts.append(self.query())
                self.close("INTERP_END", inter)
            elif kind == "STR_END":
                end = self.advance()[2]
                break
            elif kind == "EOF":
                raise self.fail(opener, 'unterminated string (missing the closing `"`)')
            else:
                raise self.unexpected("the rest of the string")
        if not parts:
            return _Node("const", start, end, extra=("string", size))
        return _Node("str", start, end, parts)
