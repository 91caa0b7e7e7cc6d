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
    toks: list[Token] = []
    problems: list[JqProblem] = []
    stack: list[str] = []  # "(", "[", "{", "I" (interpolation), "S" (inside a string)
    openers: list[Token] = []  # the token that pushed each entry of `stack`
    i = 0
    n = len(text)
    while i < n:
        if stack and stack[-1] == "S":
            c = text[i]
            if c == '"':
                stack.pop()
                openers.pop()
                toks.append(("STR_END", i, i + 1))
                i += 1
            elif text.startswith("\\(", i):
                stack.append("I")
                toks.append(("INTERP_START", i, i + 2))
                openers.append(toks[-1])
                i += 2
            elif c == "\\":
                m = _ESCAPES_RE.match(text, i)
                if m is None:  # a backslash ending the program
                    toks.append(("INVALID", i, i + 1))
                    i += 1
                    continue
                bad = _escape_problem(m.group(0), i)
                if bad is not None:
                    problems.append(bad)
                toks.append(("STR_TEXT", i, m.end()))
                i = m.end()
            else:
                m = _TEXT_RE.match(text, i)
                assert m is not None
                toks.append(("STR_TEXT", i, m.end()))
                i = m.end()
            continue
        c = text[i]
        if c in _WS:
            i += 1
            continue
        if c == "#":
            i = _comment_end(text, i)
            continue
        if c == '"':
            stack.append("S")
            toks.append(("STR_START", i, i + 1))
            openers.append(toks[-1])
            i += 1
            continue
        if c == ".":
            if text.startswith("..", i):
                toks.append(("..", i, i + 2))
                i += 2
                continue
            m = _FIELD_RE.match(text, i) or _NUMBER_RE.match(text, i)
            if m is not None:
                toks.append(("FIELD" if m.group(0)[1] not in "0123456789" else "LITERAL", i, m.end()))
                i = m.end()
                continue
            toks.append((".", i, i + 1))
            i += 1
            continue
        if c.isascii() and (c.isalpha() or c == "_"):
            m = _IDENT_RE.match(text, i)
            assert m is not None
            word = m.group(0)
            toks.append((word if word in _KEYWORDS else "IDENT", i, m.end()))
            i = m.end()
            continue
        if "0" <= c <= "9":
            m = _NUMBER_RE.match(text, i)
            assert m is not None
            toks.append(("LITERAL", i, m.end()))
            i = m.end()
            continue
        if c == "$":
            m = _BINDING_RE.match(text, i)
            if m is None:
                toks.append(("$", i, i + 1))
                i += 1
            else:
                toks.append(("LOC" if m.group(0) == "$__loc__" else "BINDING", i, m.end()))
                i = m.end()
            continue
        if c == "@":
            m = _FORMAT_RE.match(text, i)
            if m is None:
                toks.append(("INVALID", i, i + 1))
                i += 1
            else:
                toks.append(("FORMAT", i, m.end()))
                i = m.end()
            continue
        if c in _OPENERS:
            stack.append(c)
            toks.append((c, i, i + 1))
            openers.append(toks[-1])
            i += 1
            continue
        if c in ")]}":
            top = stack[-1] if stack else ""
            if top == "I" and c == ")":
                stack.pop()
                openers.pop()
                toks.append(("INTERP_END", i, i + 1))
            elif top in _OPENERS and _OPENERS[top] == c:
                stack.pop()
                openers.pop()
                toks.append((c, i, i + 1))
            else:
                toks.append(("INVALID", i, i + 1))
            i += 1
            continue
        ops = _OPS.get(c)
        if ops is not None:
            for op in ops:
                if text.startswith(op, i):
                    toks.append((op, i, i + len(op)))
                    i += len(op)
                    break
            else:
                toks.append(("INVALID", i, i + 1))
                i += 1
            continue
        toks.append(("INVALID", i, i + 1))
        i += 1
    toks.append(("EOF", n, n))
    return toks, problems, openers
