"""jq programs to hold the checker's jq recogniser against real jq (libjq).

Three sources, all deterministic (a fixed seed):

* ``Gen``: a random grammar of jq that reaches every construct the recogniser models: pipelines,
  every operator (assignment, update, `//=`, comparisons), `as` bindings with array/object
  patterns and `?//` alternatives, `reduce`/`foreach`, `if`/`elif`/`else`, `try`/`catch`,
  `label`/`break`, `def` with closure and `$` parameters (nested, recursive, shadowing), string
  interpolation and escapes, formats, `$__loc__`, `$ENV`, `..`, `.[]?`, slices, optional `?`,
  keywords as object keys and field names, computed (and constant) object keys, comments.
  It also calls functions with a wrong arity or a misspelt name and uses variables out of scope
  now and then, so compile-time name errors are exercised too.
* ``EDGES``: hand-picked programs on the corners of jq's lexer, grammar and compiler.
* mutants of the generated programs: character edits (delete, insert noise, swap, truncate) and
  token edits (delete, duplicate, swap, insert a token, drop or add a bracket).
"""

from __future__ import annotations

import random
import re

NAMES = ("a", "b", "items", "name", "id", "price", "tags")
KEYWORD_KEYS = ("if", "then", "end", "and", "or", "as", "def", "reduce", "try", "label", "__loc__", "true")
FUNCS0 = (
    "length", "keys", "add", "not", "tostring", "tonumber", "type", "first", "last", "reverse", "sort",
    "empty", "to_entries", "paths", "ascii_downcase", "tojson", "floor", "error", "input", "abs", "trim",
)  # fmt: skip
FUNCS1 = (
    "map", "select", "has", "sort_by", "group_by", "unique_by", "min_by", "any", "all", "first", "test",
    "split", "path", "with_entries", "join", "ltrimstr", "error", "getpath", "add", "walk", "last",
)  # fmt: skip
FUNCS2 = ("range", "limit", "sub", "any", "all", "nth", "splits", "skip", "getpath", "setpath", "IN")
MISSPELT = ("lenght", "slect", "mapp", "tostrng", "frist", "key", "sort_by", "ranges", "env", "$__loc__")
FORMATS = ("@base64", "@base64d", "@json", "@text", "@uri", "@html", "@sh", "@csv", "@tsv", "@base32", "@nope")
STRINGS = (
    '"s"', '"a\\"b"', '"\\u00e9"', '"tab\\tnl\\n"', '"\\ud83d\\ude00"', '"\\/"', '""', '"\\q"', '"\\ud800"',
    '"\\u12"', '"# not a comment"', '"a\\\\b"', '"\\udc00"',
)  # fmt: skip
NUMBERS = ("1", "0", "2.5", "1e3", ".5", "1.", "1E-2", "00", "-1", "1e1000")


