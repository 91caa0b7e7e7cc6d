"""The run receipt (spec 15 §``receipt_format: 1``), folded from the journal (17 §the fold law).

Four parts: the certificate of the workflow the run executed (05/15), the trace verdict (the
chain walk of :func:`runtime.journal.write.verify` plus the run's outcome: state and per-task states),
the assertions, and the ``nika.lock`` digest. The certificate is computed from the workflow
file only when its bytes are the ones the journal's prologue names (``workflow_sha256``): a
changed file certifies another workflow, so the receipt says so instead. This build has no
``assert:`` judging and no ``nika.lock``: those parts are ``null`` with the reason, never
invented. The digest is blake3 over a ``receipt`` domain tag and the body's canonical JSON (keys
sorted, no whitespace, UTF-8; JCS as far as the body's values reach: the certificate carries
floats, which JCS spells as ECMAScript does and this text as Python's shortest repr), so it cannot
be confused with a digest of another role.
"""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

from runtime.journal.read import RunView
from runtime.journal.write import verify

RECEIPT_FORMAT = 1
DOMAIN = b"nika/receipt/v1\x00"
NOT_BUILT_ASSERT = "`assert:` is not judged by this build of nika"
NOT_BUILT_LOCK = "`nika.lock` is not built yet: the run resolved under no lock"


def receipt(view: RunView, workflow: Path | None = None, prices: Any = None) -> dict[str, Any]:
    """The receipt of the run ``view`` (``workflow`` overrides the prologue's ``source`` path)."""
    verdict = verify(view.path.read_bytes())
    certificate, why = _certificate(view, workflow, prices)
    body: dict[str, Any] = {
        "receipt_format": RECEIPT_FORMAT,
        "run": view.run_id,
        "workflow": view.workflow,
        "workflow_sha256": view.workflow_sha256,
        "certificate": certificate,
        "trace_verdict": {
            "verdict": verdict["verdict"],
            "frames": verdict["frames"],
            "head": verdict["head"],
            "problems": verdict["problems"],
            "outcome": {
                "state": view.state,
                "tasks": {tid: t.status for tid, t in view.tasks.items()},
                "cost_usd": view.cost_usd,
            },
        },
        "approvals": _approvals(view),  # NEP-0013 §4: the decided tickets' digests rise to the receipt
        "assertions": None,
        "lock_digest": None,
        "unrecorded": {
            "assertions": NOT_BUILT_ASSERT,
            "lock_digest": NOT_BUILT_LOCK,
            **({"certificate": why} if why else {}),
        },
    }
    body["digest"] = "blake3:" + _digest(body)
    return body


def _certificate(view: RunView, workflow: Path | None, prices: Any) -> tuple[dict[str, Any] | None, str | None]:
    path = workflow or (Path(view.source) if view.source and view.source != "<stdin>" else None)
    if path is None:
        return None, "the journal names no workflow file: give --workflow FILE"
    try:
        data = path.read_bytes()
    except OSError as exc:
        return None, f"{path}: {(exc.strerror or str(exc)).lower()}"
    if view.workflow_sha256 and hashlib.sha256(data).hexdigest() != view.workflow_sha256:
        return None, f"{path} changed since the run (its sha256 is not the journal's `workflow_sha256`)"
    from checker.project.files import compile_path
    from checker.views.certificate import certify

    compiled, bad = compile_path(str(path))
    if compiled is None:
        return None, f"{path}: {bad}"
    cert = certify(compiled, prices)
    if cert is None:
        return None, f"{path}: no workflow model to certify"
    return cert.to_json(), None


def _approvals(view: RunView) -> list[dict[str, Any]]:
    keep = ("task", "ticket", "shown_hash", "decision", "answered_by")
    return [{k: e.get(k) for k in keep} for e in view.events if e.get("type") == "approval.decided"]


def _digest(body: dict[str, Any]) -> str:
    import json

    import blake3

    text = json.dumps(body, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False, default=str)
    return blake3.blake3(DOMAIN + text.encode("utf-8")).hexdigest()
