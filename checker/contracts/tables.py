"""Per-tool argument contracts of the ``nika:*`` builtins and the provider table, as data.

The facts live in ``checker/contracts/builtins.toml`` and ``checker/contracts/providers.toml``
(the layout is documented at the top of each file). This module loads them lazily, once, into
frozen dataclasses and offers the checks every consumer shares:

* :func:`check_tool_args` judges an ``invoke: {tool: "nika:…", args: …}`` on the model's values:
  shape, unknown and missing arguments, literal types and values, and the cross-argument rules.
* :func:`check_model_ref` judges a literal ``model: <provider>/<name>``.
* :func:`check_tool_ref` and :func:`check_standalone_invoke` judge the tool id itself.
* :meth:`ToolContract.snippet` and :meth:`ToolContract.markdown` feed completion and hover.

Everything here is pure: values in, findings out. A value written as a ``${{ … }}`` template is
only known at run time, so every check on it stays silent.
"""

from __future__ import annotations

import math
import os
import re
import tomllib
from collections.abc import Callable, Iterable, Iterator
from functools import cache
from typing import Any

from checker.core.codes import report
from checker.core.diagnostics import Diagnostic, Edit, Fix, Label
from checker.core.durations import parse_duration
from checker.core.records import record
from checker.core.source import Span
from checker.core.suggest import did_you_mean
from checker.expr.template import has_island
from checker.parse.values import Entry, ListValue, MapValue, ScalarValue, Value, describe

DATA_DIR = os.path.dirname(__file__)

ARG_CODE = "NIKA-BUILTIN-001"
SHAPE_CODE = "NIKA-PARSE-019"
MODEL_CODE = "NIKA-PROVIDER-002"
TOOL_CODE = "NIKA-INVOKE-001"

TYPES = ("string", "integer", "number", "boolean", "object", "array", "any", "duration", "enum", "null")
RULE_KINDS = (
    "exactly_one_of",
    "at_most_one_of",
    "at_least_one_of",
    "requires",
    "required_when",
    "forbidden_when",
    "excludes",
    "distinct",
    "member_of",
    "excludes_key",
    "last",
)
_PIPE = "\\|"  # a pipe escaped for a Markdown table cell

_TYPE_NOUN = {
    "string": "a string",
    "enum": "a string",
    "duration": "a duration string",
    "integer": "an integer",
    "number": "a number",
    "boolean": "a boolean",
    "object": "a mapping",
    "array": "a list",
    "null": "empty",
    "any": "any value",
}


# ---------------------------------------------------------------------------------------------
# Data model
# ---------------------------------------------------------------------------------------------


@record
class Rule:
    """One cross-argument rule (the kinds are listed in ``builtins.toml``)."""

    kind: str
    args: tuple[str, ...] = ()
    arg: str | None = None
    with_: tuple[str, ...] = ()
    when: tuple[tuple[str, tuple[Any, ...]], ...] = ()
    value: tuple[Any, ...] = ()
    of: str | None = None
    target: str | None = None
    key: str | None = None
    keys: tuple[str, ...] = ()
    code: str = ARG_CODE
    help: str | None = None

    def describe(self) -> str:
        """The rule in one plain phrase, for hover cards and docs."""
        k = self.kind
        names = ", ".join(f"`{a}`" for a in self.args)
        cond = _when_text(self.when)
        if k == "exactly_one_of":
            return f"exactly one of {names}"
        if k == "at_most_one_of":
            return f"at most one of {names}"
        if k == "at_least_one_of":
            return f"at least one of {names}"
        if k == "requires" and self.with_:
            return f"`{self.arg}` only together with " + ", ".join(f"`{a}`" for a in self.with_)
        if k == "requires":
            own = f" `{self.arg}: {_fmt_values(self.value)}`" if self.value else f" `{self.arg}`"
            return f"{own.strip()} only with {cond}"
        if k == "required_when":
            return f"{cond} needs " + " or ".join(f"`{a}`" for a in self.args)
        if k == "forbidden_when":
            return f"no `{self.arg}` with {cond}"
        if k == "excludes":
            return f"`{self.arg}` excludes {names}"
        if k == "distinct":
            return " and ".join(f"`{a}`" for a in self.args) + " must differ"
        if k == "member_of":
            base = f"`{self.arg}` must be one of `{self.of}`"
            return f"{base} when {cond}" if self.when else base
        if k == "excludes_key":
            return f"no `{self.key}` in `{self.target}` next to `{self.arg}`"
        if k == "last":
            return ", ".join(f"`{x}`" for x in self.keys) + " only as the last item"
        return k


@record
class ArgSpec:
    """The contract of one argument (or one nested field, map value or list item)."""

    name: str
    types: tuple[str, ...]
    required: bool = False
    nullable: bool = True
    snippet: bool = False
    doc: str = ""
    values: tuple[Any, ...] = ()
    has_default: bool = False
    default: Any = None
    min: float | None = None
    max: float | None = None
    min_length: int | None = None
    max_length: int | None = None
    min_items: int | None = None
    max_items: int | None = None
    pattern: str | None = None
    template: bool = False
    reserved: bool = False
    aliases: tuple[str, ...] = ()
    code: str = ARG_CODE
    fields: tuple[ArgSpec, ...] = ()
    open: bool = False
    entries: ArgSpec | None = None
    items: ArgSpec | None = None
    single_key: bool = False
    rules: tuple[Rule, ...] = ()

    @property
    def type_label(self) -> str:
        """``string``, ``enum`` shown as its values, unions joined with ``|``."""
        parts = []
        for t in self.types:
            if t == "enum" and self.values:
                parts.append(" \\| ".join(f"`{v}`" for v in self.values))
            else:
                parts.append(t)
        label = " \\| ".join(parts)
        if self.values and "enum" not in self.types:
            label += " (" + ", ".join(f"`{_fmt(v)}`" for v in self.values) + ")"
        return label

    def get_field(self, name: str) -> ArgSpec | None:
        for f in self.fields:
            if f.name == name:
                return f
        return None

    def markdown(self, tool: str | None = None) -> str:
        """A small hover card for this argument."""
        head = f"**{self.name}**" + (f" · `{tool}`" if tool else "")
        lines = [head, "", self.doc] if self.doc else [head]
        facts = [f"type: {self.type_label.replace(chr(92), '')}"]
        facts.append("required" if self.required else "optional")
        if self.has_default:
            facts.append(f"default `{_fmt(self.default)}`")
        rng = _range_text(self)
        if rng:
            facts.append(rng)
        lines += ["", " · ".join(facts)]
        if self.fields:
            lines += ["", "Fields: " + ", ".join(f"`{f.name}`" for f in self.fields)]
        return "\n".join(lines)


