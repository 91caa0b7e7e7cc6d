"""Comparing a deterministic run's journal with the journal of its reproduction (NEP-0010).

Two journals of a deterministic run agree byte for byte outside the nonce fields
(:mod:`runtime.journal.nonces`). :func:`first_difference` walks them frame by frame: each frame
with its nonce fields and its ``chain`` masked, encoded again exactly as the journal writer
encodes (sorted keys, compact), must give the same bytes; the first frame that does not is the
answer, with the first member or field that differs. :func:`recorded_run` reads what a
reproduction needs from the recorded prologue, or says why the run cannot be reproduced.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from runtime.journal.nonces import masked
from runtime.journal.read import parsed_field, read_frame
from runtime.journal.scan import frame_fields
from runtime.journal.write import encode


class NotReproducible(Exception):
    """The recorded run cannot be run again deterministically: a one-line reason."""


@dataclass(frozen=True)
class Recorded:
    """What the recorded prologue says the run was: its source, inputs and model override."""

    workflow: str | None
    source: str | None
    workflow_sha256: str | None
    inputs: dict[str, Any]
    model: str | None
    determinism: str  # `seeded 42 · virtual clock`
    not_deterministic: list[dict[str, Any]]


def recorded_run(data: bytes) -> Recorded:
    """The recorded run of the journal ``data``; raises :class:`NotReproducible`."""
    first = data.split(b"\n", 1)[0]
    frame, _ = read_frame(first)
    if frame is None or frame.get("kind") != "workflow_started":
        raise NotReproducible("the journal does not open with its prologue")
    pro = {f["key"]: f.get("value") for f in frame.get("fields") or [] if isinstance(f, dict) and "key" in f}
    if pro.get("deterministic") is not True:
        entropy, clock = pro.get("entropy") or "ambient", pro.get("clock") or "system"
        raise NotReproducible(
            f"the run declared `entropy: {entropy}` and `clock: {clock}`, not a deterministic pair; only a run "
            "declaring `run: { entropy: { seeded: N }, clock: virtual }` (or `entropy: none`) can be reproduced"
        )
    inputs = parsed_field(pro.get("inputs"))
    unfixed = parsed_field(pro.get("not_deterministic"))
    seed = pro.get("seed")
    what = f"seeded {seed}" if pro.get("entropy") == "seeded" else f"{pro.get('entropy')} entropy"
    return Recorded(
        workflow=pro.get("workflow") if isinstance(pro.get("workflow"), str) else None,
        source=pro.get("source") if isinstance(pro.get("source"), str) else None,
        workflow_sha256=pro.get("workflow_sha256") if isinstance(pro.get("workflow_sha256"), str) else None,
        inputs=inputs if isinstance(inputs, dict) else {},
        model=pro.get("model_override") if isinstance(pro.get("model_override"), str) else None,
        determinism=f"{what} · {pro.get('clock')} clock",
        not_deterministic=[u for u in unfixed if isinstance(u, dict)] if isinstance(unfixed, list) else [],
    )


def first_difference(recorded: bytes, reproduced: bytes) -> dict[str, Any] | None:
    """``None`` when the two journals agree outside the nonce fields, else the first difference:
    ``{"frame", "kind", "task", "index", "member", "recorded", "reproduced"}`` (``frame`` counts
    from 1; ``member`` is ``fields.KEY``, a frame member such as ``timestamp``, or ``end`` when one
    journal stops first)."""
    a, b = _lines(recorded), _lines(reproduced)
    for n, (la, lb) in enumerate(zip(a, b, strict=False), 1):
        if la == lb:
            continue
        fa, fb = read_frame(la)[0], read_frame(lb)[0]
        if fa is None or fb is None:
            return _diff(n, fa or fb or {}, "line", la.decode("utf-8", "replace"), lb.decode("utf-8", "replace"))
        ma, mb = masked(fa), masked(fb)
        if encode(ma) == encode(mb):
            continue
        member, va, vb = _first_member(ma, mb)
        return _diff(n, fa, member, va, vb)
    if len(a) != len(b):
        n = min(len(a), len(b)) + 1
        longer = a if len(a) > len(b) else b
        frame = read_frame(longer[n - 1])[0] or {}
        ends = "the recorded journal ends here" if len(a) < len(b) else "the reproduction ends here"
        va = ends if len(a) < len(b) else frame.get("kind")
        vb = frame.get("kind") if len(a) < len(b) else ends
        return _diff(n, frame, "end", va, vb)
    return None


def compared_frames(data: bytes) -> int:
    return len(_lines(data))


def _lines(data: bytes) -> list[bytes]:
    return [line for line in data.split(b"\n") if line.strip()]


def _first_member(a: dict[str, Any], b: dict[str, Any]) -> tuple[str, Any, Any]:
    """The first member (in the journal's key order) or field that differs between two masked frames."""
    fa, fb = frame_fields(a), frame_fields(b)
    if a.get("kind") != b.get("kind"):
        return "kind", a.get("kind"), b.get("kind")
    for key in dict.fromkeys([*fa, *fb]):
        va, vb = fa.get(key, _ABSENT), fb.get(key, _ABSENT)
        if encode({"v": va}) != encode({"v": vb}):
            return f"fields.{key}", _shown(va), _shown(vb)
    for key in sorted(set(a) | set(b)):
        if key != "fields" and encode({"v": a.get(key)}) != encode({"v": b.get(key)}):
            return key, a.get(key), b.get(key)
    return "bytes", None, None  # pragma: no cover - the masked encodings differ somewhere


_ABSENT = "<absent>"


def _shown(v: Any) -> Any:
    return parsed_field(v) if isinstance(v, str) else v


def _diff(n: int, frame: dict[str, Any], member: str, recorded: Any, reproduced: Any) -> dict[str, Any]:
    f = frame_fields(frame)
    return {
        "frame": n,
        "kind": frame.get("kind"),
        "task": f.get("task") if isinstance(f.get("task"), str) else None,
        "index": f.get("index") if isinstance(f.get("index"), int) else None,
        "member": member,
        "recorded": recorded,
        "reproduced": reproduced,
    }


def describe(d: dict[str, Any]) -> str:
    """One line for people: ``frame 14 (checkpoint_written of `each`[1]): fields.output "b" → "B"``."""
    where = d["kind"] or "?"
    if d["task"]:
        where += f" of `{d['task']}`" + (f"[{d['index']}]" if d["index"] is not None else "")
    return (
        f"frame {d['frame']} ({where}): {d['member']}: recorded {_short(d['recorded'])} · "
        f"reproduced {_short(d['reproduced'])}"
    )


def _short(v: Any, limit: int = 120) -> str:
    """A value as JSON, cut to ``limit`` characters (the "ends here" notes as they are)."""
    prose = isinstance(v, str) and v.startswith("the ")
    text = v if prose else json.dumps(v, ensure_ascii=False, default=str)
    return text if len(text) <= limit else text[: limit - 1] + "…"
