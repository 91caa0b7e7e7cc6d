"""Loading ``builtins.toml`` and ``providers.toml`` into the frozen data of :mod:`checker.contracts.model`,
lazily and once, and the lookups every consumer shares (a contract by tool id, the providers, …).
"""

from __future__ import annotations

import os
import re
from functools import cache
from typing import Any

from checker.contracts.model import (
    ARG_CODE,
    DATA_DIR,
    RULE_KINDS,
    TYPES,
    ArgSpec,
    ExtractMode,
    Provider,
    Rule,
    ToolContract,
)


def _load(name: str) -> dict[str, Any]:
    from checker.core.toml_sections import whole

    return whole(os.path.join(DATA_DIR, name))


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
        transport=row.get("transport", ""),
        engine_env=tuple(row.get("engine_env", ())),
    )


@cache
def provider_table() -> dict[str, Provider]:
    out: dict[str, Provider] = {}
    for pid, row in _providers_data()["providers"].items():
        out[pid] = Provider(
            id=pid,
            kind=row["kind"],
            env_vars=tuple(row.get("env_vars", ())),
            base_url=row.get("base_url"),
            summary=row["summary"],
            wire=row.get("wire", ""),
            endpoint=row.get("endpoint"),
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
    return dict(provider_table())


def provider_of(model: str) -> Provider | None:
    """The provider a literal ``<provider>/<name>`` string selects, if any."""
    prefix, sep, _ = model.partition("/")
    return provider_table().get(prefix) if sep else None


def mock_models() -> dict[str, str]:
    """The ``mock`` provider's model names with a one-line description."""
    return {k: v["summary"] for k, v in _providers_data().get("mock_models", {}).items()}


def extract_modes() -> tuple[ExtractMode, ...]:
    """The fetch extract modes: the nine canonical ones, then the implicit ``raw``."""
    return _modes()


def retired_tools() -> dict[str, str]:
    """Names that are not builtins (cut or misspelt) mapped to what to use instead."""
    return dict(_builtins_data().get("retired", {}))
