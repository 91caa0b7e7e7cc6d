"""Does a jq program compile? A recogniser for the jq the runtime runs (libjq 1.8), in pure Python.

04 makes a jq compile error a static finding (NIKA-VAR-005), so the checker must refuse exactly
the programs libjq refuses, and never one it accepts. This module answers that question without
the native library (the checker's fast path imports nothing heavy):

* **Lexing** follows jq's scanner: longest match, ``#`` comments (a backslash continues one onto
  the next line), ``..``/``?//``/``//=`` and friends, ``$__loc__``, ``@format``, numbers such as
  ``.5`` and ``1.``, ``a::b`` names, strings with ``\\(…)`` interpolation whose escapes are held to
  JSON's rules (including surrogate pairs). jq reads the program as a C string, so a NUL ends it.
* **Parsing** follows jq's grammar and its precedence table: ``def``, ``as`` bindings and
  ``label`` reach to the end of the enclosing pipeline; ``try``/``catch`` and unary ``-`` take a
  postfix term; ``==``/``<``… and the assignment operators do not chain; destructuring patterns
  and ``?//`` alternatives; keywords as object keys; trailing comma in an object only.
* **Compile checks** jq makes after parsing: every function call must name a builtin or a ``def``
  in scope *with that arity*, every ``$name`` a binding in scope (``$ENV`` is always defined),
  every ``break $l`` an enclosing ``label $l``. Like jq, a ``def`` nothing calls is discarded
  unchecked. A constant object key must be a string (jq folds constants first, so ``(1 + 1)`` is
  the number 2). ``module`` metadata must be a constant object; ``import``/``include`` never
  resolve (the runtime sets no module search path); a program of definitions only has no body.

Error messages are ours, positioned on the fault. Two limits, both in the accepting direction:
a program nested deeper than about 80 brackets is judged only on what jq's scanner alone proves
(a bad escape, a stray character, an unclosed bracket or string), and jq's bytecode size limits
(64 KiB of code, 4095 closures in one function) are not modelled.
"""

from __future__ import annotations

import re

from checker.jq.lexer import JqProblem, _lex, _Syntax, _TooDeep
from checker.jq.parser import _Parser
from checker.jq.resolve import _Resolver

__all__ = ["JqProblem", "jq_problem"]

# A program that reads like jq's command-line options: a long option, or a cluster of its
# one-letter options (`-n`, `-rc`). Only used to word the refusal of a program jq refuses anyway.
_FLAG_RE = re.compile(r"--[A-Za-z][A-Za-z-]*(?=\s|=|\Z)|-[nrjascCMSeLhV]{1,4}(?=\s|\Z)")
_NOT_FLAGS = {"-nan"}


def _judge(text: str, open_name: str | None) -> JqProblem | None:
    toks, lexical, unclosed = _lex(text)
    parser = _Parser(text, toks, unclosed)
    try:
        tree = parser.program()
    except _Syntax as exc:
        return min([*lexical, *parser.problems, exc.problem], key=lambda p: p.start)
    parse_time = lexical + parser.problems
    if parse_time:
        return min(parse_time, key=lambda p: p.start)
    if isinstance(tree, JqProblem):
        return tree
    resolver = _Resolver(open_name)
    resolver.walk(tree, {}, frozenset(), frozenset())
    return min(resolver.problems, key=lambda p: p.start) if resolver.problems else None


def _lexical_problem(text: str) -> JqProblem | None:
    """The first fault jq's scanner alone makes certain: a bad escape, a stray character or
    closer, an unclosed bracket or string. ``None`` leaves the program to the runtime."""
    toks, problems, unclosed = _lex(text)
    for kind, s, e in toks:
        if kind == "INVALID":
            problems.append(JqProblem(f"unexpected character `{text[s:e]}`", s, e))
            break
    if unclosed:
        kind, s, e = unclosed[-1]
        problems.append(JqProblem(f"`{text[s:e]}` is never closed", s, e))
    return min(problems, key=lambda p: p.start) if problems else None


def jq_problem(text: str, open_name: str | None = None) -> JqProblem | None:
    """Why libjq would refuse to compile ``text``, or ``None`` when it compiles.

    ``open_name`` is a name to treat as defined everywhere, as a function of any arity and as a
    variable: the stand-in for a ``${{ … }}`` island whose rendered text is not known yet."""
    program = text.split("\0", 1)[0]  # jq reads the program as a C string
    try:
        problem = _judge(program, open_name)
    except (_TooDeep, RecursionError):
        problem = _lexical_problem(program)  # too deep to parse here: judge what the scanner sees
    if problem is None:
        return None
    stripped = program.strip()
    flag = _FLAG_RE.match(stripped)
    if flag is not None and flag.group(0) not in _NOT_FLAGS:
        lead = len(program) - len(program.lstrip())
        word = flag.group(0)
        return JqProblem(f"`{word}` looks like a command-line flag, not a jq program", lead, lead + len(word))
    return problem
