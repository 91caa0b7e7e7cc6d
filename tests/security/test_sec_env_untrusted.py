"""Untrusted values never set where a child loads code from (NEP-0005 laws 3 and 6, spec 10
integrity).

* the dangerous-name floor is a documented class list (checker/contracts/effects.toml
  `[env.floor.*]`), each class tested here with a name no earlier floor held;
* a *locator* name (which program a bare name runs, where configuration is read, where traffic
  goes) takes an authored literal but never an untrusted value: refused at run (NIKA-SEC-004)
  and at check when the value is known (NIKA-AUTH-008), deferred and listed otherwise;
* a write grant that covers a configuration file a granted program reads is a check warning.
"""

from __future__ import annotations

import pytest

from checker.contracts import effects
from checker.engine.pipeline import compile_text
from checker.model.workflow import Regate
from runtime.verbs.exec import compose_env

# one name per floor class that the floor did not hold before this change
FLOOR = {
    "dynamic-linker": "DYLD_FALLBACK_LIBRARY_PATH",
    "shell-startup": "KSH_ENV",
    "field-splitting": "IFS",
    "interpreter-pre-exec": "PYTHONBREAKPOINT",
    "tool-command-hook": "CVS_RSH",
    "library-hook": "RESOLV_HOST_CONF",
}
LOCATOR = {
    "program-path": "CC",
    "home-and-config": "KUBECONFIG",
    "network-route": "ALL_PROXY",
}


def test_every_floor_class_is_tested_here() -> None:
    assert set(FLOOR) == set(effects.env_classes("floor"))
    assert set(LOCATOR) == set(effects.env_classes("locator"))


@pytest.mark.parametrize(("cls", "name"), sorted(FLOOR.items()))
def test_a_floor_class_name_never_reaches_a_child(cls: str, name: str) -> None:
    assert effects.env_floor_class(name) == cls
    assert effects.dangerous_env(name) and effects.dangerous_env(name.lower())
    env = compose_env((name,), {name: "/tmp/evil"}, {name: "/tmp/evil", "PATH": "/usr/bin"})
    assert name not in env


@pytest.mark.parametrize(("cls", "name"), sorted(LOCATOR.items()))
def test_a_locator_name_refuses_an_untrusted_value_only(cls: str, name: str) -> None:
    assert effects.env_locator_class(name) == cls
    assert effects.judge_env_value(name, untrusted=True) is not None
    assert effects.judge_env_value(name, untrusted=False) is None  # an authored value is the author's (law 6)
    assert effects.judge_env_value("MY_APP_LEVEL", untrusted=True) is None


@pytest.mark.parametrize("name", ["XDG_STATE_HOME", "GIT_NAMESPACE", "npm_config_userconfig", "PATH", "HOME"])
def test_the_prefix_and_runner_locators(name: str) -> None:
    assert effects.judge_env_value(name, untrusted=True) is not None


def test_run_refuses_an_untrusted_locator_and_keeps_an_authored_one(run, tmp_path) -> None:
    result = run(
        """\
        nika: v1
        workflow: { id: env-locator }
        permits: { exec: ["env"] }
        inputs:
          cfg: { type: string }
        tasks:
          untrusted:
            exec: { command: ["env"], env: { KUBECONFIG: "${{ inputs.cfg }}" } }
          authored:
            exec: { command: ["env"], env: { KUBECONFIG: "/etc/kube/reviewed" } }
        """,
        {"cfg": str(tmp_path / "attacker-config")},
    )
    bad, good = result.tasks["untrusted"], result.tasks["authored"]
    assert bad.status == "failure" and bad.error is not None and bad.error["code"] == "NIKA-SEC-004"
    assert "KUBECONFIG" in bad.error["message"]
    assert good.status == "success" and "KUBECONFIG=/etc/kube/reviewed" in (good.output or "")


_CHECKED = """\
nika: v1
workflow: {{ id: env-check }}
permits: {{ exec: ["make"] }}
inputs:
  cc: {{ type: string{default} }}
tasks:
  build:
    exec: {{ command: ["make"], env: {{ CC: "${{{{ inputs.cc }}}}" }} }}
"""


def test_check_refuses_a_known_untrusted_locator_and_defers_an_unknown_one() -> None:
    known = compile_text(_CHECKED.format(default=', default: "/tmp/x/cc"'), "wf.nika.yaml", ".")
    assert [d.code for d in known.diagnostics if d.is_error] == ["NIKA-AUTH-008"]
    unknown = compile_text(_CHECKED.format(default=""), "wf.nika.yaml", ".")
    assert unknown.diagnostics == ()  # deferred: no finding; the certificate lists the re-gate
    assert unknown.regates == (Regate("build", "env", "env", "env.CC", "inputs.cc"),)
    assert known.regates == ()


@pytest.mark.parametrize(
    ("program", "glob", "config"),
    [
        ("hg", "**", ".hgrc"),
        ("cargo", "./.cargo/**", ".cargo/config.toml"),
        ("make", "./*", "Makefile"),
    ],
)
def test_a_write_grant_over_a_config_a_granted_program_reads_is_a_warning(program: str, glob: str, config: str) -> None:
    text = f"""\
nika: v1
workflow: {{ id: cfg-write }}
permits: {{ exec: ["{program}"], fs: {{ write: ["{glob}"] }} }}
tasks:
  t:
    exec: {{ command: ["{program}"] }}
"""
    got = compile_text(text, "wf.nika.yaml", ".")
    assert not [d for d in got.diagnostics if d.is_error]
    warned = [d for d in got.diagnostics if d.rule == "authority/002"]
    assert len(warned) == 1 and warned[0].severity.value == "warning" and config in warned[0].message
    narrow = text.replace(glob, "./out/**")
    assert not [d for d in compile_text(narrow, "wf.nika.yaml", ".").diagnostics if d.rule == "authority/002"]
