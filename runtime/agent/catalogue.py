"""What the agent is given: the tools its whitelist grants (offered to the model in whitelist
order, with the argument schemas of the shared contracts) and its ``skills:`` (02 §Agent Skills)."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

from runtime.errors import TaskError
from runtime.providers.base import ToolSpec

if TYPE_CHECKING:
    from runtime.engine.context import VerbContext

DONE = "nika:done"
COMPOSE = "nika:compose"
# The tools the loop answers itself instead of through the builtin registry. Read as data by
# checker/contracts/built_features.py: keep it a literal set of the names above.
LOOP_TOOLS = frozenset({DONE, COMPOSE})


def wire_name(tool_id: str, taken: set[str]) -> str:
    """A name every provider accepts for a tool (``[A-Za-z0-9_-]``, at most 64 characters)."""
    base = re.sub(r"[^A-Za-z0-9_-]", "_", tool_id)[:60]
    name, n = base, 2
    while name in taken:
        name, n = f"{base[:56]}_{n}", n + 1
    taken.add(name)
    return name


# -- the tool catalogue -------------------------------------------------------------------------


def builtin_parameters(tool_id: str, output_schema: dict[str, Any] | None) -> dict[str, Any]:
    """The JSON Schema the model sees for a builtin's arguments (from the shared contracts)."""
    if tool_id == DONE:
        result: dict[str, Any] = dict(output_schema) if output_schema else {}
        result["description"] = "The task's result" + (" (must match the task schema)." if output_schema else ".")
        return {
            "type": "object",
            "properties": {"result": result},
            **({"required": ["result"]} if output_schema else {}),
        }
    from checker.contracts import tables as contracts

    return contracts.json_schema(tool_id)  # written once from the contract data, as `nika schema` is


async def catalogue(
    ctx: VerbContext, tid: str, rules: list[str], output_schema: dict[str, Any] | None
) -> list[ToolSpec]:
    """The tools a whitelist grants, offered to the model in whitelist order."""
    from checker.contracts import tables as contracts
    from checker.core.globs import expand_tools as expand

    known: dict[str, tuple[str, dict[str, Any]]] = {}
    for c in contracts.contracts():
        known[c.id] = (c.summary, {})
    if any(r.lstrip("!").startswith("mcp:") for r in rules):
        from runtime.tools.mcp_client import list_mcp_tools

        for tool_id, description, schema in await list_mcp_tools(ctx, tid, rules):
            known[tool_id] = (description, schema)
    taken: set[str] = set()
    specs = []
    for tool_id in expand(rules, known):
        description, schema = known[tool_id]
        params = schema if tool_id.startswith("mcp:") else builtin_parameters(tool_id, output_schema)
        specs.append(ToolSpec(wire_name(tool_id, taken), tool_id, description, params))
    return specs


# -- skills -------------------------------------------------------------------------------------


def compose_system(
    system: str | None, skill_paths: list[str], base_dir: str, document: str | None = None
) -> str | None:
    """The authored ``system:`` followed by the ``## Skills`` section (02 §Agent Skills)."""
    if not skill_paths:
        return system
    from checker.rules.support import skill_files as skills

    blocks = []
    for path in skill_paths:
        loaded = skills.load(path, base_dir, document)
        if isinstance(loaded, tuple):
            code, why = loaded
            raise TaskError(code, f"skill `{path}`: {why}", details={"skill": path})
        block = f"### {loaded.name}\n\n{loaded.description}"
        if loaded.body:
            block += f"\n\n{loaded.body}"
        blocks.append(block)
    section = "## Skills\n\n" + "\n\n".join(blocks)
    return f"{system}\n\n{section}" if system else section