@record
class ToolContract:
    """Everything the project knows statically about one builtin."""

    id: str
    summary: str
    category: str
    capability: str
    effects: tuple[str, ...]
    agent_only: bool
    open_args: bool
    error_plane: str
    output: str
    args: tuple[ArgSpec, ...]
    rules: tuple[Rule, ...] = ()

    @property
    def name(self) -> str:
        return self.id.split(":", 1)[1]

    def arg(self, name: str) -> ArgSpec | None:
        for a in self.args:
            if a.name == name:
                return a
        return None

    def arg_names(self) -> tuple[str, ...]:
        return tuple(a.name for a in self.args if not a.reserved)

    def required_args(self) -> tuple[ArgSpec, ...]:
        return tuple(a for a in self.args if a.required)

    def snippet(self, indent: str = "  ") -> str:
        """An LSP snippet (``$1`` placeholders) that writes ``args:`` with the required arguments
        and those a call normally carries."""
        req = tuple(a for a in self.args if a.required or a.snippet)
        if not req:
            return "args: {$1}"
        lines = ["args:"]
        for i, a in enumerate(req, 1):
            if "enum" in a.types and a.values and len(a.types) == 1:
                choice = ",".join(_snippet_escape(str(v), choice=True) for v in a.values)
                lines.append(f"{indent}{a.name}: ${{{i}|{choice}|}}")
            else:
                lines.append(f"{indent}{a.name}: ${{{i}}}")
        return "\n".join(lines)

    def markdown(self) -> str:
        """A hover card: summary, effects, the argument table, the rules and the output."""
        effects = f" ({', '.join(self.effects)})" if self.effects else ""
        out = [f"**`{self.id}`** — {self.summary}", ""]
        out.append(f"*{self.category} · {self.capability}{effects}*")
        if self.agent_only:
            out += ["", "Only available inside an `agent:` tool list."]
        if self.args:
            out += ["", "| Argument | Type | Required | Default | Meaning |", "|---|---|---|---|---|"]
            for a in self.args:
                if a.reserved:
                    continue
                default = f"`{_fmt(a.default)}`" if a.has_default else ""
                doc = a.doc
                rng = _range_text(a)
                if rng:
                    doc = f"{doc} ({rng})" if doc else rng
                req = "yes" if a.required else ""
                doc = doc.replace("|", _PIPE)
                out.append(f"| `{a.name}` | {a.type_label} | {req} | {default} | {doc} |")
        if self.open_args:
            out += ["", "Other arguments are passed through unchecked."]
        if self.rules:
            out += ["", "Rules:"]
            out += [f"- {r.describe()}" for r in self.rules]
        out += ["", f"**Returns:** {self.output}"]
        return "\n".join(out)


@record
class Provider:
    """One model provider prefix."""

    id: str
    kind: str  # local | cloud | test
    env_vars: tuple[str, ...]
    base_url: str | None
    summary: str
    models: tuple[str, ...] = ()
    name_hints: tuple[str, ...] = ()

    @property
    def is_local(self) -> bool:
        return self.kind == "local"


@record
class ExtractMode:
    """One ``mode:`` of ``nika:fetch``."""

    name: str
    canonical: bool  # False only for the implicit ``raw``
    output: str
    summary: str
    needs: str | None = None  # the companion argument the mode requires


# ---------------------------------------------------------------------------------------------
# Loading
# ---------------------------------------------------------------------------------------------


def _load(name: str) -> dict[str, Any]:
    with open(os.path.join(DATA_DIR, name), "rb") as fh:
        return tomllib.load(fh)


@cache
def _builtins_data() -> dict[str, Any]:
    return _load("builtins.toml")


@cache
def _providers_data() -> dict[str, Any]:
    return _load("providers.toml")


_ARG_KEYS = frozenset(
    {
        "type",
        "required",
        "nullable",
        "snippet",
        "doc",
        "values",
        "values_from",
        "default",
        "min",
        "max",
        "min_length",
        "max_length",
        "min_items",
        "max_items",
        "pattern",
        "template",
        "reserved",
        "aliases",
        "code",
        "fields",
        "open",
        "entries",
        "items",
        "single_key",
        "rules",
    }
)
_RULE_KEYS = frozenset({"kind", "args", "arg", "with", "when", "value", "of", "target", "key", "keys", "code", "help"})


def _build_rule(row: dict[str, Any], where: str) -> Rule:
    extra = set(row) - _RULE_KEYS
    if extra or row.get("kind") not in RULE_KINDS:
        raise ValueError(f"{where}: bad rule {row!r}")
    when = tuple((k, tuple(v)) for k, v in row.get("when", {}).items())
    return Rule(
        kind=row["kind"],
        args=tuple(row.get("args", ())),
        arg=row.get("arg"),
        with_=tuple(row.get("with", ())),
        when=when,
        value=tuple(row.get("value", ())),
        of=row.get("of"),
        target=row.get("target"),
        key=row.get("key"),
        keys=tuple(row.get("keys", ())),
        code=row.get("code", ARG_CODE),
        help=row.get("help"),
    )


