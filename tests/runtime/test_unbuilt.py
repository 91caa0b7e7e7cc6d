"""One truth about what this build lacks (issue 39): one list — the runtime's registries read as data
and the declared entries of ``runtime/unbuilt.toml`` — that ``nika check`` notes
(``build/unavailable``, information, never a verdict), ``nika run --dry-run`` lists, ``nika explain
NIKA-IMPL-002`` prints, and every NIKA-IMPL-002 the runtime raises names (``details.feature``).

The raise sites are enumerated from the runtime's source: a new one that names no feature of the
list, or a feature of the list no site raises, fails here.
"""

from __future__ import annotations

import ast
import asyncio
import io
import tomllib
from contextlib import redirect_stdout
from pathlib import Path

import pytest

from checker import compile_text
from checker.contracts.built_features import Built, built
from checker.core.diagnostics import Severity

ROOT = Path(__file__).resolve().parents[2]
RUNTIME = ROOT / "runtime"
# the families read from the runtime's registries, and `extra`: an optional library this
# installation lacks (checker/contracts/extras.toml; never a `nika check` note, since check does
# not depend on what is installed: `nika doctor` and `--dry-run` report it, tests/cli/test_missing_extras.py)
FAMILIES = {"builtin", "secret-source", "thinking", "mock-model", "extract-mode", "extra"}
DECLARED = set(tomllib.loads((RUNTIME / "unbuilt.toml").read_text())["features"])

HEAD = "nika: v1\nworkflow: { id: u }\n"
# One workflow per feature of the list, each using exactly that feature (and nothing else unbuilt).
SAMPLES = {
    "thinking": HEAD + 'tasks:\n  t:\n    infer: { model: groq/llama, prompt: "p", thinking: { budget_tokens: 99 } }\n',
    "mock-model": HEAD + 'tasks:\n  t:\n    infer: { model: mock/nope, prompt: "p" }\n',
    "registry-workflow": HEAD + 'tasks:\n  t:\n    invoke: { workflow: "registry:acme/audit@1.2.0" }\n',
    "image-edit-xai": HEAD + 'permits: { tools: ["nika:image_generate"], '
    'fs: { read: ["./in.png"], write: ["./out"] } }\n'
    "tasks:\n  t:\n    invoke:\n      tool: nika:image_generate\n"
    "      args: { provider: xai, mode: edit, image: ./in.png, prompt: p, output_dir: ./out }\n",
}  # fmt: skip


