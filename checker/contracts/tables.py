"""Per-tool argument contracts of the ``nika:*`` builtins and the provider table, as data: the
public face of the modules that hold them (``from checker.contracts import tables``).

The facts live in ``checker/contracts/builtins.toml`` and ``checker/contracts/providers.toml``
(the layout is documented at the top of each file). Where each part lives:

* :mod:`~checker.contracts.model` — the frozen data: :class:`ToolContract`, :class:`ArgSpec`,
  :class:`Rule`, :class:`Provider`, :class:`ExtractMode`, and the codes the checks report.
* :mod:`~checker.contracts.load` — the TOML loaded lazily, once; :func:`contract`, :func:`tool_ids`,
  :func:`providers` and the other lookups.
* :mod:`~checker.contracts.args_check` — :func:`check_tool_args` judges an ``invoke: {tool: "nika:…",
  args: …}`` on the model's values: shape, unknown and missing arguments, literal types and values;
  :mod:`~checker.contracts.arg_rules` the cross-argument rules, on the mapping of
  :mod:`~checker.contracts.arg_scope`.
* :mod:`~checker.contracts.refs` — :func:`check_tool_ref` and :func:`check_standalone_invoke` judge
  the tool id itself, :func:`check_model_ref` a literal ``model: <provider>/<name>``.
* :mod:`~checker.contracts.args_schema` — :func:`json_schema`, the JSON Schema of a builtin's
  arguments, for the workflow schema (``nika schema``) and the agent's tool definitions.
* :mod:`~checker.contracts.text` — how values, conditions and ranges read in messages and cards;
  :meth:`ToolContract.snippet` and :meth:`ToolContract.markdown` feed completion and hover.

Everything here is pure: values in, findings out. A value written as a ``${{ … }}`` template is
only known at run time, so every check on it stays silent.
"""

from __future__ import annotations

from checker.contracts.arg_scope import is_dynamic
from checker.contracts.args_check import check_tool_args
from checker.contracts.args_schema import json_schema
from checker.contracts.load import (
    contract,
    contracts,
    extract_modes,
    mock_models,
    provider_of,
    providers,
    retired_tools,
    tool_ids,
)
from checker.contracts.model import (
    ARG_CODE,
    DATA_DIR,
    MODEL_CODE,
    RULE_KINDS,
    SHAPE_CODE,
    TOOL_CODE,
    TRANSPORTS,
    TYPES,
    WIRES,
    ArgSpec,
    ExtractMode,
    Provider,
    Rule,
    ToolContract,
    iter_arg_specs,
)
from checker.contracts.refs import check_model_ref, check_standalone_invoke, check_tool_ref

__all__ = [
    "ARG_CODE",
    "DATA_DIR",
    "MODEL_CODE",
    "RULE_KINDS",
    "SHAPE_CODE",
    "TOOL_CODE",
    "TRANSPORTS",
    "TYPES",
    "WIRES",
    "ArgSpec",
    "ExtractMode",
    "Provider",
    "Rule",
    "ToolContract",
    "check_model_ref",
    "check_standalone_invoke",
    "check_tool_args",
    "check_tool_ref",
    "contract",
    "contracts",
    "extract_modes",
    "is_dynamic",
    "iter_arg_specs",
    "json_schema",
    "mock_models",
    "provider_of",
    "providers",
    "retired_tools",
    "tool_ids",
]
