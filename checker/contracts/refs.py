"""The references a workflow makes to the tables: a literal ``nika:…`` tool id (NIKA-INVOKE-001), a
loop-only builtin invoked on its own, and a literal ``model: <provider>/<name>`` (NIKA-PROVIDER-002).
"""

from __future__ import annotations

import json

from checker.contracts.arg_scope import is_dynamic
from checker.contracts.load import contract, provider_table, retired_tools, tool_ids
from checker.contracts.model import MODEL_CODE, TOOL_CODE, Provider
from checker.core.codes import report
from checker.core.diagnostics import Diagnostic, Edit, Fix
from checker.core.source import Span
from checker.core.suggest import did_you_mean
from checker.parse.values import ScalarValue


def check_tool_ref(value: ScalarValue, *, task: str | None) -> list[Diagnostic]:
    """A literal ``nika:…`` tool id that is not one of the builtins → NIKA-INVOKE-001.

    Ids in other namespaces are left to the tool-id grammar; templates are left alone. A
    did-you-mean comes with a rename fix on the id's text (quotes excluded).
    """
    v = value.value
    if not isinstance(v, str) or not v.startswith("nika:") or is_dynamic(value) or v in tool_ids():
        return []
    retired = retired_tools()
    fixes: tuple[Fix, ...] = ()
    if v in retired:
        help = f"Use {retired[v]} instead."
    else:
        hit = did_you_mean(v, list(tool_ids()))
        help = f"Did you mean `{hit}`?" if hit else "Use one of the builtins listed by `nika catalog`."
        if hit:
            target = value.sub_span(0, len(value.raw)) if value.offsets else value.span
            fixes = (Fix(f"Change to `{hit}`", (Edit(target, hit),)),)
    return [
        report(
            TOOL_CODE,
            value.span,
            f"`{v}` is not a builtin; the `nika:` namespace holds a closed set of {len(tool_ids())} tools",
            help,
            task=task,
            fixes=fixes,
        )
    ]


def check_standalone_invoke(tool_id: str, *, task: str | None, anchor: Span) -> list[Diagnostic]:
    """A loop-only builtin (``nika:done``, ``nika:compose``) used from a plain ``invoke:``."""
    c = contract(tool_id)
    if c is None or not c.agent_only:
        return []
    return [
        report(
            f"{c.error_plane}-001",
            anchor,
            f"`{tool_id}` only works inside an `agent:` loop, not from an `invoke:` task",
            f'List it in an agent\'s `tools:` (e.g. `tools: ["{tool_id}"]`) instead of invoking it.',
            task=task,
        )
    ]


def _hint_provider(name: str) -> Provider | None:
    low = name.lower()
    for p in provider_table().values():
        if any(low.startswith(h) for h in p.name_hints):
            return p
    return None


def check_model_ref(value: ScalarValue, *, task: str | None) -> list[Diagnostic]:
    """A literal ``model:`` must be ``<provider>/<name>`` with one of the 17 provider ids.

    Only the first ``/`` splits; the name after it is passed through as written. A template
    (``${{ … }}``) is resolved at run time and skipped; non-strings are the schema's business.
    """
    v = value.value
    if not isinstance(v, str) or is_dynamic(value):
        return []
    provs = provider_table()
    prefix, sep, name = v.partition("/")

    def finding(span: Span, message: str, help: str, fixes: tuple[Fix, ...] = ()) -> list[Diagnostic]:
        return [report(MODEL_CODE, span, message, help, task=task, fixes=fixes)]

    colon_prefix, colon, colon_name = v.partition(":")
    if not sep and colon and colon_prefix in provs and colon_name:
        fixed = f"{colon_prefix}/{colon_name}"
        plain = value.span.end - value.span.start == len(value.raw)  # else written quoted: keep it so
        new_text = fixed if plain else json.dumps(fixed)
        return finding(
            value.span,
            f"`model: {v}` separates the provider with `:`; Nika writes `<provider>/<name>`",
            f"Write `{fixed}`.",
            (Fix(f"Change to `{fixed}`", (Edit(value.span, new_text),)),),
        )
    if not sep or not prefix:
        bare = name if not prefix else v
        if v in provs:
            example = provs[v].models[0] if provs[v].models else "<model>"
            return finding(
                value.span,
                f"`model: {v}` names a provider but no model",
                f"Add the model after a slash, e.g. `{v}/{example}`.",
            )
        hint = _hint_provider(bare)
        help = (
            f"Prefix it with its provider, e.g. `{hint.id}/{bare}`."
            if hint
            else "Write it as `<provider>/<name>`, e.g. `ollama/qwen3.5:9b` or `mock/echo`."
        )
        return finding(value.span, f"`model: {v}` has no provider prefix", help)
    if prefix in provs:
        if not name:
            return finding(
                value.span,
                f"`model: {v}` has no model name after the provider",
                f"Add the model name after `{prefix}/`.",
            )
        return []
    hit = did_you_mean(prefix, list(provs))
    if hit:
        help = f"Did you mean `{hit}/{name}`?"
    else:
        hint = _hint_provider(prefix)
        if hint:
            help = f"`{prefix}` looks like a model name; try `{hint.id}/{v}`."
        else:
            help = "Use one of the providers: " + ", ".join(provs) + "."
    return finding(
        value.sub_span(0, len(prefix)),
        f"`{prefix}` is not a known model provider",
        help,
    )