def _raise_sites() -> list[tuple[str, int, str | None]]:
    """Every NIKA-IMPL-002 the runtime raises: ``(file, line, feature)``; ``feature`` is None when
    the site names none (a bare ``TaskError(NOT_BUILT, …)``, or a ``not_built`` with no literal id)."""
    out = []
    for path in sorted(RUNTIME.rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if not isinstance(node, ast.Call):
                continue
            name = node.func.id if isinstance(node.func, ast.Name) else getattr(node.func, "attr", None)
            rel = str(path.relative_to(ROOT))
            if name == "TaskError" and node.args and rel != "runtime/errors.py":  # not_built's own
                first = node.args[0]
                if (isinstance(first, ast.Name) and first.id == "NOT_BUILT") or (
                    isinstance(first, ast.Constant) and first.value == "NIKA-IMPL-002"
                ):
                    out.append((rel, node.lineno, None))
            elif name == "not_built" and node.args:
                first = node.args[0]
                feature = first.value if isinstance(first, ast.Constant) and isinstance(first.value, str) else None
                if rel == "runtime/verbs/invoke.py" and feature is None:
                    feature = "<run block>"  # a child workflow refused by `unsupported_features` (tested below)
                out.append((rel, node.lineno, feature))
    return out


def test_every_impl_002_site_names_a_feature_of_the_one_list() -> None:
    sites = _raise_sites()
    assert len(sites) >= 8  # nine until nika:inspect was built (issue 44)
    unnamed = [(f, n) for f, n, feat in sites if feat is None]
    assert unnamed == [], "raise NIKA-IMPL-002 through runtime.errors.not_built(feature, …)"
    named = {feat for _, _, feat in sites} - {"<run block>"}
    assert named <= FAMILIES | DECLARED, named - FAMILIES - DECLARED
    # every declared feature is raised at a site of its own
    assert DECLARED - named == set()
    assert FAMILIES - named == set()


def test_the_checker_reads_the_declared_list_as_the_runtime_does() -> None:
    from runtime.errors import unbuilt

    have = built()
    assert have is not None
    assert {u.id for u in have.unbuilt} == set(unbuilt()) == DECLARED
    assert all(u.what == unbuilt()[u.id]["what"] for u in have.unbuilt)


def _notes(text: str) -> list[str]:
    compiled = compile_text(text, "/tmp/u.nika.yaml", "/tmp")
    notes = [d for d in compiled.diagnostics if d.rule == "build/unavailable"]
    assert all(d.severity is Severity.INFO for d in notes)  # information, never a verdict
    assert not any(d.is_error for d in compiled.diagnostics), compiled.diagnostics
    return [d.message for d in notes]


def _what(feature: str) -> str:
    from runtime.errors import unbuilt

    if feature in DECLARED:
        return str(unbuilt()[feature]["what"])
    return {"thinking": "`thinking:` on `groq`", "mock-model": "`mock/nope`"}[feature]


@pytest.mark.parametrize("feature", sorted(SAMPLES))
def test_check_dry_run_and_explain_tell_the_same_truth(feature: str, tmp_path: Path, monkeypatch) -> None:
    from nika.cli import main

    text = SAMPLES[feature]
    (notes,) = [_notes(text)]
    assert len(notes) == 1 and _what(feature) in notes[0], notes
    (tmp_path / "u.nika.yaml").write_text(text)
    (tmp_path / "in.png").write_bytes(b"\x89PNG\r\n\x1a\n")
    monkeypatch.chdir(tmp_path)
    out = io.StringIO()
    with redirect_stdout(out):
        main(["run", "u.nika.yaml", "--dry-run"])
    monkeypatch.setattr("sys.stderr", io.StringIO())
    said = out.getvalue()
    if feature == "thinking":  # refused before the plan, naming it
        err = io.StringIO()
        monkeypatch.setattr("sys.stderr", err)
        assert main(["run", "u.nika.yaml", "--dry-run"]) != 0
        said = err.getvalue()
        assert "NIKA-IMPL-002" in said
    assert _what(feature).split(" (")[0] in said or (feature == "thinking" and "`groq`" in said), said
    explained = io.StringIO()
    with redirect_stdout(explained):
        main(["explain", "NIKA-IMPL-002"])
    assert f"  {feature} " in explained.getvalue() or feature in FAMILIES


@pytest.mark.parametrize("feature", ["mock-model", "registry-workflow"])
def test_the_run_fails_with_impl_002_naming_the_feature(feature: str, tmp_path: Path) -> None:
    """In process, no effect: the two a run reaches (the others are refused before the first task)."""
    from runtime.engine.inputs import bind_inputs
    from runtime.engine.options import Options
    from runtime.engine.run import Run
    from runtime.verbs import VERBS

    path = tmp_path / "u.nika.yaml"
    path.write_text(SAMPLES[feature])
    compiled = compile_text(SAMPLES[feature], str(path), str(tmp_path))
    assert compiled.workflow is not None
    opts = Options(trace_dir=None, engine_env={})
    run = Run(compiled, bind_inputs(compiled.workflow, {}), opts, verbs=VERBS, workdir=tmp_path)
    result = asyncio.run(run.execute())
    err = result.tasks["t"].error
    assert err is not None and err["code"] == "NIKA-IMPL-002" and err["details"]["feature"] == feature


@pytest.mark.parametrize("feature", ["thinking"])
def test_the_admission_refuses_naming_the_feature(feature: str) -> None:
    from runtime.engine.inputs import unsupported_features, unsupported_run_block

    compiled = compile_text(SAMPLES[feature], "/tmp/u.nika.yaml", "/tmp")
    assert feature in unsupported_features(compiled.workflow)
    assert unsupported_run_block(compiled.workflow) is not None


def test_a_family_item_the_registry_lacks_is_noted(monkeypatch) -> None:
    """The families read from the registries: a builtin, a secret source or an extract mode the
    build lacks is noted the same way (shown here with a build that lacks one of each)."""
    import checker.rules.availability as availability

    have = built()
    assert have is not None
    poorer = Built(
        have.tools - {"nika:hash"},
        have.secret_sources - {"vault"},
        have.thinking_providers,
        have.mock_models,
        (have.extract_modes or frozenset()) - {"feed"},
        have.unbuilt,
    )
    monkeypatch.setattr(availability, "built", lambda: poorer)
    text = (
        HEAD + "secrets:\n  k: { source: vault, key: a/b }\n"
        'permits: { tools: ["nika:*"], net: { http: ["example.com"] } }\ntasks:\n'
        '  h:\n    invoke: { tool: nika:hash, args: { content: "x" } }\n'
        '  f:\n    invoke: { tool: nika:fetch, args: { url: "https://example.com/f", mode: feed } }\n'
    )
    notes = _notes(text)
    assert any("`nika:hash`" in n for n in notes) and any("`vault`" in n for n in notes)
    assert any("extract mode `feed`" in n for n in notes)
