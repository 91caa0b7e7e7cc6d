"""jq's scanner (libjq 1.8): tokens, comments, escapes and the faults the scanner alone proves."""

from __future__ import annotations

import re

from checker.jq.problem import JqProblem


class _Syntax(Exception):
    def __init__(self, problem: JqProblem) -> None:
        super().__init__(problem.message)
        self.problem = problem


class _TooDeep(Exception):
    pass


_KEYWORDS = frozenset(
    {"as", "def", "module", "import", "include", "if", "then", "else", "elif", "reduce", "foreach", "end"}
    | {"and", "or", "try", "catch", "label", "break"}
)
_IDENT_RE = re.compile(r"(?:[A-Za-z_][A-Za-z_0-9]*::)*[A-Za-z_][A-Za-z_0-9]*")
_FIELD_RE = re.compile(r"\.[A-Za-z_][A-Za-z_0-9]*")
_BINDING_RE = re.compile(r"\$(?:[A-Za-z_][A-Za-z_0-9]*::)*[A-Za-z_][A-Za-z_0-9]*")
_NUMBER_RE = re.compile(r"(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?")
_FORMAT_RE = re.compile(r"@[A-Za-z0-9_]+")
_ESCAPES_RE = re.compile(r"(?:\\[^u(]|\\u[A-Za-z0-9]{0,4})+")
_TEXT_RE = re.compile(r'[^\\"]+')
_WS = " \t\r\n"
_OPS = {
    "?": ("?//", "?"),
    "/": ("//=", "//", "/=", "/"),
    "|": ("|=", "|"),
    "+": ("+=", "+"),
    "-": ("-=", "-"),
    "*": ("*=", "*"),
    "%": ("%=", "%"),
    "=": ("==", "="),
    "!": ("!=",),
    "<": ("<=", "<"),
    ">": (">=", ">"),
    ";": (";",),
    ",": (",",),
    ":": (":",),
}
_OPENERS = {"(": ")", "[": "]", "{": "}"}
_HEX = frozenset("0123456789abcdefABCDEF")
_SIMPLE_ESCAPES = frozenset('"\\/bfnrt')

Token = tuple[str, int, int]  # kind, start, end; kind is the token's text for punctuation/keywords


def _comment_end(text: str, i: int) -> int:
    """Offset of the line break ending the comment at ``text[i] == '#'`` (a backslash escapes one)."""
    n = len(text)
    j = i + 1
    while j < n:
        c = text[j]
        if c == "\\" and j + 1 < n:
            if text[j + 1] in "\\\n":
                j += 2
                continue
            if text.startswith("\r\n", j + 1):
                j += 3
                continue
        if c == "\n" or (c == "\r" and text.startswith("\n", j + 1)):
            return j
        j += 1
    return n


def _escape_problem(run: str, at: int) -> JqProblem | None:
    """jq hands a run of escapes to its JSON parser; the first escape JSON refuses, if any."""
    i = 0
    n = len(run)
    while i < n:
        c = run[i + 1] if i + 1 < n else ""
        if c in _SIMPLE_ESCAPES and c:
            i += 2
            continue
        if c != "u":
            shown = run[i : i + 2]
            return JqProblem(
                f"`{shown}` is not a string escape jq knows "
                '(use \\" \\\\ \\/ \\b \\f \\n \\r \\t, \\uXXXX or \\(…) for interpolation)',
                at + i,
                at + i + 2,
            )
        digits = run[i + 2 : i + 6]
        if len(digits) < 4 or not set(digits) <= _HEX:
            return JqProblem("`\\u` must be followed by exactly four hex digits", at + i, at + i + 2 + len(digits))
        code = int(digits, 16)
        if 0xD800 <= code <= 0xDBFF:
            low = run[i + 8 : i + 12] if run.startswith("\\u", i + 6) else ""
            if len(low) < 4 or not set(low) <= _HEX or not 0xDC00 <= int(low, 16) <= 0xDFFF:
                return JqProblem(
                    f"`\\u{digits}` opens a UTF-16 surrogate pair, so it must be followed by a low "
                    "surrogate `\\uDC00`…`\\uDFFF`",
                    at + i,
                    at + i + 6,
                )
            i += 12
            continue
        i += 6
    return None