class Gen:
    def __init__(self, rng: random.Random) -> None:
        self.rng = rng
        self.vars: list[str] = []
        self.funcs: list[tuple[str, int]] = []
        self.labels: list[str] = []

    def pick(self, *options: str) -> str:
        return self.rng.choice(options)

    def chance(self, p: float) -> bool:
        return self.rng.random() < p

    def program(self) -> str:
        out = self.expr(3)
        if self.chance(0.2):
            out = self.definition(2) + " " + out
        if self.chance(0.06):
            out = self.pick("# leading comment\n", "module {a: 1}; ", "# c \\\n continued\n") + out
        if self.chance(0.05):
            out += self.pick(" # trailing", "  ", "\n")
        return out

    def definition(self, depth: int) -> str:
        name = self.pick("f", "g", "h", "length", "recurse")
        params = self.pick("", "", "(x)", "($v)", "(x; $y)", "(f)")
        plist = [p.strip() for p in params.strip("()").split(";") if p.strip()]
        saved_vars, saved_funcs = list(self.vars), list(self.funcs)
        self.funcs.append((name, len(plist)))  # recursion is allowed
        for p in plist:
            if p.startswith("$"):
                self.vars.append(p[1:])
                self.funcs.append((p[1:], 0))  # a `$v` parameter is also the filter `v`
            else:
                self.funcs.append((p, 0))
        body = self.expr(depth)
        if self.chance(0.2):
            body = self.definition(max(depth - 1, 0)) + " " + body
        self.vars, self.funcs = saved_vars, saved_funcs
        self.funcs.append((name, len(plist)))
        return f"def {name}{params}: {body};"

    def call(self, name: str, arity: int) -> str:
        if arity == 0:
            return name
        return f"{name}(" + "; ".join(self.expr(0) for _ in range(arity)) + ")"

    def expr(self, depth: int) -> str:
        if depth <= 0:
            return self.term(0)
        r = self.rng.random()
        if r < 0.22:
            op = self.pick("|", ",", "//", "+", "-", "*", "/", "%", "==", "!=", "<", "<=", ">", ">=", "and", "or")
            return f"{self.operand(depth - 1)} {op} {self.operand(depth - 1)}"
        if r < 0.28:
            op = self.pick("=", "|=", "+=", "-=", "*=", "/=", "%=", "//=")
            return f"{self.path()} {op} {self.operand(depth - 1)}"
        if r < 0.36:
            head = self.term(depth - 1)
            pattern, bound = self.pattern()
            if self.chance(0.25):
                alt, more = self.pattern()
                pattern += " ?// " + alt
                bound += more
            self.vars += bound
            body = self.expr(depth - 1)
            del self.vars[len(self.vars) - len(bound) :]
            return f"{head} as {pattern} | {body}"
        if r < 0.42:
            kind = self.pick("reduce", "foreach")
            src = self.term(depth - 1)
            init = self.expr(0)
            pattern, bound = self.pick(("$it", ["it"]), ("[$i, $j]", ["i", "j"]), ("{a: $it}", ["it"]))
            if self.chance(0.15):
                pattern += " ?// $it"
                bound = [*bound, "it"]
            self.vars += bound
            upd = self.expr(depth - 1)
            extract = f"; {self.expr(0)}" if kind == "foreach" and self.chance(0.5) else ""
            del self.vars[len(self.vars) - len(bound) :]
            return f"{kind} {src} as {pattern} ({init}; {upd}{extract})"
        if r < 0.50:
            out = f"if {self.expr(depth - 1)} then {self.expr(depth - 1)}"
            if self.chance(0.4):
                out += f" elif {self.expr(depth - 1)} then {self.expr(depth - 1)}"
            if self.chance(0.7):
                out += f" else {self.expr(depth - 1)}"
            return out + " end"
        if r < 0.56:
            catch = f" catch {self.term(depth - 1)}" if self.chance(0.6) else ""
            return f"try {self.term(depth - 1)}{catch}"
        if r < 0.60:
            label = self.pick("out", "done")
            self.labels.append(label)
            body = self.expr(depth - 1)
            self.labels.pop()
            return f"label ${label} | {body}"
        if r < 0.64:
            return f"{self.definition(depth - 1)} {self.expr(depth - 1)}"
        return self.term(depth)

    def pattern(self) -> tuple[str, list[str]]:
        r = self.rng.random()
        if r < 0.5:
            v = self.pick("x", "y", "acc")
            return "$" + v, [v]
        if r < 0.75:
            return "[$p, $q]", ["p", "q"]
        key = self.pick("a", '"b"', "(.k)", "$k", "if", '("c" + "d")', "(1)")
        if key == "$k":
            return "{$k, b: [$p]}", ["k", "p"]
        return "{" + key + ": $p, $q}", ["p", "q"]

    def operand(self, depth: int) -> str:
        """An operand of a binary operator: compound expressions go in parentheses."""
        text = self.expr(depth)
        return text if self.chance(0.3) and depth <= 0 else f"({text})"

    def path(self) -> str:
        out = self.pick(".", "." + self.pick(*NAMES), '."quoted key"', ".if", "..", ".[]")
        for _ in range(self.rng.randrange(4)):
            step = self.pick(
                "[]", "[0]", "[-1]", "[1:2]", "[:3]", "[2:]", '["k"]', "?", ".name", '."quoted key"', "[]?",
                ".[0]", '.["k"]', ".end", '.@base64 "q"',
            )  # fmt: skip
            if out in (".", "..") and step.startswith("."):
                continue  # `..name` and `...` are not jq
            out += step
        return out

    def term(self, depth: int) -> str:
        r = self.rng.random()
        sub = max(depth - 1, 0)
        if r < 0.2:
            return self.path()
        if r < 0.27:
            return self.pick(*NUMBERS, "null", "true", "false", *STRINGS)
        if r < 0.33:
            return '"pre \\(' + self.expr(sub) + ') post"'
        if r < 0.37:
            return self.pick(*FORMATS) + self.pick("", ' "x\\(.a)y"', ' "plain"')
        if r < 0.44:
            return self.pick(*FUNCS0)
        if r < 0.53:
            return f"{self.pick(*FUNCS1)}({self.expr(sub)})"
        if r < 0.57:
            return self.call(self.pick(*FUNCS2), 2)
        if r < 0.60 and self.funcs:
            name, arity = self.rng.choice(self.funcs)
            return self.call(name, arity)
        if r < 0.62:
            return self.call(self.pick(*MISSPELT, *FUNCS1), self.rng.randrange(3))
        if r < 0.67 and self.vars:
            return "$" + self.pick(*self.vars)
        if r < 0.69:
            return self.pick("$__loc__", "$ENV", "$ENV.PATH", "env", "input", "now", "$undefined", "$__loc__.line")
        if r < 0.71 and self.labels:
            return f"break ${self.pick(*self.labels)}"
        if r < 0.76:
            return "[" + (self.expr(sub) if self.chance(0.8) else "") + "]"
        if r < 0.84:
            return "{" + ", ".join(self.entry(depth) for _ in range(self.rng.randrange(4))) + "}"
        if r < 0.87:
            return "-" + self.term(sub)
        if r < 0.89:
            return self.pick("..?", "..[]?", ".[]?", "..|numbers", "(..)")
        return "(" + self.expr(sub) + ")"

    def entry(self, depth: int) -> str:
        r = self.rng.random()
        name = self.pick(*NAMES)
        sub = max(depth - 1, 0)
        if r < 0.2:
            return name
        if r < 0.3:
            return self.pick(*KEYWORD_KEYS) + self.pick("", f": {self.term(sub)}")
        if r < 0.42:
            return f'"{name}": {self.term(sub)}'
        if r < 0.52:
            return f"({self.term(0)}): {self.term(0)}"
        if r < 0.56:
            return self.pick('("a" + "b")', "(1 + 1)", '("x" * 2)', "(. | 1)", "([1, 2])", "(null)") + ": 1"
        if r < 0.62 and self.vars:
            v = self.pick(*self.vars)
            return self.pick(f"${v}", f"${v}: {self.term(0)}")
        if r < 0.64:
            return self.pick("$__loc__", '@base64 "k": 1', '"k\\(.a)": 2')
        return f"{name}: {self.term(sub)}"


