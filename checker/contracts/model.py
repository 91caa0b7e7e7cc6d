"""The builtin contracts as frozen data: one :class:`ToolContract` per ``nika:*`` builtin, its
:class:`ArgSpec` arguments and cross-argument :class:`Rule` s, the model :class:`Provider` s and
the fetch :class:`ExtractMode` s (loaded from the TOML files by :mod:`checker.contracts.load`).
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from typing import Any

from checker.contracts.text import PIPE, fmt, fmt_values, range_text, snippet_escape, when_text
from checker.core.records import record

DATA_DIR = os.path.dirname(__file__)


ARG_CODE = "NIKA-BUILTIN-001"


SHAPE_CODE = "NIKA-PARSE-019"


MODEL_CODE = "NIKA-PROVIDER-002"


TOOL_CODE = "NIKA-INVOKE-001"


# How the engine reaches what a builtin touches (the `transport` column of builtins.toml).
TRANSPORTS = ("in_process", "fs", "http", "provider", "human", "run")
# The wire protocols a provider's adapter speaks (the `wire` column of providers.toml).
WIRES = ("openai", "anthropic", "gemini", "ollama", "mock")

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
        cond = when_text(self.when)
        if k == "exactly_one_of":
            return f"exactly one of {names}"
        if k == "at_most_one_of":
            return f"at most one of {names}"
        if k == "at_least_one_of":
            return f"at least one of {names}"
        if k == "requires" and self.with_:
            return f"`{self.arg}` only together with " + ", ".join(f"`{a}`" for a in self.with_)
        if k == "requires":
            own = f" `{self.arg}: {fmt_values(self.value)}`" if self.value else f" `{self.arg}`"
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
            label += " (" + ", ".join(f"`{fmt(v)}`" for v in self.values) + ")"
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
            facts.append(f"default `{fmt(self.default)}`")
        rng = range_text(self)
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
    transport: str = ""  # how the engine reaches what the tool touches (TRANSPORTS; builtins.toml)
    engine_env: tuple[str, ...] = ()  # prefixes of the engine variables the tool reads

    @property
    def name(self) -> str:
        return self.id.split(":", 1)[1]

    def arg(self, name: str) -> ArgSpec | None:
        for a in self.args:
            if a.name == name:
                return a
        return None

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
                choice = ",".join(snippet_escape(str(v), choice=True) for v in a.values)
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
                default = f"`{fmt(a.default)}`" if a.has_default else ""
                doc = a.doc
                rng = range_text(a)
                if rng:
                    doc = f"{doc} ({rng})" if doc else rng
                req = "yes" if a.required else ""
                doc = doc.replace("|", PIPE)
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
    wire: str = ""  # the wire protocol its adapter speaks (WIRES)
    endpoint: str | None = None  # the default chat endpoint (NIKA_<ID>_BASE_URL replaces it whole)
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
