"""The ``sarif`` format of ``nika check``: a SARIF 2.1.0 log for code-scanning services."""

from __future__ import annotations

import json
import re
from typing import TYPE_CHECKING, Any
from urllib.parse import quote

from checker.core.diagnostics import Severity
from nika.output._common import sorted_findings, source_of

if TYPE_CHECKING:
    from collections.abc import Mapping

    from checker.core.codes import CodeInfo, LintInfo
    from checker.core.diagnostics import Diagnostic
    from checker.core.source import SourceText, Span
    from checker.project.report import CheckRun

__all__ = ["SARIF_SCHEMA", "render", "rule_name", "sarif_log", "tool_version"]

SARIF_SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"
INFORMATION_URI = "https://nika.sh/"

_LEVEL = {
    Severity.ERROR: "error",
    Severity.WARNING: "warning",
    Severity.INFO: "note",
    Severity.HINT: "note",
}

# Characters kept as they are in artifact URIs: RFC 3986 unreserved, sub-delims, ':' '@' '/'.
_URI_SAFE = "/:@!$&'()*+,;=-._~"
_WORD = re.compile(r"[A-Za-z0-9]+")


def tool_version() -> str:
    """Installed version of the ``nika-tools`` distribution, ``0.0.0`` when not installed."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("nika-tools")
    except PackageNotFoundError:
        return "0.0.0"


def _registry() -> Mapping[str, CodeInfo]:
    """The code registry, or nothing when ``codes.toml`` is missing or unreadable."""
    try:
        from checker.core.codes import registry

        return registry()
    except (OSError, ValueError, KeyError, TypeError):
        return {}


def rule_name(text: str) -> str:
    """PascalCase name from a title or rule id: ``cycle in needs`` -> ``CycleInNeeds``."""
    return "".join(w[0].upper() + w[1:] for w in _WORD.findall(text))


def _uri(path: str) -> str:
    """The path as given, with forward slashes, percent-encoded only where a URI requires it."""
    return quote(path.replace("\\", "/"), safe=_URI_SAFE, errors="surrogateescape")  # a bad file-name byte: %XX


def _region(source: SourceText, span: Span) -> dict[str, int]:
    # Columns are 1-based code-point columns, exactly as in every other format; the run declares
    # this with ``columnKind: unicodeCodePoints``. ``endColumn`` is exclusive, as SARIF wants.
    start = source.line_col(span.start)
    end = source.line_col(max(span.end, span.start))
    return {
        "startLine": start.line,
        "startColumn": start.column,
        "endLine": end.line,
        "endColumn": end.column,
    }


def _location(uri: str, source: SourceText, span: Span) -> dict[str, Any]:
    return {
        "physicalLocation": {
            "artifactLocation": {"uri": uri},
            "region": _region(source, span),
        }
    }


def _info(d: Diagnostic, known: Mapping[str, CodeInfo]) -> CodeInfo | LintInfo | None:
    """The registry row behind a finding: its code's, else its lint rule's."""
    if d.code:
        return known.get(d.code)
    if d.rule:
        from checker.core.codes import lookup_lint

        try:
            return lookup_lint(d.rule)
        except KeyError:
            return None
    return None


def _rule(rule_id: str, d: Diagnostic, info: CodeInfo | LintInfo | None) -> dict[str, Any]:
    title = info.title if info is not None else rule_id
    rule: dict[str, Any] = {
        "id": rule_id,
        "name": rule_name(title) or rule_id,
        "shortDescription": {"text": title},
    }
    if info is not None and info.teaching:
        rule["fullDescription"] = {"text": info.teaching}
        rule["help"] = {"text": info.teaching}
    if d.docs_url:
        rule["helpUri"] = d.docs_url
    severity = info.severity if info is not None else d.severity
    rule["defaultConfiguration"] = {"level": _LEVEL[severity]}
    return rule


def _fixes(d: Diagnostic, uri: str, source: SourceText) -> list[dict[str, Any]]:
    """The finding's fixes as SARIF ``fix`` objects: a fix without edits has no SARIF form (an
    ``artifactChange`` needs a replacement) and a repeated fix is listed once (``fixes`` is a set)."""
    out: list[dict[str, Any]] = []
    for fix in d.fixes:
        if not fix.edits:
            continue
        entry = {
            "description": {"text": fix.title},
            "artifactChanges": [
                {
                    "artifactLocation": {"uri": uri},
                    "replacements": [
                        {"deletedRegion": _region(source, e.span), "insertedContent": {"text": e.new_text}}
                        for e in fix.edits
                    ],
                }
            ],
        }
        if entry not in out:
            out.append(entry)
    return out


def _result(d: Diagnostic, rule_id: str, index: int, uri: str, source: SourceText) -> dict[str, Any]:
    result: dict[str, Any] = {
        "ruleId": rule_id,
        "ruleIndex": index,
        "level": _LEVEL[d.severity],
        "message": {"text": d.full_message()},
        "locations": [_location(uri, source, d.span)],
    }
    if d.related:
        result["relatedLocations"] = [
            {"id": i, **_location(uri, source, lb.span), "message": {"text": lb.message}}
            for i, lb in enumerate(d.related)
        ]
    fixes = _fixes(d, uri, source)
    if fixes:
        result["fixes"] = fixes
    props: dict[str, Any] = {"category": d.category}
    if d.task:
        props["task"] = d.task
    result["properties"] = props
    return result


def sarif_log(
    run: CheckRun,
    *,
    codes: Mapping[str, CodeInfo] | None = None,
    version: str | None = None,
) -> dict[str, Any]:
    """The SARIF log as plain data.

    ``codes`` replaces the code registry and ``version`` the installed tool version; both exist
    so tests can pin the output.
    """
    known = _registry() if codes is None else codes
    rules: list[dict[str, Any]] = []
    index_of: dict[str, int] = {}
    results: list[dict[str, Any]] = []
    notifications: list[dict[str, Any]] = []

    def rule_index(d: Diagnostic, rule_id: str) -> int:
        """The index of ``rule_id`` in the rule table, added on its first finding."""
        index = index_of.get(rule_id)
        if index is None:
            index = index_of[rule_id] = len(rules)
            rules.append(_rule(rule_id, d, _info(d, known)))
        return index

    for report in run.reports:
        uri = _uri(report.path)
        if report.error is not None:
            notifications.append(
                {
                    "level": "error",
                    "message": {"text": report.error},
                    "locations": [{"physicalLocation": {"artifactLocation": {"uri": uri}}}],
                }
            )
            continue
        source = source_of(report)
        for d in sorted_findings(report):
            rule_id = d.code or d.rule or "nika"
            results.append(_result(d, rule_id, rule_index(d, rule_id), uri, source))
        for d, reason in report.suppressed:  # silenced in the source: kept, marked as suppressed
            rule_id = d.code or d.rule or "nika"
            suppression: dict[str, Any] = {"kind": "inSource"}
            if reason:
                suppression["justification"] = reason
            found = _result(d, rule_id, rule_index(d, rule_id), uri, source)
            results.append({**found, "suppressions": [suppression]})

    return _log(rules, results, notifications, tool_version() if version is None else version)


def _log(
    rules: list[dict[str, Any]], results: list[dict[str, Any]], notifications: list[dict[str, Any]], version: str
) -> dict[str, Any]:
    invocation: dict[str, Any] = {"executionSuccessful": not notifications}
    if notifications:
        invocation["toolExecutionNotifications"] = notifications
    return {
        "$schema": SARIF_SCHEMA,
        "version": "2.1.0",
        "runs": [
            {
                "tool": {
                    "driver": {
                        "name": "nika",
                        "informationUri": INFORMATION_URI,
                        "version": version,
                        "rules": rules,
                    }
                },
                "invocations": [invocation],
                "columnKind": "unicodeCodePoints",
                "results": results,
            }
        ],
    }


def render(
    run: CheckRun,
    *,
    codes: Mapping[str, CodeInfo] | None = None,
    version: str | None = None,
) -> str:
    """The SARIF log as indented JSON followed by a newline."""
    return json.dumps(sarif_log(run, codes=codes, version=version), ensure_ascii=False, indent=2) + "\n"
