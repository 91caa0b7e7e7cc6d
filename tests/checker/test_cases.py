"""Golden cases: every ``*.nika.yaml`` under ``cases/`` is checked and compared with its markers.

A marker is a comment ``# want: NIKA-XXX-NNN`` (optionally ``@COL``, the 1-based column of the
finding's start) on the line where the finding must start; several codes may be listed,
separated by spaces. Files under an ``ok/`` folder (``cases/ok/``, ``cases/corpus/ok/``) must
produce no finding at all. Every finding the checker emits must be wanted, and every wanted
finding must be emitted (the NIKA-DRIFT-001 hint only in files that want it somewhere).

``cases/corpus/`` is the authoring corpus: for every builtin, verb shape, permits dimension and
authoring pattern, ``ok/<name>`` is a workflow written the spec's way and ``refused/<name>`` the
same file with one mutation, refused with its exact code. Each ``ok/`` workflow also runs under
``mock/echo`` in a sandbox folder (with ``./data``, ``./src`` and ``./docs`` seeded) and must
succeed, unless its first line says ``# run: skip <reason>``; ``CORPUS_TOKEN`` is the one
environment secret it may read.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from checker import compile_text
from tests.checker.run_failures import is_run_failure

CASES = Path(__file__).parent / "cases"
# The unused-declaration hint is judged only in the cases that want it (tests/checker/test_drift.py
# has its own): a case exercises one rule, and its fixture need not use every name it declares.
DRIFT = "NIKA-DRIFT-001"
# The build's own notes (what this build lacks, tests/runtime/test_unbuilt.py) say nothing of the
# file: judged only in the cases that want them, so a case stays true when a feature lands.
BUILD = "build/unavailable"
WANT = re.compile(r"#\s*want:\s*(.+?)\s*$")
ITEM = re.compile(r"(NIKA-[A-Z0-9_-]+?-\d{3}|[a-z][a-z-]*/\d{3})(?:@(\d+))?")  # a code or a lint rule


def _files() -> list[Path]:
    return sorted(CASES.rglob("*.nika.yaml"))


def _wanted(text: str) -> set[tuple[int, str, int | None]]:
    out = set()
    for i, line in enumerate(text.splitlines(), start=1):
        m = WANT.search(line)
        if m:
            for code, col in ITEM.findall(m.group(1)):
                out.add((i, code, int(col) if col else None))
    return out


@pytest.mark.parametrize("path", _files(), ids=lambda p: str(p.relative_to(CASES)))
def test_case(path: Path) -> None:
    text = path.read_text(encoding="utf-8")
    compiled = compile_text(text, str(path))
    src = compiled.source
    wanted = _wanted(text)
    drift = any(w[1] == DRIFT for w in wanted)
    build = any(w[1] == BUILD for w in wanted)
    got = {
        (src.line_col(d.span.start).line, d.code or d.rule or "", src.line_col(d.span.start).column)
        for d in compiled.diagnostics
        if (drift or d.code != DRIFT) and (build or d.rule != BUILD)
    }
    if "ok" in path.relative_to(CASES).parts:
        assert not got, f"expected a clean file, got {sorted(got)}"
        return
    assert wanted, "a refusing case must carry at least one `# want:` marker"
    missing = {
        w for w in wanted if not any(g[0] == w[0] and g[1] == w[1] and (w[2] is None or g[2] == w[2]) for g in got)
    }
    unexpected = {g for g in got if not any(g[0] == w[0] and g[1] == w[1] for w in wanted)}
    assert not missing and not unexpected, f"missing {sorted(missing)}; unexpected {sorted(unexpected, key=str)}"


def test_every_case_directory_has_cases() -> None:
    assert len(_files()) >= 10


CORPUS = CASES / "corpus"


def _corpus(kind: str) -> list[Path]:
    return sorted((CORPUS / kind).glob("*.nika.yaml"))


def test_every_corpus_workflow_has_its_mutation() -> None:
    ok = {p.name for p in _corpus("ok")}
    refused = {p.name for p in _corpus("refused")}
    assert ok == refused, f"unpaired: {sorted(ok ^ refused)}"
    assert len(ok) >= 30


def _seed(root: Path) -> None:
    for rel, text in {
        "data/notes.txt": "hello TODO\n",
        "src/app.py": "# TODO: tidy\nprint('hi')\n",
        "docs/guide.md": "# Guide\n",
    }.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text, encoding="utf-8")


@pytest.mark.parametrize("path", _corpus("ok"), ids=lambda p: p.name)
def test_corpus_workflow_runs(path: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import asyncio

    from runtime.engine.inputs import bind_inputs
    from runtime.engine.options import Options
    from runtime.engine.run import Run
    from runtime.verbs import VERBS

    text = path.read_text(encoding="utf-8")
    first = text.splitlines()[0]
    if first.startswith("# run: skip"):
        pytest.skip(first.removeprefix("# run: skip").strip())
    _seed(tmp_path)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("CORPUS_TOKEN", "corpus-token-value")  # the one secret the corpus reads
    compiled = compile_text(text, str(tmp_path / path.name), str(tmp_path))
    assert compiled.workflow is not None
    bound = bind_inputs(compiled.workflow, {})
    result = asyncio.run(
        Run(compiled, bound, Options(trace_dir=tmp_path / "traces"), verbs=VERBS, workdir=tmp_path).execute()
    )
    bad = {tid: (rec.status, rec.error) for tid, rec in result.tasks.items() if rec.status != "success"}
    assert not bad, bad


@pytest.mark.parametrize("path", _corpus("refused"), ids=lambda p: p.name)
def test_a_refused_corpus_workflow_is_refused(path: Path) -> None:
    """The mutation is a check-time error (or a lint): a failure the spec leaves to the run belongs
    in ``cases/runfail/`` (valid at check, a warning that every run fails), not here."""
    compiled = compile_text(path.read_text(encoding="utf-8"), str(path))
    assert any(d.code != DRIFT and not is_run_failure(d) for d in compiled.diagnostics)
