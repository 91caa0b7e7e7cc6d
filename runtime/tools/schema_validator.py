"""The one way the runtime evaluates a user JSON Schema (``nika:validate``, ``infer.schema``,
``agent.schema``, MCP tool input schemas).

Every validator is built on an empty ``referencing`` registry with no retriever, so a ``$ref``
reaches only the schema it is written in: an ``http://``, ``https://`` or ``file://`` reference
is never fetched or opened (a URL-reaching evaluation would be a ``net``/``fs`` effect outside
every grant, spec 10 §net and 01 §permits). Such a reference fails as ``Unresolvable``, which
each caller reports as its own typed failure.
"""

from __future__ import annotations

from typing import Any, NamedTuple

PATTERN_BUDGET_S = 1.0  # one `pattern` search slower than this stops the evaluation (never a hang)


class SchemaEvalError(Exception):
    """A schema that cannot be evaluated on this value (the message completes "the schema has a …")."""


class SchemaRefError(SchemaEvalError):
    """A ``$ref`` that does not resolve inside its own schema (remote references are never fetched)."""


def _search(pattern: str, text: str) -> bool:
    """``pattern`` searched in ``text`` with a time limit (a backtracking pattern never hangs the run)."""
    import regex  # `re` with a time limit per search, as `nika:grep` uses it

    try:
        return regex.search(pattern, text, timeout=PATTERN_BUDGET_S) is not None
    except TimeoutError:
        raise SchemaEvalError(
            f"`pattern` {pattern!r} that took over {PATTERN_BUDGET_S:g} s on one value"
            " (nested quantifiers such as `(a+)+` backtrack without end)"
        ) from None
    except regex.error as exc:
        raise SchemaEvalError(f"`pattern` {pattern!r} that is not a valid regex: {exc}") from None


def _pattern(validator: Any, patrn: str, instance: Any, schema: Any) -> Any:
    from jsonschema.exceptions import ValidationError

    if validator.is_type(instance, "string") and not _search(patrn, instance):
        yield ValidationError(f"{instance!r} does not match {patrn!r}")


def _pattern_properties(validator: Any, properties: dict[str, Any], instance: Any, schema: Any) -> Any:
    if not validator.is_type(instance, "object"):
        return
    for patrn, subschema in properties.items():
        for k, v in instance.items():
            if _search(patrn, k):
                yield from validator.descend(v, subschema, path=k, schema_path=patrn)


def validator(schema: Any) -> Any:
    """A checked validator for ``schema`` (its ``$schema`` dialect, 2020-12 otherwise); raises
    ``jsonschema.SchemaError`` for a schema that is not valid JSON Schema."""
    import jsonschema
    from referencing import Registry

    cls = jsonschema.validators.validator_for(schema, default=jsonschema.Draft202012Validator)
    cls.check_schema(schema)
    if "pattern" in cls.VALIDATORS:
        cls = _bounded(cls)
    # `Registry()` has no retriever: resolving any URI it does not hold raises `Unresolvable`.
    return cls(schema, registry=Registry())


def _bounded(cls: Any) -> Any:
    """``cls`` with `pattern` and `patternProperties` searched under a time limit."""
    import jsonschema

    return jsonschema.validators.extend(cls, {"pattern": _pattern, "patternProperties": _pattern_properties})


def iter_errors(schema: Any, value: Any) -> list[Any]:
    """Every validation error of ``value`` (``SchemaRefError`` for an unresolvable ``$ref``)."""
    from referencing.exceptions import Unresolvable

    try:
        return list(validator(schema).iter_errors(value))
    except Unresolvable as exc:
        raise SchemaRefError(
            f"`$ref` {_ref(exc)} cannot be resolved (references outside the schema are never fetched)"
        ) from None


def first_error(schema: Any, value: Any) -> Any | None:
    """The most relevant validation error, as ``jsonschema.validate`` would raise it, or ``None``."""
    from jsonschema.exceptions import best_match

    return best_match(iter_errors(schema, value))


class Problem(NamedTuple):
    """Why a value does not fit a schema: ``text`` is one line, ``path`` where the value failed
    (empty when the schema itself is at fault: ``in_schema``)."""

    text: str
    path: tuple[Any, ...] = ()
    in_schema: bool = False


def problem(schema: Any, value: Any, *, subject: str, top: str, strict: bool = True) -> Problem | None:
    """Why ``value`` does not fit ``schema``, or ``None`` when it fits.

    A validation failure reads "at PATH: message" (``top`` names the empty path). A schema that
    cannot be evaluated reads "<subject> has a …"; one that is not JSON Schema at all reads
    "<subject> is not a valid JSON Schema: …", or is let through (``None``) when not ``strict``.
    """
    import jsonschema

    try:
        exc = first_error(schema, value)
    except jsonschema.SchemaError as e:
        return Problem(f"{subject} is not a valid JSON Schema: {e.message}", in_schema=True) if strict else None
    except SchemaEvalError as e:
        return Problem(f"{subject} has a {e}", in_schema=True)
    if exc is None:
        return None
    where = "/".join(str(p) for p in exc.absolute_path) or top
    return Problem(f"at {where}: {exc.message}", tuple(exc.absolute_path))


def problem_at(schema: Any, value: Any, *, subject: str, top: str, strict: bool = True) -> str | None:
    """:func:`problem`'s text alone."""
    found = problem(schema, value, subject=subject, top=top, strict=strict)
    return None if found is None else found.text


def _ref(exc: Exception) -> str:
    ref = getattr(exc, "ref", None)
    return f"`{ref}`" if isinstance(ref, str) else str(exc)
