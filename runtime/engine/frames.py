"""What the run's frames carry: the prologue (:func:`announce`) and a task's terminal frame
(:func:`settled_fields`), kept apart from the ready set in :mod:`runtime.engine.run`."""

from __future__ import annotations

import json
import os
from typing import TYPE_CHECKING, Any, Protocol

from checker.core.vocab import Status
from runtime.engine.events import note
from runtime.engine.records import ENGINE_VERSION, TaskRecord, compact
from runtime.engine.resume_match import ResumingRun, resumable
from runtime.journal.write import TRACE_FORMAT, Fields, source_digests

if TYPE_CHECKING:
    from pathlib import Path

    from checker.model.workflow import Workflow
    from runtime.determinism import Determinism
    from runtime.durable.gate import Gate


class FramedRun(ResumingRun, Protocol):
    """What the run's frames read of it (:class:`runtime.engine.run.Run`), besides the resume hooks'."""

    wf: Workflow
    run_nonce: str
    gate: Gate
    det: Determinism  # the run's time and randomness (NEP-0010)
    workdir: Path
    inputs: dict[str, Any]


def announce(self: FramedRun) -> None:
    """The prologue: what the journal says of the run before its first task (17-trace)."""
    wf = self.wf
    permits_json = json.dumps(wf.permits.value.to_python(), separators=(",", ":")) if wf.permits else None
    self.emit(
        "workflow_started",
        [
            ("workflow", wf.id),
            ("permits", "declared boundary · default-deny" if wf.permits else "no permits block · zero authority"),
            ("permits_json", permits_json or "{}"),
            *source_digests(self.compiled.source.text),
            ("sandbox", "noop"),
            ("trace_format", TRACE_FORMAT),
            ("engine_version", ENGINE_VERSION),
            ("platform", _platform()),
            ("depth", self.options.depth),
            ("source", _source(self)),  # read back by `nika trace receipt` and `trace reproduce` (additive)
            ("run_nonce", self.run_nonce),
            *self.gate.prologue_fields(),
            *determinism_fields(self),
        ],
    )
    if self.options.resume is not None:
        for line in self.options.resume.notes:
            self.emit("checkpoint_written", [("note", line)])


def _source(self: FramedRun) -> str | None:
    """The workflow file; in a deterministic run relative to the working directory (its journal
    names no absolute path, so the same layout elsewhere writes the same bytes)."""
    path = self.compiled.source.path
    if path and self.det.deterministic and os.path.isabs(path):
        return os.path.relpath(path, self.workdir)
    return path


def determinism_fields(self: FramedRun) -> Fields:
    """What the ``run:`` block declared (NEP-0010: the journal self-describes its determinism
    contract); for a deterministic run also its inputs and model override (what ``nika trace
    reproduce`` runs it again with), the fields left random on purpose and what it cannot fix."""
    det = self.det
    if not det.declared:
        return []
    fields: Fields = [("entropy", det.entropy_mode), ("seed", det.seed), ("clock", det.clock_mode)]
    if self.options.determinism is not None:
        fields.append(("determinism_from", "the calling workflow (one run, one clock)"))
    if det.deterministic:
        from runtime.engine.reproducible import unreproducible
        from runtime.journal.nonces import nonce_paths

        fields += [
            ("deterministic", True),
            ("inputs", compact(self.inputs)),
            ("model_override", self.options.model),
            ("nonce_fields", nonce_paths()),
            ("not_deterministic", compact(unreproducible(self.compiled, self.options.model))),
        ]
    return fields


def _platform() -> str:
    """``system/machine`` as :mod:`platform` says them (``linux/x86_64``), from ``os.uname`` where
    there is one: ``platform`` costs more to import than the rest of the prologue."""
    uname = getattr(os, "uname", None)
    if uname is None:  # pragma: no cover - Windows
        import platform

        return f"{platform.system().lower()}/{platform.machine()}"
    u = uname()
    return f"{u.sysname.lower()}/{u.machine}"


def settled_fields(self: FramedRun, rec: TaskRecord) -> Fields:
    """What a task's terminal frame carries (ADR-099 hashes where the task can be resumed)."""
    fields: Fields = [("task", rec.id), ("note", note(self.wf.tasks[rec.id], self.options.model))]
    if rec.duration_ms is not None:
        fields.append(("duration_ms", rec.duration_ms))
    if rec.resolved_with is not None:  # the task's resolved `with:` (masked on write): a replay shows it
        fields.append(("with", compact(rec.resolved_with)))
    out = None
    if rec.status == Status.SUCCESS:
        out = compact(rec.output)
        fields.append(("output", out))
    if rec.error is not None:
        fields.append(("error_code", rec.error["code"]))
        fields.append(("message", rec.error["message"]))
    payload: dict[str, Any] = {"attempts": rec.attempts}
    if rec.recovered_from is not None:
        fields.append(("recovered_from", rec.recovered_from["code"]))
        payload["recovered_from"] = rec.recovered_from["code"]
    fields.append(("outcome", compact({"class": rec.status, "payload": payload})))
    whole = resumable(self, rec, out)  # False: the output carries a masked secret
    if rec.input_hash is not None and whole:  # ADR-099 §1: what `--resume` matches
        fields += [("definition_hash", rec.definition_hash), ("input_hash", rec.input_hash)]
    if not whole:
        fields.append(("output_masked", True))  # a resume runs it again, and says so (resume_index)
    if rec.cost_usd is not None or not rec.cost_known:
        fields.append(("cost_usd", rec.cost_usd if rec.cost_known else None))
    return fields
