"""The two hashes a resumed run matches a task by (ADR-099 §1), and the per-iteration one.

* :func:`definition_hash`: the task as written, minus what does not change what it does
  (``description:``, ``after:``), plus the model that answers an ``infer:``/``agent:`` when the
  envelope or ``--model`` gives it;
* :func:`input_hash`: the values the task's ``${{ }}`` references resolve to now: ``inputs.*``,
  ``config.*``, ``const.*``, an upstream ``tasks.X`` (its status, output, bindings and error
  code, never its timings). A secret participates by its declared reference (name, source,
  key, path), never by its value, nor by a hash of it: a hash of a low-entropy secret is an
  oracle, and the trace must carry nothing secret-derived;
* :func:`iteration_hash`: one ``for_each`` iteration: the task's input hash, its index and item.

Each is the sha256 of compact, sorted-key JSON of the material (``sha256:<hex>``).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from typing import Any

from checker.core.vocab import TIMING_FIELDS
from checker.model.workflow import Agent, CompiledWorkflow, Infer, Task
from checker.parse.values import ScalarValue
from runtime.values import plain

NOT_BEHAVIOUR = frozenset({"description", "after"})
_TIMINGS = TIMING_FIELDS  # the task record table (checker/core/vocab.py)
_DERIVED_ROOTS = frozenset({"with", "item", "index", "output", "error", "result"})


_ENCODER = json.JSONEncoder(sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=repr)


def digest(material: Any) -> str:
    text = _ENCODER.encode(plain(material))
    return "sha256:" + hashlib.sha256(text.encode("utf-8")).hexdigest()


def definition_hash(task: Task, model_override: str | None) -> str:
    body = task.value.to_python()
    if isinstance(body, dict):
        body = {k: v for k, v in body.items() if k not in NOT_BEHAVIOUR}
    material: dict[str, Any] = {"task": task.id, "body": body}
    if isinstance(task.verb, Infer | Agent):
        m = task.verb.effective_model
        material["model"] = model_override or (m.value if isinstance(m, ScalarValue) else None)
    return digest(material)


def references(compiled: CompiledWorkflow, tid: str) -> list[tuple[str, str | None]]:
    """``(root, first step)`` of every reference the task's expressions make, sorted, once each."""
    cached = _REFS.get(id(compiled))
    if cached is None or cached[0] is not compiled:
        cached = (compiled, _references_by_task(compiled))
        if len(_REFS) > 32:
            _REFS.clear()
        _REFS[id(compiled)] = cached
    return cached[1].get(tid, [])


_REFS: dict[int, tuple[CompiledWorkflow, dict[str, list[tuple[str, str | None]]]]] = {}


def _references_by_task(compiled: CompiledWorkflow) -> dict[str, list[tuple[str, str | None]]]:
    seen: dict[str, set[tuple[str, str | None]]] = {}
    for site in compiled.sites:
        if site.task is None:
            continue
        for _island, ref, _span in site.references():
            if ref.root in _DERIVED_ROOTS:
                continue
            first = ref.path[0] if ref.path and isinstance(ref.path[0], str) else None
            seen.setdefault(site.task, set()).add((ref.root, first))
    return {t: sorted(refs, key=lambda r: (r[0], r[1] or "")) for t, refs in seen.items()}


def input_hash(compiled: CompiledWorkflow, tid: str, base: Mapping[str, Any], views: Mapping[str, Any]) -> str:
    """The resolved-input hash of ``tid`` in a scope whose upstream tasks have settled."""
    wf = compiled.workflow
    assert wf is not None
    secrets = {s.name: s for s in wf.secrets}
    material: list[Any] = []
    for root, name in references(compiled, tid):
        if root == "secrets":
            s = secrets.get(name or "")
            ident = [s.name, s.source, s.store_key, s.path] if s is not None else None
            material.append([root, name, ident])
        elif root == "tasks":
            view = views.get(name or "")
            material.append([root, name, _task_view(view)])
        elif root in base and root != "secrets":
            scope = base[root]
            value = scope.get(name) if name is not None and isinstance(scope, Mapping) else scope
            material.append([root, name, value])
        else:
            material.append([root, name, None])
    return digest(material)


def _task_view(view: Any) -> Any:
    if not isinstance(view, Mapping):
        return None
    out = {k: v for k, v in view.items() if k not in _TIMINGS and k != "error"}
    err = view.get("error")
    out["error_code"] = err.get("code") if isinstance(err, Mapping) else None
    return out


def iteration_hash(task_input: str, index: int, item: Any) -> str:
    return digest({"input": task_input, "index": index, "item": item})
