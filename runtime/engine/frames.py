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
    from checker.model.workflow import Workflow
    from runtime.durable.gate import Gate


class FramedRun(ResumingRun, Protocol):
    """What the run's frames read of it (:class:`runtime.engine.run.Run`), besides the resume hooks'."""

    wf: Workflow
    run_nonce: str
    gate: Gate


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
            ("source", self.compiled.source.path),  # read back by `nika trace receipt` (additive)
            ("run_nonce", self.run_nonce),
            *self.gate.prologue_fields(),
        ],
    )
    if self.options.resume is not None:
        for line in self.options.resume.notes:
            self.emit("checkpoint_written", [("note", line)])


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
