"""The checker refuses a reference exactly where the scope table (checker/core/vocab.py) says its
root is out of scope, for every root at every position class an expression may sit in.

If a rule grows its own idea of scope (a second "no `secrets` in `when:`"), the verdicts stop
matching the table and this test fails; completion is held to the same table in
tests/lsp/test_completion.py.
"""

from __future__ import annotations

import pytest

from checker import compile_text
from checker.core.vocab import ROOTS, SCOPE, Where, in_scope

# The codes that say "this root cannot be read here" (NIKA-VAR-005 only for a loop local in its own
# `for_each:`; NIKA-VAR-021 for `tasks.*` where the graph cannot order it).
OUT_OF_SCOPE = frozenset({"NIKA-VAR-001", "NIKA-VAR-005", "NIKA-VAR-021"})

DOC = """\
nika: v1
workflow: {{ id: scope }}
model: {envelope}
inputs: {{ a: {{ type: integer, default: 1 }} }}
config: {{ c: {{ type: integer, default: 1 }} }}
const: {{ k: 1, xs: [1, 2] }}
secrets: {{ s: {{ source: env, key: S }} }}
permits: {{ exec: true }}
tasks:
  p:
    exec: {{ command: ["true"] }}
  t:
    with: {{ x: "${{{{ tasks.p.output }}}}", w: {with} }}
    when: {when}
    for_each: {for_each}
    exec: {{ command: ["echo", {body}] }}
    on_error: {{ recover: {recover} }}
    on_finally:
      - exec: {{ command: ["echo", {finally}] }}
outputs:
  o: {outputs}
"""
NEUTRAL = {
    "envelope": "mock/echo",
    "with": "1",
    "when": '"${{ true }}"',
    "for_each": '"${{ const.xs }}"',
    "body": "x",
    "recover": "r",
    "finally": "x",
    "outputs": '"${{ const.k }}"',
}
POSITIONS = sorted(NEUTRAL)


def _ref(root: str, where: str) -> str:
    if root == "tasks":
        return "tasks.t.output" if where == "finally" else "tasks.p.output"
    return {
        "inputs": "inputs.a",
        "config": "config.c",
        "const": "const.k",
        "secrets": "secrets.s",
        "with": "with.x",
    }.get(root, root)


def _refused(root: str, where: str) -> bool:
    doc = DOC.format(**{**NEUTRAL, where: f'"${{{{ {_ref(root, where)} == 1 }}}}"'})
    found = compile_text(doc, "scope.nika.yaml").diagnostics
    assert not [d for d in found if (d.code or "").startswith("NIKA-IMPL")]
    return any(d.code in OUT_OF_SCOPE for d in found)


def test_the_table_covers_every_position_an_expression_takes() -> None:
    assert set(POSITIONS) == {str(w) for w in Where} - {"output"}  # an `output:` binding holds no `${{ }}`
    assert set(ROOTS) == set(SCOPE)


@pytest.mark.parametrize("where", POSITIONS)
def test_the_checker_refuses_exactly_what_the_scope_table_refuses(where: str) -> None:
    verdicts = {root: _refused(root, where) for root in ROOTS}
    assert verdicts == {root: not in_scope(root, where) for root in ROOTS}
