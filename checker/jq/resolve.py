"""Name resolution: what jq checks when it links a parsed program (arity, bindings, labels)."""

from __future__ import annotations

from checker.jq.builtins import BUILTINS
from checker.jq.lexer import JqProblem
from checker.jq.tree import _BINOP_CALL, _UPDATE_OPS, _const, _FuncDef, _is_value, _Node, _Pattern


class _Def:
    __slots__ = ("used",)

    def __init__(self) -> None:
        self.used = False


_PARAM = _Def()  # a closure parameter: always "used", nothing to check later
_BUILTIN_NAMES = sorted({name for name, _ in BUILTINS if not name.startswith("_")})
_IMPLICIT_CALLS: dict[str, tuple[tuple[str, int], ...]] = {
    "neg": (("_negate", 0),),
    "format": (("format", 1),),
    "str": (("format", 1), ("_plus", 2)),
    "break": (("error", 0),),
    "label": (("_equal", 2), ("error", 0)),
    "=": (("_assign", 2),),
    "|=": (("_modify", 2),),
    "//=": (("_modify", 2),),
}

Funcs = dict[tuple[str, int], _Def]


class _DefBody:
    """A pending check of a ``def``'s body, walked after the code the definition scopes over."""

    __slots__ = ("fd", "mine")

    def __init__(self, fd: _FuncDef) -> None:
        self.fd = fd
        self.mine = _Def()

    def body_funcs(self, inner: Funcs) -> Funcs:
        out = dict(inner)  # the function itself (recursion) and what was in scope at the `def`
        for name, _ in self.fd.params:
            out[(name, 0)] = _PARAM  # a parameter is a filter; a `$name` one is also `name`
        return out

    def body_vars(self, vars_: frozenset[str]) -> frozenset[str]:
        return vars_ | {name for name, is_var in self.fd.params if is_var}


_Todo = tuple["_Node | _DefBody", Funcs, frozenset[str], frozenset[str]]
_USES_NAMES = frozenset({"call", "var", "varn", "break", "binop", *_IMPLICIT_CALLS})  # the kinds `names` judges
_SCOPES = frozenset({"defs", "label", "bind", "reduce", "foreach"})  # the kinds that scope names over their children