def _build_arg(name: str, row: dict[str, Any], where: str) -> ArgSpec:
    extra = set(row) - _ARG_KEYS
    if extra:
        raise ValueError(f"{where}: unknown keys {sorted(extra)}")
    raw_type = row.get("type", "any")
    types = (raw_type,) if isinstance(raw_type, str) else tuple(raw_type)
    for t in types:
        if t not in TYPES:
            raise ValueError(f"{where}: unknown type {t!r}")
    values = tuple(row.get("values", ()))
    if row.get("values_from") == "extract_modes":
        values = _mode_names()
    elif "values_from" in row:
        raise ValueError(f"{where}: unknown values_from {row['values_from']!r}")
    pattern = row.get("pattern")
    if pattern is not None:
        re.compile(pattern)
    fields = tuple(_build_arg(k, v, f"{where}.{k}") for k, v in row.get("fields", {}).items())
    entries = _build_arg("*", row["entries"], f"{where}.*") if "entries" in row else None
    items = _build_arg("[]", row["items"], f"{where}[]") if "items" in row else None
    rules = tuple(_build_rule(r, where) for r in row.get("rules", ()))
    return ArgSpec(
        name=name,
        types=types,
        required=bool(row.get("required", False)),
        nullable=bool(row.get("nullable", True)),
        snippet=bool(row.get("snippet", False)),
        doc=row.get("doc", ""),
        values=values,
        has_default="default" in row,
        default=row.get("default"),
        min=row.get("min"),
        max=row.get("max"),
        min_length=row.get("min_length"),
        max_length=row.get("max_length"),
        min_items=row.get("min_items"),
        max_items=row.get("max_items"),
        pattern=pattern,
        template=bool(row.get("template", False)),
        reserved=bool(row.get("reserved", False)),
        aliases=tuple(row.get("aliases", ())),
        code=row.get("code", ARG_CODE),
        fields=fields,
        open=bool(row.get("open", False)),
        entries=entries,
        items=items,
        single_key=bool(row.get("single_key", False)),
        rules=rules,
    )


@cache
def _contracts() -> dict[str, ToolContract]:
    out: dict[str, ToolContract] = {}
    for tool_id, row in _builtins_data()["tools"].items():
        out[tool_id] = _build_contract(tool_id, row)
    return out


def _build_contract(tool_id: str, row: dict[str, Any]) -> ToolContract:
    args = tuple(_build_arg(k, v, f"{tool_id}.{k}") for k, v in row.get("args", {}).items())
    return ToolContract(
        id=tool_id,
        summary=row["summary"],
        category=row["category"],
        capability=row["capability"],
        effects=tuple(row.get("effects", ())),
        agent_only=bool(row.get("agent_only", False)),
        open_args=bool(row.get("open_args", False)),
        error_plane=row["error_plane"],
        output=row["output"],
        args=args,
        rules=tuple(_build_rule(r, tool_id) for r in row.get("rules", ())),
    )


@cache
def _providers() -> dict[str, Provider]:
    out: dict[str, Provider] = {}
    for pid, row in _providers_data()["providers"].items():
        out[pid] = Provider(
            id=pid,
            kind=row["kind"],
            env_vars=tuple(row.get("env_vars", ())),
            base_url=row.get("base_url"),
            summary=row["summary"],
            models=tuple(row.get("models", ())),
            name_hints=tuple(row.get("name_hints", ())),
        )
    return out


@cache
def _modes() -> tuple[ExtractMode, ...]:
    return tuple(
        ExtractMode(
            name=name,
            canonical=bool(row["canonical"]),
            output=row["output"],
            summary=row["summary"],
            needs=row.get("needs"),
        )
        for name, row in _builtins_data()["extract_modes"].items()
    )


# ---------------------------------------------------------------------------------------------
# Public lookups
# ---------------------------------------------------------------------------------------------


@cache
def _mode_names() -> tuple[str, ...]:
    from checker.core.toml_sections import _text

    text = _text(os.path.join(DATA_DIR, "builtins.toml"))
    return tuple(re.findall(r"^\[extract_modes\.([A-Za-z0-9_]+)\]\s*$", text, re.M))


@cache
def tool_ids() -> tuple[str, ...]:
    """The closed set of builtin ids (``nika:…``), sorted."""
    from checker.core.toml_sections import keys

    return tuple(sorted(keys(os.path.join(DATA_DIR, "builtins.toml"), "tools")))


@cache
def contract(tool_id: str) -> ToolContract | None:
    """The contract of a builtin, or ``None`` for anything that is not one (parsed on demand)."""
    from checker.core.toml_sections import section

    if tool_id not in tool_ids():
        return None
    row = section(os.path.join(DATA_DIR, "builtins.toml"), "tools", tool_id)
    return _build_contract(tool_id, row) if row is not None else None


def contracts() -> tuple[ToolContract, ...]:
    """Every builtin contract, sorted by id."""
    return tuple(c for t in tool_ids() if (c := contract(t)) is not None)


def providers() -> dict[str, Provider]:
    """The 17 providers by id, in the order of ``providers.toml``."""
    return dict(_providers())


def provider_of(model: str) -> Provider | None:
    """The provider a literal ``<provider>/<name>`` string selects, if any."""
    prefix, sep, _ = model.partition("/")
    return _providers().get(prefix) if sep else None


def mock_models() -> dict[str, str]:
    """The ``mock`` provider's model names with a one-line description."""
    return {k: v["summary"] for k, v in _providers_data().get("mock_models", {}).items()}


def extract_modes() -> tuple[ExtractMode, ...]:
    """The fetch extract modes: the nine canonical ones, then the implicit ``raw``."""
    return _modes()


def retired_tools() -> dict[str, str]:
    """Names that are not builtins (cut or misspelt) mapped to what to use instead."""
    return dict(_builtins_data().get("retired", {}))


# ---------------------------------------------------------------------------------------------
# Small helpers
# ---------------------------------------------------------------------------------------------


def is_dynamic(value: Value | None) -> bool:
    """True for a string holding a ``${{ … }}`` template: its value is only known at run time."""
    return isinstance(value, ScalarValue) and isinstance(value.value, str) and has_island(value.value)


def _fmt(v: Any) -> str:
    if v is True:
        return "true"
    if v is False:
        return "false"
    if v is None:
        return "null"
    return str(v)


def _fmt_values(vals: Iterable[Any]) -> str:
    return " | ".join(_fmt(v) for v in vals)


