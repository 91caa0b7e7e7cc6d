"""``nika trace reproduce RUN``: run a recorded deterministic run again and compare the journals.

The recorded prologue says what the run was (NEP-0010: a deterministic run records its inputs and
model override): the same workflow bytes (the file the journal names, or ``--workflow FILE``, whose
sha256 must be the recorded one), run again in this working directory into the same trace folder,
then compared frame by frame outside the nonce fields (:mod:`runtime.journal.reproduce`). Exit 0:
the journals agree; 1: they differ (the first differing frame is printed) or the run cannot be
found; 2: the run cannot be reproduced (not deterministic, its workflow missing or changed).
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import os
import sys
from pathlib import Path
from typing import Any, TextIO

SAME, DIFFERENT, REFUSED = 0, 1, 2


def reproduce(name: str, trace_dir: Path, fmt: str, out: TextIO, *, workflow: str | None = None) -> int:
    from runtime.journal.find import RunNotFound, resolve_run
    from runtime.journal.reproduce import NotReproducible, compared_frames, first_difference, recorded_run
    from runtime.journal.write import verify

    try:
        path = resolve_run(name, trace_dir)
        data = path.read_bytes()
    except RunNotFound as exc:
        return _fail(str(exc), 1)
    except OSError as exc:
        return _fail(f"{name}: {(exc.strerror or str(exc)).lower()}", 1)
    run_id = path.name.removesuffix(".ndjson")
    try:
        rec = recorded_run(data)
        source = _source(rec, workflow)
    except NotReproducible as exc:
        return _fail(f"{run_id}: {exc}", REFUSED)
    notes = []
    verdict = verify(data)
    if verdict["verdict"] == "forged":
        first = verdict["problems"][0]
        notes.append(f"the recorded journal fails verification (line {first['line']}: {first['problem']})")
    try:
        result = _run_again(source, rec, trace_dir)
    except _Refused as exc:
        return _fail(f"{run_id}: {exc}", REFUSED)
    if result.trace is None:
        return _fail(f"{run_id}: the reproduction kept no journal ({result.trace_error or 'no trace folder'})", 1)
    again = Path(result.trace).read_bytes()
    diff = first_difference(data, again)
    doc = {
        "run": run_id,
        "workflow": rec.workflow,
        "determinism": rec.determinism,
        "reproduction": Path(result.trace).name.removesuffix(".ndjson"),
        "state": result.workflow_state,
        "frames": compared_frames(data),
        "identical": diff is None,
        "first_difference": diff,
        "not_deterministic": rec.not_deterministic,
        "notes": notes,
    }
    if fmt == "json":
        _write(out, json.dumps(doc, ensure_ascii=False, default=str) + "\n")
    else:
        _write(out, _text(doc))
    return SAME if diff is None else DIFFERENT


class _Refused(Exception):
    pass


def _source(rec: Any, workflow: str | None) -> str:
    from runtime.journal.reproduce import NotReproducible

    source = workflow or rec.source
    if not source:
        raise NotReproducible("the journal names no workflow file; pass --workflow FILE")
    try:
        text = Path(source).read_bytes()
    except OSError as exc:
        raise NotReproducible(f"{source}: {(exc.strerror or str(exc)).lower()} (pass --workflow FILE)") from None
    if rec.workflow_sha256 and hashlib.sha256(text).hexdigest() != rec.workflow_sha256:
        raise NotReproducible(
            f"{source} is not the file the run ran (its sha256 differs from the recorded one); "
            "a reproduction of other bytes proves nothing"
        )
    return source


def _run_again(source: str, rec: Any, trace_dir: Path) -> Any:
    """The recorded run, run again here: admitted as ``nika run`` admits it."""
    from runtime.engine.admission import NotAdmitted, admit_file
    from runtime.engine.options import Options
    from runtime.engine.run import Run
    from runtime.verbs import VERBS

    try:
        compiled, inputs = admit_file(source, rec.inputs, rec.model)
    except NotAdmitted as exc:
        if exc.stage == "verdict":
            raise _Refused(f"`nika check {source}` refuses the workflow now") from None
        if exc.stage == "inputs":
            raise _Refused(f"the recorded inputs: {exc.message}") from None
        raise _Refused(exc.message) from None
    options = Options(model=rec.model, trace_dir=trace_dir, engine_env=dict(os.environ))
    return asyncio.run(Run(compiled, inputs, options, verbs=VERBS, workdir=Path.cwd()).execute())


def _text(doc: dict[str, Any]) -> str:
    from runtime.journal.reproduce import describe

    lines = [
        f"reproduce {doc['run']} · workflow {doc['workflow'] or '?'} · {doc['determinism']}",
        f"  ran again as {doc['reproduction']} · {doc['state']}",
    ]
    lines += [f"  note: {n}" for n in doc["notes"]]
    if doc["identical"]:
        lines.append(f"  same: {doc['frames']} frames agree byte for byte outside the nonce fields")
    else:
        lines.append(f"  differs at {describe(doc['first_difference'])}")
    for u in doc["not_deterministic"]:
        why = f"{u.get('why')} (a difference there is not the engine's)"
        lines.append(f"  not deterministic: `{u.get('task')}` reaches {why}")
    return "\n".join(lines) + "\n"


def _write(out: TextIO, text: str) -> None:
    from checker.core.display import terminal_safe

    try:
        out.write(terminal_safe(text))
        out.flush()
    except BrokenPipeError:
        pass


def _fail(message: str, code: int) -> int:
    print(f"nika trace reproduce: {message}", file=sys.stderr)
    return code
