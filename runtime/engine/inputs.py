"""A run's inputs: the file compiled once (:func:`compile_file`), ``--var`` pairs parsed and bound
to the declared ``inputs:`` (:func:`bind_inputs`), and what this build cannot honour
(:func:`unsupported_run_block`), refused before any effect.

The verdict a run is admitted by is ``nika check``'s (:func:`checker.project.admission.admit`);
``nika run`` never re-reads the file after it: the compiled model judged there is the one that
runs (a file edited between check and run changes nothing).
"""

from __future__ import annotations

import json
from typing import Any

from checker.core.display import kind_of
from checker.model.workflow import CompiledWorkflow, Workflow


class InputError(Exception):
    """A ``--var`` or child-workflow argument that does not fit the declared ``inputs:``."""


def compile_file(path: str, *, named: bool = True) -> tuple[CompiledWorkflow | None, str | None]:
    """The workflow at ``path`` compiled, or the one-line reason it could not be read. ``named``:
    the user named it on the command line (a pipe is read too); a child workflow is not
    (``named=False``: a regular file only). Either way through the one bounded reader."""
    from checker.project.files import compile_path

    return compile_path(path, named=named)


def parse_vars(pairs: list[str]) -> dict[str, Any]:
    """``k=v`` pairs: ``v`` as JSON when it parses, else the string itself."""
    out: dict[str, Any] = {}
    for pair in pairs:
        got = assignment(pair)
        if got is None:
            raise InputError(f"`--var {pair}` is not `name=value`")
        out[got[0]] = got[1]
    return out


def assignment(pair: str) -> tuple[str, Any] | None:
    """``NAME=VALUE`` from the command line (``--var``, ``--answer``): the value as JSON when it
    parses, else the text itself; ``None`` when there is no ``=`` or no name."""
    key, sep, raw = pair.partition("=")
    key = key.strip()
    if not sep or not key:
        return None
    try:
        return key, json.loads(raw)
    except ValueError:
        return key, raw


def value_problem(value: Any, limit: int | None = None) -> str | None:
    """The one admission of a value at the edge of a run (a ``--var``, a child's arguments, a
    file, a tool's or a model's reply): why it cannot enter, or ``None``. Refused: text that is
    not Unicode a journal can hold (a lone surrogate, which is also what an undecodable byte on
    the command line becomes), an object key that is not text, a value nested deeper than
    :data:`runtime.guard.limits.MAX_VALUE_DEPTH`. Iterative: a hostile value cannot exhaust the
    stack here."""
    from runtime.guard.limits import MAX_VALUE_DEPTH

    cap = MAX_VALUE_DEPTH if limit is None else limit
    stack: list[tuple[Any, int]] = [(value, 0)]
    while stack:
        v, depth = stack.pop()
        if isinstance(v, str):
            if not v.isascii() and (bad := _surrogate_at(v)) is not None:
                return f"the text holds a lone surrogate or an undecodable byte (U+{ord(v[bad]):04X} at {bad})"
        elif isinstance(v, dict | list | tuple):
            if depth >= cap:
                return f"the value nests deeper than {cap} levels"
            if isinstance(v, dict):
                for k in v:
                    if not isinstance(k, str):
                        return f"an object key is not text ({type(k).__name__})"
                    stack.append((k, depth + 1))
                stack.extend((c, depth + 1) for c in v.values())
            else:
                stack.extend((c, depth + 1) for c in v)
    return None


def _surrogate_at(text: str) -> int | None:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as exc:
        return exc.start
    return None


def bind_inputs(wf: Workflow, given: dict[str, Any], *, what: str = "--var") -> dict[str, Any]:
    """The ``inputs`` scope: supplied values (admitted, :func:`value_problem`, and checked
    against their types), then defaults; a declared optional input with neither reads as ``null``."""
    from checker.model.typesys import value_fits

    for name, value in given.items():
        problem = value_problem(name) or value_problem(value)
        if problem is not None:
            raise InputError(f"{what}: input `{ascii(name)[1:-1]}` cannot be admitted: {problem}")

    declared = {i.name: i for i in wf.inputs}
    unknown = sorted(set(given) - set(declared))
    if unknown:
        from checker.core.suggest import did_you_mean

        names = ", ".join(f"`{n}`" for n in sorted(declared)) or "none"
        near = did_you_mean(unknown[0], set(declared) - set(given)) if len(unknown) == 1 else None
        hint = f" (did you mean `{near}`?)" if near else ""
        raise InputError(
            f"{what}: unknown input {', '.join(f'`{u}`' for u in unknown)}{hint}; declared inputs: {names}"
        )
    out: dict[str, Any] = {}
    for name, decl in declared.items():
        if name in given:
            value = given[name]
            if decl.type is not None and value_fits(value, decl.type, wf.types) is False:
                shown = json.dumps(value)
                if len(shown) > 60:
                    shown = shown[:57] + "..."
                type_text = decl.type.to_python()
                raise InputError(
                    f"{what}: input `{name}` is declared `{json.dumps(type_text)}` but got {shown} ({kind_of(value)})"
                )
            out[name] = value
        elif decl.default is not None:
            out[name] = decl.default.to_python()
        elif decl.required:
            raise InputError(f"{what}: input `{name}` is required; pass it with `--var {name}=…`")
        else:
            out[name] = None
    return out


def unsupported_task_fields(wf: Any, model_override: str | None = None) -> list[str]:
    """``task `x`'s `infer.thinking:` on `groq```` for every accepted field the runtime cannot honour
    on the task's literal model: ``thinking:`` on a provider whose adapter sends no reasoning
    parameter (:data:`runtime.providers.registry.THINKING`). A computed model is judged when the
    task runs, before its call; ``vision:`` is sent by every wire. ``model_override`` (``--model``)
    replaces every task's model, as it does at run."""
    from checker.parse.values import ScalarValue, TemplateValue
    from runtime.providers.registry import THINKING

    out = []
    for tid, task in getattr(wf, "tasks", {}).items():
        verb = getattr(task, "verb", None)
        if getattr(verb, "kind", None) != "infer" or getattr(verb, "thinking", None) is None:
            continue
        model = verb.effective_model
        if model_override is not None:
            literal = model_override
        elif isinstance(model, ScalarValue) and not isinstance(model, TemplateValue) and isinstance(model.value, str):
            literal = model.value
        else:
            continue
        prefix = literal.partition("/")[0]
        if prefix not in THINKING:
            out.append(f"`{tid}`'s `infer.thinking:` on `{prefix}`")
    return out


def unsupported_features(wf: Any, model_override: str | None = None) -> list[str]:
    """The features of the one list of what this build lacks (``runtime/unbuilt.toml`` and the
    registries) that refuse this workflow before any effect: ``thinking`` on a literal model whose
    adapter sends no reasoning parameter."""
    return ["thinking"] if unsupported_task_fields(wf, model_override) else []


def unsupported_run_block(wf: Any, model_override: str | None = None) -> str | None:
    """Why this build cannot honour the workflow (:func:`unsupported_features`), or ``None``: it is
    refused before any effect rather than run as if the field were absent."""
    fields = unsupported_task_fields(wf, model_override)
    if not fields:
        return None
    return (
        f"{', '.join(fields)} {'is' if len(fields) == 1 else 'are'} not available in this build of nika "
        f"(that adapter sends no reasoning parameter; {_thinking_takers()} do); remove it to run without it"
    )


def _thinking_takers() -> str:
    from runtime.providers.registry import THINKING

    return ", ".join(f"`{p}`" for p in sorted(THINKING) if p != "mock")