def _when_text(when: tuple[tuple[str, tuple[Any, ...]], ...]) -> str:
    parts = []
    for k, vals in when:
        if len(vals) == 1:
            parts.append(f"`{k}: {_fmt(vals[0])}`")
        else:
            parts.append(f"`{k}` in {{{', '.join(_fmt(v) for v in vals)}}}")
    return " and ".join(parts)


def _range_text(a: ArgSpec) -> str:
    bits = []
    if a.min is not None and a.max is not None:
        bits.append(f"{_num(a.min)}..{_num(a.max)}")
    elif a.min is not None:
        bits.append(f"≥ {_num(a.min)}")
    elif a.max is not None:
        bits.append(f"≤ {_num(a.max)}")
    if a.min_length is not None or a.max_length is not None:
        lo = a.min_length if a.min_length is not None else 0
        bits.append(f"{lo}..{a.max_length} chars" if a.max_length is not None else f"≥ {lo} chars")
    if a.min_items is not None or a.max_items is not None:
        lo = a.min_items if a.min_items is not None else 0
        bits.append(f"{lo}..{a.max_items} items" if a.max_items is not None else f"≥ {lo} items")
    return ", ".join(bits)


def _num(x: float) -> str:
    """A number for a message. An integer too long to print whole (or to turn into a float)
    is named by its length: Python refuses ``float()`` past 1e308 and ``str()`` past 4300 digits."""
    if isinstance(x, int):
        if abs(x) < 10**30:
            return str(x)
        try:
            digits = len(str(abs(x)))
        except ValueError:  # beyond the interpreter's int-to-text limit
            digits = int(x.bit_length() * 0.30103) + 1
        return f"{'-' if x < 0 else ''}<a {digits}-digit integer>"
    return str(int(x)) if x.is_integer() else str(x)


def _snippet_escape(text: str, *, choice: bool = False) -> str:
    text = text.replace("\\", "\\\\").replace("$", "\\$").replace("}", "\\}")
    if choice:
        text = text.replace(",", "\\,").replace("|", "\\|")
    return text


def _same(a: Any, b: Any) -> bool:
    if isinstance(a, bool) or isinstance(b, bool):
        return isinstance(a, bool) and isinstance(b, bool) and a is b
    return bool(a == b)


def _matches(t: str, value: Value) -> bool:
    if t == "any":
        return True
    if isinstance(value, MapValue):
        return t == "object"
    if isinstance(value, ListValue):
        return t == "array"
    if not isinstance(value, ScalarValue):
        return False
    v = value.value
    if t in ("string", "enum", "duration"):
        return isinstance(v, str)
    if t == "integer":
        return isinstance(v, int) and not isinstance(v, bool)
    if t == "number":
        # an int is finite however long it is (math.isfinite would overflow converting it)
        return (isinstance(v, int) and not isinstance(v, bool)) or (isinstance(v, float) and math.isfinite(v))
    if t == "boolean":
        return isinstance(v, bool)
    if t == "null":
        return v is None
    return False


def _expected(types: tuple[str, ...]) -> str:
    nouns = []
    for t in types:
        n = _TYPE_NOUN[t]
        if n not in nouns:
            nouns.append(n)
    return nouns[0] if len(nouns) == 1 else ", ".join(nouns[:-1]) + " or " + nouns[-1]


# ---------------------------------------------------------------------------------------------
# The argument checker
# ---------------------------------------------------------------------------------------------


@record(frozen=False)
class _Ctx:
    tool: ToolContract
    task: str | None
    out: list[Diagnostic]

    def add(
        self,
        code: str,
        span: Span,
        message: str,
        help: str | None,
        related: tuple[Label, ...] = (),
        fixes: tuple[Fix, ...] = (),
    ) -> None:
        self.out.append(report(code, span, message, help, related=related, fixes=fixes, task=self.task))


@record
class _Scope:
    """One mapping being judged against a set of field contracts."""

    specs: tuple[ArgSpec, ...]
    mapping: MapValue | None
    anchor: Span
    path: str  # "" for the top level, "traverse", "multipart[0]", …
    owner: str  # how to name the container in messages: "`nika:fetch`", "`traverse`", …

    def spec(self, name: str) -> ArgSpec | None:
        for s in self.specs:
            if s.name == name:
                return s
        return None

    def entry(self, name: str) -> Entry | None:
        return self.mapping.entry(name) if self.mapping is not None else None

    def present(self, name: str) -> bool:
        return self.entry(name) is not None

    def dotted(self, name: str) -> str:
        return f"{self.path}.{name}" if self.path else name

    def literal(self, name: str) -> tuple[str, Any, Value | None]:
        """``("absent"|"default"|"dynamic"|"literal"|"complex", value, written value)`` of a field."""
        e = self.entry(name)
        if e is None:
            s = self.spec(name)
            if s is not None and s.has_default:
                return "default", s.default, None
            return "absent", None, None
        v = e.value
        if is_dynamic(v):
            return "dynamic", None, v
        if isinstance(v, ScalarValue):
            return "literal", v.value, v
        return "complex", None, v

    def holds(self, when: tuple[tuple[str, tuple[Any, ...]], ...]) -> bool | None:
        """Whether every ``key ∈ values`` condition holds: True, False, or None when unknown."""
        result: bool | None = True
        for key, vals in when:
            state, value, _ = self.literal(key)
            if state in ("dynamic", "complex"):
                result = None
                continue
            if state == "absent" or not any(_same(value, v) for v in vals):
                return False
        return result

    def describe_value(self, key: str) -> str:
        state, value, _ = self.literal(key)
        if state == "absent":
            return f"`{key}` is not set"
        if state == "default":
            return f"`{key}` is `{_fmt(value)}` (the default)"
        return f"`{key}` is `{_fmt(value)}`"

    def describe_when(self, when: tuple[tuple[str, tuple[Any, ...]], ...]) -> str:
        """What the keys of a condition are set to, for a message."""
        return " and ".join(self.describe_value(k) for k, _ in when)

    def when_labels(self, when: tuple[tuple[str, tuple[Any, ...]], ...]) -> tuple[Label, ...]:
        """A label on each key of a condition that is given."""
        return tuple(Label(_value_span(self, k), f"`{k}` is set here") for k, _ in when if self.present(k))


