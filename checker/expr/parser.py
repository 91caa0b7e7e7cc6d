"""Recursive-descent parser for exactly the ``cel-subset/0.1`` grammar (spec 03 §Expression
language).

The grammar, loosest to tightest::

    expr    = ternary
    ternary = or [ "?" expr ":" ternary ]          right-associative
    or      = and { "||" and }
    and     = rel { "&&" rel }
    rel     = unary [ relop unary ]                at most one relation
    unary   = { "!" } postfix
    postfix = primary { "." IDENT [ "(" [expr] ")" ] | "[" expr "]" }
    primary = literal | list | call | IDENT | "(" expr ")"
    call    = ("size" | "has") "(" expr ")"

plus the closed set of callables: ``size(x)``, ``has(x)``, ``x.size()``, ``x.contains(s)``,
``x.startsWith(s)`` and ``x.endsWith(s)``. Anything else raises :class:`ExprError` (code
``NIKA-VAR-005``) positioned on the offending token, with a message that says how to fix it.
"""

from __future__ import annotations

from typing import Final

from checker.expr.lexer import (
    EOF,
    ERROR,
    FALSE,
    FLOAT,
    IDENT,
    IN,
    INT,
    NULL,
    RESERVED_WORDS,
    STRING,
    TRUE,
    ExprError,
    Token,
    scan,
)
from checker.expr.nodes import (
    Binary,
    Call,
    Expr,
    Ident,
    Index,
    ListLit,
    Literal,
    Member,
    MethodCall,
    Ternary,
    Unary,
    children,
)

__all__ = ["FUNCTIONS", "MAX_DEPTH", "MAX_NESTING", "METHODS", "RELATIONS", "ExprError", "parse_expression"]

RELATIONS: Final = frozenset({"==", "!=", "<", "<=", ">", ">=", IN})
#: free functions and their exact argument count
FUNCTIONS: Final = {"size": 1, "has": 1}
#: methods and their exact argument count
METHODS: Final = {"size": 0, "contains": 1, "startsWith": 1, "endsWith": 1}

#: how many brackets/parentheses/ternaries may be open at once (bounds parser recursion)
MAX_NESTING: Final = 32
#: how deep the finished tree may be (bounds every recursive consumer of the tree)
MAX_DEPTH: Final = 128

_LITERAL_KINDS: Final = {INT, FLOAT, STRING, TRUE, FALSE, NULL}
_LITERAL_CONST: Final = {TRUE: True, FALSE: False, NULL: None}

_RESERVED_CALLS: Final = {
    "matches": "regular expressions (`matches`) are not available in cel-subset/0.1: test with "
    "`.contains()`, `.startsWith()` or `.endsWith()`, or use `nika:jq`",
    "all": "the `all()` macro is not available in cel-subset/0.1: compute the result with `nika:jq` and reference it",
    "exists": "the `exists()` macro is not available in cel-subset/0.1: compute the result with "
    "`nika:jq` and reference it",
    "exists_one": "the `exists_one()` macro is not available in cel-subset/0.1: compute the result "
    "with `nika:jq` and reference it",
    "map": "the `map()` macro is not available in cel-subset/0.1: reshape the data with `nika:jq`",
    "filter": "the `filter()` macro is not available in cel-subset/0.1: filter the data with `nika:jq`",
}
_SPELLING: Final = {
    "len": "size",
    "length": "size",
    "count": "size",
    "includes": "contains",
    "has_prefix": "startsWith",
    "hasprefix": "startsWith",
    "has_suffix": "endsWith",
    "hassuffix": "endsWith",
}


def _shown(tok: Token) -> str:
    if tok.kind == EOF:
        return "the end of the expression"
    if tok.kind == STRING:
        return "a string"
    return f"`{tok.value}`"