def _lex(text: str) -> tuple[list[Token], list[JqProblem], list[Token]]:
    """jq's tokens, the problems its scanner reports, and the openers left unclosed at the end."""
    scan = _Scanner(text)
    i, n = 0, len(text)
    while i < n:
        if scan.stack and scan.stack[-1] == "S":
            i = scan.string_part(i)
            continue
        c = text[i]
        if c in _WS:
            i += 1
        elif c == "#":
            i = _comment_end(text, i)
        else:
            i = scan.token(c, i)
    scan.toks.append(("EOF", n, n))
    return scan.toks, scan.problems, scan.openers


class _Scanner:
    """The scanner's state: the tokens so far, the problems, and the stack of open brackets."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.toks: list[Token] = []
        self.problems: list[JqProblem] = []
        self.stack: list[str] = []  # "(", "[", "{", "I" (interpolation), "S" (inside a string)
        self.openers: list[Token] = []  # the token that pushed each entry of `stack`

    def emit(self, kind: str, start: int, end: int) -> int:
        """Append one token; the offset after it."""
        self.toks.append((kind, start, end))
        return end

    def open(self, entry: str, kind: str, start: int, end: int) -> int:
        """A token that opens ``entry`` on the stack (a bracket, a string, an interpolation)."""
        self.stack.append(entry)
        self.emit(kind, start, end)
        self.openers.append(self.toks[-1])
        return end

    def close(self, kind: str, start: int, end: int) -> int:
        self.stack.pop()
        self.openers.pop()
        return self.emit(kind, start, end)

    def string_part(self, i: int) -> int:
        """Inside a string literal: its end, an interpolation, an escape run or plain text."""
        text = self.text
        c = text[i]
        if c == '"':
            return self.close("STR_END", i, i + 1)
        if text.startswith("\\(", i):
            return self.open("I", "INTERP_START", i, i + 2)
        if c == "\\":
            m = _ESCAPES_RE.match(text, i)
            if m is None:  # a backslash ending the program
                return self.emit("INVALID", i, i + 1)
            bad = _escape_problem(m.group(0), i)
            if bad is not None:
                self.problems.append(bad)
            return self.emit("STR_TEXT", i, m.end())
        m = _TEXT_RE.match(text, i)
        assert m is not None
        return self.emit("STR_TEXT", i, m.end())

    def token(self, c: str, i: int) -> int:
        """One token outside strings, starting with ``c`` at ``i``; the offset after it."""
        text = self.text
        if c == '"':
            return self.open("S", "STR_START", i, i + 1)
        if c == ".":
            return self.dot(i)
        if c.isascii() and (c.isalpha() or c == "_"):
            m = _IDENT_RE.match(text, i)
            assert m is not None
            word = m.group(0)
            return self.emit(word if word in _KEYWORDS else "IDENT", i, m.end())
        if "0" <= c <= "9":
            m = _NUMBER_RE.match(text, i)
            assert m is not None
            return self.emit("LITERAL", i, m.end())
        if c == "$":
            m = _BINDING_RE.match(text, i)
            if m is None:
                return self.emit("$", i, i + 1)
            return self.emit("LOC" if m.group(0) == "$__loc__" else "BINDING", i, m.end())
        if c == "@":
            m = _FORMAT_RE.match(text, i)
            return self.emit("INVALID", i, i + 1) if m is None else self.emit("FORMAT", i, m.end())
        if c in _OPENERS:
            return self.open(c, c, i, i + 1)
        if c in ")]}":
            return self.closer(c, i)
        for op in _OPS.get(c, ()):
            if text.startswith(op, i):
                return self.emit(op, i, i + len(op))
        return self.emit("INVALID", i, i + 1)

    def dot(self, i: int) -> int:
        """``..``, a ``.field``, a number such as ``.5``, or the identity ``.``."""
        text = self.text
        if text.startswith("..", i):
            return self.emit("..", i, i + 2)
        m = _FIELD_RE.match(text, i) or _NUMBER_RE.match(text, i)
        if m is not None:
            return self.emit("FIELD" if m.group(0)[1] not in "0123456789" else "LITERAL", i, m.end())
        return self.emit(".", i, i + 1)

    def closer(self, c: str, i: int) -> int:
        """``)``, ``]`` or ``}``: it closes the innermost opener when it matches, else it is invalid."""
        top = self.stack[-1] if self.stack else ""
        if top == "I" and c == ")":
            return self.close("INTERP_END", i, i + 1)
        if top in _OPENERS and _OPENERS[top] == c:
            return self.close(c, i, i + 1)
        return self.emit("INVALID", i, i + 1)
