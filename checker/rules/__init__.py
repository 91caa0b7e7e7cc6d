"""The rule registry: an explicit, ordered tuple. One module per rule family.

A rule is a plain function ``(RuleContext) -> Iterable[Diagnostic]``; it keeps no state between
calls. The structural NIKA-PARSE findings come from the compiler, the NIKA-YAML profile from the
YAML layer; everything that needs the whole model runs here, in this order.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

from checker.core.diagnostics import Diagnostic
from checker.rules import (
    authority,
    availability,
    blocklist,
    composition,
    constants,
    dag,
    decisions,
    drift,
    entropy,
    expr_types,
    fanout,
    jq,
    lint_native,
    lint_obvious,
    literal_types,
    media,
    migrations,
    model_caps,
    references,
    secrets,
    skills,
    tools,
    types,
)
from checker.rules import trifecta as flows
from checker.rules import workflow_policy as policy
from checker.rules.support.context import RuleContext

Rule = Callable[[RuleContext], Iterable[Diagnostic]]

RULES: tuple[Rule, ...] = (
    migrations.check_depends_on,
    references.check_expressions,
    literal_types.check_literal_expressions,
    expr_types.check_typed_expressions,
    dag.check_after_targets,
    dag.check_cycles,
    dag.check_recovery,
    dag.check_dead_edges,
    dag.check_status_literals,
    fanout.check_for_each_shape,
    jq.check_jq,
    tools.check_invoke,
    tools.check_agent_tools,
    tools.check_models,
    model_caps.check_model_capabilities,
    types.check_type_exprs,
    types.check_contracts,
    types.check_defaults,
    constants.check_const_shapes,
    types.check_json_schemas,
    types.check_schema_paths,
    authority.check_bounds,
    authority.check_grant_spelling,
    authority.check_fit,
    authority.check_urls,
    authority.check_config_writes,
    blocklist.check_blocklist,
    secrets.check_secret_flow,
    flows.check_trifecta,
    flows.check_shared_writes,
    policy.check_policy,
    composition.check_composition,
    decisions.check_decisions,
    entropy.check_entropy_claim,
    drift.check_unused_declarations,
    media.check_charts,
    skills.check_skills,
    availability.check_unavailable,
    *lint_obvious.RULES,
    lint_native.check_native_first,
)

__all__ = ["RULES", "Rule", "RuleContext"]
