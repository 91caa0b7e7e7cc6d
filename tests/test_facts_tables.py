"""Per-tool and per-provider facts are data: every builtin the runtime registers has every column
of its row in ``checker/contracts/builtins.toml``, every provider every column of its row in
``checker/contracts/providers.toml``, and the engine names no builtin or provider by id (it reads
the columns). A builtin or provider added without its facts fails here, not in a user's run."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

import pytest

from checker.contracts import tables as contracts

ROOT = Path(__file__).resolve().parents[1]
TOOL_COLUMNS = ("summary", "category", "capability", "effects", "transport", "engine_env", "error_plane", "output")
PROVIDER_COLUMNS = ("kind", "wire", "env_vars", "summary")


def _rows(name: str) -> dict:  # type: ignore[type-arg]
    return tomllib.loads((ROOT / "checker" / "contracts" / name).read_text(encoding="utf-8"))


def _registered() -> set[str]:
    from runtime import builtins

    builtins._load()
    return set(builtins.REGISTRY)


@pytest.mark.parametrize("tool", sorted(_rows("builtins.toml")["tools"]))
def test_every_builtin_row_has_every_fact(tool: str) -> None:
    row = _rows("builtins.toml")["tools"][tool]
    missing = [c for c in TOOL_COLUMNS if c not in row]
    assert not missing, f"{tool} lacks {missing} in checker/contracts/builtins.toml"
    c = contracts.contract(tool)
    assert c is not None and c.transport in contracts.TRANSPORTS, (tool, c and c.transport)
    # the columns agree with each other
    assert (c.transport == "http") == ("net" in c.effects), tool
    assert (c.transport == "fs") == (c.effects == ("fs",)), tool
    assert c.transport != "provider" or "tools" in c.effects, tool
    assert (c.transport in ("in_process", "human", "run")) == (c.capability == "pure_internal"), tool
    assert bool(c.engine_env) == (c.transport == "http"), tool  # a network builtin reads its SSRF allowance
    assert all(re.fullmatch(r"NIKA_[A-Z]+_", p) for p in c.engine_env), tool


def test_every_registered_builtin_has_a_row() -> None:
    """The runtime's registry and the table name the same builtins (an unbuilt one is in the table
    only, and `nika check` warns about it)."""
    assert _registered() - set(contracts.tool_ids()) == set()


@pytest.mark.parametrize("pid", sorted(_rows("providers.toml")["providers"]))
def test_every_provider_row_has_every_fact(pid: str) -> None:
    from runtime.providers.registry import ADAPTERS

    row = _rows("providers.toml")["providers"][pid]
    missing = [c for c in PROVIDER_COLUMNS if c not in row]
    assert not missing, f"{pid} lacks {missing} in checker/contracts/providers.toml"
    p = contracts.providers()[pid]
    assert p.wire in contracts.WIRES and p.wire in ADAPTERS, (pid, p.wire)
    if p.wire != "mock":
        assert p.endpoint and p.endpoint.startswith("https://" if p.kind == "cloud" else "http://"), pid
    if p.kind == "local":
        assert p.base_url and p.endpoint and p.endpoint.startswith(p.base_url.rstrip("/")), pid


def test_the_engine_names_no_builtin_and_no_provider() -> None:
    """What a builtin is handed, whether it may run on a worker and which engine variables it gets
    are read from its row; the engine and the executors hold no list of tool or provider ids."""
    ids = set(contracts.tool_ids()) | {f"{p}/" for p in contracts.providers() if p != "mock"}
    for path in sorted((ROOT / "runtime" / "engine").glob("*.py")):
        text = path.read_text(encoding="utf-8")
        named = sorted(i for i in ids if f'"{i}' in text)
        assert not named, f"{path.relative_to(ROOT)} names {named}: read the fact from the table"