# Corners of jq's lexer, grammar and compiler (all judged by libjq in the test).
EDGES = (
    # lexer
    "..", "...", "..a", ". .a", ".a .", ".[]?", "..?", ".5", "1.", "1.e3", "1e", "00", ".e5", "1..2", "$__loc__",
    "$__loc__x", "$__loc", "$ $ $ $x", ". as $x | $$$$x", "$$$$x", "$$$$ENV", "@", "@base64", "@1x", "#", "",
    "   ", "1 # comment", "1 # comment \\\n still comment", "1 # comment \\\\\n 2", "1 #c\r2", "# c\r\n1",
    "1\f", "é", '"é"', "!", "1 != 2", "a::b", "def a::b: 1; a::b", ". as $a::b | $a::b", "1\x00 garbage (",
    "\x00", "?", "?//", "// 1", "1 //", "`", "'a'", ".a.b", ".a.[0]", '."a"."b"', '.a."b"?', '.@base64 "x"',
    ". @base64", '. @base64 "x"', '.."a"', "..[0]", ".[1,2]", ".[:]", ".[1:2:3]", '.["a":]', ". [0]",
    # strings and escapes
    '"\\(1"', '"\\(1))"', '"\\(1)\\(2)"', '"\\("\\("x")")"', '"\\u00zz"', '"\\uZZZZ"', '"\\u12345"', '"\\u',
    '"a', '"\\ud83d\\u0041"', '"\\ud83d"', '"\\ud83dx"', '"\\ud83d\\ude0"', '"\\/\\b\\f\\n\\r\\t\\"\\\\"',
    '"a\\\nb"', '"a\tb"', '"\\a"', '@json "x\\(1)"', '@base64 "\\(1)x\\("y")"', '"\\', '"\\(', '"\\()"',
    # grammar
    "try 1 + 2 catch 3", "try -1", "try", "try catch 1", "try error catch .", "try try 1 catch 2 catch 3",
    "-1 * 2", "- - 1", "--1", "-", "1 -", "1 == 2 == 3", ".a = 1 |= 2", ".a < .b < .c", ".a |= .b += 1",
    ".a // .b = 1", ".a = .b // 1", "1 + 2 * 3 - 4 / 5 % 6", ".a?//=1", ".a? //= 1", "1, def f: 2; f | f",
    "(def f: 2; f), f", "1 + def f: 2; f", "def f: 1;", "def f: 1; def g: 2;", "module {a:1}; .",
    "module {a:.}; .", "module 1; .", "module {a:1};", 'include "x"; .', 'import "a" as $b; .', "1; 2",
    "if 1 then 2 elif 3 then 4 end", "if . then 1 else 2", "if . then 1", "if . end", "if then 1 end",
    "if . then . end.a", "reduce . as $x (0)", "reduce .[] as $x (0; .) .a", "reduce 1 + 2 as $x (0; .)",
    "foreach . as $x (0; 1; 2; 3)", "foreach . as $x (0; 1;)", "label $f | def g: break $f; g",
    "def g: break $f; label $f | g", "[label $a | 1] | break $a", "break", "break $x", "label $x | break $x",
    ". as $__loc__ | 1", "1 as [] | 1", "1 as {} | 1", "1 as {a} | 1", "1 as {if: $x} | $x",
    "1 as {$x: [$y]} | $x, $y", ". as {$a: {c: $a}} | $a", "{a: 1 | 2}", "{a: . as $x | $x}", "{a:1,}", "{,}",
    "{a:1,,}", "{$__loc__}", "{$__loc__: 1}", "{if}", "{if: 1, then, end: 2}", "{a::b: 1}", "{1: 2}", "{@base64: 1}",
    '{@base64 "k": 1}', "{(.a, .b): 1}", "[1,]", "[,1]", "()", "(1;2)", "f(1;)", "map()", "map(.;)", "{true: 1}",
    "true(1)", "def true: 1; true", "[.[] | {a}]", ".end", ".as", "$x.a", "1 as $x | $x.a",
    # compile-time checks
    "{(1+1):2}", '{("a"+"b"):2}', "{(1/0):2}", "{([1,2]):2}", "{([1,(2,3)]):2}", "{([(1,2),3]):2}", "{({}):2}",
    "{({a:1}):2}", "{({a}):2}", "{(-1):2}", '{("a"=="a"):2}', '{("a" * 0):2}', '{("a" * -1):2}',
    '{("abc" / "b"):2}', "{(null+null):1}", "{([.]):1}", "{(1|2):1}", "{(. | 1): 2}", "{(1 | .): 2}",
    "{(def f: 3; 1): 2}", "{(def f: 3; f): 2}", "{((. | 1) + 1): 2}", "{(5 % 0.5): 2}", "{(5 % 2): 2}",
    "{([1] - [1]): 2}", "{({} * {}): 2}", '{(null + "a"): 2}', '{("" / ""): 2}', "{({a: 1, $__loc__}): 2}",
    '{({"a\\(1)": 1}): 2}', "{({a: (1,2)}): 2}", "{({a: [1,2]}): 2}", "{([[1],{}]): 2}", "{([1,2] | .): 2}",
    '{("x" as $x | 1): 2}', "{(1?): 2}", '{(@text "a"): 2}', '{("a" + "b" + 1): 2}', "{($__loc__): 1}",
    "{([. | 1, 2]): 3}", "{([def f: 1; 1, 2]): 3}", ". as {(1): $x} ?// $y | 1", ". as {(true): $x} | $x",
    '{"a":"b"} as {$a, ($a): $c} | $c', '{"a":"b"} as {$a, ($a): $c} ?// $d | $c', ". as [$a] ?// $b | $a, $b",
    ". as {\"a\\($q)\": $x} | $x", "reduce .[] as $x ($x; .)", "reduce .[] as $x (0; $x)",
    "foreach .[] as $x (0; $x; $x)", "reduce .[] as [$x] ?// $y (0; $x + $y)", "def f($a): a; f(1)",
    "def f($a): $a; f(1)", "def f(g): g(1); f(.)", "def f(x): x; f(.) | x", "def f($x): $x; $x",
    "def f($x; g): [$x, x, g]; f(1; 2)", "def f: .; f(1)", "def f: .; def f(a): a; f(f)", "def f(a; a): a; f(1;2)",
    "def g: nosuchfn; 1", "def g: nosuchfn; g", "def g: $nosuch; 1", "def g: nosuchfn; def h: g; 1",
    "def g: nosuchfn; def h: g; h", "def g: break $x; 1", "def f: def g: nosuch; 1; f", "def f(x): 1; f(nosuch)",
    "def g: {(1): 2}; 1", 'def g: "\\a"; 1', "def recurse: nosuch; ..", "def recurse: nosuch; 1",
    "def _plus(a; b): nosuch; . + 1", "def _plus(a; b): nosuch; 1 + 1", "def _negate: nosuch; -.",
    "def format(f): nosuch; @base64", 'def format(f): nosuch; "\\(1)"', "def error: nosuch; label $a | 1",
    "def _modify(p; f): nosuch; .a |= 1", "def _assign(p; v): nosuch; .a = 1", "def f: f; 1", "def f: f; f",
    "_plus(1;2)", "_negate", "_modify(.a; 1)", "_match_impl(1;2;3)", "toarray", "ltrimstr", "getpath(1;2)",
    "limit(1)", "splits", "not(1)", "$__prog_args", "$ENV", "$ENV.HOME", "env.HOME", "input_filename",
    "-n", "-r", "-nr", "--arg", "--raw-output .a", "--sort-keys", "-first", "-length", "-nan",
)  # fmt: skip

