"""Every consumer of the grammar's nesting table (checker/grammar/table.py ``NESTING``) agrees
with it: the JSON Schema holds each child block's fields exactly where the table puts the child,
and the key-path lookup the language server completes and hovers with (``block_at``) finds it.
The compiler is held to the same nesting by tests/checker/test_grammar_parity.py, whose
mutations walk the table.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from checker.grammar import table as G
from checker.views.workflow_schema import workflow_json_schema
from nika_lsp.features.cursor import fields_for

Schema = dict[str, Any]


def _objects(node: Any, defs: Schema, seen: frozenset[str] = frozenset()) -> Iterator[Schema]:
    """Every object schema ``node`` may be (through ``$ref``, combinators, list items and map values)."""
    if not isinstance(node, dict):
        return
    ref = node.get("$ref")
    if isinstance(ref, str) and ref not in seen:
        yield from _objects(defs[ref.rsplit("/", 1)[1]], defs, seen | {ref})
    if "properties" in node:
        yield node
    for key in ("anyOf", "oneOf", "allOf"):
        for sub in node.get(key, ()):
            yield from _objects(sub, defs, seen)
    for key in ("items", "additionalProperties", "then", "else"):
        yield from _objects(node.get(key), defs, seen)


def _schemas_of(block: G.Block, schema: Schema, defs: Schema) -> list[Schema]:
    return [o for o in _objects(schema, defs) if set(o["properties"]) == set(block.names)]


def _path_to(target: G.Nest) -> tuple[str, ...]:
    """A key path (names filled in) from the envelope down to ``target``'s child."""
    by_child = {id(n.child): n for n in G.NESTING}
    chain = [target]
    while chain[0].parent is not G.ENVELOPE:
        chain.insert(0, by_child[id(chain[0].parent)])
    path: list[str] = []
    for n in chain:
        path += [n.field, "x"] if n.holds is G.Holds.EACH else [n.field]
    return tuple(path)


@pytest.fixture(scope="module")
def schema() -> Schema:
    return workflow_json_schema()


def test_the_schema_nests_each_block_where_the_table_does(schema: Schema) -> None:
    defs = schema["$defs"]
    found: dict[int, list[Schema]] = {id(G.ENVELOPE): [schema]}  # the schemas of each block reached
    wrong = []
    for n in G.NESTING:  # parents come before their children
        homes = [p["properties"][n.field] for p in found.get(id(n.parent), [])]
        children = [o for h in homes for o in _schemas_of(n.child, h, defs)]
        if not homes or len(children) < len(homes):
            wrong.append(f"{n.parent.what}.{n.field}")
        found.setdefault(id(n.child), []).extend(children)
    assert wrong == []
    assert {id(b) for b in G.ALL_BLOCKS.values()} <= set(found)  # the table reaches every block


@pytest.mark.parametrize("n", G.NESTING, ids=lambda n: f"{n.parent.what}.{n.field}")
def test_editor_lookup_finds_each_child(n: G.Nest) -> None:
    path = _path_to(n)
    assert fields_for(path) == (n.child, n.label)
    assert G.block_at(path) == (n.child, n.label)
    if n.holds is G.Holds.EACH:
        assert G.block_at(path[:-1]) is None  # the mapping of names is not itself a block
