"""Types and contracts (09): TypeExpr names and shapes (NIKA-TYPE-001), recursive named types
(-002), ``returns:`` beside ``schema:`` (-003), ``returns:`` vs ``decode:`` (-004), the regex
dialect (-006), defaults that do not fit their type (NIKA-DEFAULT-001), JSON-Schema validity of
``schema:`` and the static path walk into a declared output schema (NIKA-VAR-003, 04)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from checker.core.codes import report
from checker.core.diagnostics import Diagnostic, Edit, Fix, Label
from checker.core.display import clip
from checker.core.source import Span
from checker.core.suggest import did_you_mean
from checker.model import typesys
from checker.model.typesys import CONSTRUCTORS, PRIMITIVES
from checker.model.workflow import Agent, Exec, ExprSite, Infer, Task
from checker.parse.values import ListValue, MapValue, ScalarValue, TemplateValue, Value, describe
from checker.rules.support.context import RuleContext

DEAD_NAMES = {
    "boolean": "bool",
    "float": "number",
    "double": "number",
    "int": "integer",
    "str": "string",
    "text": "string",
    "list": "{array: T}",
    "array": "{array: T}",
    "dict": "{map: T}",
    "map": "{map: T}",
    "object": "{object: {field: T}}",
    "any": "a concrete type (or leave `returns:` out)",
}
WITHDRAWN = {"result", "secret", "money", "artifact"}


class _TypeChecker:
    def __init__(self, named: set[str], task: str | None) -> None:
        self.named = named
        self.task = task
        self.out: list[Diagnostic] = []

    def bad(self, node: Value, message: str, help: str, fixes: tuple[Fix, ...] = ()) -> None:
        self.out.append(report("NIKA-TYPE-001", node.span, message, help, task=self.task, fixes=fixes))

    def check(self, node: Value, field_position: bool = False) -> None:
        """Judge one TypeExpr: a type name, or a mapping with one constructor."""
        if isinstance(node, ScalarValue):
            self._name(node)
            return
        if isinstance(node, ListValue):
            self.bad(
                node, "a type cannot be a list", "Use `{union: [A, B]}` for alternatives or `{array: T}` for a list."
            )
            return
        assert isinstance(node, MapValue)
        keys = node.keys()
        if field_position and keys == ["optional"]:
            self.check(node.get("optional"))  # type: ignore[arg-type]
            return
        if "optional" in keys:
            self.bad(
                node, "`optional` only applies to an object field", "Use `{union: [T, null]}` for a nullable value."
            )
            return
        main = [k for k in keys if k != "additional"]
        if len(main) != 1 or ("additional" in keys and main != ["object"]):
            self.bad(
                node,
                "a type mapping needs exactly one constructor"
                if len(main) != 1
                else "`additional` only goes with `object`",
                f"Use one of: {', '.join(CONSTRUCTORS)}.",
            )
            return
        k = main[0]
        v = node.get(k)
        assert v is not None
        if k not in CONSTRUCTORS:
            if k in WITHDRAWN:
                self.bad(node, f"`{k}` is not a type constructor in this version", "Use a concrete type.")
            else:
                guess = did_you_mean(k, CONSTRUCTORS)
                self.bad(
                    node,
                    f"unknown type constructor `{k}`",
                    f"Did you mean `{guess}`?" if guess else f"Use one of: {', '.join(CONSTRUCTORS)}.",
                )
            return
        self._constructor(k, v, node)

    def _name(self, node: ScalarValue) -> None:
        """A type written as a name: a primitive or a declared type, not a withdrawn or foreign one."""
        v = node.value
        if v is None:
            return
        if not isinstance(v, str):
            self.bad(node, f"`{node.raw}` is not a type", "Use a type name such as `string` or `integer`.")
            return
        if v in PRIMITIVES or v in self.named:
            return
        if v in WITHDRAWN:
            self.bad(
                node,
                f"`{v}` is not a type in this version",
                "Use a concrete type; `result`, `secret`, `money` and `artifact` are reserved.",
            )
            return
        if v in DEAD_NAMES:
            repl = DEAD_NAMES[v]
            fixes = (Fix(f"Write `{repl}`", (Edit(node.span, repl),)),) if not repl.startswith(("{", "a ")) else ()
            self.bad(node, f"`{v}` is not a Nika type", f"Write {repl}.", fixes)
            return
        guess = did_you_mean(v, list(PRIMITIVES) + sorted(self.named))
        self.bad(
            node,
            f"unknown type `{v}`",
            (f"Did you mean `{guess}`? " if guess else "")
            + "Use a primitive (string, integer, number, bool, …) or a name declared under `types:`.",
        )

    def _constructor(self, k: str, v: Value, node: MapValue) -> None:
        """The argument of a known constructor (``array``, ``object``, ``union``, ``enum``, …)."""
        if k in ("array", "map"):
            self.check(v)
        elif k == "object":
            if not isinstance(v, MapValue):
                self.bad(v, "`object:` takes a mapping of field names to types", "Write `{object: {name: string}}`.")
            else:
                for _, fe in v.items():
                    self.check(fe.value, field_position=True)
            add = node.get("additional")
            if add is not None and not (isinstance(add, ScalarValue) and isinstance(add.value, bool)):
                self.bad(add, "`additional:` must be true or false", "Write `additional: true` to allow extra fields.")
        elif k == "union":
            if not isinstance(v, ListValue) or len(v.items) < 2:
                self.bad(v, "`union:` needs a list of at least two types", "Write `{union: [string, null]}`.")
            else:
                for item in v.items:
                    self.check(item)
        elif k == "enum":
            vals = v.items if isinstance(v, ListValue) else ()
            if not vals or not all(isinstance(i, ScalarValue) and isinstance(i.value, str) for i in vals):
                self.bad(
                    v, "`enum:` needs a non-empty list of strings", 'Write `{enum: ["low", "high"]}`; quote numbers.'
                )
            elif len({i.value for i in vals}) != len(vals):  # type: ignore[union-attr]
                self.bad(v, "`enum:` values must be unique", "Remove the repeated value.")
        elif k in ("integer", "number"):
            self._bounds(k, v)
        elif k == "string":
            self._string(v)

    def _bounds(self, k: str, v: Value) -> None:
        if not isinstance(v, MapValue):
            self.bad(v, f"`{k}:` takes `{{min, max}}`", f"Write `{{{k}: {{min: 0, max: 10}}}}`.")
            return
        vals: dict[str, float] = {}
        for name, e in v.items():
            if name not in ("min", "max"):
                self.bad(e.key, f"`{name}` is not a bound of `{k}`", "Use `min` and `max`.")
                continue
            x = e.value.value if isinstance(e.value, ScalarValue) else None
            ok = isinstance(x, int) if k == "integer" else isinstance(x, (int, float))
            if not ok or isinstance(x, bool):
                self.bad(
                    e.value,
                    f"`{name}` must be a {'whole number' if k == 'integer' else 'number'}",
                    "Use a literal number.",
                )
                continue
            vals[name] = x  # type: ignore[assignment]
        if "min" in vals and "max" in vals and vals["min"] > vals["max"]:
            self.bad(v, f"`min` ({vals['min']}) is greater than `max` ({vals['max']})", "Swap or fix the bounds.")

    def _string(self, v: Value) -> None:
        if not isinstance(v, MapValue):
            self.bad(v, "`string:` takes `{pattern, min_len, max_len}`", "Write `{string: {max_len: 64}}`.")
            return
        for name, e in v.items():
            if name == "pattern":
                p = e.value
                if not (isinstance(p, ScalarValue) and isinstance(p.value, str)):
                    self.bad(p, "`pattern` must be a string", "Quote the regular expression.")
                    continue
                why = regex_dialect_problem(p.value)
                if why:
                    self.out.append(
                        report(
                            "NIKA-TYPE-006",
                            p.span,
                            f"this pattern is outside the portable regex dialect: {why}",
                            "Use only literals, classes, greedy quantifiers, alternation, groups and anchors.",
                            task=self.task,
                        )
                    )
            elif name in ("min_len", "max_len"):
                x = e.value.value if isinstance(e.value, ScalarValue) else None
                if not isinstance(x, int) or isinstance(x, bool) or x < 0:
                    self.bad(e.value, f"`{name}` must be a non-negative integer", "Use a literal count.")
            else:
                self.bad(e.key, f"`{name}` is not an option of `string`", "Use `pattern`, `min_len` or `max_len`.")


def regex_dialect_problem(pattern: str) -> str | None:
    """Why ``pattern`` falls outside the locked regex dialect of 09, or ``None``."""
    if len(pattern) > 512:
        return "it is longer than 512 characters"
    i = 0
    n = len(pattern)
    in_class = False
    while i < n:
        c = pattern[i]
        if c == "\\":
            if i + 1 >= n:
                return "it ends with a lone backslash"
            d = pattern[i + 1]
            if d.isdigit() and d != "0" and not in_class:
                return "backreferences are not allowed"
            if d in "bB" and not in_class:
                return "word boundaries (`\\b`) are not allowed"
            if d in "pP":
                return "Unicode classes (`\\p{…}`) are not allowed"
            if d == "k":
                return "named backreferences are not allowed"
            i += 2
            continue
        if in_class:
            if c == "]":
                in_class = False
            i += 1
            continue
        if c == "[":
            in_class = True
            i += 1
            if i < n and pattern[i] == "^":
                i += 1
            if i < n and pattern[i] == "]":
                i += 1
            continue
        if c == "(" and i + 1 < n and pattern[i + 1] == "?":
            if pattern.startswith("(?:", i):
                i += 3
                continue
            nxt = pattern[i + 2 : i + 4]
            if nxt[:1] in ("=", "!") or nxt in ("<=", "<!"):
                return "lookaround assertions are not allowed"
            if nxt[:1] in ("P", "<", "'"):
                return "named groups are not allowed"
            return "inline flags are not allowed"
        if c in "*+?}" and i + 1 < n and pattern[i + 1] in "?+" and not (c == "?" and i > 0 and pattern[i - 1] == "("):
            return "lazy and possessive quantifiers are not allowed"
        i += 1
    return None


def _named_types(ctx: RuleContext) -> set[str]:
    return {n.name for n in ctx.workflow.types}


def check_type_exprs(ctx: RuleContext) -> Iterator[Diagnostic]:
    named = _named_types(ctx)
    for task, node in ctx.workflow.type_expressions():
        tc = _TypeChecker(named, task)
        tc.check(node)
        yield from tc.out
    yield from _recursive_types(ctx)


def _refs_in(node: Value, named: set[str]) -> Iterator[ScalarValue]:
    """Type names used inside a type expression (enum values and bounds are data, not types)."""
    stack = [node]
    while stack:
        n = stack.pop()
        if isinstance(n, ScalarValue):
            if isinstance(n.value, str) and n.value in named:
                yield n
        elif isinstance(n, MapValue):
            stack.extend(e.value for e in n.entries if e.key_text not in ("enum", "integer", "number", "string"))
        elif isinstance(n, ListValue):
            stack.extend(n.items)


def _recursive_types(ctx: RuleContext) -> Iterator[Diagnostic]:
    named = {n.name: n for n in ctx.workflow.types}
    deps = {name: list(_refs_in(n.value, set(named))) for name, n in named.items()}
    state: dict[str, int] = {}
    reported: set[str] = set()

    def visit(name: str, trail: list[tuple[str, ScalarValue]]) -> Diagnostic | None:
        state[name] = 1
        for ref in deps[name]:
            target = str(ref.value)
            if state.get(target) == 1:
                cyc = [*trail, (name, ref)]
                start = next((i for i, (nm, _) in enumerate(cyc) if nm == target), None)
                if start is None:  # `target` sits on a walk abandoned after its cycle was reported
                    continue
                cyc = cyc[start:]
                if target in reported:
                    return None
                reported.update(nm for nm, _ in cyc)
                chain = " -> ".join(f"`{nm}`" for nm, _ in cyc) + f" -> `{target}`"
                return report(
                    "NIKA-TYPE-002",
                    cyc[0][1].span,
                    f"type `{target}` refers to itself: {chain}",
                    "Types must be finite trees; flatten the recursion (e.g. a list of children by id).",
                    related=tuple(Label(r.span, f"`{nm}` refers to `{r.value}`") for nm, r in cyc[1:]),
                )
            if state.get(target) is None:
                d = visit(target, [*trail, (name, ref)])
                if d is not None:
                    return d
        state[name] = 2
        return None

    for name in named:
        if state.get(name) is None:
            d = visit(name, [])
            if d is not None:
                yield d


def check_contracts(ctx: RuleContext) -> Iterator[Diagnostic]:
    for task in ctx.workflow.tasks.values():
        verb = task.verb
        if task.returns is not None and isinstance(verb, (Infer, Agent)) and verb.schema is not None:
            e = verb.value.entry("schema")
            yield report(
                "NIKA-TYPE-003",
                task.value.entry("returns").key.span,  # type: ignore[union-attr]
                f"task `{task.id}` declares both `returns:` and `schema:`",
                "Keep one contract: prefer `returns:` (a Nika type) and delete `schema:`.",
                task=task.id,
                related=(Label(e.key.span, "`schema:` declared here"),) if e else (),
            )
        if task.returns is not None and isinstance(verb, Exec):
            yield from _decode_fit(task, verb, ctx)


def _shape(t: typesys.Type) -> str:
    """Coarse shape of a type: object, array, map, bytes, text, number, bool, null, any."""
    if isinstance(t, typesys.Prim):
        return {"null": "null", "bool": "bool", "integer": "number", "number": "number", "bytes": "bytes"}.get(
            t.name, "text"
        )
    if isinstance(t, typesys.Num):
        return "number"
    if isinstance(t, typesys.Str | typesys.Enum):
        return "text"
    if isinstance(t, typesys.Arr):
        return "array"
    if isinstance(t, typesys.MapOf):
        return "map"
    if isinstance(t, typesys.Obj):
        return "object"
    return "any"  # a union, or a type that cannot be told


def _decode_fit(task: Task, verb: Exec, ctx: RuleContext) -> Iterator[Diagnostic]:
    assert task.returns is not None
    shape = _shape(typesys.declared(task.returns, ctx.workflow.types))
    if verb.capture == "structured":
        return
    decode = verb.decode or "text"
    ok = {
        "text": {"text", "any"},
        "json": {"object", "array", "map", "text", "number", "bool", "null", "any"},
        "jsonl": {"array", "any"},
        "bytes": {"bytes", "any"},
    }[decode]
    if shape in ok:
        return
    need = "bytes" if shape == "bytes" else "json"
    yield report(
        "NIKA-TYPE-004",
        task.returns.span,
        f"`returns:` expects {'an' if shape[0] in 'aeiou' else 'a'} {shape} but the output is decoded as {decode}",
        f"Add `decode: {need}` to the `exec:` block, or change `returns:`.",
        task=task.id,
    )


def check_defaults(ctx: RuleContext) -> Iterator[Diagnostic]:
    wf = ctx.workflow
    items: list[tuple[str, Value, Value]] = []
    for section in ("inputs", "config"):
        for n in getattr(wf, section):
            if isinstance(n.value, MapValue) and "default" in n.value and "type" in n.value:
                items.append((f"{section}.{n.name}", n.value.get("type"), n.value.get("default")))  # type: ignore[arg-type]
    for n in wf.const:
        if isinstance(n.value, MapValue) and "type" in n.value and "value" in n.value:
            items.append((f"const.{n.name}", n.value.get("type"), n.value.get("value")))  # type: ignore[arg-type]
    for name, t, v in items:
        if isinstance(v, TemplateValue):
            continue
        if typesys.value_fits(v.to_python(), t, wf.types) is False:
            yield report(
                "NIKA-DEFAULT-001",
                v.span,
                f"the value of `{name}` ({describe(v)}) does not fit its declared type",
                "Change the value or the type so they agree.",
                related=(Label(t.span, "declared type"),),
            )


def check_json_schemas(ctx: RuleContext) -> Iterator[Diagnostic]:
    """``schema:`` on infer/agent must itself be a valid JSON Schema (2020-12)."""
    for task in ctx.workflow.tasks.values():
        verb = task.verb
        if not isinstance(verb, (Infer, Agent)) or not isinstance(verb.schema, MapValue):
            continue
        from jsonschema import Draft202012Validator  # heavy: imported only when a schema exists
        from jsonschema.exceptions import SchemaError

        try:
            Draft202012Validator.check_schema(verb.schema.to_python())
        except SchemaError as exc:
            node = _node_at(verb.schema, list(exc.path))
            yield report(
                "NIKA-PARSE-019",
                node.span,
                f"`schema:` is not a valid JSON Schema: {clip(exc.message, 200)}",
                "Fix the schema (see json-schema.org), or express the contract with `returns:`.",
                task=task.id,
            )


def _node_at(node: Value, path: list[Any]) -> Value:
    for step in path:
        if isinstance(node, MapValue) and isinstance(step, str) and node.get(step) is not None:
            node = node.get(step)  # type: ignore[assignment]
        elif isinstance(node, ListValue) and isinstance(step, int) and step < len(node.items):
            node = node.items[step]
        else:
            break
    return node


def check_schema_paths(ctx: RuleContext) -> Iterator[Diagnostic]:
    """A member read into a producer's declared ``schema:`` must name a declared property."""
    wf = ctx.workflow
    for site, _island, ref, span in ctx.refs(("with", "recover", "outputs")):
        if ref.root != "tasks" or len(ref.path) < 3 or ref.in_has:
            continue
        producer = wf.tasks.get(str(ref.path[0]))
        if producer is None or ref.path[1] != "output":
            continue
        verb = producer.verb
        if not isinstance(verb, (Infer, Agent)) or not isinstance(verb.schema, MapValue):
            continue
        level: Value | None = verb.schema
        walked = ["output"]
        for step in ref.path[2:]:
            if step is None or not isinstance(level, MapValue):
                break
            ty = level.get("type")
            tyv = ty.value if isinstance(ty, ScalarValue) else None
            if isinstance(step, str):
                props = level.get("properties")
                if tyv not in (None, "object") and not isinstance(props, MapValue):
                    yield _path_error(site, span, walked, step, f"is a {tyv}, not an object")
                    break
                if not isinstance(props, MapValue):
                    break
                if step in props:
                    level = props.get(step)
                    walked.append(step)
                    continue
                extra = level.get("additionalProperties")
                if (isinstance(extra, ScalarValue) and extra.value is True) or isinstance(extra, MapValue):
                    break
                yield _path_error(site, span, walked, step, "declares no such property", sorted(props.keys()))
                break
            if isinstance(step, int):
                if tyv not in (None, "array"):
                    yield _path_error(site, span, walked, f"[{step}]", f"is a {tyv}, not an array")
                    break
                level = level.get("items")
                walked.append(f"[{step}]")


def _path_error(
    site: ExprSite, span: Span, walked: list[str], step: object, why: str, choices: list[str] | None = None
) -> Diagnostic:
    at = ".".join(walked)
    guess = did_you_mean(str(step), choices) if choices else None
    return report(
        "NIKA-VAR-003",
        span,
        f"`{at}` {why}: `.{step}` can never resolve",
        (f"Did you mean `.{guess}`? " if guess else "")
        + (f"Declared: {', '.join(choices)}." if choices else "Follow the producer's schema."),
        task=site.task,
    )