class _Resolver:
    def __init__(self, open_name: str | None = None) -> None:
        self.problems: list[JqProblem] = []
        self.open_name = open_name  # defined at every arity and as a variable (a template island)

    def call(self, name: str, arity: int, funcs: Funcs, node: _Node) -> None:
        if name == self.open_name:
            return
        found = funcs.get((name, arity))
        if found is not None:
            found.used = True
            return
        if (name, arity) in BUILTINS:
            return
        self.problems.append(JqProblem(self.undefined(name, arity, funcs), node.start, node.start + len(name)))

    @staticmethod
    def undefined(name: str, arity: int, funcs: Funcs) -> str:
        args = "no arguments" if arity == 0 else "1 argument" if arity == 1 else f"{arity} arguments"
        known = sorted({a for n, a in BUILTINS if n == name} | {a for n, a in funcs if n == name})
        if known:
            takes = " or ".join(str(a) for a in known)
            return f"`{name}` takes {takes} argument{'s' if known != [1] else ''}, not {arity} (`{name}/{arity}`)"
        import difflib  # only on this error path: keeps the checker's import light

        hint = difflib.get_close_matches(name, _BUILTIN_NAMES + sorted({n for n, _ in funcs}), n=1)
        guess = f"; did you mean `{hint[0]}`?" if hint else ""
        return f"`{name}` with {args} is not a jq builtin nor defined by a `def` in scope{guess}"

    def walk(self, node: _Node, funcs: Funcs, vars_: frozenset[str], labels: frozenset[str]) -> None:
        """Check every name of the program ``node``: each node's own names (:meth:`names`), then
        its children in the scope it opens for them (:meth:`scoped`); a ``def``'s body only once
        the code it scopes over has called it."""
        todo: list[_Todo] = [(node, funcs, vars_, labels)]
        while todo:
            n, f, v, lb = todo.pop()
            if isinstance(n, _DefBody):
                # everything after the `def` has been walked: its body is live only if called
                if n.mine.used:
                    todo.append((n.fd.body, n.body_funcs(f), n.body_vars(v), lb))
                continue
            kind = n.kind
            if kind in _USES_NAMES:
                self.names(n, f, v, lb)
            if kind in _SCOPES:
                todo += self.scoped(n, f, v, lb)
            else:
                todo += [(k, f, v, lb) for k in n.kids]

    def names(self, n: _Node, f: Funcs, v: frozenset[str], lb: frozenset[str]) -> None:
        """The names node ``n`` itself uses: a call, a variable, a label, or the builtins an
        operator stands for."""
        kind = n.kind
        if kind == "call":
            self.call(n.name, n.arity, f, n)
        elif kind == "var":
            if n.name not in v and n.name not in ("ENV", self.open_name):
                self.problems.append(
                    JqProblem(
                        f"`${n.name}` is not defined here (bind it with `… as ${n.name} | …` "
                        f"or a `${n.name}` parameter)",
                        n.start,
                        n.end,
                    )
                )
        elif kind == "varn":
            if n.name not in v and n.name != self.open_name:
                self.problems.append(JqProblem(f"`${n.name}` is not defined here", n.start, n.end))
        elif kind == "break":
            if n.name not in lb:
                self.problems.append(
                    JqProblem(f"`break ${n.name}` has no enclosing `label ${n.name} | …`", n.start, n.end)
                )
        elif kind == "binop" and n.name in _BINOP_CALL:
            a, b = _const(n.kids[0]), _const(n.kids[1])
            if not (_is_value(a) and _is_value(b)):
                self.call(_BINOP_CALL[n.name], 2, f, n)
        elif kind == "binop" and n.name in _UPDATE_OPS:
            self.call("_modify", 2, f, n)
            self.call(_BINOP_CALL[_UPDATE_OPS[n.name]], 2, f, n)
        elif kind == "binop" and n.name in _IMPLICIT_CALLS:
            for name, arity in _IMPLICIT_CALLS[n.name]:
                self.call(name, arity, f, n)
        elif kind in _IMPLICIT_CALLS:
            for name, arity in _IMPLICIT_CALLS[kind]:
                self.call(name, arity, f, n)

    @staticmethod
    def scoped(n: _Node, f: Funcs, v: frozenset[str], lb: frozenset[str]) -> list[_Todo]:
        """The children of ``n`` (a ``def``, ``label``, ``as`` binding, ``reduce`` or ``foreach``),
        each with the functions, variables and labels in scope for it."""
        kind = n.kind
        if kind == "defs":
            # `def f: …; rest`: `rest` sees `f`; jq drops a definition nothing live calls
            # before it resolves names, so `f`'s body is checked only once `rest` calls it
            fd: _FuncDef = n.extra
            body = _DefBody(fd)
            inner = {**f, (fd.name, len(fd.params)): body.mine}
            return [(body, inner, v, lb), (n.kids[0], inner, v, lb)]
        if kind == "label":
            return [(n.kids[0], f, v, lb | {n.name})]
        pats: list[_Pattern] = n.extra  # `… as $x | …`, `reduce`, `foreach`
        names: list[tuple[str, int, int]] = []
        keys: list[_Node] = []
        for p in pats:
            p.names(names)
            p.keys(keys)
        bound = v | {name for name, _, _ in names}
        key_vars = bound if len(pats) > 1 else v
        out: list[_Todo] = [(k, f, key_vars, lb) for k in keys]
        if kind == "bind":
            return [*out, (n.kids[0], f, v, lb), (n.kids[1], f, bound, lb)]
        return [*out, (n.kids[0], f, v, lb), (n.kids[1], f, v, lb), *((k, f, bound, lb) for k in n.kids[2:])]
