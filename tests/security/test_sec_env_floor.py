"""The dangerous-name floor covers the glibc and TLS hook variables.

Spec 01 §permits env (NEP-0005): some names never pass to a child, whatever the grant says —
variables that make a child load code or write secrets on the side. `GCONV_PATH`,
`GLIBC_TUNABLES`, `SSLKEYLOGFILE`, `OPENSSL_CONF` belong to that class. The floor is ONE table
(checker/contracts/effects.toml), read by the checker and by the runtime.
"""

from __future__ import annotations

import pytest

from checker.contracts.effects import dangerous_env
from runtime.verbs.exec import compose_env

HOOKS = [
    "GCONV_PATH",
    "GLIBC_TUNABLES",
    "LOCPATH",
    "NLSPATH",
    "HOSTALIASES",
    "SSLKEYLOGFILE",
    "OPENSSL_CONF",
    "OPENSSL_ENGINES",
    "OPENSSL_MODULES",
    "LD_AUDIT",
    "MALLOC_TRACE",
]


@pytest.mark.parametrize("name", HOOKS)
def test_hook_names_are_on_the_one_floor(name: str) -> None:
    assert dangerous_env(name)


def test_hook_names_never_reach_a_child(run, tmp_path) -> None:
    """Passed through `permits.env` or set in `exec.env`, a hook name is stripped before the spawn."""
    engine = dict.fromkeys(HOOKS, "/tmp/evil") | {"PATH": "/usr/bin:/bin"}
    env = compose_env(tuple(HOOKS), {"SSLKEYLOGFILE": str(tmp_path / "keys.log")}, engine)
    assert not set(env) & set(HOOKS)
    result = run(
        f"""\
        nika: v1
        workflow: {{ id: hooks }}
        permits: {{ exec: ["env"] }}
        tasks:
          probe:
            exec:
              command: ["env"]
              env: {{ SSLKEYLOGFILE: "{tmp_path / "keys.log"}", GLIBC_TUNABLES: "glibc.malloc.check=3" }}
        """
    )
    out = result.tasks["probe"].output or ""
    assert "SSLKEYLOGFILE" not in out and "GLIBC_TUNABLES" not in out, result.tasks["probe"].error


def test_granting_a_hook_name_is_refused_at_check() -> None:
    """`permits.env: [SSLKEYLOGFILE]` is a dead grant the checker reports (NIKA-AUTH-009)."""
    from checker.engine.pipeline import compile_text

    src = (
        'nika: v1\nworkflow: { id: g }\npermits: { exec: ["true"], env: ["SSLKEYLOGFILE"] }\n'
        'tasks:\n  t:\n    exec: { command: ["true"] }\n'
    )
    codes = {d.code for d in compile_text(src, "g.nika.yaml", ".").diagnostics}
    assert "NIKA-AUTH-009" in codes
