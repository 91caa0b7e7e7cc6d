"""The code registry (checker/core/codes.toml): shape, vocabulary and lookups."""

from __future__ import annotations

import re

import pytest

from checker.core.codes import (
    CATEGORIES,
    CODE_RE,
    lints,
    lookup,
    lookup_lint,
    namespace_of,
    nearest,
    registry,
)
from checker.core.diagnostics import Severity

PHASES = {"check", "run", "both", "editor"}  # editor: decided by the language server only

# A sentence ends with . ! or ? followed by whitespace or the end of the prose.
SENTENCE_END = re.compile(r"[.!?](?=\s|$)")

# The namespaces that may appear: 05's table minus the unused REG, plus AUTH, DEFAULT, VALUES
# and DRIFT from the diagnostics registry, and IMPL for our own: NIKA-IMPL-001 (a checker crash)
# and NIKA-IMPL-002 (a feature this build does not carry yet).
NAMESPACES = {
    "NIKA-YAML", "NIKA-PARSE", "NIKA-DAG", "NIKA-VAR", "NIKA-TYPE", "NIKA-INFER", "NIKA-EXEC",
    "NIKA-INVOKE", "NIKA-AGENT", "NIKA-PROVIDER", "NIKA-BUILTIN", "NIKA-MCP", "NIKA-SEC",
    "NIKA-TIMEOUT", "NIKA-CANCEL", "NIKA-COMP", "NIKA-DECIDE", "NIKA-PORT", "NIKA-POLICY",
    "NIKA-ASSERT", "NIKA-LOCK", "NIKA-AUTH", "NIKA-VALUES", "NIKA-DEFAULT", "NIKA-DRIFT", "NIKA-IMPL",
}  # fmt: skip

# Retired, proposed-only or unsettled at the pin: never registered.
NOT_REGISTERED = [
    "NIKA-PARSE-015", "NIKA-PARSE-016", "NIKA-DAG-003", "NIKA-DRIFT-002",
    "NIKA-AUTH-001", "NIKA-AUTH-002", "NIKA-AUTH-003", "NIKA-AUTH-004", "NIKA-AUTH-005",
    "NIKA-AUTH-011", "NIKA-GATE-001", "NIKA-GUAR-001", "NIKA-OUT-001", "NIKA-TEMPORAL-001",
    "NIKA-REG-004", "NIKA-REG-008", "NIKA-RUN-1704", "NIKA-PARSE-WHEN-001",
]  # fmt: skip

LINT_RULES = {
    *(f"one-obvious-way/{n:03d}" for n in (2, 3, 4, 5, 6, 7, 9, 10, 11, 12)),
    *(f"native-first/{n:03d}" for n in range(1, 6)),
    "suppression/unused",
    "suppression/invalid",
    "build/unavailable",  # ours: a feature this build does not implement yet (issue 29)
    "permits/001",  # ours: a URL written where `permits.net.http` takes a host (issue 39)
    "const/001",  # ours: a `const:` object with `type` and `default` but no `value` (issue 39)
    "workspace/001",  # ours: the language server does not follow a file outside the workspace (issue 28)
    "catalog/capability",  # ours: a task asks a catalogued model for what it lacks (issue 40)
}

CODES = sorted(registry())
RULES = sorted(lints())


def _prose(teaching: str) -> str:
    """The explanatory paragraph, without the example pair."""
    return re.split(r"\n(?:Refused|Flagged):\n", teaching, maxsplit=1)[0]


def test_the_registry_loads_with_every_code_and_lint():
    assert len(CODES) == 177  # NIKA-AGENT-OUTPUT-001 is ours (issue 40)
    # a deferred re-gate is no finding: the certificate lists it (`effects.dynamic`), so the
    # authority family keeps only the config-write warning
    assert set(RULES) == LINT_RULES | {"authority/002"}