def check_tool_args(
    tool_id: str,
    args: Value | None,
    *,
    task: str | None,
    anchor: Span,
) -> list[Diagnostic]:
    """Judge the ``args:`` of an ``invoke:`` against the tool's contract.

    ``args`` is the value of ``args:`` (``None`` when the key is absent). ``anchor`` is
    where findings that have no value of their own are placed (a missing argument, a rule that
    needs something added): the ``args:`` key when present, else the ``tool:`` value. Tools
    that are not builtins only get the shape check.
    """
    out: list[Diagnostic] = []
    c = contract(tool_id)
    if args is not None and not isinstance(args, MapValue):
        out.append(
            report(
                SHAPE_CODE,
                args.span,
                f"`args` of `{tool_id}` must be a mapping of argument names to values, but it is {describe(args)}",
                "Write each argument as a `name: value` pair under `args:`.",
                task=task,
            )
        )
        return out
    if c is None:
        return out
    ctx = _Ctx(c, task, out)
    scope = _Scope(c.args, args, anchor, "", f"`{tool_id}`")
    _check_mapping(scope, c.open_args, c.rules, ctx, top=True)
    return out


def _check_mapping(scope: _Scope, open_: bool, rules: tuple[Rule, ...], ctx: _Ctx, *, top: bool) -> None:
    m = scope.mapping
    tool = ctx.tool.id
    known = [s.name for s in scope.specs if not s.reserved]
    aliases = {al: s.name for s in scope.specs for al in s.aliases}
    # Names an unknown key was probably meant to be: the rename fixes them too, so they are
    # neither reported missing nor fed to the rules (one mistake, one finding).
    renamed: set[str] = set()
    if m is not None:
        for e in m.entries:
            name = e.key_text
            if name is None:
                ctx.add(
                    ARG_CODE,
                    e.key.span,
                    f"{scope.owner} argument names must be strings, not {describe(e.key)}",
                    "Quote the key or rename it to one of the documented arguments.",
                )
                continue
            if m.entry(name) is not e:
                continue  # a duplicate key: the YAML profile reports it
            spec = scope.spec(name)
            if spec is None:
                if open_:
                    continue
                hit = aliases.get(name) or did_you_mean(name, known)
                where = f"{scope.owner} has no argument" if top else f"{scope.owner} has no field"
                listing = ", ".join(f"`{k}`" for k in known) or "nothing"
                if hit and not scope.present(hit):
                    renamed.add(hit)
                    safety = "safe" if name in aliases or name.lower() == hit.lower() else "maybe-incorrect"
                    fix = Fix(f"Rename `{name}` to `{hit}`", (Edit(e.key.span, hit),), safety)
                    ctx.add(ARG_CODE, e.key.span, f"{where} `{name}`", f"Rename it to `{hit}`.", fixes=(fix,))
                elif hit:
                    ctx.add(ARG_CODE, e.key.span, f"{where} `{name}`", f"Remove it; `{hit}` is already set.")
                else:
                    ctx.add(
                        ARG_CODE,
                        e.key.span,
                        f"{where} `{name}`",
                        f"Remove it; {scope.owner} accepts {listing}.",
                    )
                continue
            if spec.reserved:
                ctx.add(
                    ARG_CODE,
                    e.key.span,
                    f"`{scope.dotted(name)}` is reserved in `{tool}` and cannot be used yet",
                    "Remove it.",
                )
                continue
            _check_value(spec, e.value, scope.dotted(name), e.key.span, ctx)
    for spec in scope.specs:
        if spec.required and spec.name not in renamed and not scope.present(spec.name):
            what = f"`{tool}` is missing its required argument" if top else f"{scope.owner} is missing"
            target = "under `args:`" if top else f"to `{scope.path}`"
            ctx.add(
                ARG_CODE,
                scope.anchor,
                f"{what} `{spec.name}`",
                f"Add `{spec.name}:` {target}.",
            )
    for rule in rules:
        if renamed and renamed & _rule_names(rule):
            continue
        _apply_rule(rule, scope, ctx)


def _rule_names(rule: Rule) -> set[str]:
    names = set(rule.args) | set(rule.with_) | {k for k, _ in rule.when}
    return names | {x for x in (rule.arg, rule.of, rule.target) if x}


def _check_value(spec: ArgSpec, value: Value, path: str, key_span: Span, ctx: _Ctx) -> None:
    if is_dynamic(value):
        return
    tool = ctx.tool.id
    code = spec.code
    if not spec.nullable and isinstance(value, ScalarValue) and value.value is None:
        ctx.add(
            code,
            value.span,
            f"`{path}` of `{tool}` is null, and `{tool}` needs a value there",
            f"Give `{path}` a value; null is not accepted.",
        )
        return
    if not any(_matches(t, value) for t in spec.types):
        ctx.add(
            code,
            value.span,
            f"`{path}` of `{tool}` must be {_expected(spec.types)}, not {describe(value)}",
            f"Give `{path}` {_expected(spec.types)}.",
        )
        return
    if isinstance(value, ScalarValue):
        _check_scalar(spec, value, path, ctx)
    elif isinstance(value, ListValue):
        _check_sequence(spec, value, path, ctx)
    elif isinstance(value, MapValue):
        _check_object(spec, value, path, key_span, ctx)


