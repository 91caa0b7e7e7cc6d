"""The one way the runtime evaluates a user JSON Schema (``nika:validate``, ``infer.schema``,
``agent.schema``, MCP tool input schemas).

Every validator is built on an empty ``referencing`` registry with no retriever, so a ``$ref``
reaches only the schema it is written in: an ``http://``, ``https://`` or ``file://`` reference
is never fetched or opened (a URL-reaching evaluation would be a ``net``/``fs`` effect outside
every grant, spec 10 §net and 01 §permits). Such a reference fails as ``Unresolvable``, which
each caller reports as its own typed failure.
"""

from __future__ import annotations

from typing import Any


class SchemaRefError(Exception):
    """A ``$ref`` that does not resolve inside its own schema (remote references are never fetched)."""


def validator(schema: Any) -> Any:
    """A checked validator for ``schema`` (its ``$schema`` dialect, 2020-12 otherwise); raises
    ``jsonschema.SchemaError`` for a schema that is not valid JSON Schema."""
    import jsonschema
    from referencing import Registry

    cls = jsonschema.validators.validator_for(schema, default=jsonschema.Draft202012Validator)
    cls.check_schema(schema)
    # `Registry()` has no retriever: resolving any URI it does not hold raises `Unresolvable`.
    return cls(schema, registry=Registry())


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


def _ref(exc: Exception) -> str:
    ref = getattr(exc, "ref", None)
    return f"`{ref}`" if isinstance(ref, str) else str(exc)
