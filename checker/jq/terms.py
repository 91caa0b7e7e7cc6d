"""The terms of jq's grammar: literals, strings, objects, conditionals, folds and destructuring patterns."""

from __future__ import annotations

from typing import Any

from checker.jq.lexer import _KEYWORDS, JqProblem
from checker.jq.tree import _A_KIND, _const, _kind, _Node, _Pattern


class _Terms:
    """The term half of :class:`checker.jq.parser._Parser` (a mixin: it reads the parser's cursor)."""

    text: str

    def term(self) -> _Node:
        """One term, parsed by the reader of the token it starts with."""
        t = self.tok()
        reader = _TERM_READERS.get(t[0])
        if reader is not None:
            return reader(self, t)
        if t[0] in ("then", "elif", "else", "end", "catch") and self.pos:
            raise self.fail(t, f"`{t[0]}` has nothing before it (an expression is missing)")
        raise self.unexpected("an expression")

    def _dot(self, t: Any) -> _Node:
        _, s, e = t
        self.advance()
        if self.peek() in ("STR_START", "FORMAT"):
            key = self.string_or_fail("a quoted field name")
            return _Node("index", s, key.end, [_Node("dot", s, e), key])
        return _Node("dot", s, e)

    def _recurse(self, t: Any) -> _Node:
        self.advance()
        return _Node("call", t[1], t[2], name="recurse", extra="implicit")

    def _field(self, t: Any) -> _Node:
        self.advance()
        return _Node("index", t[1], t[2], [_Node("dot", t[1], t[1] + 1)])

    def _number(self, t: Any) -> _Node:
        self.advance()
        return _Node("const", t[1], t[2], extra=("number", float(self.text[t[1] : t[2]])))

    def _string_term(self, t: Any) -> _Node:
        return self.string(t[1])

    def _format(self, t: Any) -> _Node:
        _, s, e = t
        if self.peek(1) == "STR_START":
            self.advance()
            node = self.string(s)
            if node.kind == "str":
                node.extra = "format"
            return node
        self.advance()
        return _Node("format", s, e)

    def _negation(self, t: Any) -> _Node:
        self.advance()
        inner = self.postfix_term()
        return _Node("neg", t[1], inner.end, [inner])

    def _parenthesized(self, t: Any) -> _Node:
        self.advance()
        inner = self.query()
        self.close(")", t)
        return inner

    def _array(self, t: Any) -> _Node:
        s = t[1]
        self.advance()
        if self.peek() == "]":
            end = self.advance()
            return _Node("const", s, end[2], extra=("array", None))
        inner = self.query()
        end = self.close("]", t)
        return _Node("array", s, end[2], [inner])

    def _try(self, t: Any) -> _Node:
        self.advance()
        body = self.postfix_term()
        kids = [body]
        if self.peek() == "catch":
            self.advance()
            kids.append(self.postfix_term())
        return _Node("try", t[1], kids[-1].end, kids)

    def _break(self, t: Any) -> _Node:
        self.advance()
        label = self.expect("BINDING", "the label to break to (`break $name`)")
        return _Node("break", t[1], label[2], name=self.text[label[1] + 1 : label[2]])

    def _dollars(self, t: Any) -> _Node:
        self.advance()
        for _ in range(2):
            self.expect("$", "`$$$$name`")
        var = self.expect("BINDING", "`$$$$name`")
        return _Node("varn", t[1], var[2], name=self.text[var[1] + 1 : var[2]])

    def _variable(self, t: Any) -> _Node:
        _, s, e = t
        self.advance()
        return _Node("var", s, e, name=self.text[s + 1 : e])

    def _location(self, t: Any) -> _Node:
        self.advance()
        return _Node("const", t[1], t[2], extra=("object", None))

    def _identifier(self, t: Any) -> _Node:
        """A call (``f``, ``f(a; b)``) or one of the constants ``true``, ``false``, ``null``."""
        _, s, e = t
        self.advance()
        name = self.text[s:e]
        if self.peek() == "(":
            opener = self.advance()
            args = [self.query()]
            while self.peek() == ";":
                self.advance()
                args.append(self.query())
            end = self.close(")", opener)
            return _Node("call", s, end[2], args, name=name, arity=len(args))
        if name in ("true", "false"):
            return _Node("const", s, e, extra=("boolean", None))
        if name == "null":
            return _Node("const", s, e, extra=("null", None))
        return _Node("call", s, e, name=name)

    def fold(self, kind: str) -> _Node:
        start = self.advance()[1]
        src = self.expr()
        self.expect("as", f"`as $name` after the source of `{kind}`")
        pats = self.patterns()
        opener = self.expect("(", f"`(` with the `{kind}` state: `{kind} … as $x (init; update)`")
        kids = [src, self.query()]
        self.expect(";", f"`;` between the `{kind}` initial state and its update")
        kids.append(self.query())
        if kind == "foreach" and self.peek() == ";":
            self.advance()
            kids.append(self.query())
        end = self.close(")", opener)
        return _Node(kind, start, end[2], kids, extra=pats)

    def conditional(self) -> _Node:
        opener = self.advance()
        kids = [self.query()]
        self.expect("then", "`then` after the `if` condition")
        kids.append(self.query())
        while True:
            kind = self.peek()
            if kind == "elif":
                self.advance()
                kids.append(self.query())
                self.expect("then", "`then` after the `elif` condition")
                kids.append(self.query())
            elif kind == "else":
                self.advance()
                kids.append(self.query())
                end = self.close("end", opener)
                break
            elif kind == "end":
                end = self.advance()
                break
            elif kind == "EOF":
                raise self.fail(opener, "`if` is never closed (missing `end`)")
            else:
                raise self.unexpected("`elif`, `else` or `end`")
        return _Node("if", opener[1], end[2], kids)

    def object(self) -> _Node:
        opener = self.advance()
        pairs: list[tuple[_Node | None, _Node | None]] = []
        kids: list[_Node] = []
        if self.peek() != "}":
            while True:
                key, value = self.pair(kids)
                pairs.append((key, value))
                if self.peek() == ",":
                    self.advance()
                    if self.peek() == "}":
                        break
                    continue
                if self.peek() not in ("}", "EOF"):
                    raise self.fail(
                        self.tok(), f"expected `,` or `}}` after an object entry, found {self.describe(self.tok())}"
                    )
                break
        end = self.close("}", opener)
        return _Node("object", opener[1], end[2], kids, extra=pairs)

    def pair(self, kids: list[_Node]) -> tuple[_Node | None, _Node | None]:
        """One ``key: value`` of an object. Returns the key and value for constant folding (``None``
        where jq computes them), and adds what needs name resolution to ``kids``."""
        t = self.tok()
        kind, s, e = t
        if kind == "IDENT" or kind in _KEYWORDS:
            self.advance()
            key = _Node("const", s, e, extra=("string", e - s))
            if self.peek() != ":":
                return key, None
            self.advance()
            value = self.dict_value()
            kids.append(value)
            return key, value
        if kind in ("STR_START", "FORMAT"):
            key = self.string_or_fail("a key")
            kids.append(key)
            if self.peek() != ":":
                return None, None
            self.advance()
            value = self.dict_value()
            kids.append(value)
            return key, value
        if kind == "BINDING":
            self.advance()
            kids.append(_Node("var", s, e, name=self.text[s + 1 : e]))
            if self.peek() == ":":
                self.advance()
                kids.append(self.dict_value())
            return None, None
        if kind == "LOC":
            self.advance()
            return _Node("const", s, e, extra=("string", 7)), _Node("const", s, e, extra=("object", None))
        if kind == "(":
            self.advance()
            key = self.query()
            self.close(")", t)
            self.check_key(key)
            kids.append(key)
            self.expect(":", "`:` and a value after a computed key")
            value = self.dict_value()
            kids.append(value)
            return key, value
        if kind in ("LITERAL", "-", "$", "FIELD", ".", "["):
            raise self.fail(t, "an object key must be a name, a string, `$var` or a parenthesised expression `(…)`")
        raise self.unexpected("an object key")

    def check_key(self, key: _Node) -> None:
        kind = _kind(_const(key))
        if kind is not None and kind != "string":
            self.problems.append(
                JqProblem(
                    f"an object key must be a string, but this key is always {_A_KIND[kind]}",
                    key.start,
                    key.end,
                )
            )

    def dict_value(self) -> _Node:
        items: list[Any] = [self.expr()]
        while self.peek() == "|":
            self.advance()
            items += ["|", self.expr()]
        return self.sequence(items)

    # ── destructuring patterns ──

    def patterns(self) -> list[_Pattern]:
        pats = [self.pattern()]
        while self.peek() == "?//":
            self.advance()
            pats.append(self.pattern())
        return pats

    def pattern(self) -> _Pattern:
        t = self.tok()
        kind, s, e = t
        if kind == "BINDING":
            self.advance()
            return _Pattern("var", s, e, name=self.text[s + 1 : e])
        if kind == "[":
            self.advance()
            items = [self.pattern()]
            while self.peek() == ",":
                self.advance()
                items.append(self.pattern())
            end = self.close("]", t)
            return _Pattern("array", s, end[2], items=items)
        if kind == "{":
            self.advance()
            entries = [self.obj_pattern()]
            while self.peek() == ",":
                self.advance()
                entries.append(self.obj_pattern())
            end = self.close("}", t)
            return _Pattern("object", s, end[2], entries=entries)
        if kind == "LOC":
            raise self.fail(t, "`$__loc__` is reserved and cannot be bound")
        raise self.unexpected("a pattern (`$name`, `[…]` or `{…}`)")

    def obj_pattern(self) -> tuple[str, _Node | None, _Pattern | None]:
        t = self.tok()
        kind, s, e = t
        if kind == "BINDING":
            self.advance()
            name = self.text[s + 1 : e]
            if self.peek() == ":":
                self.advance()
                return name, None, self.pattern()
            return name, None, None
        if kind == "IDENT" or kind in _KEYWORDS:
            self.advance()
            self.expect(":", f"`:` and a pattern after `{self.text[s:e]}` (or write `${self.text[s:e]}`)")
            return "", None, self.pattern()
        if kind in ("STR_START", "FORMAT"):
            key = self.string_or_fail("a key")
            self.expect(":", "`:` and a pattern after the key")
            return "", key, self.pattern()
        if kind == "(":
            self.advance()
            key = self.query()
            self.close(")", t)
            self.check_key(key)
            self.expect(":", "`:` and a pattern after a computed key")
            return "", key, self.pattern()
        raise self.unexpected("a key in the object pattern")


# The reader of each token a term may start with.
_TERM_READERS: dict[str, Any] = {
    ".": _Terms._dot,
    "..": _Terms._recurse,
    "FIELD": _Terms._field,
    "LITERAL": _Terms._number,
    "STR_START": _Terms._string_term,
    "FORMAT": _Terms._format,
    "-": _Terms._negation,
    "(": _Terms._parenthesized,
    "[": _Terms._array,
    "{": lambda self, t: self.object(),
    "reduce": lambda self, t: self.fold("reduce"),
    "foreach": lambda self, t: self.fold("foreach"),
    "if": lambda self, t: self.conditional(),
    "try": _Terms._try,
    "break": _Terms._break,
    "$": _Terms._dollars,
    "BINDING": _Terms._variable,
    "LOC": _Terms._location,
    "IDENT": _Terms._identifier,
}
