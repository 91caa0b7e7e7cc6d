"""`nika check` judges a static decision bundle's laws (spec 11 §nika:decide): a literal path is
read like a child workflow, an inline template-free bundle as written; a dynamic or unreadable
bundle is left to the run."""

from __future__ import annotations

import contextlib
import copy
import json
import sys
from pathlib import Path

from checker.project.files import compile_path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "decide"))
from decide_fixtures import BUNDLE

from tests.checker.run_failures import is_run_failure

FLOW = """\
nika: v1
workflow: {{id: gate}}
permits: {{tools: ["nika:decide"], fs: {{read: ["./*.json"]}}}}
tasks:
  gate:
    invoke:
      tool: "nika:decide"
      args:
        bundle: {bundle}
        evidence: {evidence}
"""
GOOD_EVIDENCE = '{t: "2026", evidence: [{key: open_incidents, value: 1, source: pager, integrity: verified}]}'


def findings(tmp: Path, bundle: str, evidence: str = GOOD_EVIDENCE, file: dict | None = None, *, warned=False):
    if file is not None:
        (tmp / "b.json").write_text(json.dumps(file))
    (tmp / "gate.nika.yaml").write_text(FLOW.format(bundle=bundle, evidence=evidence))
    with contextlib.chdir(tmp):  # the bundle path resolves from the working directory (spec 02)
        compiled, why = compile_path("gate.nika.yaml")
    assert compiled is not None, why
    if warned:
        return compiled.source, [d for d in compiled.diagnostics if is_run_failure(d)]
    return compiled.source, [d for d in compiled.diagnostics if d.is_error]


def test_a_bundle_path_resolves_from_the_working_directory_only(tmp_path):
    """Spec 02 §Agent Skills (Resolution): relative paths resolve from the working directory.
    The bundle is read at run by `nika:decide` under `permits.fs`, from that directory, so the
    check reads it there too: a bad bundle beside the workflow, checked from elsewhere, is not
    the file the run would read (left to the run), and from the workflow's folder it is judged."""
    bad = copy.deepcopy(BUNDLE)
    bad["rules"]["dimensions"]["risk"]["terms"][0]["weight_bp"] = 0.25
    (tmp_path / "b.json").write_text(json.dumps(bad))
    (tmp_path / "gate.nika.yaml").write_text(FLOW.format(bundle='"./b.json"', evidence=GOOD_EVIDENCE))
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    with contextlib.chdir(elsewhere):
        compiled, _ = compile_path(str(tmp_path / "gate.nika.yaml"))
    assert compiled is not None and [d.code for d in compiled.diagnostics if d.is_error] == []
    assert [d.code for d in findings(tmp_path, '"./b.json"')[1]] == ["NIKA-DECIDE-001"]


def test_a_lawful_bundle_file_is_clean(tmp_path):
    assert findings(tmp_path, '"./b.json"', file=BUNDLE)[1] == []


def test_a_bundle_file_with_a_float_weight_is_decide_001_on_the_path(tmp_path):
    bad = copy.deepcopy(BUNDLE)
    bad["rules"]["dimensions"]["risk"]["terms"][0]["weight_bp"] = 0.25
    source, found = findings(tmp_path, '"./b.json"', file=bad)
    (d,) = found
    assert d.code == "NIKA-DECIDE-001" and "float" in d.message
    assert source.text[d.span.start : d.span.end] == '"./b.json"'


def test_static_evidence_that_misfits_is_a_decide_002_warning(tmp_path):
    """The evidence is the evaluation's input: its refusal is the run's (phase `run`), so the check
    warns that every run fails there and accepts the file; the bundle's own laws stay an error."""
    ev = '{t: "2026", evidence: [{key: open_incidents, value: "1", source: pager, integrity: verified}]}'
    assert findings(tmp_path, '"./b.json"', evidence=ev, file=BUNDLE)[1] == []
    (d,) = findings(tmp_path, '"./b.json"', evidence=ev, file=BUNDLE, warned=True)[1]
    assert d.code == "NIKA-DECIDE-002"


def test_not_json_is_decide_001(tmp_path):
    (tmp_path / "b.json").write_text("{oops")
    assert [d.code for d in findings(tmp_path, '"./b.json"')[1]] == ["NIKA-DECIDE-001"]


def test_dynamic_or_missing_bundles_are_left_to_the_run(tmp_path):
    for bundle in ('"./absent.json"', '"${{ inputs.which }}"'):
        assert not [d for d in findings(tmp_path, bundle)[1] if (d.code or "").startswith("NIKA-DECIDE")]


def test_an_inline_bundle_is_judged(tmp_path):
    bad = copy.deepcopy(BUNDLE)
    bad["fixtures"] = [f for f in bad["fixtures"] if f["class"] != "contradictory"]
    (d,) = findings(tmp_path, json.dumps(bad))[1]
    assert d.code == "NIKA-DECIDE-001" and "contradictory" in d.message
