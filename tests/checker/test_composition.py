"""Composition (14): static targets, call-graph cycles and typed calls between files."""

from __future__ import annotations

from pathlib import Path

from checker.project.files import compile_path

CHILD = """\
nika: v1
workflow: {id: child}
permits: {exec: [echo]}
inputs:
  url: {type: string, required: true}
  depth: {type: {integer: {min: 1, max: 3}}, default: 1}
tasks:
  get:
    exec: {command: ["echo", "${{ inputs.url }}"]}
outputs:
  report: {value: "${{ tasks.get.output }}", type: string}
"""


def codes(tmp: Path, parent: str, **files: str) -> list[str]:
    for name, text in files.items():
        (tmp / name).write_text(text)
    (tmp / "parent.nika.yaml").write_text(parent)
    compiled, why = compile_path(str(tmp / "parent.nika.yaml"))
    assert compiled is not None, why
    return [d.code or "" for d in compiled.diagnostics if d.is_error]


def call(body: str) -> str:
    return f"nika: v1\nworkflow: {{id: parent}}\npermits: {{exec: [echo]}}\ntasks:\n  call:\n{body}"


def test_a_typed_contained_call_is_clean(tmp_path: Path) -> None:
    parent = call(
        '    invoke: {workflow: "./child.nika.yaml", args: {url: "https://x.test"}}\n'
        "    returns: {object: {report: string}}\n"
    )
    assert codes(tmp_path, parent, **{"child.nika.yaml": CHILD}) == []


def test_templated_and_unpinned_targets(tmp_path: Path) -> None:
    templated = call('    invoke: {workflow: "./${{ inputs.which }}.nika.yaml"}\n').replace(
        "tasks:", "inputs: {which: {type: string}}\ntasks:"
    )
    assert codes(tmp_path, templated) == ["NIKA-COMP-001"]
    assert codes(tmp_path, call('    invoke: {workflow: "registry:acme/audit"}\n')) == ["NIKA-COMP-001"]
    assert codes(tmp_path, call('    invoke: {workflow: "registry:acme/audit@1.2.0"}\n')) == []


def test_self_launch_and_two_file_cycle(tmp_path: Path) -> None:
    assert codes(tmp_path, call('    invoke: {workflow: "./parent.nika.yaml"}\n')) == ["NIKA-COMP-003"]
    back = call('    invoke: {workflow: "./parent.nika.yaml"}\n').replace("id: parent", "id: back")
    assert codes(tmp_path, call('    invoke: {workflow: "./back.nika.yaml"}\n'), **{"back.nika.yaml": back}) == [
        "NIKA-COMP-003"
    ]


def test_args_must_fit_the_child_inputs(tmp_path: Path) -> None:
    child = {"child.nika.yaml": CHILD}
    wrong_type = call('    invoke: {workflow: "./child.nika.yaml", args: {url: 42}}\n')
    assert codes(tmp_path, wrong_type, **child) == ["NIKA-COMP-004"]
    out_of_range = call('    invoke: {workflow: "./child.nika.yaml", args: {url: "u", depth: 9}}\n')
    assert codes(tmp_path, out_of_range, **child) == ["NIKA-COMP-004"]
    unknown = call('    invoke: {workflow: "./child.nika.yaml", args: {url: "u", uri: "v"}}\n')
    assert codes(tmp_path, unknown, **child) == ["NIKA-COMP-004"]
    missing = call('    invoke: {workflow: "./child.nika.yaml", args: {depth: 2}}\n')
    assert codes(tmp_path, missing, **child) == ["NIKA-COMP-004"]
    templated = call('    invoke: {workflow: "./child.nika.yaml", args: {url: "${{ inputs.u }}"}}\n').replace(
        "tasks:", "inputs: {u: {type: string}}\ntasks:"
    )
    assert codes(tmp_path, templated, **child) == []


