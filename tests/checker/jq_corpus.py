"""jq programs to hold the structural checker against real jq: a small random grammar of jq
(every construct the checker tokenizes) and single-character mutations of what it produces."""

from __future__ import annotations

import random

NAMES = ("a", "b", "items", "name", "id", "price", "tags")
FUNCS0 = ("length", "keys", "add", "not", "tostring", "tonumber", "type", "first", "last", "reverse", "sort", "empty")
FUNCS1 = ("map", "select", "has", "sort_by", "group_by", "unique_by", "min_by", "any", "all", "first", "test", "split")
FORMATS = ("@base64", "@base64d", "@json", "@text", "@uri", "@html", "@sh")


class Gen:
    def __init__(self, rng: random.Random) -> None:
        self.rng = rng
        self.vars: list[str] = []

    def pick(self, *options: str) -> str:
        return self.rng.choice(options)

    def program(self) -> str:
        if self.rng.random() < 0.15:
            name = self.pick("f", "g", "h")
            params = self.pick("", "(x)", "($v)", "(x; $y)")
            saved = list(self.vars)
            self.vars += [p.strip("$") for p in params.strip("()").split("; ") if p.startswith("$")]
            body = self.expr(2)
            self.vars = saved
            call = name + self.call_args(params)
            return f"def {name}{params}: {body}; {call} | {self.expr(2)}"
        return self.expr(3)

    def call_args(self, params: str) -> str:
        n = 0 if not params else params.count(";") + 1
        return "" if n == 0 else "(" + "; ".join(self.expr(0) for _ in range(n)) + ")"

    def expr(self, depth: int) -> str:
        if depth <= 0:
            return self.term(0)
        r = self.rng.random()
        if r < 0.25:
            op = self.pick("|", ",", "//", "+", "-", "*", "/", "%", "==", "!=", "<", "<=", ">", ">=", "and", "or")
            return f"{self.operand(depth - 1)} {op} {self.operand(depth - 1)}"
        if r < 0.32:
            op = self.pick("=", "|=", "+=", "-=", "*=", "/=", "%=", "//=")
            return f"{self.path()} {op} {self.operand(depth - 1)}"
        if r < 0.40:
            var = self.pick("x", "y", "acc")
            head = self.term(depth - 1)
            self.vars.append(var)
            body = self.expr(depth - 1)
            self.vars.pop()
            return f"{head} as ${var} | {body}"
        if r < 0.46:
            kind = self.pick("reduce", "foreach")
            src = self.term(depth - 1)
            init = self.expr(0)
            self.vars.append("it")
            upd = self.expr(depth - 1)
            extract = f"; {self.expr(0)}" if kind == "foreach" and self.rng.random() < 0.5 else ""
            self.vars.pop()
            return f"{kind} {src} as $it ({init}; {upd}{extract})"
        if r < 0.54:
            out = f"if {self.expr(depth - 1)} then {self.expr(depth - 1)}"
            if self.rng.random() < 0.4:
                out += f" elif {self.expr(depth - 1)} then {self.expr(depth - 1)}"
            if self.rng.random() < 0.7:
                out += f" else {self.expr(depth - 1)}"
            return out + " end"
        if r < 0.60:
            catch = f" catch {self.term(depth - 1)}" if self.rng.random() < 0.6 else ""
            return f"try {self.term(depth - 1)}{catch}"
        if r < 0.63:
            return f"label $out | {self.expr(depth - 1)} | ., break $out"
        if r < 0.66:
            return f"{self.term(depth - 1)} as [$p, $q] ?// {{a: $p}} | [$p, $q]"
        return self.term(depth)

    def operand(self, depth: int) -> str:
        """An operand of a binary operator: compound expressions go in parentheses."""
        text = self.expr(depth)
        return text if self.rng.random() < 0.3 and depth <= 0 else f"({text})"

    def path(self) -> str:
        out = self.pick(".", "." + self.pick(*NAMES), '."quoted key"')
        for _ in range(self.rng.randrange(3)):
            step = self.pick("[]", "[0]", "[-1]", "[1:2]", "[:3]", '["k"]', "?", ".name", '."quoted key"')
            if out == "." and step.startswith("."):
                continue  # `..name` is not jq
            out += step
        return out

    def term(self, depth: int) -> str:
        r = self.rng.random()
        if r < 0.25:
            return self.path()
        if r < 0.35:
            return self.pick("1", "0", "2.5", "1e3", "null", "true", "false", '"s"', '"a\\"b"', '"\\u00e9"', "..", "-1")
        if r < 0.42:
            return '"pre \\(' + self.expr(max(depth - 1, 0)) + ') post"'
        if r < 0.48:
            return self.pick(*FORMATS) + self.pick("", ' "x\\(.a)y"')
        if r < 0.56:
            return self.pick(*FUNCS0)
        if r < 0.66:
            return f"{self.pick(*FUNCS1)}({self.expr(max(depth - 1, 0))})"
        if r < 0.70:
            return f"range({self.expr(0)}; {self.expr(0)})"
        if r < 0.76 and self.vars:
            return "$" + self.pick(*self.vars)
        if r < 0.80:
            return self.pick("$__loc__", "$ENV", "env", "input", "now")
        if r < 0.86:
            return "[" + (self.expr(max(depth - 1, 0)) if self.rng.random() < 0.8 else "") + "]"
        if r < 0.93:
            return "{" + ", ".join(self.entry(depth) for _ in range(self.rng.randrange(4))) + "}"
        if r < 0.96:
            return "-" + self.term(max(depth - 1, 0))
        return "(" + self.expr(max(depth - 1, 0)) + ")"

    def entry(self, depth: int) -> str:
        r = self.rng.random()
        name = self.pick(*NAMES)
        if r < 0.3:
            return name
        if r < 0.45:
            return f'"{name}": {self.term(max(depth - 1, 0))}'
        if r < 0.55:
            return f"({self.term(0)}): {self.term(0)}"
        if r < 0.62 and self.vars:
            return "$" + self.pick(*self.vars)
        return f"{name}: {self.term(max(depth - 1, 0))}"


NOISE = [*'|,.;:()[]{}$@?"\\ -+*/%=<>!#', "if", "then", "end", "as", "and", "or", "def", "reduce", "//", "elif"]


def mutate(rng: random.Random, program: str) -> str:
    if not program:
        return rng.choice(NOISE)
    i = rng.randrange(len(program))
    r = rng.random()
    if r < 0.35:
        return program[:i] + program[i + 1 :]
    if r < 0.7:
        return program[:i] + rng.choice(NOISE) + program[i:]
    if r < 0.85 and i + 1 < len(program):
        return program[:i] + program[i + 1] + program[i] + program[i + 2 :]
    return program[:i]


def generated(count: int, seed: int = 2026) -> list[str]:
    """``count`` programs from the grammar, then ``count`` mutants of them."""
    rng = random.Random(seed)
    out = [Gen(rng).program() for _ in range(count)]
    out += [mutate(rng, rng.choice(out)) for _ in range(count)]
    return out
