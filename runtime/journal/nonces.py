"""The journal fields a deterministic run leaves random on purpose (NEP-0010 × NEP-0013).

A run with ``entropy: none | { seeded: N }`` and ``clock: virtual`` writes the same bytes every
time, except where a value must never repeat across runs: the **run nonce** (the scope every
approval ticket is minted for: a ticket replayed across runs is refused because the nonce differs)
and the **approval tickets** themselves (their issue time is on the real clock, since a ticket's TTL
is a safety bound). Every other field listed here only *follows* from one of those: it names a
journal by its run's nonce, or carries a ticket or a child run's chain head. Each frame's ``chain``
member follows too (it hashes the previous line, which may hold a nonce).

This table is the one place that says so: the prologue of a deterministic run carries it
(``nonce_fields``), ``nika trace reproduce`` compares two journals outside it, and
docs/determinism.md prints it. A path is ``kind.field``, with ``[].member`` or ``.member`` steps
into a field whose value is serialized JSON (17 §frame: object-as-string).
"""

from __future__ import annotations

import json
from typing import Any

# (kind, field path, why it is exempt)
NONCE_FIELDS: tuple[tuple[str, str, str], ...] = (
    ("workflow_started", "run_nonce", "the run nonce: the scope of every ticket (NEP-0013 §2)"),
    ("workflow_started", "resumed_from", "the resumed journal's name, which carries that run's nonce"),
    ("workflow_started", "history", "the run history's id: the nonce of its first run (runtime.journal.history)"),
    ("workflow_started", "resumed_from_nonce", "the resumed run's nonce"),
    ("workflow_started", "resumed_from_head", "the resumed journal's chain head, which hashes that run's nonce"),
    ("approval_decided", "ticket", "the ticket's digest (its issue time is on the real clock)"),
    ("approval_decided", "scope", "the ticket's scope: the run nonce it was minted for"),
    ("approval_decided", "ttl_remaining_s", "what the ticket's TTL has left, on the real clock"),
    ("approval_decided", "journal", "a child workflow's journal, named by the child's nonce"),
    ("workflow_paused", "prompts[].ticket", "the ticket each waiting prompt carries"),
    ("workflow_paused", "prompts[].child.trace", "a paused child's journal, named by its nonce"),
    ("workflow_paused", "prompts[].journals", "the paused children's journals, named by their nonces"),
    ("tool_invoked", "trace", "a child workflow's journal, named by the child's nonce"),
    ("tool_invoked", "chain_head", "a child workflow's chain head, which hashes the child's nonce"),
    ("task_cache_hit", "cached_from.trace", "the journal a record was read from, named by its nonce"),
)
MASK = "<nonce>"


def nonce_paths() -> list[str]:
    """The table as the prologue's ``nonce_fields`` carries it: ``kind.field`` paths."""
    return [f"{kind}.{path}" for kind, path, _ in NONCE_FIELDS]


def masked(frame: dict[str, Any]) -> dict[str, Any]:
    """``frame`` with its ``chain`` and every nonce field (present) replaced by :data:`MASK`."""
    out = {**frame, "chain": MASK}
    kind = frame.get("kind")
    paths = [p for k, p, _ in NONCE_FIELDS if k == kind]
    fields = frame.get("fields")
    if not paths or not isinstance(fields, list):
        return out
    new = []
    for f in fields:
        if isinstance(f, dict) and isinstance(f.get("key"), str):
            steps = [p.split(f["key"], 1)[1] for p in paths if p == f["key"] or _starts(p, f["key"])]
            if steps:
                f = {**f, "value": _mask_value(f.get("value"), steps)}
        new.append(f)
    out["fields"] = new
    return out


def _starts(path: str, key: str) -> bool:
    return path.startswith(key) and path[len(key)] in ".["


def _mask_value(value: Any, steps: list[str]) -> Any:
    if "" in steps:
        return MASK
    serialized = isinstance(value, str)
    try:
        data = json.loads(value) if serialized else value
    except ValueError:
        return value
    for step in steps:
        data = _mask_in(data, step)
    return json.dumps(data, sort_keys=True, separators=(",", ":"), ensure_ascii=False) if serialized else data


def _mask_in(data: Any, step: str) -> Any:
    """Mask the member ``step`` (``.a.b`` or ``[].a``) names inside ``data``."""
    if step.startswith("[]"):
        rest = step[2:]
        return [_mask_in(item, rest) for item in data] if isinstance(data, list) else data
    if not step.startswith("."):
        return data
    head, dot, tail = step[1:].partition(".")
    head, bracket, after = head.partition("[")
    rest = (f"[{after}" if bracket else "") + (f".{tail}" if dot else "")
    if not isinstance(data, dict) or head not in data:
        return data
    return {**data, head: MASK if not rest else _mask_in(data[head], rest)}