class _Parser:
    __slots__ = ("nesting", "pos", "prev_end", "text", "tokens")

    def __init__(self, text: str) -> None:
        self.text = text
        self.tokens = scan(text)
        self.pos = 0
        self.prev_end = 0
        self.nesting = 0

    # -- token plumbing ---------------------------------------------------------------------

    def peek(self) -> Token:
        tok = self.tokens[self.pos]
        if tok.kind == ERROR:
            assert isinstance(tok.value, ExprError)
            raise tok.value
        return tok

    def advance(self) -> Token:
        tok = self.peek()
        if tok.kind != EOF:
            self.pos += 1
            self.prev_end = tok.end
        return tok

    def previous(self) -> Token | None:
        return self.tokens[self.pos - 1] if self.pos > 0 else None

    def enter(self, tok: Token) -> None:
        self.nesting += 1
        if self.nesting > MAX_NESTING:
            raise ExprError(
                f"the expression nests more than {MAX_NESTING} levels deep: simplify it or split it "
                "across several `with:` bindings",
                tok.start,
                tok.end,
            )

    def leave(self) -> None:
        self.nesting -= 1

    # -- errors -----------------------------------------------------------------------------

    def unexpected(self, tok: Token, wanted: str, fix: str) -> ExprError:
        """The error for ``tok`` appearing where ``wanted`` (a phrase) was expected; ``fix`` says
        how to repair it."""
        if tok.kind in (INT, FLOAT) and self.text[tok.start] == "-":
            return ExprError(
                "subtraction is not part of cel-subset/0.1 (a `-` may only sign a number literal): "
                "compute the value upstream or with `nika:jq` and reference it",
                tok.start,
                tok.start + 1,
            )
        if tok.kind == IDENT and tok.value in ("and", "or"):
            op = "&&" if tok.value == "and" else "||"
            return ExprError(f"`{tok.value}` is not an operator: write `{op}`", tok.start, tok.end)
        if tok.kind == IDENT and tok.value == "is":
            return ExprError("`is` is not an operator: write `==` or `!=`", tok.start, tok.end)
        return ExprError(f"expected {wanted}, found {_shown(tok)}: {fix}", tok.start, tok.end)

    def missing_value(self, tok: Token) -> ExprError:
        """The error for ``tok`` where a value (operand) must start."""
        prev = self.previous()
        if tok.kind == EOF:
            if prev is None:
                return ExprError(
                    "the expression is empty: write a reference such as `inputs.name` or a literal",
                    0,
                    len(self.text),
                )
            return ExprError(
                f"the expression stops after `{self.text[prev.start : prev.end]}`: add the missing value",
                prev.start,
                prev.end,
            )
        if tok.kind == IN:
            return ExprError("`in` needs a value on its left: write `x in ['a', 'b']`", tok.start, tok.end)
        if tok.kind == "!" or tok.kind in RELATIONS or tok.kind in ("&&", "||", "?", ":"):
            where = f"after `{self.text[prev.start : prev.end]}`" if prev is not None else "at the start"
            return ExprError(
                f"`{tok.value}` cannot appear {where}: put a value (a reference or literal) before it",
                tok.start,
                tok.end,
            )
        if tok.kind in (")", "]"):
            return ExprError(
                f"unexpected `{tok.value}`: a value is missing here, or the bracket has no opener",
                tok.start,
                tok.end,
            )
        if tok.kind == ",":
            return ExprError("unexpected `,`: a value is missing here (remove the extra comma)", tok.start, tok.end)
        if tok.kind == ".":
            return ExprError(
                "a `.` must follow a value: write the full reference, e.g. `inputs.name`",
                tok.start,
                tok.end,
            )
        return self.unexpected(
            tok, "a value", "write a reference, a literal, a list or a parenthesised expression here"
        )

    def expect_close(self, kind: str, opener: Token) -> Token:
        tok = self.peek()
        if tok.kind == kind:
            return self.advance()
        if tok.kind == EOF:
            raise ExprError(
                f"this `{opener.value}` is never closed: add the matching `{kind}`",
                opener.start,
                opener.end,
            )
        if tok.kind == "," and kind == ")":
            raise ExprError(
                "a `,` cannot separate values inside `(…)`: use `[…]` for a list, or `&&`/`||` to combine conditions",
                tok.start,
                tok.end,
            )
        raise self.unexpected(
            tok,
            f"`{kind}` to close the `{opener.value}`",
            f"insert `{kind}` before it, or join conditions with `&&` or `||`",
        )

    # -- grammar ----------------------------------------------------------------------------

    def parse(self) -> Expr:
        first = self.peek()
        if first.kind == EOF:
            raise self.missing_value(first)
        node = self.ternary()
        tok = self.peek()
        if tok.kind != EOF:
            if tok.kind == ")":
                raise ExprError("unmatched `)`: remove it or add the missing `(`", tok.start, tok.end)
            if tok.kind == "]":
                raise ExprError("unmatched `]`: remove it or add the missing `[`", tok.start, tok.end)
            if tok.kind == ":":
                raise ExprError(
                    "`:` without a `?` before it: write a conditional as `cond ? a : b`",
                    tok.start,
                    tok.end,
                )
            if tok.kind == ",":
                raise ExprError(
                    "a `,` is only allowed between list items: wrap the items in `[…]`",
                    tok.start,
                    tok.end,
                )
            raise self.unexpected(
                tok,
                "the end of the expression",
                "join conditions with `&&` or `||`, or remove the extra text",
            )
        return node

    def ternary(self) -> Expr:
        start = self.peek().start
        cond = self.or_()
        tok = self.peek()
        if tok.kind != "?":
            return cond
        self.advance()
        self.enter(tok)
        then = self.ternary()
        colon = self.peek()
        if colon.kind != ":":
            if colon.kind == EOF:
                raise ExprError(
                    "this `?` has no `:` branch: write `cond ? value_if_true : value_if_false`",
                    tok.start,
                    tok.end,
                )
            raise self.unexpected(colon, "`:` after the value used when the condition holds", "write `cond ? a : b`")
        self.advance()
        else_ = self.ternary()
        self.leave()
        return Ternary(cond, then, else_, start, self.prev_end)

    def or_(self) -> Expr:
        start = self.peek().start
        left = self.and_()
        while self.peek().kind == "||":
            self.advance()
            right = self.and_()
            left = Binary("||", left, right, start, self.prev_end)
        return left

    def and_(self) -> Expr:
        start = self.peek().start
        left = self.rel()
        while self.peek().kind == "&&":
            self.advance()
            right = self.rel()
            left = Binary("&&", left, right, start, self.prev_end)
        return left

    def rel(self) -> Expr:
        start = self.peek().start
        left = self.unary()
        op = self.peek()
        if op.kind not in RELATIONS:
            return left
        self.advance()
        right = self.unary()
        second = self.peek()
        if second.kind in RELATIONS:
            if op.kind in ("==", "!=") or second.kind in ("==", "!="):
                fix = f"add parentheses, e.g. `(a {op.kind} b) {second.kind} c`, or split it with `&&`"
            else:
                fix = f"split it with `&&`, e.g. `a {op.kind} b && b {second.kind} c`"
            raise ExprError(
                f"chained comparison `a {op.kind} b {second.kind} c` is not allowed: {fix}",
                second.start,
                second.end,
            )
        return Binary(str(op.kind), left, right, start, self.prev_end)

    def unary(self) -> Expr:
        bangs: list[int] = []
        while self.peek().kind == "!":
            bangs.append(self.advance().start)
        node = self.postfix()
        end = self.prev_end
        for bang in reversed(bangs):
            node = Unary("!", node, bang, end)
        return node

    def postfix(self) -> Expr:
        start = self.peek().start
        node = self.primary()
        while True:
            tok = self.peek()
            if tok.kind == ".":
                self.advance()
                name_tok = self.peek()
                if name_tok.kind != IDENT:
                    raise self._bad_member(name_tok)
                self.advance()
                name = str(name_tok.value)
                if self.peek().kind == "(":
                    node = self._method(node, name_tok, start)
                else:
                    node = Member(node, name, start, name_tok.end)
            elif tok.kind == "[":
                self.advance()
                self.enter(tok)
                if self.peek().kind == "]":
                    close = self.peek()
                    raise ExprError(
                        "an index needs a value: write e.g. `[0]` or `['key']` (iterating with `[]` is jq, not CEL)",
                        tok.start,
                        close.end,
                    )
                index = self.ternary()
                self.expect_close("]", tok)
                self.leave()
                node = Index(node, index, start, self.prev_end)
            else:
                return node

    def _bad_member(self, tok: Token) -> ExprError:
        if tok.kind in RESERVED_WORDS:
            return ExprError(
                f"`{tok.value}` is a reserved word and cannot follow `.`: write `['{tok.value}']` instead",
                tok.start,
                tok.end,
            )
        if tok.kind == INT:
            return ExprError(
                f"a field name must follow `.`: to index a list write `[{tok.value}]`",
                tok.start,
                tok.end,
            )
        if tok.kind == STRING:
            return ExprError(
                "a field name must follow `.`: for a key that is not a plain name write `['key']`",
                tok.start,
                tok.end,
            )
        return self.unexpected(tok, "a field name after `.`", "write e.g. `inputs.name`")

    def _arguments(self, opener: Token, what: str) -> tuple[Expr, ...]:
        """Parse ``( [expr {, expr}] )`` after ``opener`` has been peeked."""
        self.advance()
        self.enter(opener)
        args: list[Expr] = []
        if self.peek().kind != ")":
            args.append(self.ternary())
            while self.peek().kind == ",":
                comma = self.advance()
                if self.peek().kind == ")":
                    raise ExprError(
                        "a trailing comma is not allowed in an argument list: remove it",
                        comma.start,
                        comma.end,
                    )
                args.append(self.ternary())
        tok = self.peek()
        if tok.kind != ")":
            if tok.kind == EOF:
                raise ExprError(
                    f"this `(` is never closed: add the matching `)` after the argument of {what}",
                    opener.start,
                    opener.end,
                )
            raise self.unexpected(tok, f"`)` to close the arguments of {what}", "it takes a single argument")
        self.advance()
        self.leave()
        return tuple(args)

    def _method(self, obj: Expr, name_tok: Token, start: int) -> Expr:
        name = str(name_tok.value)
        arity = METHODS.get(name)
        if arity is None:
            raise self._unknown_callable(name_tok, method=True)
        opener = self.peek()
        args = self._arguments(opener, f"`.{name}()`")
        if len(args) != arity:
            if arity == 0:
                msg = f"`.{name}()` takes no argument: write `x.{name}()` or `{name}(x)`"
            else:
                msg = f"`.{name}()` takes exactly one string argument: write e.g. `x.{name}('text')`"
            raise ExprError(msg, name_tok.start, self.prev_end)
        return MethodCall(obj, name, args, start, self.prev_end)

    def _unknown_callable(self, tok: Token, *, method: bool) -> ExprError:
        name = str(tok.value)
        reserved = _RESERVED_CALLS.get(name)
        if reserved is not None:
            return ExprError(reserved, tok.start, tok.end)
        known = METHODS if method else FUNCTIONS
        guess = _SPELLING.get(name.lower())
        if guess is None:
            guess = next((k for k in known if k.lower() == name.lower()), None)
        if guess is None and not method and name in METHODS:
            return ExprError(f"`{name}` is a method, not a function: write `x.{name}(…)`", tok.start, tok.end)
        if guess is None and method and name in FUNCTIONS:
            return ExprError(f"`{name}` is a function, not a method: write `{name}(x)`", tok.start, tok.end)
        if guess is not None and guess in known:
            shape = f".{guess}()" if method else f"{guess}()"
            return ExprError(
                f"`{name}()` is not a known {'method' if method else 'function'}: did you mean `{shape}`?",
                tok.start,
                tok.end,
            )
        if method:
            return ExprError(
                f"`.{name}()` is not a known method: the only methods are `.size()`, "
                "`.contains(s)`, `.startsWith(s)` and `.endsWith(s)`",
                tok.start,
                tok.end,
            )
        return ExprError(
            f"`{name}()` is not a known function: the only functions are `size(x)` and `has(x)`",
            tok.start,
            tok.end,
        )

    def primary(self) -> Expr:
        tok = self.peek()
        kind = tok.kind
        if kind in _LITERAL_KINDS:
            self.advance()
            if kind in _LITERAL_CONST:
                return Literal(_LITERAL_CONST[kind], tok.start, tok.end)
            value = tok.value
            assert isinstance(value, int | float | str)
            return Literal(value, tok.start, tok.end)
        if kind == IDENT:
            self.advance()
            name = str(tok.value)
            if self.peek().kind == "(":
                arity = FUNCTIONS.get(name)
                if arity is None:
                    raise self._unknown_callable(tok, method=False)
                args = self._arguments(self.peek(), f"`{name}()`")
                if len(args) != arity:
                    raise ExprError(
                        f"`{name}()` takes exactly one argument: write e.g. `{name}(with.items)`",
                        tok.start,
                        self.prev_end,
                    )
                return Call(name, args, tok.start, self.prev_end)
            return Ident(name, tok.start, tok.end)
        if kind == "(":
            self.advance()
            self.enter(tok)
            inner = self.ternary()
            self.expect_close(")", tok)
            self.leave()
            return inner
        if kind == "[":
            self.advance()
            self.enter(tok)
            items: list[Expr] = []
            if self.peek().kind != "]":
                items.append(self.ternary())
                while self.peek().kind == ",":
                    comma = self.advance()
                    if self.peek().kind == "]":
                        raise ExprError(
                            "a trailing comma is not allowed in a list: remove it",
                            comma.start,
                            comma.end,
                        )
                    items.append(self.ternary())
            self.expect_close("]", tok)
            self.leave()
            return ListLit(tuple(items), tok.start, self.prev_end)
        raise self.missing_value(tok)


def _check_depth(root: Expr) -> None:
    stack: list[tuple[Expr, int]] = [(root, 1)]
    while stack:
        node, depth = stack.pop()
        if depth > MAX_DEPTH:
            raise ExprError(
                f"the expression is more than {MAX_DEPTH} levels deep: simplify it or split it across "
                "several `with:` bindings",
                node.start,
                node.end,
            )
        for kid in children(node):
            stack.append((kid, depth + 1))


def parse_expression(text: str) -> Expr:
    """Parse the text found between ``${{`` and ``}}``.

    Raises :class:`ExprError` (code ``NIKA-VAR-005``) for anything outside ``cel-subset/0.1``,
    positioned relative to the start of ``text``.
    """
    parser = _Parser(text)
    node = parser.parse()
    if len(parser.tokens) > MAX_DEPTH:
        # every node consumes at least one token, so a shorter text cannot be too deep
        _check_depth(node)
    return node