def _check_scalar(spec: ArgSpec, value: ScalarValue, path: str, ctx: _Ctx) -> None:
    tool = ctx.tool.id
    v = value.value
    code = spec.code
    if spec.values and not any(_same(v, x) for x in spec.values):
        choices = [str(x) for x in spec.values]
        hit = did_you_mean(v, choices) if isinstance(v, str) else None
        listing = ", ".join(f"`{_fmt(x)}`" for x in spec.values)
        fixes = (Fix(f"Replace with `{hit}`", (Edit(value.span, hit),), "maybe-incorrect"),) if hit else ()
        ctx.add(
            code,
            value.span,
            f"`{_fmt(v)}` is not an accepted value of `{path}` in `{tool}`",
            f"Use `{hit}`." if hit else f"Use one of {listing}.",
            fixes=fixes,
        )
        return
    if isinstance(v, str):
        if spec.template and not has_island(v):
            ctx.add(
                code,
                value.span,
                f"`{path}` of `{tool}` is a plain string, not an expression",
                f'Write it as an expression, e.g. `{path}: "${{{{ tasks.x.output.ok }}}}"`.',
            )
            return
        if "duration" in spec.types and not spec.values and parse_duration(v, positive=False, max_ms=None)[0] is None:
            ctx.add(
                code,
                value.span,
                f"`{v}` is not a duration (`{path}` of `{tool}`): {parse_duration(v, positive=False, max_ms=None)[1]}",
                "Write a Go duration such as `500ms`, `30s`, `5m` or `1h30m`.",
            )
            return
        if spec.pattern is not None and not re.fullmatch(spec.pattern, v):
            ctx.add(
                code,
                value.span,
                f"`{v}` does not have the form `{path}` of `{tool}` needs (`{spec.pattern}`)",
                f"Change `{path}` so it matches `{spec.pattern}`.",
            )
            return
        n = len(v)
        if spec.min_length is not None and n < spec.min_length:
            ctx.add(
                code,
                value.span,
                f"`{path}` of `{tool}` is too short ({n} characters, at least {spec.min_length})",
                f"Give `{path}` at least {spec.min_length} character(s).",
            )
        elif spec.max_length is not None and n > spec.max_length:
            ctx.add(
                code,
                value.span,
                f"`{path}` of `{tool}` is too long ({n} characters, at most {spec.max_length})",
                f"Shorten `{path}`, or split the work across several tasks with `for_each:`.",
            )
        return
    if isinstance(v, (int, float)) and not isinstance(v, bool):
        lo, hi = spec.min, spec.max
        if (lo is not None and v < lo) or (hi is not None and v > hi):
            ctx.add(
                code,
                value.span,
                f"`{path}: {_num(v)}` is out of range for `{tool}` ({_range_text(spec)})",
                f"Pick a value in {_range_text(spec)}.",
            )


def _check_sequence(spec: ArgSpec, value: ListValue, path: str, ctx: _Ctx) -> None:
    tool = ctx.tool.id
    n = len(value.items)
    if spec.min_items is not None and n < spec.min_items:
        ctx.add(
            spec.code,
            value.span,
            f"`{path}` of `{tool}` has {n} item(s), at least {spec.min_items} needed",
            f"Add items to `{path}`.",
        )
    elif spec.max_items is not None and n > spec.max_items:
        ctx.add(
            spec.code,
            value.span,
            f"`{path}` of `{tool}` has {n} items, at most {spec.max_items} allowed",
            f"Trim `{path}` to {spec.max_items} items, or split the work.",
        )
    if spec.items is not None:
        for i, item in enumerate(value.items):
            _check_value(spec.items, item, f"{path}[{i}]", item.span, ctx)
    for rule in spec.rules:
        if rule.kind == "last":
            _rule_last(rule, value, path, ctx)


def _check_object(spec: ArgSpec, value: MapValue, path: str, key_span: Span, ctx: _Ctx) -> None:
    if spec.single_key:
        _check_op_map(spec, value, path, ctx)
        return
    if spec.fields or spec.rules:
        scope = _Scope(spec.fields, value, key_span, path, f"`{path}` of `{ctx.tool.id}`")
        _check_mapping(scope, spec.open or not spec.fields, spec.rules, ctx, top=False)
    if spec.entries is not None:
        for name, e in value.items():
            _check_value(spec.entries, e.value, f"{path}.{name}", e.key.span, ctx)


def _check_op_map(spec: ArgSpec, value: MapValue, path: str, ctx: _Ctx) -> None:
    """A one-key map naming an operation (``- grain: {intensity: 32}``)."""
    tool = ctx.tool.id
    names = [f.name for f in spec.fields]
    if len(value.entries) != 1:
        ctx.add(
            spec.code,
            value.span,
            f"`{path}` of `{tool}` must name exactly one operation, found {len(value.entries)}",
            "Split it so each list item is a single `op: {…}` mapping.",
        )
        return
    e = value.entries[0]
    name = e.key_text
    op = spec.get_field(name) if name is not None else None
    if op is None:
        hit = did_you_mean(name, names) if name is not None else None
        ctx.add(
            spec.code,
            e.key.span,
            f"`{name}` is not an operation of `{tool}`",
            f"Rename it to `{hit}`." if hit else "Use one of " + ", ".join(f"`{n}`" for n in names) + ".",
        )
        return
    _check_value(op, e.value, f"{path}.{name}", e.key.span, ctx)


# ---------------------------------------------------------------------------------------------
# Rules
# ---------------------------------------------------------------------------------------------


def _key_span(scope: _Scope, name: str) -> Span:
    e = scope.entry(name)
    return e.key.span if e is not None else scope.anchor


def _value_span(scope: _Scope, name: str) -> Span:
    e = scope.entry(name)
    return e.value.span if e is not None else scope.anchor


def _names(names: Iterable[str]) -> str:
    lst = [f"`{n}`" for n in names]
    return lst[0] if len(lst) == 1 else ", ".join(lst[:-1]) + " and " + lst[-1]


def _either(names: Iterable[str]) -> str:
    lst = [f"`{n}`" for n in names]
    return lst[0] if len(lst) == 1 else ", ".join(lst[:-1]) + " or " + lst[-1]


def _apply_rule(rule: Rule, scope: _Scope, ctx: _Ctx) -> None:
    handler = _RULES.get(rule.kind)
    if handler is not None:
        handler(rule, scope, ctx)


def _rule_exactly_one(rule: Rule, scope: _Scope, ctx: _Ctx) -> None:
    if _require_any(rule, scope, ctx, f"one of {_either(rule.args)}"):
        _allow_one(
            rule,
            scope,
            ctx,
            lambda first, other: f"takes only one of {_either(rule.args)}, but `{first}` and `{other}` are both set",
        )


