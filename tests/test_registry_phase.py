"""The registry-phase differential: the static half of check ≡ run.

Seeded mutants of the project's examples and the spec's templates (the mutator of
tests/checker/test_fuzz.py) go through `nika check`; each one the checker accepts is run in process in a
sandbox folder with the mock model, no exec, no network, no waiting. The run must never fail
with a code the registry gives the phase ``check`` (that is a decision the checker should have
made), and never with an internal error (NIKA-IMPL-001). ``scripts/fuzz_phase.py`` runs the same
loop for as long as you like.

Mutants whose run could reach outside the sandbox or take wall time are not run (they are still
checked): exec/shell tasks, `nika:wait`, `nika:prompt`, child workflows, network builtins.
"""

from __future__ import annotations

import asyncio
import importlib.util
import re
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from checker.core.codes import lookup

ROOT = Path(__file__).resolve().parents[1]
TEMPLATES = ROOT.parent / "shared" / "nika-spec" / "templates"
MOCK = "mock/echo"
# What a run may not touch here: processes, time, humans, MCP servers, other workflow files.
_UNSAFE_TOOLS = re.compile(r"mcp:|nika:wait|nika:prompt|\*")
RUN_TIMEOUT = 5.0


def _fuzz_module():  # type: ignore[no-untyped-def]
    spec = importlib.util.spec_from_file_location("nika_fuzz_for_phase", ROOT / "tests" / "checker" / "test_fuzz.py")
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def seeds() -> list[bytes]:
    files = sorted((ROOT / "examples").glob("*.nika.yaml"))
    if TEMPLATES.is_dir():
        files += sorted(TEMPLATES.rglob("*.nika.yaml"))
    return [p.read_bytes() for p in files]


@dataclass
class Tally:
    checked: int = 0
    accepted: int = 0
    ran: int = 0
    skipped_unsafe: int = 0
    skipped_inputs: int = 0
    failures: list[tuple[str, str, bytes]] = field(default_factory=list)  # (code, message, mutant)


def _phase(code: str) -> str | None:
    try:
        return lookup(code).phase
    except KeyError:
        return None


def _run_one(data: bytes, workdir: Path, tally: Tally) -> None:
    from checker import compile_bytes
    from runtime.engine.inputs import InputError, bind_inputs
    from runtime.engine.options import Options
    from runtime.engine.run import Run
    from runtime.verbs import VERBS

    path = workdir / "wf.nika.yaml"
    tally.checked += 1
    compiled = compile_bytes(data, str(path), str(workdir))
    if any(d.code == "NIKA-IMPL-001" for d in compiled.diagnostics):
        bad = next(d for d in compiled.diagnostics if d.code == "NIKA-IMPL-001")
        tally.failures.append(("NIKA-IMPL-001", f"at check: {bad.message}", data))
        return
    if compiled.workflow is None or any(d.is_error for d in compiled.diagnostics):
        return
    tally.accepted += 1
    if not _safe_to_run(compiled.workflow):
        tally.skipped_unsafe += 1
        return
    try:
        bound = bind_inputs(compiled.workflow, {})
    except InputError:
        tally.skipped_inputs += 1
        return
    path.write_bytes(data)
    options = Options(model=MOCK, trace_dir=None, engine_env={})
    run = Run(compiled, bound, options, verbs=VERBS, workdir=workdir)
    try:
        result = asyncio.run(asyncio.wait_for(run.execute(), RUN_TIMEOUT))
    except TimeoutError:
        return  # a slow run is not this test's business (the fuzz test bounds the checker)
    except Exception as exc:  # an escape from the runtime is an internal error
        tally.failures.append(("NIKA-IMPL-001", f"at run: {type(exc).__name__}: {exc}", data))
        return
    tally.ran += 1
    from checker.model.workflow import Agent

    tasks = compiled.workflow.tasks
    errors = [(r.error, isinstance(getattr(tasks.get(tid), "verb", None), Agent)) for tid, r in result.tasks.items()]
    errors = [(e, agent) for e, agent in errors if e] + ([(result.error, False)] if result.error else [])
    for err, agent in errors:
        code = str(err.get("code") or "")
        # An agent's tool arguments are the model's data, judged when it calls: not the checker's.
        if code == "NIKA-IMPL-001" or (_phase(code) == "check" and not agent):
            tally.failures.append((code, str(err.get("message", "")), data))


def _safe_to_run(wf) -> bool:  # type: ignore[no-untyped-def]
    from checker.model.workflow import Agent, Exec, Invoke
    from checker.rules.support.context import task_verbs

    for task in wf.tasks.values():
        for verb in task_verbs(task):
            if isinstance(verb, Exec):
                return False
            if isinstance(verb, Invoke) and (verb.workflow is not None or _UNSAFE_TOOLS.search(verb.tool or "")):
                return False
            if isinstance(verb, Agent) and any(_UNSAFE_TOOLS.search(str(t.value)) for t in verb.tools):
                return False
    return True


def differential(count: int, seed: int) -> Tally:
    fuzz = _fuzz_module()
    tally = Tally()
    with tempfile.TemporaryDirectory(prefix="nika-phase-") as tmp:
        workdir = Path(tmp)
        mutants: Iterator[bytes] = fuzz.mutants(seeds(), count, seed, depth=2)
        for data in mutants:
            _run_one(data, workdir, tally)
            for p in workdir.iterdir():  # a fresh sandbox for the next mutant
                if p.is_file():
                    p.unlink()
    return tally


def test_no_check_phase_code_at_run_for_an_accepted_workflow() -> None:
    """Spec 05 gives every code the phase it is raised in; a code of phase `check` raised by a
    run of a workflow the checker accepted means the checker left a static decision to the run
    (check ≡ run, static half). Seeded and small enough for CI."""
    tally = differential(count=150, seed=29)  # scripts/fuzz_phase.py runs the long campaign
    assert tally.checked == 150
    assert tally.ran > 0, tally
    assert tally.failures == [], [(c, m) for c, m, _ in tally.failures[:5]]


def test_the_differential_sees_a_check_phase_code_at_run(monkeypatch, tmp_path: Path) -> None:
    """The detector itself: a run failure whose code is registered for `check` is reported.
    Here a missing file (NIKA-BUILTIN-READ-001, a run code) is re-registered as check-phase."""
    import sys

    me = sys.modules[__name__]
    real = me._phase
    monkeypatch.setattr(me, "_phase", lambda c: "check" if c == "NIKA-BUILTIN-READ-001" else real(c))
    text = (
        b'nika: v1\nworkflow: { id: t }\npermits: { fs: { read: ["./**"] }, tools: ["nika:read"] }\n'
        b"tasks:\n  a:\n    invoke: { tool: nika:read, args: { path: ./absent.txt } }\n"
    )
    tally = Tally()
    _run_one(text, tmp_path, tally)
    assert tally.accepted == 1 and tally.ran == 1
    assert [c for c, _, _ in tally.failures] == ["NIKA-BUILTIN-READ-001"]