NOISE = [*'|,.;:()[]{}$@?"\\ -+*/%=<>!#', "if", "then", "end", "as", "and", "or", "def", "reduce", "//", "elif"]
TOKEN_RE = re.compile(
    r'"(?:[^"\\]|\\.)*"|\$__loc__|\$?[A-Za-z_][A-Za-z_0-9]*|\.[A-Za-z_][A-Za-z_0-9]*|@[A-Za-z0-9_]+'
    r"|[0-9]+(?:\.[0-9]*)?(?:[eE][+-]?[0-9]+)?|\?//|//=|\.\.|[|+\-*/%<>=!]=|//|\S"
)
INSERTED = (
    "(", ")", "[", "]", "{", "}", "|", ",", ";", ":", ".", "..", "?", "?//", "$x", "$__loc__", "@base64", "as",
    "def", "if", "then", "else", "end", "try", "catch", "reduce", "foreach", "label", "break", "and", "or", "=",
    "==", "//", "//=", "-", "#c\n", '"s"', '"\\(', "1", "f", "length", "map(", "$ENV", ".a", "[]",
)  # fmt: skip


def mutate(rng: random.Random, program: str) -> str:
    """One random edit of ``program``: a character edit or a token edit."""
    if not program:
        return rng.choice(NOISE)
    if rng.random() < 0.5:
        i = rng.randrange(len(program))
        r = rng.random()
        if r < 0.35:
            return program[:i] + program[i + 1 :]
        if r < 0.7:
            return program[:i] + rng.choice(NOISE) + program[i:]
        if r < 0.85 and i + 1 < len(program):
            return program[:i] + program[i + 1] + program[i] + program[i + 2 :]
        return program[:i]
    toks = [m.span() for m in TOKEN_RE.finditer(program)]
    if not toks:
        return program + rng.choice(INSERTED)
    k = rng.randrange(len(toks))
    s, e = toks[k]
    r = rng.random()
    if r < 0.25:  # delete a token
        return program[:s] + program[e:]
    if r < 0.4:  # duplicate it
        return program[:e] + " " + program[s:e] + program[e:]
    if r < 0.55 and k + 1 < len(toks):  # swap it with the next one
        s2, e2 = toks[k + 1]
        return program[:s] + program[s2:e2] + program[e:s2] + program[s:e] + program[e2:]
    if r < 0.8:  # insert a token before it
        return program[:s] + rng.choice(INSERTED) + " " + program[s:]
    brackets = [t for t in toks if program[t[0] : t[1]] in "()[]{}"]
    if brackets and rng.random() < 0.6:  # drop a bracket
        s, e = rng.choice(brackets)
        return program[:s] + program[e:]
    return program[:s] + rng.choice("()[]{}") + program[s:]  # add a stray one


def generated(count: int, mutants: int | None = None, seed: int = 2026) -> list[str]:
    """``count`` programs from the grammar, then ``mutants`` (default ``count``) mutants of them
    and of ``EDGES``; the same list on every run."""
    rng = random.Random(seed)
    out = [Gen(rng).program() for _ in range(count)]
    pool = out + list(EDGES)
    out += [mutate(rng, rng.choice(pool)) for _ in range(count if mutants is None else mutants)]
    return out