def _rule_at_most_one(rule: Rule, scope: _Scope, ctx: _Ctx) -> None:
    _allow_one(
        rule, scope, ctx, lambda first, _: f"takes at most one of {_either(rule.args)}; `{first}` is already set"
    )


def _rule_at_least_one(rule: Rule, scope: _Scope, ctx: _Ctx) -> None:
    _require_any(rule, scope, ctx, _either(rule.args))


def _require_any(rule: Rule, scope: _Scope, ctx: _Ctx, what: str) -> bool:
    """One of ``rule.args`` must be given (``what`` names them); whether one is."""
    if any(scope.present(a) for a in rule.args):
        return True
    ctx.add(rule.code, scope.anchor, f"{scope.owner} needs {what}, and none is given", rule.help or f"Add {what}.")
    return False


def _allow_one(rule: Rule, scope: _Scope, ctx: _Ctx, conflict: Callable[[str, str], str]) -> None:
    """At most one of ``rule.args``: each one after the first is reported, ``conflict(first, other)``."""
    present = [a for a in rule.args if scope.present(a)]
    for other in present[1:]:
        first = present[0]
        ctx.add(
            rule.code,
            _key_span(scope, other),
            f"{scope.owner} {conflict(first, other)}",
            rule.help or f"Keep `{first}` or `{other}`, not both.",
            (Label(_key_span(scope, first), f"`{first}` is set here"),),
        )


def _rule_requires(rule: Rule, scope: _Scope, ctx: _Ctx) -> None:
    arg = rule.arg or ""
    if not scope.present(arg):
        return
    if rule.value:
        state, value, _ = scope.literal(arg)
        if state != "literal" or not any(_same(value, v) for v in rule.value):
            return
    own = f"`{arg}: {_fmt(scope.literal(arg)[1])}`" if rule.value else f"`{arg}`"
    if rule.with_:
        missing = [w for w in rule.with_ if not scope.present(w)]
        if missing:
            ctx.add(
                rule.code,
                _key_span(scope, arg),
                f"{own} of {scope.owner} only applies together with {_names(rule.with_)}, "
                f"which {'is' if len(missing) == 1 else 'are'} not set",
                rule.help or f"Add {_names(missing)} or remove `{arg}`.",
            )
        return
    if scope.holds(rule.when) is False:
        ctx.add(
            rule.code,
            _key_span(scope, arg),
            f"{own} of {scope.owner} needs {_when_text(rule.when)}, but {scope.describe_when(rule.when)}",
            rule.help or f"Set {_when_text(rule.when)} or remove `{arg}`.",
            scope.when_labels(rule.when),
        )


def _rule_required_when(rule: Rule, scope: _Scope, ctx: _Ctx) -> None:
    if scope.holds(rule.when) is not True:
        return
    if any(scope.present(a) for a in rule.args):
        return
    keys = [k for k, _ in rule.when if scope.present(k)]
    span = _value_span(scope, keys[0]) if keys else scope.anchor
    ctx.add(
        rule.code,
        span,
        f"{_when_text(rule.when)} of {scope.owner} needs {_either(rule.args)}, and none is given",
        rule.help or f"Add {_either(rule.args)}.",
    )


def _rule_forbidden_when(rule: Rule, scope: _Scope, ctx: _Ctx) -> None:
    arg = rule.arg or ""
    if not scope.present(arg) or scope.holds(rule.when) is not True:
        return
    ctx.add(
        rule.code,
        _key_span(scope, arg),
        f"`{arg}` of {scope.owner} is not allowed when {scope.describe_when(rule.when)}",
        rule.help or f"Remove `{arg}`.",
        scope.when_labels(rule.when),
    )


def _rule_excludes(rule: Rule, scope: _Scope, ctx: _Ctx) -> None:
    arg = rule.arg or ""
    if not scope.present(arg):
        return
    for other in rule.args:
        if scope.present(other):
            ctx.add(
                rule.code,
                _key_span(scope, other),
                f"`{other}` cannot be combined with `{arg}` in {scope.owner}",
                rule.help or f"Remove `{other}` or `{arg}`.",
                (Label(_key_span(scope, arg), f"`{arg}` is set here"),),
            )


def _rule_distinct(rule: Rule, scope: _Scope, ctx: _Ctx) -> None:
    if len(rule.args) != 2:
        return
    a, b = rule.args
    sa, va, _ = scope.literal(a)
    sb, vb, _ = scope.literal(b)
    if sa == "literal" and sb == "literal" and _same(va, vb):
        ctx.add(
            rule.code,
            _value_span(scope, b),
            f"`{a}` and `{b}` of {scope.owner} are both `{_fmt(va)}`",
            rule.help or f"Make `{b}` differ from `{a}`.",
            (Label(_value_span(scope, a), f"`{a}` is set here"),),
        )


def _rule_member_of(rule: Rule, scope: _Scope, ctx: _Ctx) -> None:
    arg, of = rule.arg or "", rule.of or ""
    if rule.when and scope.holds(rule.when) is not True:
        return
    state, value, written = scope.literal(arg)
    if state != "literal" or written is None:
        return
    pool = scope.entry(of)
    if pool is None or not isinstance(pool.value, ListValue):
        return
    items = pool.value.items
    if any(not isinstance(i, ScalarValue) or is_dynamic(i) for i in items):
        return
    if not any(_same(value, i.value) for i in items if isinstance(i, ScalarValue)):
        ctx.add(
            rule.code,
            written.span,
            f"`{arg}: {_fmt(value)}` of {scope.owner} is not one of its `{of}`",
            rule.help or f"Make `{arg}` one of the `{of}` values.",
            (Label(pool.value.span, f"the `{of}` are listed here"),),
        )


def _rule_excludes_key(rule: Rule, scope: _Scope, ctx: _Ctx) -> None:
    arg, target, key = rule.arg or "", rule.target or "", (rule.key or "").lower()
    if not scope.present(arg):
        return
    t = scope.entry(target)
    if t is None or not isinstance(t.value, MapValue):
        return
    for e in t.value.entries:
        k = e.key_text
        if k is not None and k.strip().lower() == key:
            ctx.add(
                rule.code,
                e.key.span,
                f"the `{k}` header conflicts with `{arg}` in {scope.owner}, which sets it itself",
                rule.help or f"Remove the `{k}` header.",
                (Label(_key_span(scope, arg), f"`{arg}` is set here"),),
            )


