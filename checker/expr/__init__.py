"""The ``${{ … }}`` template surface and the ``cel-subset/0.1`` expression language.

Shared by the checker (static rules), the language server (positions, hovers) and the runtime
(evaluation and rendering). Only the standard library is used.
"""

from __future__ import annotations

from checker.expr.lexer import ExprError, Token, tokenize
from checker.expr.nodes import (
    Binary,
    Call,
    Expr,
    Ident,
    Index,
    ListLit,
    Literal,
    Member,
    MethodCall,
    Ternary,
    Unary,
    children,
    walk,
)
from checker.expr.parser import parse_expression
from checker.expr.refs import (
    STATUS_VOCABULARY,
    Ref,
    as_ref,
    is_boolean_shaped,
    is_status_ref,
    references,
    status_comparisons,
)
from checker.expr.template import Island, Template, has_island, legacy_mustache_spans, parse_template

_LAZY = {"EvalError", "evaluate", "evaluate_bool", "render_string", "render_template"}


def __getattr__(name: str) -> object:
    """The evaluator loads on first use: ``nika check`` parses expressions but never runs them."""
    if name in _LAZY:
        import importlib

        module = importlib.import_module("checker.expr.evaluate")
        # importing the submodule bound `checker.expr.evaluate` to the module: rebind the names
        globals().update({n: getattr(module, n) for n in _LAZY})
        return globals()[name]
    raise AttributeError(f"module 'checker.expr' has no attribute {name!r}")


__all__ = [
    "STATUS_VOCABULARY",
    "Binary",
    "Call",
    "EvalError",
    "Expr",
    "ExprError",
    "Ident",
    "Index",
    "Island",
    "ListLit",
    "Literal",
    "Member",
    "MethodCall",
    "Ref",
    "Template",
    "Ternary",
    "Token",
    "Unary",
    "as_ref",
    "children",
    "evaluate",
    "evaluate_bool",
    "has_island",
    "is_boolean_shaped",
    "is_status_ref",
    "legacy_mustache_spans",
    "parse_expression",
    "parse_template",
    "references",
    "render_string",
    "render_template",
    "status_comparisons",
    "tokenize",
    "walk",
]