def test_outputs_must_fit_returns(tmp_path: Path) -> None:
    parent = call(
        '    invoke: {workflow: "./child.nika.yaml", args: {url: "u"}}\n    returns: {object: {report: integer}}\n'
    )
    assert codes(tmp_path, parent, **{"child.nika.yaml": CHILD}) == ["NIKA-COMP-004"]


def test_a_child_may_not_exceed_the_parent_boundary(tmp_path: Path) -> None:
    child = {"child.nika.yaml": CHILD}
    call_text = '    invoke: {workflow: "./child.nika.yaml", args: {url: "u"}}\n'
    assert codes(tmp_path, call(call_text).replace("permits: {exec: [echo]}", "permits: {exec: [ls]}"), **child) == [
        "NIKA-COMP-002"
    ]
    absent = call(call_text).replace("permits: {exec: [echo]}\n", "")
    assert codes(tmp_path, absent, **child) == ["NIKA-COMP-002"]


def test_a_missing_child_is_comp_001_as_at_run(tmp_path: Path) -> None:
    """Spec 14 law 1: the callee must be resolvable before the run; a child that exists nowhere
    is NIKA-COMP-001, the code `nika run` refuses the call with (tests/runtime/test_run_command)."""
    assert codes(tmp_path, call('    invoke: {workflow: "./nowhere.nika.yaml"}\n')) == ["NIKA-COMP-001"]


def test_a_child_resolves_from_the_working_directory_first(tmp_path: Path, monkeypatch) -> None:
    """Spec 02 §Agent Skills (Resolution): relative paths resolve from the working directory,
    like every other relative path in the language. Checked from the project root,
    `flows/parent` naming `./child.nika.yaml` is judged against the root's child (whose input
    the literal argument misfits: NIKA-COMP-004), not the well-fitting one beside the parent;
    and a path relative to the root (`flows/child.nika.yaml`) is found at all."""
    (tmp_path / "flows").mkdir()
    (tmp_path / "flows" / "child.nika.yaml").write_text(CHILD)
    (tmp_path / "child.nika.yaml").write_text(CHILD.replace("url: {type: string", "url: {type: integer"))
    monkeypatch.chdir(tmp_path)
    near = call('    invoke: {workflow: "./child.nika.yaml", args: {url: "https://x.test"}}\n')
    (tmp_path / "flows" / "near.nika.yaml").write_text(near)
    compiled, _ = compile_path("flows/near.nika.yaml")
    assert compiled is not None and [d.code for d in compiled.diagnostics if d.is_error] == ["NIKA-COMP-004"]
    rooted = call('    invoke: {workflow: "flows/child.nika.yaml", args: {url: 3}}\n')
    (tmp_path / "flows" / "rooted.nika.yaml").write_text(rooted)
    compiled, _ = compile_path("flows/rooted.nika.yaml")
    assert compiled is not None and [d.code for d in compiled.diagnostics if d.is_error] == ["NIKA-COMP-004"]


def test_a_nul_in_the_child_path_is_a_finding_not_a_crash(tmp_path: Path) -> None:
    """Spec 14 §form: the target must be a resolvable file path; a NUL byte can name no file, so
    the target is malformed (NIKA-COMP-001 at the path) instead of an internal error."""
    assert codes(tmp_path, call('    invoke: {workflow: "./a\\0b.nika.yaml"}\n')) == ["NIKA-COMP-001"]


def test_the_missing_child_code_is_registered_for_both_phases() -> None:
    """A missing child is left to the run, which fails with NIKA-COMP-001: the registry and
    `nika explain` must say the code happens at check and at run."""
    import io
    from contextlib import redirect_stdout

    from checker.core.codes import lookup
    from nika.commands.explain import explain

    assert lookup("NIKA-COMP-001").phase == "both"
    out = io.StringIO()
    with redirect_stdout(out):
        explain("NIKA-COMP-001")
    assert "phase: both" in out.getvalue() and "missing" in out.getvalue()
