"""The zero-false-refusal gate: nothing the spec calls valid is refused by `nika check`.

A false refusal is the worst checker bug: an author who follows the spec is blocked. Every source
of workflows the spec (or this project) calls valid is checked in process, and none may carry an
error finding:

* the spec's static fixtures marked ``"valid": true`` and its ``yaml-profile/valid`` files;
* every template (``templates/**``) and example of ``../shared/nika-spec``;
* the spec's runtime fixtures: a workflow a run executes is valid at check, unless the expected
  result says the run is ``refused``; the same for the annotated conformance pillars, unless the
  header expects a check-time refusal;
* this project's examples, ``nika init``/``new`` templates, the ``ok`` cases and the workflows that
  fail by design at run (``tests/checker/cases/runfail/``), and a corpus of spec-style workflows
  of our own (``tests/checker/valid/``), each carrying the spec sentence it follows.

The spec half skips, visibly, when ``../shared/nika-spec`` is not there; the project half stands
without it. (The spec's prose examples are judged by ``tests/checker/test_spec_examples.py``.)
"""

from __future__ import annotations

import contextlib
import json
import re
from pathlib import Path

import pytest

from checker.project.files import compile_path

ROOT = Path(__file__).resolve().parents[1]
SPEC = ROOT.parent / "shared" / "nika-spec"
needs_spec = pytest.mark.skipif(not SPEC.is_dir(), reason=f"the pinned spec is not at {SPEC}")
PILLARS = ("envelope", "variables", "verbs", "errors", "dag", "composition", "redteam")
# Spec files the spec's own normative text refuses (the file is older than the law that decides
# it), with the sentence followed and the code it gives. Each entry must stay refused with exactly
# that code, so the list stays true and can only shrink.
REFUSED_BY_LAW = {
    "conformance/yaml-profile/valid/unicode-nfc.nika.yaml": (
        "NIKA-AUTH-006",
        "NEP-0003 / 05: an absent `permits:` block - DeclaredPermits is empty, so every effect the body "
        "requires is refused before any token (its `exec:` runs with no block; the sibling valid fixtures "
        "were given `permits: {exec: [echo]}`)",
    ),
}


def _errors(path: Path) -> list[str]:
    """The error findings of ``path``, checked from its own folder (relative paths resolve from the
    working directory, spec 02, as the suite's runner starts there)."""
    with contextlib.chdir(path.parent):
        compiled, why = compile_path(path.name)
    assert compiled is not None, why
    return [f"{d.code or d.rule} {d.message[:100]}" for d in compiled.diagnostics if d.is_error]


def _header(path: Path) -> str:
    for line in path.read_text(encoding="utf-8", errors="replace").splitlines()[:40]:
        m = re.match(r"\s*#\s*Expected:\s*(.*)", line)
        if m:
            return m.group(1).strip()
    return ""


def _spec_valid() -> list[Path]:
    if not SPEC.is_dir():
        return []
    conf = SPEC / "conformance"
    out = [p.parent / "input.yaml" for p in conf.rglob("expected.json") if json.loads(p.read_text()).get("valid")]
    out += sorted((conf / "yaml-profile" / "valid").glob("*.nika.yaml"))
    out += sorted((SPEC / "templates").rglob("*.nika.yaml")) + sorted((SPEC / "examples").glob("*.nika.yaml"))
    for exp in conf.rglob("expected-run.json"):
        if json.loads(exp.read_text()).get("workflow_state") != "refused":
            out += [exp.parent / "input.nika.yaml"]
    for pillar in PILLARS:
        for p in sorted((conf / pillar).glob("*.nika.yaml")):
            h = _header(p)
            refused_at_check = re.search(r"at CHECK|at parse|check-reject", h, re.I)
            if h and not refused_at_check and (re.search(r"exit 0|check-pass|DIVERGENCE", h, re.I) or " at RUN" in h):
                out.append(p)
    # the one example the upstream suite keeps red on purpose (NEP-0002's trifecta witness)
    return sorted(p for p in out if p.is_file() and p.name != "release-radar.nika.yaml")


def _project_valid() -> list[Path]:
    cases = ROOT / "tests" / "checker" / "cases"
    out = sorted((ROOT / "examples").glob("*.nika.yaml")) + sorted((ROOT / "nika" / "templates").glob("*.nika.yaml"))
    out += sorted(p for p in cases.rglob("*.nika.yaml") if "ok" in p.relative_to(cases).parts)
    out += sorted((cases / "runfail").glob("*.nika.yaml")) + sorted(
        (ROOT / "tests" / "checker" / "valid").glob("*.yaml")
    )
    return out


def _id(p: Path) -> str:
    for base in (SPEC, ROOT):
        with contextlib.suppress(ValueError):
            return str(p.relative_to(base))
    return str(p)


@needs_spec
@pytest.mark.parametrize("path", _spec_valid(), ids=_id)
def test_what_the_spec_calls_valid_is_not_refused(path: Path) -> None:
    law = REFUSED_BY_LAW.get(_id(path))
    if law is not None:
        assert [e.split()[0] for e in _errors(path)] == [law[0]], law[1]
        return
    assert _errors(path) == []


@pytest.mark.parametrize("path", _project_valid(), ids=_id)
def test_what_the_project_calls_valid_is_not_refused(path: Path) -> None:
    assert _errors(path) == []


def test_the_gate_sees_its_sources() -> None:
    """The gate cannot pass for want of input: the project half always has its corpus."""
    found = _project_valid()
    assert len(found) >= 60
    assert any("runfail" in p.parts for p in found) and any(p.parent.name == "valid" for p in found)
    if SPEC.is_dir():
        spec = _spec_valid()
        assert any("templates" in p.parts for p in spec) and any(p.name == "input.nika.yaml" for p in spec)


def test_the_gate_would_see_a_false_refusal(tmp_path: Path) -> None:
    """The detector itself: a workflow the check refuses is reported by `_errors`."""
    p = tmp_path / "w.nika.yaml"
    p.write_text('nika: v1\nworkflow: { id: w }\ntasks:\n  t:\n    infer: { prompt: "${{ const.nope }}" }\n')
    assert [e.split()[0] for e in _errors(p)] == ["NIKA-VAR-001"]
