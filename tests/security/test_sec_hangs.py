"""Pure compute under `permits: {}` cannot hang or exhaust the engine.

Spec 02/03: a task's `timeout:` is a hard bound and work ends as a typed failure, never a hang;
the file-level YAML profile already refuses alias bombs, and YAML parsed at run time by
`nika:convert` / `nika:validate format: yaml` must not expand one either.
"""

from __future__ import annotations

import pytest
from builtins_harness import fails, make_ctx

from runtime.tools import schema_validator as json_schema

BOMB = "a: &a [x,x,x,x,x,x,x,x,x,x]\n" + "".join(
    f"{chr(98 + i)}: &{chr(98 + i)} [" + ",".join(["*" + chr(97 + i)] * 10) + "]\n" for i in range(8)
)


@pytest.fixture
def ctx(tmp_path):
    return make_ctx(tmp_path)[0]


async def test_convert_refuses_an_alias_expansion_bomb(ctx) -> None:
    """A 10^9-node billion-laughs string is refused (CONVERT-001) by its alias count, not expanded
    (an expansion would not end in any test's lifetime, nor fit in memory)."""
    e = await fails("nika:convert", {"input": BOMB, "from": "yaml", "to": "json"}, ctx)
    assert e.code.startswith("NIKA-BUILTIN-CONVERT-")
    assert "alias" in str(e)


async def test_convert_still_accepts_modest_alias_reuse(ctx) -> None:
    """Never refuse what the spec allows: an ordinary anchor reused once still converts."""
    out = await direct_convert(ctx, "base: &b {x: 1}\nuse: *b\n")
    assert out == {"base": {"x": 1}, "use": {"x": 1}}


async def direct_convert(ctx, text: str):
    from runtime.builtins import call

    return await call("nika:convert", {"input": text, "from": "yaml", "to": "json"}, ctx)


async def test_validate_pattern_has_a_time_limit(ctx, monkeypatch) -> None:
    """A catastrophic `pattern` in a schema ends as VALIDATE-001 within its budget, never a hang."""
    monkeypatch.setattr(json_schema, "PATTERN_BUDGET_S", 0.05)
    e = await fails("nika:validate", {"data": "a" * 60 + "!", "schema": {"pattern": "^(a|aa)+$"}}, ctx)
    assert e.code == "NIKA-BUILTIN-VALIDATE-001" and "took over" in str(e)  # the budget stopped it


async def test_validate_refuses_a_yaml_bomb(ctx) -> None:
    e = await fails("nika:validate", {"data": BOMB, "format": "yaml", "schema": {}}, ctx)
    assert e.code == "NIKA-BUILTIN-VALIDATE-002"
