"""``nika secrets``: manage the local nika-vault (spec 01 §secrets, ``source: vault``) and see
whether a workflow's declared secrets resolve on this machine. No value is ever taken from the
command line (it would land in shell history) and none is printed, except by ``get`` on request.

- ``set KEY``: the value from standard input (a prompt without echo on a terminal).
- ``get KEY``: print the value (for a pipe: ``nika secrets get prod/api | …``).
- ``list``: the vault's keys; ``list --workflow FILE``: each declared secret, its source and
  reference, and whether it resolves (the reason when it does not).
- ``rm KEY``: forget the key.

Exit status: 0 done; 1 a key or secret is missing; 2 the vault cannot be opened or the
workflow cannot be read.
"""

from __future__ import annotations

import getpass
import os
import sys
from pathlib import Path
from typing import Any, TextIO


def register(sub: Any) -> None:
    sec = sub.add_parser(
        "secrets",
        help="manage the local nika-vault; list a workflow's secrets and whether each resolves (never values)",
        description="Values are read from standard input, never the command line (NIKA_VAULT_FILE: a file vault).",
    )
    sec.add_argument("secrets_action", choices=("set", "get", "list", "rm"), metavar="ACTION", help="set|get|list|rm")
    sec.add_argument("key", nargs="?", metavar="KEY", help="the vault key (path), e.g. prod/anthropic/api-key")
    sec.add_argument("--workflow", metavar="FILE", help="with list: the workflow's declared secrets instead")


def run(args: Any) -> int:
    return secrets(args.secrets_action, args.key, args.workflow)


def secrets(
    action: str, key: str | None, workflow: str | None, out: TextIO | None = None, err: TextIO | None = None
) -> int:
    from runtime.guard.vault import VaultError, open_vault

    out, err = out or sys.stdout, err or sys.stderr

    if action == "list" and workflow:
        return _declared(workflow, out, err)
    if action in ("set", "get", "rm") and not key:
        print(f"nika secrets {action}: give the vault KEY", file=err)
        return 2
    try:
        vault = open_vault(os.environ)
        if action == "list":
            for name in vault.names():
                print(name, file=out)
            return 0
        assert key is not None
        if action == "set":
            value = _read_value(key)
            if not value:
                print("nika secrets set: refusing an empty value", file=err)
                return 1
            vault.set(key, value)
            print(f"stored `{key}` in the nika-vault ({vault.where})", file=err)
            return 0
        if action == "get":
            value = vault.get(key)
            if value is None:
                print(f"nika secrets get: no key `{key}` in the nika-vault ({vault.where})", file=err)
                return 1
            out.write(value)
            return 0
        if vault.remove(key):
            print(f"removed `{key}` from the nika-vault", file=err)
            return 0
        print(f"nika secrets rm: no key `{key}` in the nika-vault", file=err)
        return 1
    except VaultError as e:
        print(f"nika secrets: {e}", file=err)
        return 2


def _read_value(key: str) -> str:
    if sys.stdin.isatty():
        return getpass.getpass(f"value for {key}: ")
    text = sys.stdin.read()
    return text[:-1] if text.endswith("\n") else text


def _declared(workflow: str, out: TextIO, err: TextIO) -> int:
    from runtime.engine.inputs import compile_file
    from runtime.errors import TaskError
    from runtime.guard.secrets import resolve

    compiled, why = compile_file(workflow)
    if compiled is None or compiled.workflow is None:
        print(f"nika secrets: cannot read `{workflow}`: {why or 'it does not parse'}", file=err)
        return 2
    missing = 0
    for s in compiled.workflow.secrets:
        ref = s.path if s.source == "file" else (s.store_key or s.name)
        try:
            resolve(s, os.environ, Path.cwd())
            state = "resolves"
        except TaskError as e:
            missing += 1
            state = f"MISSING: {e.message}"
        print(f"{s.name}\t{s.source}\t{ref}\t{state}", file=out)
    return 1 if missing else 0
