"""The base scope every expression of a run reads: ``inputs``, ``config``, ``const``,
``secrets`` and the settled ``tasks`` views (03 §scope)."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

from checker.model.workflow import Workflow
from runtime.errors import TaskError, not_built
from runtime.values import materialise

# The secret sources this build resolves. Read as data by checker/contracts/built_features.py (which
# warns at check about the others): keep it a literal set of strings.
SECRET_SOURCES = frozenset({"env", "file", "vault"})


class Secrets(Mapping[str, Any]):
    """``secrets.X``: resolved when read (:mod:`runtime.guard.secrets`), remembered for redaction
    and, with its ``egress:`` rules, for the egress judge (``held``: :mod:`runtime.net.egress`)."""

    def __init__(
        self,
        wf: Workflow,
        engine_env: Mapping[str, str],
        remembered: set[str],
        workdir: Path,
        held: dict[str, Any] | None = None,
    ) -> None:
        self._decl = {s.name: s for s in wf.secrets}
        self._env = engine_env
        self._remembered = remembered
        self._held = held if held is not None else {}
        self._workdir = workdir
        self._values: dict[str, str] = {}

    def __getitem__(self, key: str) -> Any:
        if key in self._values:
            return self._values[key]
        s = self._decl[key]
        if s.source not in SECRET_SOURCES:
            raise not_built(
                "secret-source", f"secret source `{s.source}` is not available in this build of nika", source=s.source
            )
        from runtime.guard.secrets import resolve
        from runtime.net.egress import Held, rules_of

        value = resolve(s, self._env, self._workdir)
        self._remembered.add(value)
        self._held[key] = Held(key, value, rules_of(s))  # what the egress judge decides it by
        self._values[key] = value
        return value

    def __iter__(self) -> Iterator[str]:
        return iter(self._decl)

    def __len__(self) -> int:
        return len(self._decl)


def base_scope(wf: Workflow, inputs: dict[str, Any], secrets: Secrets, tasks: dict[str, Any]) -> dict[str, Any]:
    const: dict[str, Any] = {}
    for c in wf.const:
        v = c.literal if c.type is not None else c.value
        const[c.name] = v.to_python() if v is not None else None
    config: dict[str, Any] = {}
    for c in wf.config:
        if c.default is not None:
            config[c.name] = c.default.to_python()
    return {"inputs": inputs, "config": config, "const": const, "secrets": secrets, "tasks": tasks}


def workflow_outputs(
    wf: Workflow, scope: dict[str, Any], cancelled: bool, failed: bool = False
) -> tuple[dict[str, Any], dict[str, Any] | None]:
    """The workflow's ``outputs:`` and the error record of the first that cannot be produced.
    Under a cancellation an output that cannot be read is left out; in a run that already
    failed it is ``null`` (what a failed task never produced is not a second error)."""
    from checker.model.typesys import value_fits

    out: dict[str, Any] = {}
    for o in wf.outputs:
        try:
            value = materialise(o.value, scope, f"output `{o.name}`")
        except TaskError as err:
            if cancelled:
                continue
            if failed:
                out[o.name] = None
                continue
            return out, err.record(None, None) | {"output": o.name}
        if o.type is not None and not (failed and value is None) and value_fits(value, o.type, wf.types) is False:
            err = TaskError(
                "NIKA-VAR-009",
                f"workflow output `{o.name}` does not fit its declared type",
                details={"output": o.name, "type": o.type.to_python()},
            )
            return out, err.record(None, None)
        out[o.name] = value
    return out, None
