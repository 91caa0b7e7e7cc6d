"""Unavailable features are warned at check (`build/unavailable`), read from the runtime's own
registry as data, so the warning goes away by itself when a feature is built (issue 29)."""

from __future__ import annotations

from pathlib import Path

from checker.contracts.built_features import built
from checker.engine.pipeline import compile_text

HEAD = 'nika: v1\nworkflow: { id: t }\npermits: { tools: ["nika:*"], net: { http: ["example.com"] } }\n'


def _warnings(text: str) -> list[tuple[str, str]]:
    compiled = compile_text(text, "/tmp/w.nika.yaml", "/tmp")
    return [(d.rule or "", d.message) for d in compiled.diagnostics if d.rule == "build/unavailable"]


def test_the_reading_equals_the_live_registry() -> None:
    """The checker's reading (source as data, never imported) and the runtime's registry agree."""
    from runtime.agent import LOOP_TOOLS
    from runtime.builtins import REGISTRY, _load
    from runtime.engine.scope import SECRET_SOURCES

    _load()
    have = built()
    assert have is not None
    assert have.tools == frozenset(REGISTRY) | LOOP_TOOLS
    assert have.secret_sources == SECRET_SOURCES
    from runtime.providers.registry import THINKING

    assert have.thinking_providers == frozenset(THINKING)


def test_thinking_on_a_provider_without_it_is_warned_and_refused_alike() -> None:
    """`build/unavailable` at check for a literal provider whose adapter sends no reasoning
    parameter; the run refuses the same task with NIKA-IMPL-002 (runtime/engine/inputs.py)."""
    from runtime.engine.inputs import unsupported_run_block

    def wf(model: str) -> str:
        return f"nika: v1\nworkflow: {{ id: t }}\ntasks:\n  a:\n    infer:\n      model: {model}\n" + (
            '      prompt: "p"\n      thinking: { budget_tokens: 100 }\n'
        )

    found = _warnings(wf("groq/llama"))
    assert len(found) == 1 and "`thinking:` on `groq`" in found[0][1]
    assert _warnings(wf("anthropic/claude")) == [] and _warnings(wf("mock/echo")) == []
    compiled = compile_text(wf("groq/llama"), "/tmp/w.nika.yaml", "/tmp")
    assert "`groq`" in (unsupported_run_block(compiled.workflow) or "")


def test_an_unbuilt_builtin_and_secret_source_are_warned_naming_the_feature() -> None:
    """A call every run would fail with NIKA-IMPL-002 is said at check; built ones are silent."""
    have = built()
    assert have is not None
    missing = sorted({"nika:fetch", "nika:notify", "nika:decide", "nika:chart"} - have.tools)
    body = "".join(f"  t{i}:\n    invoke: {{ tool: {t!r}, args: {{}} }}\n" for i, t in enumerate(missing))
    text = HEAD + "secrets:\n  k: { source: vault, key: a/b }\n  e: { source: env, key: X }\ntasks:\n"
    text += body + "  r:\n    invoke: { tool: nika:log, args: { message: hi } }\n"
    found = _warnings(text)
    for tool in missing:
        assert any(f"`{tool}` is not available" in m for _, m in found), tool
    vault = "vault" not in have.secret_sources
    assert any("secret source `vault`" in m for _, m in found) is vault
    assert not any("nika:log" in m or "`env`" in m for _, m in found)


def test_the_warning_disappears_when_the_feature_is_registered(tmp_path: Path) -> None:
    """Derived, not a hand list: a runtime tree whose builtins register `nika:fetch` (through a
    module constant, as the real modules do) and whose scheduler resolves `file` secrets."""
    (tmp_path / "builtins").mkdir()
    (tmp_path / "builtins" / "net.py").write_text(
        'FETCH, OTHER = "nika:fetch", "x"\n\n@builtin(FETCH)\nasync def fetch(args, ctx):\n    return None\n'
    )
    (tmp_path / "engine").mkdir()
    (tmp_path / "engine" / "scope.py").write_text('SECRET_SOURCES = frozenset({"env", "file"})\n')
    have = built(tmp_path)
    assert have is not None
    assert have.tools == frozenset({"nika:fetch"}) and have.secret_sources == frozenset({"env", "file"})
    assert built(tmp_path / "nowhere") is None


def test_the_runtime_record_carries_every_field_of_the_one_task_record_table() -> None:
    """`tasks.X` at run time has exactly the fields the checker's table names (checker/core/vocab.py)."""
    from checker.core.vocab import TASK_FIELDS
    from runtime.engine.records import TaskRecord

    view = TaskRecord("t", status="success").view()
    assert set(view) >= TASK_FIELDS, sorted(TASK_FIELDS - set(view))