@pytest.mark.parametrize("code", CODES)
def test_code_row_is_well_formed(code):
    info = lookup(code)
    assert info.code == code
    assert CODE_RE.match(code), code
    assert info.namespace in NAMESPACES
    assert info.category in CATEGORIES
    assert info.phase in PHASES
    title = info.title
    assert title and title[0].isupper() and not title.endswith("."), title
    assert len(title) <= 60, title


@pytest.mark.parametrize("code", CODES)
def test_code_teaching_explains_and_shows_an_example_pair(code):
    info = lookup(code)
    prose = _prose(info.teaching)
    assert prose.strip()
    assert len(SENTENCE_END.findall(prose)) >= 2, f"{code}: teaching needs at least two sentences"
    error = info.severity is Severity.ERROR
    labels = ("Refused:", "Accepted:") if error else ("Flagged:", "Preferred:")
    for label in labels:
        assert f"\n{label}\n" in info.teaching, f"{code}: missing {label!r}"


def test_every_code_is_an_error_except_the_drift_hint():
    severities = {code: lookup(code).severity for code in CODES}
    assert severities.pop("NIKA-DRIFT-001") is Severity.HINT
    assert set(severities.values()) == {Severity.ERROR}


@pytest.mark.parametrize("code", NOT_REGISTERED)
def test_retired_and_unsettled_codes_are_absent(code):
    assert code not in registry()


@pytest.mark.parametrize(
    ("code", "category", "phase"),
    [
        ("NIKA-YAML-004", "parse_error", "check"),
        ("NIKA-PARSE-003", "parse_error", "check"),
        ("NIKA-VAR-001", "variable_error", "both"),
        ("NIKA-VAR-003", "validation_error", "check"),
        ("NIKA-INFER-001", "provider_error", "run"),
        ("NIKA-BUILTIN-FETCH-001", "network_error", "run"),
        ("NIKA-BUILTIN-WAIT-003", "validation_error", "both"),  # "validated at parse time"; a computed bound at run
        ("NIKA-PROVIDER-001", "provider_error", "run"),
        ("NIKA-PROVIDER-002", "validation_error", "both"),  # a literal model at check, a computed one at run
        ("NIKA-CANCEL-001", "cancelled", "run"),
        ("NIKA-IMPL-001", "internal_error", "both"),
    ],
)
def test_spot_checks_against_the_spec_tables(code, category, phase):
    info = lookup(code)
    assert (info.category, info.phase) == (category, phase)


def test_builtin_sub_namespaces_share_the_builtin_namespace():
    assert namespace_of("NIKA-BUILTIN-JSON_MERGE_PATCH-001") == "NIKA-BUILTIN"
    assert lookup("NIKA-BUILTIN-IMAGE_GENERATE-007").namespace == "NIKA-BUILTIN"


@pytest.mark.parametrize("rule", RULES)
def test_lint_row_is_well_formed(rule):
    info = lookup_lint(rule)
    assert info.rule == rule
    # the suppression bookkeeping rules and the const shape are hints, the editor's workspace note
    # and the build's missing features are information; every spec lint is a warning
    hints = {"suppression": Severity.HINT, "const": Severity.HINT}
    want = {**hints, "workspace": Severity.INFO, "build": Severity.INFO}.get(rule.split("/")[0], Severity.WARNING)
    assert info.severity is want
    assert info.phase in PHASES
    assert info.category is None or info.category in CATEGORIES
    assert info.title[0].isupper() and not info.title.endswith(".")
    prose = _prose(info.teaching)
    assert len(SENTENCE_END.findall(prose)) >= 2, f"{rule}: teaching needs at least two sentences"
    assert "\nFlagged:\n" in info.teaching and "\nPreferred:\n" in info.teaching


def test_nearest_suggests_the_intended_code():
    assert nearest("NIKA-DAG-01")[0] == "NIKA-DAG-001"
    assert "NIKA-DAG-001" in nearest("dag-001")


def test_unknown_lookups_raise_key_error():
    with pytest.raises(KeyError):
        lookup("NIKA-DAG-999")
    with pytest.raises(KeyError):
        lookup("NIKA-PARSE-015")
    with pytest.raises(KeyError):
        lookup_lint("one-obvious-way/001")