def _rule_last(rule: Rule, value: ListValue, path: str, ctx: _Ctx) -> None:
    items = value.items
    for i, item in enumerate(items[:-1]):
        if isinstance(item, MapValue) and len(item.entries) == 1:
            name = item.entries[0].key_text
            if name in rule.keys:
                ctx.add(
                    rule.code,
                    item.entries[0].key.span,
                    f"`{name}` is item {i + 1} of {len(items)} in `{path}` of `{ctx.tool.id}`, but it must come last",
                    rule.help or f"Move `{name}` to the end of `{path}`.",
                )


_RULES = {
    "exactly_one_of": _rule_exactly_one,
    "at_most_one_of": _rule_at_most_one,
    "at_least_one_of": _rule_at_least_one,
    "requires": _rule_requires,
    "required_when": _rule_required_when,
    "forbidden_when": _rule_forbidden_when,
    "excludes": _rule_excludes,
    "distinct": _rule_distinct,
    "member_of": _rule_member_of,
    "excludes_key": _rule_excludes_key,
}


# ---------------------------------------------------------------------------------------------
# Tool ids and models
# ---------------------------------------------------------------------------------------------


def check_tool_ref(value: ScalarValue, *, task: str | None) -> list[Diagnostic]:
    """A literal ``nika:…`` tool id that is not one of the builtins → NIKA-INVOKE-001.

    Ids in other namespaces are left to the tool-id grammar; templates are left alone. A
    did-you-mean comes with a rename fix on the id's text (quotes excluded).
    """
    v = value.value
    if not isinstance(v, str) or not v.startswith("nika:") or is_dynamic(value) or v in tool_ids():
        return []
    retired = retired_tools()
    fixes: tuple[Fix, ...] = ()
    if v in retired:
        help = f"Use {retired[v]} instead."
    else:
        hit = did_you_mean(v, list(tool_ids()))
        help = f"Did you mean `{hit}`?" if hit else "Use one of the builtins listed by `nika catalog`."
        if hit:
            target = value.sub_span(0, len(value.raw)) if value.offsets else value.span
            fixes = (Fix(f"Change to `{hit}`", (Edit(target, hit),)),)
    return [
        report(
            TOOL_CODE,
            value.span,
            f"`{v}` is not a builtin; the `nika:` namespace holds a closed set of {len(tool_ids())} tools",
            help,
            task=task,
            fixes=fixes,
        )
    ]


def check_standalone_invoke(tool_id: str, *, task: str | None, anchor: Span) -> list[Diagnostic]:
    """A loop-only builtin (``nika:done``, ``nika:compose``) used from a plain ``invoke:``."""
    c = contract(tool_id)
    if c is None or not c.agent_only:
        return []
    return [
        report(
            f"{c.error_plane}-001",
            anchor,
            f"`{tool_id}` only works inside an `agent:` loop, not from an `invoke:` task",
            f'List it in an agent\'s `tools:` (e.g. `tools: ["{tool_id}"]`) instead of invoking it.',
            task=task,
        )
    ]


def _hint_provider(name: str) -> Provider | None:
    low = name.lower()
    for p in _providers().values():
        if any(low.startswith(h) for h in p.name_hints):
            return p
    return None


def check_model_ref(value: ScalarValue, *, task: str | None) -> list[Diagnostic]:
    """A literal ``model:`` must be ``<provider>/<name>`` with one of the 17 provider ids.

    Only the first ``/`` splits; the name after it is passed through as written. A template
    (``${{ … }}``) is resolved at run time and skipped; non-strings are the schema's business.
    """
    v = value.value
    if not isinstance(v, str) or is_dynamic(value):
        return []
    provs = _providers()
    prefix, sep, name = v.partition("/")

    def finding(span: Span, message: str, help: str) -> list[Diagnostic]:
        return [report(MODEL_CODE, span, message, help, task=task)]

    if not sep or not prefix:
        bare = name if not prefix else v
        if v in provs:
            example = provs[v].models[0] if provs[v].models else "<model>"
            return finding(
                value.span,
                f"`model: {v}` names a provider but no model",
                f"Add the model after a slash, e.g. `{v}/{example}`.",
            )
        hint = _hint_provider(bare)
        help = (
            f"Prefix it with its provider, e.g. `{hint.id}/{bare}`."
            if hint
            else "Write it as `<provider>/<name>`, e.g. `ollama/qwen3.5:9b` or `mock/echo`."
        )
        return finding(value.span, f"`model: {v}` has no provider prefix", help)
    if prefix in provs:
        if not name:
            return finding(
                value.span,
                f"`model: {v}` has no model name after the provider",
                f"Add the model name after `{prefix}/`.",
            )
        return []
    hit = did_you_mean(prefix, list(provs))
    if hit:
        help = f"Did you mean `{hit}/{name}`?"
    else:
        hint = _hint_provider(prefix)
        if hint:
            help = f"`{prefix}` looks like a model name; try `{hint.id}/{v}`."
        else:
            help = "Use one of the providers: " + ", ".join(provs) + "."
    return finding(
        value.sub_span(0, len(prefix)),
        f"`{prefix}` is not a known model provider",
        help,
    )


def iter_arg_specs(c: ToolContract) -> Iterator[tuple[str, ArgSpec]]:
    """Every argument and nested field of a contract with its dotted path (for docs and LSP)."""

    def walk(prefix: str, spec: ArgSpec) -> Iterator[tuple[str, ArgSpec]]:
        yield prefix, spec
        for f in spec.fields:
            yield from walk(f"{prefix}.{f.name}", f)
        if spec.items is not None:
            for f in spec.items.fields:
                yield from walk(f"{prefix}[].{f.name}", f)

    for a in c.args:
        yield from walk(a.name, a)
