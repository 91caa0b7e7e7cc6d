"""Admission: the one function that decides whether a workflow file may start a run.

``nika run``, ``nika trace reproduce``, ``nika dap`` and ``nika serve`` (through ``nika run``) all
admit through :func:`admit_file`: the file compiled once, the verdict ``nika check`` gives it (its
configuration and suppressions applied), what this build cannot run, and the inputs bound against
the declared ``inputs:``. Each caller words the refusal for its own surface from
:class:`NotAdmitted`'s fields; none re-implements a step.
"""

from __future__ import annotations

from typing import Any

from checker.model.workflow import CompiledWorkflow


class NotAdmitted(Exception):
    """Why the file may not start a run, before any effect.

    ``stage`` names the step that refused: ``compile`` (the file cannot be read or parsed),
    ``configuration`` (the project configuration is broken), ``verdict`` (``nika check``
    refuses it: ``verdict`` holds its report), ``unsupported`` (this build cannot run it,
    NIKA-IMPL-002), ``inputs`` (the given inputs do not bind), ``model`` (the model override
    is refused: ``code`` names the finding)."""

    def __init__(self, stage: str, message: str = "", *, verdict: Any = None, code: str | None = None) -> None:
        super().__init__(message)
        self.stage, self.message, self.verdict, self.code = stage, message, verdict, code


def admit_file(
    file: str, given: dict[str, Any], model: str | None = None, *, what: str = "--var"
) -> tuple[CompiledWorkflow, dict[str, Any]]:
    """The compiled file and its bound inputs, or :class:`NotAdmitted`. ``model`` replaces every
    task's model (``--model``); ``what`` names where the inputs came from, for the message."""
    from checker.project.admission import admit as check_verdict
    from checker.project.admission import model_option
    from checker.project.finalize import SettingsError
    from runtime.engine.inputs import InputError, bind_inputs, compile_file, unsupported_run_block

    compiled, why = compile_file(file)
    if compiled is None:
        raise NotAdmitted("compile", f"{file}: {why}")
    try:  # the verdict `nika check` gives this file: its suppressions and configuration applied
        verdict = check_verdict(compiled, file)
    except SettingsError as exc:
        raise NotAdmitted("configuration", f"configuration error in {exc}") from None
    if verdict.refused or compiled.workflow is None or compiled.graph is None:
        errors = verdict.errors[:3]
        said = "; ".join(f"{d.code}: {d.message}" for d in errors) or "it does not compile"
        raise NotAdmitted("verdict", said, verdict=verdict)
    unsupported = unsupported_run_block(compiled.workflow, model)
    if unsupported is not None:
        raise NotAdmitted("unsupported", f"{unsupported} [NIKA-IMPL-002]")
    try:
        inputs = bind_inputs(compiled.workflow, given, what=what)
    except InputError as exc:
        raise NotAdmitted("inputs", str(exc)) from None
    if model is not None and (bad := model_option(model)) is not None:  # judged before the first effect
        raise NotAdmitted("model", f"--model `{model}`: {bad.full_message()}", code=bad.code)
    return compiled, inputs
